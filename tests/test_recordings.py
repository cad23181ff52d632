"""Recordings: made without MkDocs, shown in tabs while current, noted when stale, pruned, merged, compared."""

from __future__ import annotations

import html as html_text
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from functools import partial
from html import unescape
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no types
from markdown import Markdown

from conftest import ROOT
from pytorch_floors.claims import Claim
from pytorch_floors.execution import BlockResult, Engine, OutputCache, scan_markdown
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.plugin.fence import formatter, validator
from pytorch_floors.recordings.compare import claim_table, machine_in_words, orphans, tiers_for
from pytorch_floors.recordings.contention import CONTENDED_BELOW, contended
from pytorch_floors.recordings.merge import ARTIFACT_PREFIX, merge_recordings
from pytorch_floors.recordings.recorder import planned_blocks, prune, record_site
from pytorch_floors.recordings.report import recordings_json
from pytorch_floors.recordings.schema import (
    FILE_NAME,
    Recording,
    RecordingError,
    read_recording,
    read_recordings,
    write_recording,
)
from pytorch_floors.recordings.tabs import LazyOutputs, differing_lines, namespaced_ids
from pytorch_floors.render.proof_frame import recorded_claims_html
from pytorch_floors.tiers import HOG, as_tier, tier_named

PROOF = '''\
"""A proof with a claim that applies and one that cannot."""
from pytorch_floors.claims import claim, not_applicable

value = sum(range(10))
print("sum is", value)
claim("the sum of 0..9 is 45", held=value == 45, detail=f"sum {value}")
not_applicable("a CUDA lane overlaps the copy", why="no CUDA device")
'''

PAGE = """\
---
description: a page
---

# A page

```python exec="1" id="sum"
--8<-- "snippets/sum.py"
```

```python exec="1" id="define" session="s"
x = 3
```

```python exec="1" id="use" session="s"
print("x squared is", x * x)
```
"""

GPU = Provenance(
    "2.11.0", "3.12.3", "Linux x86_64", "AMD EPYC 9654", "AVX512", 16, 16, "cuda: NVIDIA H200", "2026-12-03"
)


LABEL = r'<label [^>]*>([^<]*)(?:<span class="floors-tiers__kind">[^<]*</span>)?</label>'
"""A tab's label: the tier's name, then the kind of machine it stands for, if it says."""


def project(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "snippets").mkdir()
    (root / "snippets" / "sum.py").write_text(PROOF, encoding="utf-8")
    (root / "docs" / "index.md").write_text(PAGE, encoding="utf-8")
    return root


def render(
    root: Path,
    recordings: tuple[Recording, ...],
    page: str = "index.md",
    lazy: LazyOutputs | None = None,
    language: str = "en",
) -> tuple[str, Engine]:
    """Render a page in this process as the build does, with `recordings` bound to the fence."""
    engine = Engine(root, OutputCache(root / ".cache" / "floors-exec"))
    text = (root / "docs" / page).read_text(encoding="utf-8")
    engine.plan(page, scan_markdown(text, page, root))
    engine.begin_page(page, "")
    md = Markdown(
        extensions=["pymdownx.snippets", "pymdownx.superfences", "pymdownx.tabbed"],
        extension_configs={
            "pymdownx.snippets": {"base_path": [str(root)], "check_paths": True},
            "pymdownx.superfences": {
                "custom_fences": [
                    {
                        "name": "python",
                        "class": "python",
                        "validator": validator,
                        "format": partial(
                            formatter,
                            engine=engine,
                            recordings=recordings,
                            lazy=lazy,
                            languages={page: PageLanguage(language)},
                        ),
                    }
                ]
            },
        },
    )
    html = md.convert(text.split("---\n", 2)[2])
    engine.end_page()
    engine.close()
    return engine.unshown(html), engine


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """A project and its recording as the tier `other`, made in this process (no MkDocs)."""
    root = project(tmp_path_factory.mktemp("recorded"))
    recording = record_site(root, root / "docs", "other", stands_for="another machine", cache_dir=root / ".cache")
    return root, recording


