"""What a prose edit's rebuild under `make serve` reads again: only what changed (issue 56's loop, ≤ 2 s).

On two AMD EPYC cores a prose edit of Floor 3 took 2.4 s to rebuild its dozen pages: every build read again each
written page's headings for search, each recording, each English lab through jupytext and each proof's docstring,
and asked the modification time of a package template for every fragment it rendered. A serve session's `Memo`
keeps each of these while its files are unchanged; the package's templates are never asked (an edit of the
package starts serve again). How long it takes is measured by `make bench` (`bench/build.py`); these tests hold
the pattern: read once while unchanged, read again once changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import pytorch_floors.plugin.parts.recordings as recordings_part
from conftest import ROOT
from pytorch_floors.execution import scan_markdown
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.plugin import languages, pages
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.serve.changes import Memo
from pytorch_floors.recordings import compare
from pytorch_floors.recordings.schema import RecordingError, read_recordings
from pytorch_floors.render.templates import render


def _counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    """Count the calls of `module.name` (each call's first argument), calling through."""
    calls: list[object] = []
    real = getattr(module, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def _touch_later(path: Path, text: str) -> None:
    """Write `path` again, its modification time surely another."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_rendered_fragment_never_asks_a_package_templates_modification_time(monkeypatch: pytest.MonkeyPatch) -> None:
    render("build_mark.html", "en", name="x", content="y")  # loaded once
    asked = _counted(monkeypatch, os.path, "getmtime")
    for _ in range(20):
        render("build_mark.html", "en", name="x", content="y")
    assert asked == [], "Jinja asked a template's modification time for each fragment"


def test_written_headings_are_read_again_only_for_a_page_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    for url in ("a/", "b/"):
        (site / url).mkdir(parents=True)
        (site / url / "index.html").write_text(f'<h2 id="{url[0]}">Heading {url[0]}</h2>', encoding="utf-8")
    (site / "search").mkdir()
    docs = [{"location": f"{url}#{url[0]}", "title": f"Heading {url[0]}", "text": ""} for url in ("a/", "b/")]
    index = json.dumps({"config": {"lang": ["en"], "separator": "[\\s]+"}, "docs": docs})
    read = _counted(monkeypatch, languages, "written_headings")
    memo = Memo()
    for _ in range(3):
        (site / "search" / "search_index.json").write_text(index, encoding="utf-8")  # Material writes it each build
        assert languages.split_search_index(site, memo) == {"en": 2, "zh": 0}
    assert len(read) == 2, "each page's headings read once while it is unchanged"
    _touch_later(site / "a" / "index.html", '<h2 id="a">Heading a, again</h2>')
    (site / "search" / "search_index.json").write_text(index, encoding="utf-8")
    languages.split_search_index(site, memo)
    assert len(read) == 3 and "Heading a, again" in str(read[-1]), "the page written again is read again"


def test_the_recordings_are_read_again_only_once_one_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    for tier in ("ci-2core", "one-core-scalar"):
        source = ROOT / "recordings" / tier / "recording.json"
        (project / "recordings" / tier).mkdir(parents=True)
        (project / "recordings" / tier / "recording.json").write_bytes(source.read_bytes())
    read = _counted(monkeypatch, recordings_part, "read_recordings")
    memo = Memo()
    settings = Settings(recordings="recordings")
    first = recordings_part.Recordings(project, settings, memo).recordings
    assert recordings_part.Recordings(project, settings, memo).recordings == first and len(read) == 1
    changed = project / "recordings" / "ci-2core" / "recording.json"
    _touch_later(changed, changed.read_text(encoding="utf-8"))
    recordings_part.Recordings(project, settings, memo)
    assert len(read) == 2, "a recording written again is read again, and checked as untrusted input again"
    (project / "recordings" / "empty-tier").mkdir()
    with pytest.raises(RecordingError, match=r"holds recording\.json"):
        recordings_part.Recordings(project, settings, memo)  # a tier added: its folder is read, and refused


def test_a_proofs_summary_is_read_again_only_once_its_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proof = tmp_path / "snippets" / "proof.py"
    proof.parent.mkdir()
    proof.write_text('"""First summary."""\nprint(1)\n', encoding="utf-8")
    page = '```python exec="1" id="x"\n--8<-- "snippets/proof.py"\n```\n'
    planned = {"index.md": scan_markdown(page, "index.md", tmp_path)}
    read = _counted(monkeypatch, pages, "first_docstring_line")
    memo = Memo()
    for _ in range(3):
        assert "First summary." in pages.proofs_page(planned, tmp_path, "en", memo)
    assert len(read) == 1, "a proof's docstring parsed once while its file is unchanged"
    _touch_later(proof, '"""Second summary."""\nprint(1)\n')
    assert "Second summary." in pages.proofs_page(planned, tmp_path, "en", memo) and len(read) == 2


def test_a_figures_output_is_sanitised_once_however_many_tiers_and_pages_compare_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each HTML output was written out again from the allow-list once per tier, by each page and summary that
    # shows the tiers: a fifth of a prose edit's rebuild went to the build report's machines table alone.
    recordings = read_recordings(ROOT / "recordings")
    page, block_id = next(
        (block.page, block.block_id) for recording in recordings for block in recording.blocks if block.html
    )
    html = [r for r in recordings if (b := r.block(page, block_id)) is not None and b.html]
    assert len(html) >= 2, "the figure is recorded on several tiers"
    compare._shown.cache_clear()
    sanitised = _counted(monkeypatch, compare, "allowed_html")
    result = BlockResult(page, block_id, None, "cached", 1.0, output='<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    first = compare.tiers_for(result, recordings)
    assert compare.tiers_for(result, recordings) == first and compare.tiers_for(result, recordings, "zh")
    assert len(sanitised) == 1, f"sanitised {len(sanitised)} times for {len(html)} tiers and three pages"
