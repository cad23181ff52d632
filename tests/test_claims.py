"""Claims: the patterns a page states, checked by its proof on every build, shown, cached and reported.

In-process, like `test_engine.py`: pages render through the formatter, no MkDocs build.
"""

from __future__ import annotations

import html as html_text
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_engine import Pages, make_pages
from test_standalone import bare_python
from torch_only import TorchOnly

from conftest import ROOT, FixtureSite, claims_problem
from pytorch_floors.claims import CHANNEL, Claim, ClaimFormatError, claim, not_applicable, parse_claims
from pytorch_floors.execution.bundle import bundle
from pytorch_floors.execution.claim_policy import claims_summary
from pytorch_floors.execution.report import report_json
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.plugin.pages import report_html
from pytorch_floors.plugin.plugin import FloorsPlugin
from pytorch_floors.render.proof_frame import claims_html

PACKAGE_DIR = ROOT / "src" / "pytorch_floors"

HELD_AND_MISSED = """\
    ```python exec="1" id="sums"
    --8<-- "snippets/sums.py"
    ```
    """

PROOF = """\
from pytorch_floors.claims import claim

total = 1 + 1
print("1 + 1 =", total)
claim("one plus one is two", held=total == 2, detail=f"got {total}")
claim("one plus one is three", held=total == 3, detail=f"got {total}")
"""


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "sums.py").write_text(PROOF, encoding="utf-8")
    yield make_pages(tmp_path)


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# --- a held claim, and one that did not hold -------------------------------------------------------


def test_claims_reach_the_result_with_their_proof_line_and_show_under_the_output(
    pages: Pages, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    html = pages.render(HELD_AND_MISSED)
    [result] = pages.engine.records
    assert result.status == "ran"
    assert result.claims == (
        Claim("one plus one is two", True, "got 2", 5, "snippets/sums.py"),
        Claim("one plus one is three", False, "got 2", 6, "snippets/sums.py"),
    )
    # Under the build the claims go through the channel, not into the output.
    assert result.output == "1 + 1 = 2\n"
    claims = html[html.index('<div class="floors-claims') :]
    assert "1 of 2 held" in claims
    assert '<strong class="floors-claim__verdict">Held:</strong> one plus one is two' in claims
    assert "Did not hold on this machine:</strong> one plus one is three" in claims
    assert "(got 2)" in claims and "floors-claims--missed" in claims
    # Inside the proof block, after its output, outside the output itself (the manifest digests outputs).
    assert html.index('<div class="floors-proof__output">') < html.index('<div class="floors-claims')
    # The policy by default: a WARNING that names page, block, proof file and line, so --strict fails.
    assert warnings(caplog) == [
        "docs/index.md › block 'sums' (snippets/sums.py:6): claim did not hold on this machine: "
        "one plus one is three (got 2)"
    ]


def test_advisory_claims_are_shown_and_counted_but_do_not_warn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "sums.py").write_text(PROOF, encoding="utf-8")
    caplog.set_level(logging.INFO)
    advisory = make_pages(tmp_path, advisory_claims=True)
    html = advisory.render(HELD_AND_MISSED)
    assert warnings(caplog) == []
    logged = [r.getMessage() for r in caplog.records if "claim did not hold" in r.getMessage()]
    assert len(logged) == 1 and logged[0].endswith("[advisory: FLOORS_CLAIMS=advisory]")
    assert "Did not hold on this machine:" in html
    records = advisory.engine.records
    assert json.loads(report_json(records, {}, advisory=True))["claims_policy"] == "advisory"
    assert claims_summary(records, advisory=True) == (
        "claims: 2 checked, 1 held, 1 did not hold, 0 not applicable on this machine (advisory)"
    )