def as_elsewhere(recording: Recording, output: str, provenance: Provenance = GPU) -> Recording:
    """The recording as if made on another machine: its outputs and provenance changed, digests kept."""
    blocks = tuple(replace(b, output=output, provenance=provenance) for b in recording.blocks)
    # Its load is that machine's, not this test run's (two pytest workers can make this one look contended).
    return replace(recording, machine=provenance, blocks=blocks, cpu_share=None)


# --- recording -----------------------------------------------------------------------------------


def test_a_recording_holds_every_block_with_its_digest_output_claims_and_provenance(
    recorded: tuple[Path, Recording],
) -> None:
    root, recording = recorded
    assert [b.key for b in recording.blocks] == [("index.md", "sum"), ("index.md", "define"), ("index.md", "use")]
    by_id = {b.block_id: b for b in recording.blocks}
    assert "sum is 45" in by_id["sum"].output
    assert "x squared is 9" in by_id["use"].output
    assert [c.outcome for c in by_id["sum"].claims] == ["held", "not applicable"]
    assert by_id["sum"].claims[0].file == "snippets/sum.py"
    assert all(b.digest.startswith("sha256:") and b.provenance.torch_version for b in recording.blocks)
    # The build's own digests are the recording's: the same code, session and options.
    _, engine = render(root, ())
    assert {r.block_id: r.digest for r in engine.records} == {b.block_id: b.digest for b in recording.blocks}


