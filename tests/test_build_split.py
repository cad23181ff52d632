"""What `plugin/build.py` hands to the domain and to templates (issue 39), unchanged in what it gives.

A lab page's run is accounted for by `labs.accounting` (every way a run can end); the Proofs page is
rendered by `render/templates/proofs_page.md`, compared with the text the build wrote in Python before
(captured from that code for the same input); the `<!-- floors:... -->` markers are written and filled
by one helper each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock
from pytorch_floors.floors import lab_for_page
from pytorch_floors.labs.accounting import (
    LabOutcome,
    keep_lab_time,
    lab_executes,
    lab_outcome,
    lab_run_key,
    own_new_files,
    runs_later,
)
from pytorch_floors.labs.kernel import CellError, LabRun
from pytorch_floors.labs.launch import Launch
from pytorch_floors.plugin.pages import (
    BIBTEX_MARKER,
    EDITION_MARKER,
    HANDOUTS_MARKER,
    MACHINES_MARKER,
    PROOFS_MARKER,
    REPORT_MARKER,
    fill_markers,
    proofs_page,
)
from pytorch_floors.plugin.serve import SITE_WIDE_MARKER

LAB = "labs/3-boundary.py"


def outcome(
    runs: list[LabRun], *, execute: bool = True, only: str | None = None, known: str | None = None
) -> LabOutcome:
    return lab_outcome(LAB, runs, execute=execute, only=only, known_failure=known)


# --- a lab page's run ---------------------------------------------------------------------------------------


def test_a_lab_that_executed_ran() -> None:
    ran = outcome([LabRun(3.5, ())])
    assert ran == LabOutcome(LAB, "ran", 3.5, None, "ran")
    assert not ran.drops_conversion and not ran.pending and not ran.new_failure
    assert ran.result() == BlockResult(LAB, "notebook", LAB, "ran", 3.5)
    assert ran.proof_failure() is None


def test_a_lab_with_no_run_came_from_the_cache() -> None:
    cached = outcome([])
    assert cached == LabOutcome(LAB, "cached", None, None, "cached")
    assert not cached.drops_conversion and not cached.pending and not cached.new_failure
    assert cached.result() == BlockResult(LAB, "notebook", LAB, "cached", None)


@pytest.mark.parametrize(("execute", "only"), [(False, None), (False, "labs/*"), (True, "floors/*")])
def test_a_lab_this_build_does_not_execute_is_skipped(execute: bool, only: str | None) -> None:
    assert not lab_executes(LAB, execute=execute, only=only)
    assert outcome([], execute=execute, only=only) == LabOutcome(LAB, "skipped", None, None, "skipped")


def test_only_picks_the_labs_that_execute() -> None:
    assert lab_executes(LAB, execute=True, only=None)
    assert lab_executes(LAB, execute=True, only="labs/3-*")
    assert not lab_executes(LAB, execute=True, only="labs/4-*")


def test_a_deferred_lab_waits_for_the_background_build_and_drops_what_was_cached_of_it() -> None:
    deferred = outcome([LabRun(0.0, (), deferred=True)])
    assert deferred == LabOutcome(LAB, "skipped", None, None, "deferred")
    assert deferred.drops_conversion and deferred.pending and not deferred.new_failure
    assert deferred.proof_failure() is None
    # The last run counts: an earlier one in the same page's rendering does not.
    assert outcome([LabRun(1.0, ()), LabRun(0.0, (), deferred=True)]) == deferred


def test_a_lab_the_background_build_failed_is_shown_failed_without_running() -> None:
    before = outcome([LabRun(0.0, (), deferred=True)], known="WrongAnswer: no")
    assert before == LabOutcome(LAB, "failed", None, "WrongAnswer: no (in the background build)", "failed-before")
    assert before.drops_conversion and not before.pending
    assert not before.new_failure, "the background build reported it already"
    assert before.result() == BlockResult(
        LAB, "notebook", LAB, "failed", None, error="WrongAnswer: no (in the background build)"
    )
    # A known failure only counts for a run that did not happen.
    assert outcome([LabRun(2.0, ())], known="WrongAnswer: no").status == "ran"


def test_a_lab_whose_cells_raised_failed_and_names_each_cell() -> None:
    errors = (CellError(0, "WrongAnswer: no"), CellError(4, "KeyError: 'x'"))
    failed = outcome([LabRun(2.0, errors)])
    message = f"docs/{LAB} › cell 1: WrongAnswer: no; docs/{LAB} › cell 5: KeyError: 'x'"
    assert failed == LabOutcome(LAB, "failed", 2.0, message, "failed")
    assert failed.drops_conversion and not failed.pending and failed.new_failure
    assert failed.result() == BlockResult(LAB, "notebook", LAB, "failed", 2.0, error=message)
    proof_failure = failed.proof_failure()
    assert isinstance(proof_failure, ProofFailure)
    assert (proof_failure.page, proof_failure.block_id, proof_failure.location, proof_failure.summary) == (
        LAB,
        "notebook",
        (f"docs/{LAB}", 1),
        message,
    )
    # A failure is a failure even where this build would not have executed the lab.
    assert outcome([LabRun(2.0, errors)], execute=False) == failed


def test_a_labs_run_key_and_whether_it_runs_later() -> None:
    key = lab_run_key(Path("/cache/jupyter/abc.json"))
    assert key == "lab:/cache/jupyter/abc.json"
    assert runs_later(key, defer=True, known_failures=set())
    assert runs_later(key, defer=False, known_failures={key})
    assert not runs_later(key, defer=False, known_failures={"lab:/other.json"})
    assert not runs_later("", defer=False, known_failures={""}), "no key (no mkdocs-jupyter) never matches"


def test_only_the_pages_own_new_files_are_dropped(tmp_path: Path) -> None:
    before = {tmp_path / "old-own.json", tmp_path / "old-other.json"}
    now = before | {tmp_path / "new-own.json", tmp_path / "new-other.json"}
    own = ((tmp_path / "new-own.json").resolve(), (tmp_path / "old-own.json").resolve())
    assert own_new_files(own, before, now) == [(tmp_path / "new-own.json").resolve()]
    assert own_new_files(own, now, now) == []


def launch_for(tmp_path: Path, records: list[BlockResult]) -> Launch:
    return Launch(None, tmp_path / "times.tsv", records, tmp_path / "requirements.txt")


def test_a_lab_that_ran_keeps_its_time_and_a_cached_one_finds_it(tmp_path: Path) -> None:
    floor = lab_for_page(LAB)
    assert floor is not None
    source = tmp_path / "lab.py"
    source.write_text("# the lab\n", encoding="utf-8")
    ran = outcome([LabRun(3.47, ())])
    assert keep_lab_time(ran, floor, source, launch_for(tmp_path, [ran.result()])) == 3.47
    cached = outcome([])
    assert keep_lab_time(cached, floor, source, launch_for(tmp_path, [cached.result()])) == 3.5  # as kept
    source.write_text("# the lab, changed\n", encoding="utf-8")
    assert keep_lab_time(cached, floor, source, launch_for(tmp_path, [cached.result()])) is None, "never kept"
    skipped = outcome([], execute=False)
    assert keep_lab_time(skipped, floor, source, launch_for(tmp_path, [skipped.result()])) is None
    failed = outcome([LabRun(2.0, (CellError(0, "E: e"),))])
    assert keep_lab_time(failed, floor, source, launch_for(tmp_path, [failed.result()])) is None


def test_a_cached_labs_time_is_read_through_its_record(tmp_path: Path) -> None:
    floor = lab_for_page(LAB)
    assert floor is not None
    source = tmp_path / "lab.py"
    source.write_text("# the lab\n", encoding="utf-8")
    cached = outcome([])
    # `run_seconds` refuses (no times file): the page's download box says why, the log states no time.
    assert keep_lab_time(cached, floor, source, Launch(None, None, [cached.result()], tmp_path / "r.txt")) is None
    assert keep_lab_time(cached, floor, source, launch_for(tmp_path, [])) is None, "no record: not this build's"


# --- the Proofs page ----------------------------------------------------------------------------------------

OLD_PROOFS_PAGE = (
    "## [Part 0 · The map](index.md) { #part-0-the-map }\n\n| Proof | What it shows |\n|---|---|\n"
    "| [`a.py`](snippets/a.py)<br>block `walk` | Tensors <and> views & strides \\| a pipe. |\n\n"
    "## [zzz/other.md](zzz/other.md) { #zzzothermd }\n\n| Proof | What it shows |\n|---|---|\n"
    "| [`b.py`](snippets/b.py)<br>block `other` |  |\n\n"
    "## [Floor 3 · The boundary](floors/3-boundary.md) { #floor-3-the-boundary }\n\n"
    "| Proof | What it shows |\n|---|---|\n"
    "| [`a.py`](snippets/a.py)<br>block `two` | Tensors <and> views & strides \\| a pipe. |\n"
    "| [`c.py`](snippets/c.py)<br>block `two` | `x<y` * emphasis * |\n"
    "| `gone.py`<br>block `gone` | *missing: deleted or renamed?* |\n\n"
    "## [The express elevator: torch.compile](compile.md) { #the-express-elevator-torchcompile }\n\n"
    "| Proof | What it shows |\n|---|---|\n"
    "| [`d.py`](snippets/d.py)<br>block `comp` | Compiled 'quotes' and \"double\". |"
)
"""What `_proofs_table` wrote for `proofs_project`'s blocks before the page moved to a template, each heading
with the explicit anchor it has since (the English heading's slug, kept by the Chinese Proofs page too)."""


def proofs_project(root: Path) -> dict[str, list[ExecBlock]]:
    snippets = root / "snippets"
    snippets.mkdir()
    (snippets / "a.py").write_text('"""Tensors <and> views & strides | a pipe.\n\nMore."""\nx = 1\n', encoding="utf-8")
    (snippets / "b.py").write_text("x = 1\n", encoding="utf-8")
    (snippets / "c.py").write_text('"""  `x<y` * emphasis *  \n"""\n', encoding="utf-8")
    (snippets / "d.py").write_text('"""Compiled \'quotes\' and "double"."""\n', encoding="utf-8")
    floor = "floors/3-boundary.md"
    return {
        "zzz/other.md": [ExecBlock("zzz/other.md", "other", 1, BlockOptions("other"), proofs=["snippets/b.py"])],
        "compile.md": [ExecBlock("compile.md", "comp", 1, BlockOptions("comp"), proofs=["snippets/d.py"])],
        floor: [
            ExecBlock(floor, "two", 1, BlockOptions("two"), proofs=["snippets/a.py", "snippets/c.py"]),
            ExecBlock(
                floor, "gone", 9, BlockOptions("gone"), proofs=["snippets/gone.py"], missing=[("snippets/gone.py", 10)]
            ),
        ],
        "index.md": [ExecBlock("index.md", "walk", 1, BlockOptions("walk"), proofs=["snippets/a.py"])],
    }


def test_the_proofs_page_is_the_text_the_build_wrote_before(tmp_path: Path) -> None:
    """Markdown, not HTML: no `&lt;` or `&amp;` where the docstrings say `<` and `&`; a cell's `|` escaped."""
    assert proofs_page(proofs_project(tmp_path), tmp_path, "en") == OLD_PROOFS_PAGE


def test_the_proofs_page_of_blocks_without_proofs_and_of_none(tmp_path: Path) -> None:
    empty = [ExecBlock("index.md", "inline", 1, BlockOptions("inline"))]
    assert proofs_page({}, tmp_path, "en") == ""
    assert proofs_page({"index.md": empty, "a.md": [ExecBlock("a.md", "x", 1, BlockOptions("x"))]}, tmp_path, "en") == (
        "## [a.md](a.md) { #amd }\n\n| Proof | What it shows |\n|---|---|\n\n"
        "## [Part 0 · The map](index.md) { #part-0-the-map }\n\n| Proof | What it shows |\n|---|---|"
    )


# --- the markers --------------------------------------------------------------------------------------------


def test_the_markers_are_the_ones_the_pages_hold() -> None:
    markers = [PROOFS_MARKER, REPORT_MARKER, MACHINES_MARKER, EDITION_MARKER, BIBTEX_MARKER, HANDOUTS_MARKER]
    assert markers == [
        "<!-- floors:proofs -->",
        "<!-- floors:build-report -->",
        "<!-- floors:machines -->",
        "<!-- floors:edition -->",
        "<!-- floors:bibtex -->",
        "<!-- floors:handouts -->",
    ]
    assert all(marker.startswith(SITE_WIDE_MARKER) for marker in markers), "a serve session rebuilds their pages"


def test_markers_are_filled_in_order_and_only_where_they_are() -> None:
    called: list[str] = []

    def filler(text: str) -> Callable[[], str]:
        def fill() -> str:
            called.append(text)
            return text

        return fill

    text = f"a {EDITION_MARKER} b {BIBTEX_MARKER} {EDITION_MARKER}"
    fillers = {EDITION_MARKER: filler("2025.06"), BIBTEX_MARKER: filler("@misc{...}"), PROOFS_MARKER: filler("table")}
    assert fill_markers(text, fillers) == "a 2025.06 b @misc{...} 2025.06"
    assert called == ["2025.06", "@misc{...}"], "each filler runs once, and only for a marker the text holds"
    # A filler's text is filled by the fillers after it, as the build replaced them one after another.
    chained = {PROOFS_MARKER: lambda: EDITION_MARKER, EDITION_MARKER: lambda: "2025.06"}
    assert fill_markers(PROOFS_MARKER, chained) == "2025.06"