def test_the_policy_is_a_plugin_option_read_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOORS_CLAIMS", raising=False)

    def policy(given: dict[str, object]) -> tuple[object, list[str]]:
        plugin = FloorsPlugin()
        errors, _ = plugin.load_config(given)
        return plugin.config["claims"], [str(error) for _, error in errors]

    assert policy({}) == ("warn", [])
    assert policy({"claims": "advisory"}) == ("advisory", [])
    assert "expected warn or advisory" in policy({"claims": "advisery"})[1][0]
    monkeypatch.setenv("FLOORS_CLAIMS", "advisory")
    assert policy({"claims": "warn"}) == ("advisory", [])
    monkeypatch.setenv("FLOORS_CLAIMS", "advisery")
    assert "FLOORS_CLAIMS='advisery'" in policy({})[1][0]


def test_the_report_lists_every_claim_with_page_block_and_result_and_totals(pages: Pages) -> None:
    pages.render(HELD_AND_MISSED)
    records = pages.engine.records
    data = json.loads(report_json(records, {}))
    assert data["claims_policy"] == "warn"
    assert (data["totals"]["claims"], data["totals"]["claims_held"], data["totals"]["claims_not_held"]) == (2, 1, 1)
    assert [(c["page"], c["block_id"], c["statement"], c["result"]) for c in data["claims"]] == [
        ("index.md", "sums", "one plus one is two", "held"),
        ("index.md", "sums", "one plus one is three", "did not hold on this machine"),
    ]
    html = report_html(records, "en")
    assert "2 claims checked: 1 held, 1 did not hold on this machine, 0 not applicable on this machine." in html
    rows = html[html.index("floors-report--claims") :]
    # The one that did not hold comes first, and says so in words.
    assert rows.index("one plus one is three") < rows.index("one plus one is two")
    assert "<strong>did not hold</strong>" in rows


# --- a claim that cannot apply on this machine: shown and counted apart, failing nothing -------------

NOT_APPLICABLE_PROOF = """\
from pytorch_floors.claims import claim, not_applicable

cores = 1
claim("one plus one is two", held=1 + 1 == 2)
claim("two threads sum faster than one", held=False, detail="x1.00", applies=cores > 1, why_not="one core.")
not_applicable("a CUDA copy overlaps compute", why="no CUDA device")
"""

NOT_APPLICABLE_PAGE = """\
    ```python exec="1" id="lanes"
    --8<-- "snippets/lanes.py"
    ```
    """


@pytest.fixture
def lanes(tmp_path: Path) -> Iterator[Pages]:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "lanes.py").write_text(NOT_APPLICABLE_PROOF, encoding="utf-8")
    yield make_pages(tmp_path)