def test_a_recording_is_written_and_read_back_the_same(recorded: tuple[Path, Recording], tmp_path: Path) -> None:
    _, recording = recorded
    path = write_recording(recording, tmp_path)
    assert path == tmp_path / "other" / FILE_NAME
    assert read_recording(path) == recording
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1
    assert read_recordings(tmp_path) == (recording,)
    assert recording.cpu_share is not None and 0 < recording.cpu_share <= 1.5, "the recorder measured its cores"
    unmeasured = write_recording(replace(recording, cpu_share=None), tmp_path)
    assert "cpu_share" not in json.loads(unmeasured.read_text(encoding="utf-8"))
    assert read_recording(unmeasured).cpu_share is None, "a recording made before it was measured still reads"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: {**d, "format": 99}, "recording format 99"),
        (lambda d: {**d, "tier": "elsewhere"}, "lies in the folder 'other'"),
        (lambda d: {**d, "blocks": [{**d["blocks"][0], "seconds": "fast"}]}, "'seconds' must be a number"),
        (lambda d: {**d, "blocks": d["blocks"] + d["blocks"][:1]}, "recorded twice"),
        (lambda d: {**d, "cpu_share": "busy"}, "'cpu_share' must be a share"),
        (lambda d: {**d, "cpu_share": 7}, "'cpu_share' must be a share"),
        (lambda d: {**d, "cpu_share": True}, "'cpu_share' must be a share"),
    ],
)
def test_a_recording_of_another_format_or_shape_is_refused_by_name(
    recorded: tuple[Path, Recording], tmp_path: Path, change: object, message: str
) -> None:
    path = write_recording(recorded[1], tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(change(data)), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(RecordingError, match=message):
        read_recording(path)


def test_recording_needs_no_mkdocs_or_markdown(tmp_path: Path) -> None:
    # A bare GPU box has torch and numpy: `python -m pytorch_floors record` must not import the site's tools.
    root = project(tmp_path / "bare")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nfor name in ('mkdocs', 'markdown', 'markdown_exec', 'pymdownx', 'material', 'jinja2'):\n"
        "    sys.modules[name] = None\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT / "src")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "record", "--tier", "bare-box", "--project", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "bare-box: 3 blocks, 2 claims (1 held, 0 did not hold, 1 not applicable)" in done.stdout
    assert read_recording(root / "recordings" / "bare-box" / FILE_NAME).blocks[0].block_id == "sum"


def test_a_failing_proof_records_nothing_and_is_named(tmp_path: Path) -> None:
    root = project(tmp_path / "failing")
    (root / "snippets" / "sum.py").write_text("raise ValueError('broken on purpose')\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"docs/index.md › block 'sum' \(snippets/sum.py:1\): ValueError"):
        record_site(root, root / "docs", "t", stands_for="", cache_dir=root / ".cache")


# --- showing ---------------------------------------------------------------------------------------


def test_a_current_recording_is_a_tab_after_this_builds_output(recorded: tuple[Path, Recording]) -> None:
    root, recording = recorded
    elsewhere = as_elsewhere(recording, "sum is 45, measured elsewhere")
    html, _ = render(root, (elsewhere,))
    assert html.count('class="tabbed-set tabbed-alternate floors-tiers"') == 3
    assert html.count('data-tier="other"') == 6  # a label and a block per tab set
    label = machine_in_words(GPU, recording.recorded)
    assert label == f"NVIDIA H200 + 16 threads, torch 2.11.0, recorded {recording.recorded}"
    assert label in html, "the machine in words opens its tab"
    labels = re.findall(LABEL, html)
    assert labels == ["This build", "other"] * 3, "one short label per machine, the same on every block (linked)"
    own, theirs = html.index("This build"), html.index("sum is 45, measured elsewhere")
    assert own < html.index("sum is 45</span>\n") < theirs, "this build's output comes first"
    assert "Claims, checked on the numbers recorded on other" in html
    assert "Not applicable on that machine" in html
    assert "data-tier-stale" not in html


def test_a_recorded_outputs_lines_that_differ_from_this_builds_are_counted(recorded: tuple[Path, Recording]) -> None:
    # Marked with hl_lines: the built site's tabs are checked in test_site_build.py.
    root, recording = recorded
    block = recording.blocks[-1]
    changed = replace(block, output=f"first line\n{block.output.rstrip()}\nlast line")
    html, _ = render(root, (replace(recording, blocks=(*recording.blocks[:-1], changed)),))
    assert "2 lines of this output differ from this build's: marked." in html_text.unescape(html)


def test_differing_lines_are_counted_in_the_recorded_output() -> None:
    assert differing_lines("a\nb\nc", "a\nB\nc\nd") == [2, 4]
    assert differing_lines("a\nb", "b") == [] and differing_lines("", "x") == [1]


def test_a_recorded_claim_that_did_not_hold_has_the_mark_and_colour_of_this_builds() -> None:
    missed = Claim("the sum is 45", held=False, detail="it was 44")
    held = Claim("the mean is 4.5", held=True)
    html = recorded_claims_html((missed, held), "ci-2core", "en")
    assert (
        '<li class="floors-claim floors-claim--missed"><span class="floors-claim__mark" aria-hidden="true">✗</span>'
        in html
    )
    assert (
        '<li class="floors-claim floors-claim--held"><span class="floors-claim__mark" aria-hidden="true">✓</span>'
        in html
    )
    assert "Did not hold on that machine:</strong> the sum is 45" in html and "floors-claims--missed" in html


def test_an_edited_proof_turns_its_recordings_stale_and_no_other(
    recorded: tuple[Path, Recording], tmp_path: Path
) -> None:
    root, recording = recorded
    edited = tmp_path / "edited"
    edited.mkdir()
    for name in ("docs", "snippets"):
        subprocess.run(["cp", "-r", str(root / name), str(edited)], check=True)
    proof = edited / "snippets" / "sum.py"
    proof.write_text(proof.read_text(encoding="utf-8").replace("range(10)", "range(10) if True else 0"), "utf-8")
    elsewhere = as_elsewhere(recording, "recorded elsewhere")
    html, engine = render(edited, (elsewhere,))
    stale = {r.block_id: tiers_for(r, (elsewhere,)) for r in engine.records}
    assert [t.tier for t in stale["sum"].stale] == ["other"] and not stale["sum"].current
    assert all(not stale[b].stale and stale[b].current for b in ("define", "use"))
    assert html.count('data-tier-stale="other"') == 1
    assert "for an earlier version of this proof" in html
    assert html.count("recorded elsewhere") == 2, "the stale output is not shown; the two current ones are"
    report = recordings_json(engine.records, (elsewhere,), [("index.md", b) for b in stale])
    assert report["stale"] == [{"tier": "other", "page": "index.md", "block_id": "sum"}]


def test_a_block_this_build_cannot_check_leads_with_the_tier_that_could(
    recorded: tuple[Path, Recording], tmp_path: Path
) -> None:
    root, recording = recorded
    page = root / "docs" / "cuda.md"
    page.write_text(
        '---\ndescription: d\n---\n\n```python exec="1" id="lane"\nfrom pytorch_floors.claims import not_applicable\n'
        'print("schematic")\nnot_applicable("copies overlap compute", why="no CUDA device")\n```\n',
        encoding="utf-8",
    )
    _, engine = render(root, (), "cuda.md")
    own = engine.records[0]
    claims = (replace(own.claims[0], applies=True, held=True, why_not=""),)
    gpu_block = replace(recording.blocks[0], page="cuda.md", block_id="lane", digest=own.digest or "", claims=claims)
    gpu = replace(recording, tier="h200", machine=GPU, blocks=(replace(gpu_block, output="measured", provenance=GPU),))
    html, _ = render(root, (gpu,), "cuda.md")
    assert html.index('<label for="__floors_tiers_1_1" data-tier="h200"') < html.index("This build")
    assert html.index("measured") < html.index("schematic")
    assert "Recorded on h200, which measured what this build's machine could not" in unescape(html)
    page.unlink()


def test_recorded_chart_ids_are_the_tiers_own(recorded: tuple[Path, Recording], tmp_path: Path) -> None:
    root, recording = recorded
    chart = '<figure><svg aria-labelledby="floors-plot-ab12-title"><title id="floors-plot-ab12-title">t</title></svg>'
    html, _ = render(root, (as_elsewhere(recording, chart + "</figure>"),))
    assert 'id="other-floors-plot-ab12-title"' in html and 'aria-labelledby="other-floors-plot-ab12-title"' in html


def test_a_proofs_own_figure_ids_are_the_tiers_own_and_links_to_the_page_stay() -> None:
    # A proof's own SVG names its title by a fixed id (`ws-title`): a tier drawing it again repeated it.
    figure = (
        '<svg aria-labelledby="ws-title ws-desc" aria-describedby="ws-desc"><title id="ws-title">t</title>'
        '<desc id="ws-desc">d</desc></svg><a href="#ws-desc">key</a> <a href="#kernel-walk">section</a>'
    )
    html = namespaced_ids(figure, "ci-2core")
    assert re.findall(r'id="([^"]*)"', html) == ["ci-2core-ws-title", "ci-2core-ws-desc"]
    assert 'aria-labelledby="ci-2core-ws-title ci-2core-ws-desc" aria-describedby="ci-2core-ws-desc"' in html
    assert 'href="#ci-2core-ws-desc"' in html and 'href="#kernel-walk"' in html


# --- pruning, merging, comparing -----------------------------------------------------------------------


def test_recording_prunes_blocks_no_page_has_and_keeps_changed_ones(
    recorded: tuple[Path, Recording], tmp_path: Path
) -> None:
    root, recording = recorded
    gone = replace(recording.blocks[0], block_id="removed-block")
    write_recording(replace(recording, blocks=(*recording.blocks, gone)), tmp_path)
    planned = planned_blocks(root / "docs", root)
    assert [
        (o.tier, o.block_id)
        for o in orphans(read_recordings(tmp_path), [("index.md", b.block_id) for b in planned["index.md"]])
    ] == [("other", "removed-block")]
    pruned = prune(tmp_path, planned)
    assert [(p.tier, p.page, p.block_id) for p in pruned] == [("other", "index.md", "removed-block")]
    assert read_recordings(tmp_path) == (recording,)
    assert prune(tmp_path, planned) == []


def test_two_recordings_merge_from_recordings_folders(recorded: tuple[Path, Recording], tmp_path: Path) -> None:
    # Other checkouts' `recordings/<tier>/` folders, at any depth (the workflow's own layout is the test below).
    _, recording = recorded
    write_recording(replace(recording, tier="ci-2core"), tmp_path / "artifacts" / "ubuntu" / "recordings")
    write_recording(
        replace(as_elsewhere(recording, "m", GPU), tier="macos-14"), tmp_path / "artifacts" / "mac" / "recordings"
    )
    into = tmp_path / "recordings"
    write_recording(replace(recording, tier="macos-14", recorded="2000-01-01"), into)
    merged = merge_recordings([tmp_path / "artifacts"], into)
    assert [r.tier for r in merged] == ["ci-2core", "macos-14"]
    assert [(r.tier, r.recorded) for r in read_recordings(into)] == [
        ("ci-2core", recording.recorded),
        ("macos-14", recording.recorded),
    ]
    write_recording(replace(recording, tier="ci-2core"), tmp_path / "again")
    with pytest.raises(RecordingError, match="both record the tier 'ci-2core'"):
        merge_recordings([tmp_path / "artifacts", tmp_path / "again"], into)
    with pytest.raises(RecordingError, match=r"no recording\.json"):
        merge_recordings([tmp_path / "empty-folder"], into)


def uploaded_and_downloaded(recording: Recording, artifacts: Path) -> Path:
    """`recording` as record.yml's legs hand it over: `make record` writes `recordings/<tier>/recording.json`,
    `upload-artifact@v4` with `path: recordings/<tier>/` stores the folder's contents (the file at the
    artifact's root) under the name `recording-<tier>`, and `download-artifact@v4` with `pattern:
    recording-*` extracts each artifact into a folder named after it: `artifacts/recording-<tier>/recording.json`.
    """
    made = write_recording(recording, artifacts.parent / f"leg-{recording.tier}" / "recordings")
    downloaded = artifacts / f"{ARTIFACT_PREFIX}{recording.tier}" / FILE_NAME
    downloaded.parent.mkdir(parents=True)
    made.replace(downloaded)
    return downloaded


def test_the_recording_workflows_artifacts_merge_as_download_artifact_lays_them_out(
    recorded: tuple[Path, Recording], tmp_path: Path
) -> None:
    _, recording = recorded
    artifacts = tmp_path / "artifacts"
    uploaded_and_downloaded(replace(recording, tier="gh-ubuntu-x86"), artifacts)
    uploaded_and_downloaded(replace(as_elsewhere(recording, "m", GPU), tier="gh-macos-14"), artifacts)
    assert sorted(str(p.relative_to(artifacts)) for p in artifacts.rglob("*") if p.is_file()) == [
        "recording-gh-macos-14/recording.json",
        "recording-gh-ubuntu-x86/recording.json",
    ]
    into = tmp_path / "recordings"
    merged = merge_recordings([artifacts], into)
    assert [r.tier for r in merged] == ["gh-macos-14", "gh-ubuntu-x86"]
    assert sorted(p.name for p in into.iterdir()) == ["gh-macos-14", "gh-ubuntu-x86"]
    assert read_recordings(into)[1] == replace(recording, tier="gh-ubuntu-x86")
    # An artifact whose folder names another tier than its recording is still refused, by name.
    wrong = tmp_path / "wrong"
    uploaded_and_downloaded(replace(recording, tier="gh-ubuntu-arm"), wrong)
    (wrong / "recording-gh-ubuntu-arm").rename(wrong / "recording-gh-ubuntu-x86")
    with pytest.raises(
        RecordingError, match="names tier 'gh-ubuntu-arm' but lies in the folder 'recording-gh-ubuntu-x86'"
    ):
        merge_recordings([wrong], tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_the_recording_workflow_names_its_artifacts_as_the_merge_reads_them() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "record.yml").read_text(encoding="utf-8"))
    upload = next(
        s for s in workflow["jobs"]["record"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")
    )
    assert upload["with"]["name"] == ARTIFACT_PREFIX + "${{ matrix.tier }}"
    assert upload["with"]["path"].rstrip("/") == "recordings/${{ matrix.tier }}"
    download = next(
        s for s in workflow["jobs"]["merge"]["steps"] if s.get("uses", "").startswith("actions/download-artifact@")
    )
    assert download["with"]["pattern"] == ARTIFACT_PREFIX + "*"
    assert not download["with"].get("merge-multiple"), "each artifact keeps a folder of its own"


def test_the_claim_table_reads_every_claim_on_every_machine(recorded: tuple[Path, Recording]) -> None:
    root, recording = recorded
    _, engine = render(root, ())
    missed = replace(
        recording,
        tier="missed",
        blocks=tuple(
            replace(b, claims=tuple(replace(c, held=False) if c.applies else c for c in b.claims))
            for b in recording.blocks
        ),
    )
    rows = claim_table(engine.records, (recording, missed))
    assert [(r.statement, r.outcomes) for r in rows] == [
        ("the sum of 0..9 is 45", ("held", "held", "missed")),
        ("a CUDA lane overlaps the copy", ("not applicable",) * 3),
    ]
    assert [(r.held_everywhere, r.applied) for r in rows] == [(False, 3), (False, 0)]
    assert claim_table(engine.records, (recording,))[0].held_everywhere


def test_tier_names_become_folders_and_attributes_safely(recorded: tuple[Path, Recording], tmp_path: Path) -> None:
    _, recording = recorded
    folder = tmp_path / "Bad Name"
    folder.mkdir()
    (folder / FILE_NAME).write_text(
        write_recording(recording, tmp_path / "x").read_text(encoding="utf-8").replace('"other"', '"Bad Name"', 1),
        encoding="utf-8",
    )
    with pytest.raises(RecordingError, match="must be lowercase"):
        read_recording(folder / FILE_NAME)


def test_the_command_line_lists_record_and_merge() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "--help"], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert "record --tier NAME" in done.stderr and "merge-recordings" in done.stderr


def test_recording_as_a_tier_takes_its_settings_and_gives_them_back(monkeypatch: pytest.MonkeyPatch) -> None:
    tier = tier_named("one-core-scalar")
    assert tier is not None and tier_named("h200") is None
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    before = os.sched_getaffinity(0)
    with as_tier(tier):
        assert os.environ["ATEN_CPU_CAPABILITY"] == "default" and os.environ["OMP_NUM_THREADS"] == "1"
        assert os.sched_getaffinity(0) == {0}
        # A block's process inherits both: the recording measures what the tier stands for.
        done = subprocess.run(
            [sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)), os.environ['OMP_NUM_THREADS'])"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.split() == ["1", "1"]
    assert "ATEN_CPU_CAPABILITY" not in os.environ
    assert os.sched_getaffinity(0) == before


