"""What changed between editions: section digests, manifests, the comparison and its page."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, Build
from pytorch_floors.editions.anchors import read_lock
from pytorch_floors.editions.manifest import (
    MANIFEST_NAME,
    ManifestRecorder,
    build_manifest,
    compare,
    load_edition_manifest,
    main,
    render_markdown,
    section_digests,
)

EDITIONS = Path(__file__).parent / "fixtures" / "editions"

PAGE = """
<h1 id="top">Floor 3</h1><p>Intro, not in any section.</p>
<h2 id="the-idea">The idea<a class="headerlink" href="#the-idea">¶</a></h2>
<p>Every call crosses <em>once</em>.</p>
<h3 id="crossing-cost">The fixed cost<a class="floors-copy-link" href="https://x/#crossing-cost">icon</a></h3>
<p>One op costs microseconds.</p>
<div class="floors-proof" data-proof="snippets/3-boundary/crossing_cost.py">
<details class="floors-proof__source"><summary>Proof source</summary><pre>print(1)</pre></details>
<p class="floors-proof__meta"><a href="x.py" download>Download</a>
<span class="floors-proof__time">ran in {t} s</span></p>
<div class="floors-proof__output"><div class="highlight"><pre><code>add: {value} us</code></pre></div></div>
</div>
<p>After the proof.</p>
"""


def edition(name: str) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((EDITIONS / name / "manifest.json").read_text(encoding="utf-8"))
    return manifest


def digests(t: str = "0.12", value: str = "4.1", extra: str = "") -> dict[str, Any]:
    return section_digests(PAGE.format(t=t, value=value) + extra, "Floor 3 · The boundary")


def test_sections_split_at_headings_and_keep_titles() -> None:
    sections = digests()
    assert list(sections) == ["the-idea", "crossing-cost"]
    assert sections["the-idea"].title == "The idea"
    assert sections["crossing-cost"].title == "The fixed cost"
    assert sections["the-idea"].outputs is None
    assert sections["crossing-cost"].outputs is not None


def test_timings_sources_and_link_icons_do_not_change_digests() -> None:
    assert digests(t="0.12") == digests(t="9.99")


def test_an_output_change_changes_only_the_output_digest() -> None:
    before, after = digests(value="4.1")["crossing-cost"], digests(value="5.3")["crossing-cost"]
    assert before.prose == after.prose
    assert before.outputs != after.outputs


def test_a_prose_change_changes_only_that_sections_prose_digest() -> None:
    before, after = digests(), digests(extra="<p>A new sentence.</p>")
    assert before["crossing-cost"].prose != after["crossing-cost"].prose
    assert before["crossing-cost"].outputs == after["crossing-cost"].outputs
    assert before["the-idea"] == after["the-idea"]


def test_manifest_keeps_locked_sections_and_aliases_only() -> None:
    pages = {"floors/3-boundary/": digests()}
    lock = ["floors/3-boundary/", "floors/3-boundary/#crossing-cost", "floors/3-boundary/#old", "other/#x"]
    manifest = build_manifest("2026.12", pages, lock, {"floors/3-boundary/": {"old": "crossing-cost"}})
    assert list(manifest["sections"]) == ["floors/3-boundary/#crossing-cost"]
    assert manifest["sections"]["floors/3-boundary/#crossing-cost"]["page"] == "Floor 3 · The boundary"
    assert manifest["aliases"] == {"floors/3-boundary/#old": "floors/3-boundary/#crossing-cost"}
    json.dumps(manifest)


def test_manifest_refuses_a_locked_section_the_page_lost() -> None:
    with pytest.raises(ValueError, match="floors/3-boundary/#gone"):
        build_manifest("2026.12", {"floors/3-boundary/": digests()}, ["floors/3-boundary/#gone"], {})


def test_the_recorder_titles_sections_from_the_registry_and_writes_json(tmp_path: Path) -> None:
    recorder = ManifestRecorder(["floors/3-boundary/#crossing-cost", "./#the-idea"], {})
    recorder.record("floors/3-boundary.md", PAGE.format(t="1", value="2"))
    recorder.record("index.md", PAGE.format(t="1", value="2"))
    manifest = json.loads(recorder.write(tmp_path, "2026.12").read_text(encoding="utf-8"))
    assert manifest["sections"]["floors/3-boundary/#crossing-cost"]["page"] == "Floor 3 · The boundary"
    assert manifest["sections"]["./#the-idea"]["page"] == "Part 0 · The map"


@pytest.mark.slow
def test_the_built_site_publishes_a_manifest_of_every_locked_section(built_site: Build) -> None:
    manifest = json.loads((built_site.site / MANIFEST_NAME).read_text(encoding="utf-8"))
    locked = {entry for entry in read_lock(ROOT / "anchors.lock") if "#" in entry}
    assert set(manifest["sections"]) | set(manifest["aliases"]) == locked
    assert not set(manifest["sections"]) & set(manifest["aliases"])
    assert manifest["sections"]["floors/3-boundary/#crossing-cost"]["outputs"] is not None


def test_two_fixture_editions_compare_section_by_section() -> None:
    changes = compare(edition("2026.11"), edition("2026.12"))
    assert changes.added == ["floors/5-autograd/#saved-tensors"]
    assert changes.reworded == ["floors/3-boundary/#parser-error", "floors/3-boundary/#tiny-add-three-ways"]
    assert changes.outputs == ["floors/3-boundary/#crossing-cost"]
    assert changes.removed == ["floors/5-autograd/#old-diagram"]
    assert changes.aliased == {"floors/3-boundary/#tiny-add": "floors/3-boundary/#tiny-add-three-ways"}
    assert not changes.unchanged


def test_an_edition_compared_with_itself_has_no_changes() -> None:
    changes = compare(edition("2026.12"), edition("2026.12"))
    assert changes.unchanged
    assert "None." in render_markdown(changes, language="en")


def test_the_page_lists_every_group_with_links() -> None:
    page = render_markdown(
        compare(edition("2026.11"), edition("2026.12")), base="https://x.invalid/2026.12/", language="en"
    )
    assert page.startswith("# What changed since edition 2026.11")
    for heading in ("Sections added (1)", "Sections reworded (2)", "proof outputs changed (1)", "removed (1)"):
        assert heading in page
    added = (
        "[Floor 5 · The graph › What backward keeps alive](https://x.invalid/2026.12/floors/5-autograd/#saved-tensors)"
    )
    assert f"- {added}" in page
    assert "- `floors/3-boundary/#tiny-add` now lands on [Floor 3 · The boundary › A tiny add, three ways" in page


def test_an_unknown_manifest_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format"):
        compare({**edition("2026.11"), "format": 99}, edition("2026.12"))


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def test_the_previous_edition_is_read_from_gh_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    (repo / "2026.11").mkdir(parents=True)
    (repo / "2026.11" / "manifest.json").write_text((EDITIONS / "2026.11" / "manifest.json").read_text())
    git(repo, "init", "-q", "-b", "gh-pages")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "edition 2026.11")
    assert load_edition_manifest("2026.11", repo) == edition("2026.11")
    with pytest.raises(ValueError, match=r"gh-pages:2099\.01/manifest\.json"):
        load_edition_manifest("2099.01", repo)
    current = str(EDITIONS / "2026.12" / "manifest.json")
    assert main(["--since", "2026.11", "--repo", str(repo), "--current", current]) == 0
    assert "Sections added (1)" in capsys.readouterr().out


def test_command_writes_the_page_from_a_local_manifest(tmp_path: Path) -> None:
    out = tmp_path / "changes.md"
    since, current = (str(EDITIONS / name / "manifest.json") for name in ("2026.11", "2026.12"))
    assert main(["--since-file", since, "--current", current, "--out", str(out)]) == 0
    assert "Sections reworded (2)" in out.read_text(encoding="utf-8")