def test_a_claim_that_cannot_apply_is_shown_in_words_and_warns_nothing(
    lanes: Pages, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    html = lanes.render(NOT_APPLICABLE_PAGE)
    [result] = lanes.engine.records
    assert result.status == "ran", lanes.engine.failures
    assert [(c.statement, c.outcome, c.why_not) for c in result.claims] == [
        ("one plus one is two", "held", ""),
        ("two threads sum faster than one", "not applicable", "one core"),
        ("a CUDA copy overlaps compute", "not applicable", "no CUDA device"),
    ]
    assert result.claims_missed == ()
    claims = html[html.index('<div class="floors-claims') :]
    assert "1 of 1 held; 2 not applicable on this machine" in claims
    assert (
        '<strong class="floors-claim__verdict">Not applicable on this machine:</strong> one core. '
        '<span class="floors-claim__unchecked">Not checked: two threads sum faster than one</span>'
    ) in claims
    assert "Not applicable on this machine:</strong> no CUDA device." in claims
    assert "floors-claims--missed" not in claims and "Did not hold" not in claims
    # Nothing for --strict to fail on, and nothing logged as a claim that did not hold.
    assert warnings(caplog) == []
    assert not [r for r in caplog.records if "claim did not hold" in r.getMessage()]


def test_the_report_counts_held_missed_and_not_applicable_apart(lanes: Pages) -> None:
    lanes.render(NOT_APPLICABLE_PAGE)
    records = lanes.engine.records
    data = json.loads(report_json(records, {}))
    totals = data["totals"]
    assert (totals["claims"], totals["claims_held"], totals["claims_not_held"], totals["claims_not_applicable"]) == (
        3,
        1,
        0,
        2,
    )
    assert [(c["outcome"], c["result"]) for c in data["claims"]] == [
        ("held", "held"),
        ("not applicable", "not applicable on this machine: one core"),
        ("not applicable", "not applicable on this machine: no CUDA device"),
    ]
    assert (
        claims_summary(records, advisory=True)
        == "claims: 3 checked, 1 held, 0 did not hold, 2 not applicable on this machine"
    )
    # The report's partial gets the claims that applied, and those that could not apart, and lists both.
    html = report_html(records, "en")
    assert "3 claims checked: 1 held, 0 did not hold on this machine, 2 not applicable on this machine." in html
    assert html.count('class="floors-report__claim--not-applicable"') == 2
    assert "not applicable on this machine: no CUDA device" in html


def test_held_missed_and_not_applicable_side_by_side() -> None:
    claims = (
        Claim("held", True),
        Claim("missed", False),
        Claim("elsewhere", True, applies=False, why_not="one core"),
    )
    result = BlockResult("index.md", "b", None, "ran", 1.0, claims=claims)
    html = claims_html(result, "en")
    assert "1 of 2 held; 1 not applicable on this machine" in html
    assert "Did not hold on this machine:</strong> missed" in html and "floors-claims--missed" in html
    assert [c.outcome for c in claims] == ["held", "missed", "not applicable"]
    assert [c.missed for c in claims] == [False, True, False]
    assert claims_summary([result], advisory=False) == (
        "claims: 3 checked, 1 held, 1 did not hold, 1 not applicable on this machine"
    )


def test_the_pattern_tests_accept_a_claim_that_cannot_apply_but_fail_one_that_missed() -> None:
    elsewhere = Claim("two threads sum faster", True, applies=False, why_not="one core")
    assert claims_problem("p.py", [Claim("held", True), elsewhere]) is None
    assert claims_problem("p.py", [elsewhere]) is None
    problem = claims_problem("p.py", [elsewhere, Claim("one plus one is three", False, "got 2", 6)])
    assert problem == "p.py: claims that did not hold: ['one plus one is three (got 2) at line 6']"
    assert claims_problem("p.py", []) == "p.py states no claim"


def test_the_channel_stays_readable_both_ways() -> None:
    # A line written before `applies` existed is a claim that applies.
    [old] = parse_claims('{"statement": "s", "held": false, "detail": "d", "line": 3, "file": "f.py"}\n')
    assert old == Claim("s", False, "d", 3, "f.py") and old.applies and old.outcome == "missed"
    # A claim that does not apply writes `held: true`: a reader that knows only `held` fails nothing on it.
    line = json.loads(json.dumps(Claim("t", True, "", 1, "f.py", False, "no CUDA device").__dict__))
    assert line["held"] is True and line["applies"] is False and line["why_not"] == "no CUDA device"
    assert parse_claims(json.dumps(line) + "\n")[0].outcome == "not applicable"


@pytest.mark.parametrize(
    "line",
    [
        '{"statement": "s", "held": true, "applies": "no"}',
        '{"statement": "s", "held": true, "applies": false}',
        '{"statement": "s", "held": true, "applies": false, "why_not": "  "}',
        '{"statement": "s", "held": false, "applies": false, "why_not": "one core"}',
    ],
)
def test_parse_claims_refuses_a_not_applicable_claim_that_is_malformed(line: str) -> None:
    with pytest.raises(ClaimFormatError):
        parse_claims(line + "\n")


def test_a_claim_that_does_not_apply_must_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHANNEL, raising=False)
    with pytest.raises(ValueError, match="needs why_not"):
        claim("two threads sum faster", held=True, applies=False)
    with pytest.raises(ValueError, match="needs why_not"):
        not_applicable("a CUDA copy overlaps compute", why=" ")


def test_claim_returns_true_only_for_a_claim_checked_and_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHANNEL, raising=False)
    assert claim("checked", held=True) is True
    assert claim("checked, missed", held=False) is False
    assert claim("not checked", held=True, applies=False, why_not="one core") is False
    assert not_applicable("not checked either", why="no CUDA device") is False


# --- cached blocks keep the claims measured with their output ---------------------------------------