def test_a_gpu_tier_stands_in_for_a_cpu_builds_cuda_lane_and_a_cpu_tier_does_not(
    recorded: tuple[Path, Recording],
) -> None:
    _, recording = recorded
    block = recording.block("index.md", "sum")
    assert block is not None
    cpu = block.provenance
    here = BlockResult(
        "index.md", "sum", None, "ran", 1.0, "out", provenance=cpu, claims=block.claims, digest=block.digest
    )
    both_apply = tuple(replace(c, applies=True, held=True, why_not="") for c in block.claims)
    on_gpu = replace(recording, tier="h200", blocks=(replace(block, claims=both_apply, provenance=GPU),))
    on_cpu = replace(recording, tier="laptop", blocks=(replace(block, claims=both_apply),))
    tiers = tiers_for(here, (on_cpu, on_gpu))
    assert [(t.tier, t.elsewhere) for t in tiers.current] == [("h200", True), ("laptop", False)]
    assert tiers.lead is not None and tiers.lead.tier == "h200"
    assert tiers_for(here, (on_cpu,)).lead is None, "a CPU tier measured nothing this CPU build could not"


def test_a_tier_that_printed_this_builds_output_says_so_instead_of_repeating_it(
    recorded: tuple[Path, Recording],
) -> None:
    # The recording was made here, from this cache: the same output and the same claims, block for block.
    root, recording = recorded
    html, _ = render(root, (recording,))
    assert "tabbed-set" not in html, "no tabs where every machine printed the same"
    assert html.count("The same output, and the same claims held, on ") == 3
    assert html.count('<span class="floors-tiers__agree" data-tier="other"') == 3
    assert html.count("sum is 45") == 1, "the output is on the page once"