def test_a_cached_block_shows_the_claims_measured_with_its_output(
    pages: Pages, caplog: pytest.LogCaptureFixture
) -> None:
    first = pages.render(HELD_AND_MISSED)
    measured = pages.engine.records[0].claims
    again = make_pages(pages.root)
    caplog.clear()
    html = again.render(HELD_AND_MISSED)
    [result] = again.engine.records
    assert result.status == "cached" and result.claims == measured
    assert "Claims, checked when this output was measured: 1 of 2 held" in html
    # The words come through the page's language (`i18n.messages.t`), escaped as any value is.
    assert "Claims, checked on this build's numbers: 1 of 2 held" in html_text.unescape(first)
    # A cached claim that did not hold is not forgiven by the cache: it warns again.
    assert len(warnings(caplog)) == 1


def test_a_cache_entry_without_claims_runs_again(pages: Pages) -> None:
    pages.render(HELD_AND_MISSED)
    [entry] = (pages.root / ".cache" / "floors-exec").glob("??/*.json")
    data = json.loads(entry.read_text())
    del data["claims"]  # what a store that predates claims would hold
    entry.write_text(json.dumps(data))
    again = make_pages(pages.root)
    again.render(HELD_AND_MISSED)
    assert [(r.status, len(r.claims)) for r in again.engine.records] == [("ran", 2)]


# --- the channel: the block itself, its subprocesses and forked children; sessions; bad lines -------