def test_a_tier_recorded_while_other_work_held_its_cores_says_so_on_its_tab(
    recorded: tuple[Path, Recording],
) -> None:
    root, recording = recorded
    elsewhere = as_elsewhere(recording, "sum is 45, measured elsewhere")
    busy = replace(elsewhere, cpu_share=0.47)
    html, _ = render(root, (busy,))
    assert re.findall(LABEL, html) == ["This build", "other (contended)"] * 3
    assert "while other work held its cores (a busy process got 47% of one)" in html
    quiet, _ = render(root, (replace(elsewhere, cpu_share=0.99),))
    assert "contended" not in quiet and "other work held" not in quiet
    assert not contended(None), "a recording that was never measured claims nothing either way"


@pytest.mark.waits
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity to share one core")
def test_the_recorders_share_of_a_core_falls_beside_a_busy_process_on_it() -> None:
    """One core, shared with a spinning process: the recorder's measure must call that contended."""
    code = (
        "import os, subprocess, sys\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        f"hog = subprocess.Popen([sys.executable, '-c', {HOG!r}])\n"
        "from pytorch_floors.recordings.contention import cpu_share\n"
        "try:\n    print(cpu_share())\nfinally:\n    hog.kill()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert float(done.stdout) < CONTENDED_BELOW, done.stdout


def test_a_machines_line_counts_its_threads_in_english() -> None:
    one_core = replace(GPU, cpu_capability="DEFAULT", threads=1)
    assert "(CPU capability DEFAULT, 1 thread)" in one_core.line()
    assert "(CPU capability AVX512, 16 threads)" in GPU.line() and "AVX512 kernels" not in GPU.line()


def test_a_pages_recorded_outputs_go_to_one_file_beside_it_and_its_tabs_keep_their_keys(
    recorded: tuple[Path, Recording],
) -> None:
    root, recording = recorded
    lazy = LazyOutputs()
    html, _ = render(root, (as_elsewhere(recording, "sum is 45, measured elsewhere"),), lazy=lazy)
    assert "measured elsewhere" not in html, "the page holds no recorded output"
    keys = re.findall(r'data-floors-tier-output="([^"]+)"', html)
    assert keys == ["1-other", "2-other", "3-other"]
    files = lazy.files()
    assert list(files) == [LazyOutputs.FILE], "the home page's file is at the site's root"
    outputs = json.loads(files[LazyOutputs.FILE])
    assert sorted(outputs) == keys and "measured elsewhere" in outputs["3-other"]
    assert "Claims, checked on the numbers recorded on other" in outputs["1-other"], "its claims go with it"
    assert LazyOutputs({"floors/3-x/": {"1-a": "x"}}).files() == {"floors/3-x/floors-tiers.json": '{"1-a":"x"}'}


def test_a_chinese_page_names_this_build_and_each_machine_in_chinese(recorded: tuple[Path, Recording]) -> None:
    # The tab read "This build", and a machine "a single-vCPU runner …: NVIDIA H200 + 16 threads, …" on zh pages.
    root, recording = recorded
    tier = tier_named("one-core-scalar")
    assert tier is not None
    elsewhere = as_elsewhere(recording, "sum is 45, measured elsewhere")
    elsewhere = replace(elsewhere, tier=tier.name, stands_for=tier.stands_for)
    html, _ = render(root, (elsewhere,), language="zh")
    labels = re.findall(r"<label [^>]*>([^<]*)", html)  # the label's own words, before the machine's kind
    assert labels == ["本次构建", tier.name] * 3
    assert f"{tier.stands_for_zh}：NVIDIA H200 + 16 个线程，torch 2.11.0，录制于 {recording.recorded}" in html
    assert "This build" not in html and tier.stands_for not in html and "threads" not in html


def test_the_chinese_build_reports_machines_say_what_each_tier_stands_for_and_each_claim_in_chinese(
    recorded: tuple[Path, Recording],
) -> None:
    """The zh build report's Machines section said each tier's kind ("a single-vCPU runner without AVX2 or AVX-512
    kernels") and each claim's statement in English; the tabs said them in Chinese."""
    from pytorch_floors.recordings.report import machines_html  # noqa: PLC0415

    root, recording = recorded
    tier = tier_named("one-core-scalar")
    assert tier is not None
    elsewhere = replace(as_elsewhere(recording, "sum is 45"), tier=tier.name, stands_for=tier.stands_for)
    _, engine = render(root, (elsewhere,))
    statement = next(c.statement for b in elsewhere.blocks for c in b.claims)
    planned = [(b.page, b.block_id) for b in elsewhere.blocks]
    zh = machines_html(
        engine.records, [elsewhere], planned, lambda page: page, PageLanguage("zh", {statement: "和是四十五"})
    )
    assert tier.stands_for_zh in zh and tier.stands_for not in zh
    assert "和是四十五" in zh and f">{html_text.escape(statement, quote=False)}<" not in zh
    en = machines_html(engine.records, [elsewhere], planned, lambda page: page, "en")
    assert tier.stands_for in en and html_text.escape(statement, quote=False) in en