def test_claims_from_a_subprocess_and_a_forked_child_arrive(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="family"
        import os, subprocess, sys
        from pytorch_floors.claims import claim
        claim("the block itself", held=True)
        child = "from pytorch_floors.claims import claim; claim('a subprocess', True)"
        subprocess.run([sys.executable, "-c", child], check=True)
        pid = os.fork()
        if pid == 0:
            claim("a forked child", held=True)
            os._exit(0)
        os.waitpid(pid, 0)
        print("done")
        ```
        """
    )
    [result] = pages.engine.records
    assert result.status == "ran", pages.engine.failures
    assert [c.statement for c in result.claims] == ["the block itself", "a subprocess", "a forked child"]
    assert (result.claims[0].file, result.claims[0].line) == ("docs/index.md", 4)
    assert result.claims[1].file == "<string>"


def test_a_session_block_gets_only_its_own_claims(pages: Pages) -> None:
    page = """\
        ```python exec="1" id="first" session="s"
        from pytorch_floors.claims import claim
        claim("first block", held=True)
        ```

        ```python exec="1" id="second" session="s"
        claim("second block", held=True, detail="DETAIL")
        ```
        """
    pages.render(page)
    pages.engine.records.clear()
    # The second block changes: the first is cached and replayed in the new process.
    pages.render(page.replace("DETAIL", "changed"))
    assert {r.block_id: (r.status, [c.statement for c in r.claims]) for r in pages.engine.records} == {
        "first": ("cached", ["first block"]),
        "second": ("ran", ["second block"]),
    }


def test_a_line_that_is_not_a_claim_fails_the_block_by_name(pages: Pages) -> None:
    html = pages.render(
        """\
        ```python exec="1" id="forged"
        import os
        with open(os.environ["FLOORS_CLAIMS_FILE"], "a") as channel:
            channel.write("it held, trust me\\n")
        ```
        """
    )
    assert pages.status() == {"forged": "failed"}
    assert "docs/index.md › block 'forged' (docs/index.md:1): ClaimFormatError: claims line 1" in str(
        pages.engine.failures[0]
    )
    assert "floors-proof-failure" in html


@pytest.mark.parametrize("line", ['{"statement": "s", "held": "yes"}', "[1]", '{"held": true}', "null"])
def test_parse_claims_refuses_what_is_not_a_claim(line: str) -> None:
    with pytest.raises(ClaimFormatError):
        parse_claims(line + "\n")


def test_a_claim_needs_a_statement() -> None:
    with pytest.raises(ValueError, match="needs a statement"):
        claim("  ", held=True)


# --- standalone: the proof on its own, and its download ----------------------------------------------


def test_standalone_a_claim_prints_one_line(tmp_path: Path) -> None:
    script = tmp_path / "proof.py"
    script.write_text(PROOF, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != CHANNEL}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == (
        "1 + 1 = 2\nclaim held: one plus one is two (got 2)\n"
        "claim did not hold on this machine: one plus one is three (got 2)\n"
    )


def test_standalone_a_claim_that_cannot_apply_prints_why(tmp_path: Path) -> None:
    script = tmp_path / "lanes.py"
    script.write_text(NOT_APPLICABLE_PROOF, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != CHANNEL}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == (
        "claim held: one plus one is two\n"
        "claim not applicable on this machine: one core (not checked: two threads sum faster than one) (x1.00)\n"
        "claim not applicable on this machine: no CUDA device (not checked: a CUDA copy overlaps compute)\n"
    )


def test_a_downloaded_proof_checks_its_claims_without_the_package(torch_only: TorchOnly, tmp_path: Path) -> None:
    download = tmp_path / "sums.py"
    download.write_text(bundle(PROOF, "snippets/sums.py", PACKAGE_DIR), encoding="utf-8")
    done = bare_python(torch_only, download, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "claim held: one plus one is two (got 2)" in done.stdout
    assert "claim did not hold on this machine: one plus one is three (got 2)" in done.stdout


# --- the policy in a real build: strict fails on a claim that did not hold, advisory does not ----------


def test_a_strict_build_fails_on_a_claim_that_did_not_hold_unless_advisory(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/sums.py", PROOF)
    fixture_site.page("index.md", HELD_AND_MISSED)
    strict = fixture_site.build(strict=True)
    assert strict.returncode != 0
    assert (
        "WARNING -  docs/index.md › block 'sums' (snippets/sums.py:6): claim did not hold on this machine: "
        "one plus one is three (got 2)" in strict.log
    )
    # Advisory: the strict build passes (the run is cached now), and the page and the report still say it.
    advisory = fixture_site.build(strict=True, env={"FLOORS_CLAIMS": "advisory"})
    assert advisory.returncode == 0, advisory.log[-3000:]
    assert "claims: 2 checked, 1 held, 1 did not hold, 0 not applicable on this machine (advisory)" in advisory.log
    assert "Did not hold on this machine:</strong> one plus one is three" in advisory.page("")
    report = json.loads((advisory.site / "build-report.json").read_text(encoding="utf-8"))
    assert report["claims_policy"] == "advisory" and report["totals"]["claims_not_held"] == 1
    # A build that is not strict passes by default too, and still warns.
    relaxed = fixture_site.build()
    assert relaxed.returncode == 0 and "claim did not hold on this machine" in relaxed.log


def test_the_chinese_build_report_shows_each_claim_in_chinese_with_the_runs_numbers() -> None:
    """The zh report listed every claim's statement, detail and reason as the proof wrote them, in English. It shows
    the statement as the zh pages translate it, and the detail and reason as their printed lines are translated."""
    from pytorch_floors.i18n.messages import PageLanguage  # noqa: PLC0415

    statement = "a launch returns at once: the host does not wait for the work it queues"
    claims = (
        Claim(statement, True, detail="longest launch 5.13 µs, shortest matmul 40 ms"),
        Claim(
            "two cores at once",
            False,
            applies=False,
            why_not="other work held the cores: two threads of matmuls, which need no GIL, got 0.86 cores' worth "
            "beside this run",
        ),
    )
    records = [BlockResult("floors/8-chip.md", "worker-stream", None, "ran", 1.0, claims=claims)]
    zh = report_html(records, PageLanguage("zh", {statement: "启动立即返回"}))
    assert "启动立即返回" in zh and "最长的启动 5.13 µs，最短的 matmul 40 ms" in zh
    assert "其他工作占着核" in zh and "0.86" in zh
    assert statement not in zh and "other work held the cores" not in zh
    en = report_html(records, "en")
    assert statement in en and "longest launch 5.13 µs, shortest matmul 40 ms" in en and "other work held" in en
