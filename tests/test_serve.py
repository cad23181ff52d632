"""The author's loop under `mkdocs serve`: an edit renders again only what it changed; a built site stays whole.

Also what the loop prints: pip's progress while `make` sets up, the labs' progress like the proofs', and
no warning from the lab kernel about its local transport.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path
from typing import Any
from unittest import mock

import jupytext
import psutil
import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort
from test_engine import gone
from test_labs import FAILING_LAB, _lab_fixture
from watchdog.events import FileModifiedEvent
from watchdog.observers.polling import PollingObserver

import pytorch_floors.plugin.plugin as plugin_module
from conftest import FIXTURE_CONFIG, LAB_CONFIG, ROOT, Build, FixtureSite, needs_build, run_mkdocs
from pytorch_floors.editions.verify import MARK
from pytorch_floors.execution.engine import SKIPPED_OUTPUT, ProofFailure
from pytorch_floors.execution.facts import torch_facts
from pytorch_floors.execution.scan import scan_markdown
from pytorch_floors.i18n.languages import english_source
from pytorch_floors.i18n.messages import t
from pytorch_floors.labs import kernel
from pytorch_floors.plugin.pages import FIXED_IN_A_SESSION, marker_contents
from pytorch_floors.plugin.plugin import FloorsPlugin
from pytorch_floors.plugin.serve import (
    BACKGROUND_VARIABLE,
    FAILURES_FILE,
    HEARTBEAT_S,
    LATER_FILE,
    PARTIAL_ATTRIBUTE,
    PENDING_ATTRIBUTE,
    PENDING_TEXT,
    SIGNALS_VARIABLE,
    EditWatch,
    PageInput,
    PageState,
    Plan,
    ServeSession,
    api_later,
    inputs_digest,
    interrupt_on_terminate,
    mark_pending,
    merge_search_index,
    nudge,
    page_digest,
    partial_note,
    partial_report,
    pending_page,
    plan_rebuild,
    read_background_failures,
    report_background_failure,
    title_key,
    with_sources,
)
from pytorch_floors.render.templates import render

SERVE_URL = "http://127.0.0.1:8000/"

# --- what the session decides: which pages a build renders ---------------------------------------


def test_a_background_failure_is_read_back_whole_and_a_line_that_is_not_one_is_named_not_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    failure = ProofFailure(
        "floors/3-x.md", "cost", ("snippets/3-x/cost.py", 12), "ValueError: <b>no</b>", "tb", output="step 1\nstep 2"
    )
    report_background_failure(tmp_path, "key-1", failure)
    with (tmp_path / FAILURES_FILE).open("a", encoding="utf-8") as file:
        file.write('{"key": "key-2", "page": 3}\nnot json\n{"key": "key-3", "page": "half')  # and one half-written
    read = read_background_failures(tmp_path)
    assert list(read) == ["key-1"] and str(read["key-1"]) == str(failure) and read["key-1"].details == "tb"
    assert read["key-1"].output == "step 1\nstep 2", "what it printed before it failed, for the session's banner"
    assert [r.getMessage()[:40] for r in caplog.records] == [
        "serve: line 2 of the background build's ",
        "serve: line 3 of the background build's ",
    ]
    assert read_background_failures(None) == {} and read_background_failures(tmp_path / "none") == {}


def _inputs(**pages: PageInput) -> dict[str, PageInput]:
    return {name.replace("_", "/") + ".md": seen for name, seen in pages.items()}


def _states(pages: dict[str, PageInput]) -> dict[str, PageState]:
    return {page: PageState(url=page, digest=seen.digest, title_key=seen.title_key) for page, seen in pages.items()}


def test_a_prose_edit_renders_its_page_and_the_pages_that_show_the_whole_build() -> None:
    report = PageInput("3", None, shows=frozenset({"build-report"}))
    before = _inputs(a=PageInput("1", "A"), b=PageInput("2", "B"), report=report)
    after = {**before, "a.md": PageInput("1-edited", "A")}
    assert plan_rebuild(after, "inputs", None, None) == Plan(None, "first build")
    assert plan_rebuild(after, "inputs", _states(before), "inputs").rebuilt == frozenset({"a.md", "report.md"})
    # Nothing changed: the pages that show the whole build still render (a proof may have run meanwhile).
    assert plan_rebuild(before, "inputs", _states(before), "inputs").rebuilt == frozenset({"report.md"})


def test_a_page_whose_markers_show_what_they_showed_is_not_rendered_again() -> None:
    # A prose edit rendered the Cite and Proofs pages (and their twins) again: 12 pages for one edit, where
    # 8 could show anything new (the page, its twin, the build report and What changed, in both languages).
    before = _inputs(
        a=PageInput("1", "A"),
        b=PageInput("5", "B"),
        cite=PageInput("2", "Cite", shows=frozenset({"edition", "bibtex"})),
        proofs=PageInput("3", "Proofs", shows=frozenset({"proofs"})),
        report=PageInput("4", "Report", shows=frozenset({"build-report", "machines"})),
    )
    after = {**before, "a.md": PageInput("1-edited", "A")}
    shown = {"edition": "", "bibtex": "", "proofs": "blocks"}

    def plan(shown_now: dict[str, str], pages: dict[str, PageInput] = after) -> frozenset[str] | None:
        return plan_rebuild(pages, "i", _states(before), "i", shown=shown_now, previous_shown=shown).rebuilt

    assert plan(shown) == frozenset({"a.md", "report.md"}), "the report shows what no digest says"
    assert plan(shown | {"proofs": "a block added"}) == frozenset({"a.md", "proofs.md", "report.md"})
    assert plan({"edition": "", "bibtex": ""}) == frozenset({"a.md", "proofs.md", "report.md"}), "not known: renders"
    edited = {**after, "cite.md": PageInput("2-edited", "Cite", shows=frozenset({"edition", "bibtex"}))}
    assert plan(shown, edited) == frozenset({"a.md", "cite.md", "report.md"}), "a page's own edit renders it"
    first_known = plan_rebuild(after, "i", _states(before), "i", shown=shown, previous_shown={})
    assert first_known.rebuilt == frozenset({"a.md", "cite.md", "proofs.md", "report.md"})


def test_the_proofs_pages_digest_changes_with_its_blocks_and_proofs_not_with_prose(tmp_path: Path) -> None:
    proof = tmp_path / "snippets" / "p.py"
    proof.parent.mkdir()
    proof.write_text('"""Shows one thing."""\nprint(1)\n', encoding="utf-8")
    page = '# A\n\nProse.\n\n```python exec="1" id="one"\n--8<-- "snippets/p.py"\n```\n'

    def digests(text: str) -> dict[str, str]:
        return marker_contents({"a.md": scan_markdown(text, "a.md", tmp_path)}, tmp_path)

    first = digests(page)
    assert first["proofs"] == digests(page.replace("Prose.", "More prose, and a sentence."))["proofs"]
    assert first["proofs"] != digests(page.replace('id="one"', 'id="two"'))["proofs"], "a block renamed"
    assert set(FIXED_IN_A_SESSION) <= set(first) and all(first[name] == "" for name in FIXED_IN_A_SESSION)
    proof.write_text('"""Shows another thing."""\nprint(1)\n', encoding="utf-8")
    assert first["proofs"] != digests(page)["proofs"], "its proof's summary changed"


def test_an_english_edit_renders_its_translated_page_too() -> None:
    # The twin shows the English page's blocks and, where it is behind, its sections: an English edit
    # left a dirty serve showing the translated page as it was.
    before = with_sources(
        {"a.md": PageInput("1", "A"), "zh/a.md": PageInput("2", "A zh"), "b.md": PageInput("3", "B")}, english_source
    )
    after = with_sources({**before, "a.md": PageInput("1-edited", "A")}, english_source)
    assert plan_rebuild(after, "inputs", _states(before), "inputs").rebuilt == frozenset({"a.md", "zh/a.md"})
    translated_only = with_sources({**before, "zh/a.md": PageInput("2-edited", "A zh")}, english_source)
    assert plan_rebuild(translated_only, "inputs", _states(before), "inputs").rebuilt == frozenset({"zh/a.md"})


def test_what_changes_every_page_makes_a_whole_build() -> None:
    before = _inputs(a=PageInput("1", "A"), b=PageInput("2", "B"))
    states = _states(before)
    assert not plan_rebuild(before, "other inputs", states, "inputs").partial, "configuration, theme, pins"
    assert not plan_rebuild({**before, "c.md": PageInput("3")}, "inputs", states, "inputs").partial, "a new page"
    assert not plan_rebuild({"a.md": before["a.md"]}, "inputs", states, "inputs").partial, "a removed page"
    retitled = plan_rebuild({**before, "a.md": PageInput("1-edited", "A, retitled")}, "inputs", states, "inputs")
    assert not retitled.partial and "a.md" in retitled.why, "the navigation shows every page's title"
    everything = plan_rebuild({"a.md": PageInput("x", "A"), "b.md": PageInput("y", "B")}, "inputs", states, "inputs")
    assert not everything.partial


def test_api_pages_and_labs_render_together() -> None:
    before = {
        "reference/a.md": PageInput("1", "A", api=True),
        "reference/b.md": PageInput("2", "B", api=True),
        "labs/1-program.py": PageInput("3", lab=True),
        "labs/2-python.py": PageInput("4", lab=True),
        "index.md": PageInput("5", "Home"),
    }
    states = _states(before)
    api = plan_rebuild({**before, "reference/a.md": PageInput("1-edited", "A", api=True)}, "i", states, "i")
    assert api.rebuilt == frozenset({"reference/a.md", "reference/b.md"}), "one inventory, one set of cross-references"
    lab = plan_rebuild({**before, "labs/2-python.py": PageInput("4-edited", lab=True)}, "i", states, "i")
    assert lab.rebuilt == frozenset({"labs/1-program.py", "labs/2-python.py"}), "mkdocs-jupyter forgets labs it skips"


def test_a_page_depends_on_what_it_includes_and_what_that_imports(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    helper = tmp_path / "snippets" / "helper.py"
    helper.write_text("VALUE = 1\n", encoding="utf-8")
    proof = tmp_path / "snippets" / "proof.py"
    proof.write_text("from snippets.helper import VALUE\nprint(VALUE)\n", encoding="utf-8")
    other = tmp_path / "snippets" / "other.py"
    other.write_text("print(2)\n", encoding="utf-8")
    page = '```python exec="1" id="p"\n--8<-- "snippets/proof.py:1:2"\n```\n'
    roots = (tmp_path / "src", tmp_path)

    def digest() -> str:
        return page_digest(page, tmp_path, roots)

    first = digest()
    other.write_text("print(3)\n", encoding="utf-8")
    assert digest() == first, "a file the page neither includes nor imports"
    helper.write_text("VALUE = 2\n", encoding="utf-8")
    second = digest()
    assert second != first, "a module the included proof imports"
    proof.write_text(proof.read_text(encoding="utf-8") + "print('more')\n", encoding="utf-8")
    assert digest() != second, "the included proof"


def test_a_pages_title_is_read_as_the_navigation_reads_it() -> None:
    assert title_key("---\ndescription: x\ntitle: From the front matter\n---\n\n# Heading\n") == "From the front matter"
    assert title_key("---\ndescription: x\n---\n\nSome prose.\n\n# The heading\n\nMore.\n") == "The heading"
    assert title_key("## Only a section\n") is None


def test_the_configuration_and_the_overrides_change_every_page(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\n", encoding="utf-8")
    overrides = tmp_path / "overrides"
    (overrides / "partials").mkdir(parents=True)
    (overrides / "partials" / "header.html").write_text("<header>", encoding="utf-8")
    first = inputs_digest(config, tmp_path, overrides)
    assert inputs_digest(config, tmp_path, overrides) == first
    (overrides / "partials" / "header.html").write_text("<header class=x>", encoding="utf-8")
    second = inputs_digest(config, tmp_path, overrides)
    assert second != first
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\n", encoding="utf-8")
    assert inputs_digest(config, tmp_path, overrides) != second


def test_the_search_index_of_a_partial_build_keeps_the_other_pages(tmp_path: Path) -> None:
    index = tmp_path / "search_index.json"
    kept = {
        "./": [{"location": "", "text": "home"}, {"location": "#s", "text": "home section"}],
        "a/": [{"location": "a/", "text": "old a"}],
        "b/": [{"location": "b/", "text": "b"}],
    }
    # Material wrote the entries of the pages this build rendered: the root page and a/.
    written = [{"location": "", "text": "home, edited"}, {"location": "a/", "text": "new a"}]
    index.write_text(json.dumps({"config": {}, "docs": written}), encoding="utf-8")
    merged = merge_search_index(index, {"./", "a/"}, kept, ["./", "a/", "b/"])
    assert [e["text"] for e in json.loads(index.read_text(encoding="utf-8"))["docs"]] == ["home, edited", "new a", "b"]
    assert merged["b/"] == kept["b/"] and merged["./"] == [written[0]]


def test_a_partial_report_names_the_pages_it_rendered() -> None:
    whole = json.loads(partial_report(json.dumps({"build": {"id": "x"}, "blocks": []}), None))
    assert whole["build"] == {"id": "x", "partial": False, "rebuilt": None}
    partial = json.loads(partial_report(json.dumps({"build": {"id": "x"}}), {"b.md", "a.md"}))
    assert partial["build"]["partial"] is True and partial["build"]["rebuilt"] == ["a.md", "b.md"]
    assert partial_note(None, "en") == ""
    note = partial_note({"a.md", "floors/3-boundary.md"}, "en")
    assert PARTIAL_ATTRIBUTE in note and "docs/a.md" in note and "docs/floors/3-boundary.md" in note


# --- a serve session, in-process: what a dirty reload renders and keeps ---------------------------

SEARCH_CONFIG = FIXTURE_CONFIG.replace("plugins:\n  - floors\n", "plugins:\n  - search\n  - floors\n")


@pytest.fixture
def no_restart(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process session must not `execv` the test run when the package changes on disk meanwhile."""
    monkeypatch.setattr(plugin_module, "restart_serve", lambda site_dir: None)


@contextlib.contextmanager
def serve_session(config_file: Path, site: Path, *, dirty: bool = True) -> Iterator[Callable[[], Any]]:
    """Builds as `mkdocs serve [--dirty] --no-livereload` runs them: one plugin, a fresh configuration per build.

    Without live reload nothing would show a page again once a background build had run its proofs:
    these builds run them themselves.
    """
    config = load_config(str(config_file), site_dir=str(site))
    with mock.patch.object(sys, "argv", ["mkdocs", "serve", "--no-livereload"]):
        config.plugins.on_startup(command="serve", dirty=dirty)

    def rebuild() -> Any:
        again = load_config(str(config_file), site_dir=str(site))
        build(again, serve_url=SERVE_URL, dirty=dirty)
        return again

    try:
        build(config, serve_url=SERVE_URL, dirty=dirty)
        yield rebuild
    finally:
        config.plugins.on_shutdown()
        config.plugins.on_startup(command="build", dirty=False)  # the next test's build is not serving


def _three_pages(site: FixtureSite) -> None:
    site.write("mkdocs.yml", SEARCH_CONFIG)
    site.page("index.md", "# Home\n\nThe home page, of edition <!-- floors:edition -->.\n")
    site.page("a.md", '# Aye\n\nFirst prose.\n\n```python exec="1" id="a"\nprint("a says", 1)\n```\n')
    site.page("b.md", '# Bee title\n\nOther prose.\n\n```python exec="1" id="b"\nprint("b says", 2)\n```\n')
    site.page("c.md", "# Sea\n\n<!-- floors:build-report -->\n")


def _html(site: Path, page: str) -> Path:
    return site / page / "index.html"


@pytest.mark.build
def test_a_dirty_reload_renders_the_edited_page_and_not_the_others(
    fixture_site: FixtureSite, no_restart: None, caplog: pytest.LogCaptureFixture
) -> None:
    _three_pages(fixture_site)
    root, site = fixture_site.root, fixture_site.root / "out"
    cache = root / ".cache" / "floors-exec"
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.pytorch_floors")
    with serve_session(root / "mkdocs.yml", site) as rebuild:
        untouched = {page: _html(site, page).stat().st_mtime_ns for page in ("", "b", "c")}
        entries = sorted(p.name for p in cache.rglob("*") if p.is_file())
        time.sleep(0.05)  # a rewritten file gets another modification time
        page = root / "docs" / "a.md"
        page.write_text(page.read_text(encoding="utf-8").replace("First prose.", "An edited sentence."))
        caplog.clear()
        rebuild()
        rendered = _html(site, "a").read_text(encoding="utf-8")
        assert "An edited sentence." in rendered and "a says 1" in rendered
        assert _html(site, "b").stat().st_mtime_ns == untouched["b"], "b.md did not change: it is not rendered again"
        assert _html(site, "").stat().st_mtime_ns == untouched[""], "the edition it shows is the session's"
        assert _html(site, "c").stat().st_mtime_ns != untouched["c"], "c.md shows the build report: it renders"
        assert "serve: 2 of 4 pages render again: a.md, c.md" in caplog.text
        # The navigation of the page rendered again names the pages that were not, by their titles.
        assert re.search(r">\s*Bee title\s*<", rendered), "b.md's title, kept from the build that rendered it"
        report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
        assert report["build"]["partial"] is True and report["build"]["rebuilt"] == ["a.md", "c.md"]
        assert [(b["page"], b["block_id"], b["status"]) for b in report["blocks"]] == [
            ("a.md", "a", "cached"),
            ("b.md", "b", "ran"),  # its record from the build that rendered it
        ]
        marks = {re.search(f'<meta name="{MARK}" content="([0-9a-f]+)">', _html(site, p).read_text())[1] for p in "abc"}  # type: ignore[index]
        assert marks == {report["build"]["id"]}, "every page carries the session's mark, as verify requires"
        docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
        texts = [d["text"] for d in docs if d["location"].startswith("a/")]
        assert any("An edited sentence." in t for t in texts) and not any("First prose." in t for t in texts)
        assert any(d["location"].startswith("b/") for d in docs), "b.md's entries, kept"
        assert len([d for d in docs if d["location"] == "a/"]) == 1, "a.md's entries once, not twice"
        assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == entries, "a partial build prunes nothing"


@pytest.mark.build
def test_a_deleted_include_fails_its_block_on_the_page_and_the_session_keeps_serving(
    fixture_site: FixtureSite, no_restart: None, caplog: pytest.LogCaptureFixture
) -> None:
    fixture_site.page("index.md", "# Home\n\nThe home page.\n")
    fixture_site.page("a.md", '# Aye\n\nProse.\n\n```python exec="1" id="inc"\n--8<-- "snippets/x.py"\n```\n')
    fixture_site.page("proofs.md", "# Proofs\n\n<!-- floors:proofs -->\n")  # it read every proof's docstring
    snippet = fixture_site.write("snippets/x.py", '"""The included proof."""\nprint("x says", 1)\n')
    root, site = fixture_site.root, fixture_site.root / "out"
    where = "docs/a.md › block 'inc' (docs/a.md:10)"  # the include's line, under the front matter
    with serve_session(root / "mkdocs.yml", site) as rebuild:
        assert "x says 1" in _html(site, "a").read_text(encoding="utf-8")
        assert (site / "snippets" / "x.py").is_file(), "the proof's download"
        snippet.unlink()
        rebuild()  # pymdownx.snippets raised SnippetMissingError here: `mkdocs serve` stopped answering
        shown = unescape(_html(site, "a").read_text(encoding="utf-8"))
        assert "floors-proof-failure" in shown and where in shown and "snippets/x.py" in shown and "missing" in shown
        report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
        blocks = [(b["page"], b["block_id"], b["status"]) for b in report["blocks"]]
        assert blocks == [("a.md", "inc", "failed")], "recorded as the block's failure"
        assert not (site / "snippets" / "x.py").exists(), "the deleted proof's download is gone from the site"
        assert "missing: deleted or renamed?" in _html(site, "proofs").read_text(encoding="utf-8")
        snippet.write_text('"""The included proof."""\nprint("x says", 2)\n', encoding="utf-8")
        rebuild()
        assert "x says 2" in _html(site, "a").read_text(encoding="utf-8"), "the include came back: the block runs"
    snippet.unlink()
    caplog.clear()
    with pytest.raises(Abort):
        build(load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site"), strict=True))
    assert where in caplog.text and "snippets/x.py" in caplog.text, "a build fails naming page, block, file, line"


@pytest.mark.build
def test_a_renamed_page_is_gone_from_a_dirty_session_and_its_new_name_is_served(
    fixture_site: FixtureSite, no_restart: None
) -> None:
    _three_pages(fixture_site)
    root, site = fixture_site.root, fixture_site.root / "out"
    with serve_session(root / "mkdocs.yml", site) as rebuild:
        assert _html(site, "b").is_file()
        (root / "docs" / "b.md").rename(root / "docs" / "b2.md")
        rebuild()
        assert not _html(site, "b").exists(), "b.md was renamed: /b/ must answer 404"
        assert not (site / "b").exists(), "nor leave an empty folder"
        assert "b says 2" in _html(site, "b2").read_text(encoding="utf-8")
        (root / "docs" / "c.md").unlink()
        rebuild()
        assert not _html(site, "c").exists(), "a deleted page"
        assert _html(site, "b2").is_file() and _html(site, "a").is_file()
        docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
        assert not any(d["location"].startswith(("b/", "c/")) for d in docs), "nor found by search"


@pytest.mark.build
def test_a_serve_session_asks_torch_about_the_machine_once(
    fixture_site: FixtureSite, no_restart: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three_pages(fixture_site)
    asked: list[int] = []
    real = torch_facts

    def counted() -> Any:
        asked.append(1)
        return real()

    monkeypatch.setattr("pytorch_floors.plugin.build.torch_facts", counted)
    root = fixture_site.root
    with serve_session(root / "mkdocs.yml", root / "out", dirty=False) as rebuild:
        rebuild()
        rebuild()
    assert len(asked) == 1, "three builds of one session, one question"


def _dirty_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--dirty", "--site-dir", str(site)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_built_site_renders_every_page_even_when_asked_for_a_dirty_build(fixture_site: FixtureSite) -> None:
    _three_pages(fixture_site)
    root, site = fixture_site.root, fixture_site.root / "site"
    first = _dirty_build(root, site)
    assert first.returncode == 0, first.stderr[-3000:]
    page = root / "docs" / "a.md"
    page.write_text(page.read_text(encoding="utf-8").replace("First prose.", "An edited sentence."))
    second = _dirty_build(root, site)
    assert second.returncode == 0, second.stderr[-3000:]
    report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
    assert report["build"]["partial"] is False and report["build"]["rebuilt"] is None
    for name in ("", "a", "b", "c"):
        html = _html(site, name).read_text(encoding="utf-8")
        assert f'<meta name="{MARK}" content="{report["build"]["id"]}">' in html, f"{name or 'index'} was not rendered"
        assert PARTIAL_ATTRIBUTE not in html
    assert "serve:" not in second.stderr, "a build has no serve session"


def test_a_published_build_has_no_serve_session() -> None:
    plugin = FloorsPlugin()
    plugin.on_startup(command="build", dirty=True)
    assert plugin.session is None
    plugin.on_startup(command="gh-deploy", dirty=True)
    assert plugin.session is None
    plugin.on_startup(command="serve", dirty=True)
    assert plugin.session is not None and plugin.session.dirty
    plugin.on_shutdown()
    assert plugin.session is None


def test_the_real_site_built_has_no_serve_only_marker(built_site: Build) -> None:
    site = needs_build(built_site, "site").site
    report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
    assert report["build"]["partial"] is False and report["build"]["rebuilt"] is None
    # As markup: the API reference names the attributes (as text) where it documents them.
    serve_only = re.compile(
        rf"<[a-z]+\b[^<>]*\s(?:{PARTIAL_ATTRIBUTE}|{PENDING_ATTRIBUTE})[\s>=]|class=\"[^\"]*\bfloors-(?:pending|partial-build|converting)\b"
    )
    marked = [str(p.relative_to(site)) for p in site.rglob("*.html") if serve_only.search(p.read_text("utf-8"))]
    assert marked == []
    pending = mark_pending(pending_page("<article>x</article>", lab=False, language="en"))
    assert serve_only.search(pending), "the check sees a waiting page"
    # A session's first build's placeholders (`plugin.serve.later`): a lab not converted yet, the API reference.
    assert serve_only.search(render("lab_converting.html", "en")), "the check sees a lab's placeholder"
    assert serve_only.search(api_later("::: pytorch_floors.plugin\n", "en")), "and the API reference's"


# --- labs under a session: a partial build keeps their cached runs --------------------------------


LAB = (
    '# %% [markdown]\n# # Lab 1 · Your program\n\n# %%\nprint("the lab ran")\n\n'
    '# %% tags=["checker"]\n# The self-check helpers go here.\n'
)


def _lab_site(site: FixtureSite) -> None:
    site.write("mkdocs.yml", LAB_CONFIG)
    config = (ROOT / "jupyter" / "jupyter_nbconvert_config.json").read_text(encoding="utf-8")
    site.write("jupyter/jupyter_nbconvert_config.json", config)
    site.write("requirements.txt", (ROOT / "requirements.txt").read_text(encoding="utf-8"))
    site.page("index.md", "# Home\n\nThe home page.\n")
    site.write("docs/labs/1-program.py", LAB)


@pytest.mark.build
def test_a_partial_build_keeps_the_labs_cached_runs(fixture_site: FixtureSite, no_restart: None) -> None:
    _lab_site(fixture_site)
    root, site = fixture_site.root, fixture_site.root / "out"
    runs = root / ".cache" / "mkdocs-jupyter"
    with serve_session(root / "mkdocs.yml", site) as rebuild:
        cached = sorted(runs.rglob("*.json"))
        assert cached, "the lab ran and was cached"
        page = root / "docs" / "index.md"
        page.write_text(page.read_text(encoding="utf-8").replace("The home page.", "An edited sentence."))
        rebuild()
        assert sorted(runs.rglob("*.json")) == cached, "mkdocs-jupyter forgot the run of a lab it did not render"
        report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
        assert report["build"]["rebuilt"] == ["index.md"]
        assert [(b["page"], b["status"]) for b in report["blocks"]] == [("labs/1-program.py", "ran")]
        lab = root / "docs" / "labs" / "1-program.py"
        lab.write_text(lab.read_text(encoding="utf-8").replace("the lab ran", "the edited lab ran"))
        rebuild()
        assert "the edited lab ran" in _html(site, "labs/1-program").read_text(encoding="utf-8")


# --- what the loop prints ------------------------------------------------------------------------


def test_setup_shows_pips_progress() -> None:
    """`make serve` and `make test` set up first: minutes of pip, which must not be silent."""
    for target in (".venv/.installed", ".venv-properdocs/.packages"):
        shown = subprocess.run(
            ["make", "--no-print-directory", "-n", "-W", "requirements.txt", target],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        installs = [line for line in shown.splitlines() if "--requirement requirements.txt" in line]
        assert installs and all("--quiet" not in line and "--progress-bar on" in line for line in installs), installs
        assert re.search(r"installing the .* pinned packages of requirements\.txt", shown), shown


@pytest.mark.waits
def test_the_lab_kernel_keeps_its_transport_warning_out_of_the_log(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mkdocs.plugins.pytorch_floors")
    labs = kernel.LabRuns()
    labs.plan_labs(["labs/1-program.py", "labs/2-python.py"])
    code = "import os\nos.write(2, b'the kernel wrote this\\n')\nprint('hi')"
    notebook = jupytext.reads(f"# %% [markdown]\n# # Lab 2 · Python\n\n# %%\n{code}\n", fmt="py:percent")
    executor = kernel.LabExecutePreprocessor(timeout=60, kernel_name="python3")  # type: ignore[no-untyped-call]
    kernel.bind(labs)
    try:
        executor.preprocess(notebook, {"metadata": {"path": str(ROOT)}})
    finally:
        kernel.unbind(labs)
    err = capfd.readouterr().err
    assert "the kernel wrote this" in err, "the kernel's other output still reaches the build's"
    assert not re.search(r"without encryption|insecure", err, re.IGNORECASE), err
    assert "lab 2/2 docs/labs/2-python.py: running (cells limited to 60 s each)" in caplog.text
    assert re.search(r"lab 2/2 docs/labs/2-python\.py: ran in \d", caplog.text), caplog.text


@pytest.mark.build
def test_a_builds_log_counts_the_labs_and_has_no_kernel_warning(fixture_site: FixtureSite) -> None:
    _lab_site(fixture_site)
    built = fixture_site.build(timeout=300)
    assert built.returncode == 0, built.log[-3000:]
    assert "lab 1/1 docs/labs/1-program.py: running (cells limited to 300 s each)" in built.log
    assert re.search(r"lab 1/1 docs/labs/1-program\.py: ran in \d", built.log), built.log[-3000:]
    assert not re.search(r"without encryption|insecure", built.log, re.IGNORECASE), built.log[-3000:]
    again = fixture_site.build(timeout=300)
    assert "lab 1/1 docs/labs/1-program.py: cached" in again.log, again.log[-3000:]


# --- a cold serve answers at once; the proofs run behind it, in reading order ----------------------


def _serve_dirty(
    root: Path, log: Path, *, dirty: bool = True, temp: Path | None = None
) -> tuple[int, subprocess.Popen[bytes]]:
    """`mkdocs serve --dirty` (what `make serve` runs), with live reload, on a free port; its log in `log`.

    `temp`: its temporary folder (`TMPDIR`), where MkDocs keeps the site it serves, if not the machine's.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    flags = ["--dirty"] if dirty else []
    command = [sys.executable, "-m", "mkdocs", "serve", *flags, "--dev-addr", f"127.0.0.1:{port}"]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **({"TMPDIR": str(temp)} if temp is not None else {})}
    with log.open("wb") as out:
        # As from a terminal: Ctrl-C interrupts. A shell without job control starts background commands
        # with SIGINT ignored (`make test &` in a script), and the child would inherit that.
        # The hook only sets a signal's disposition (no lock, no allocation), safe in a threaded parent's child.
        server = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_interruptible,  # noqa: PLW1509
        )
    return port, server


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _get(port: int, path: str) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=5) as response:
            return str(response.read().decode())
    except OSError:
        return None


def _wait_for(what: Callable[[], str | None], server: subprocess.Popen[bytes], log: Path, within: float) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text(encoding="utf-8", errors="replace")[-3000:]
        found = what()
        if found is not None:
            return found
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting:\n{log.read_text(encoding='utf-8', errors='replace')[-3000:]}")


@pytest.mark.build
def test_a_cold_serve_answers_at_once_and_shows_the_proofs_once_they_have_run(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md", '# Home\n\n```python exec="1" id="slow"\nimport time\ntime.sleep(5)\nprint("index ran")\n```\n'
    )
    block = '```python exec="1" id="a"\nprint("a ran")\n```\n'
    fixture_site.page("a.md", f"# Aye\n\n{block}")
    fixture_site.write("docs/zh/a.md", f"# 甲\n\n{block}")
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log)
    try:
        first = _wait_for(lambda: _get(port, "a/"), server, log, 120)
        # Answered before any proof ran: the slow one of Part 0 runs first, behind the server.
        assert f"<article {PENDING_ATTRIBUTE}" in first and PENDING_TEXT in first and "a ran" not in first
        assert "index ran" not in (_get(port, "") or "")
        # The twin waits too, and says so in its own language (it said "running…" in English).
        chinese = _get(port, "zh/a/") or ""
        assert f"<article {PENDING_ATTRIBUTE}" in chinese and "a ran" not in chinese
        assert t(PENDING_TEXT, "zh") in chinese and PENDING_TEXT not in chinese and "in the background" not in chinese

        def complete(path: str, shown: str) -> Callable[[], str | None]:
            def check() -> str | None:
                page = _get(port, path) or ""
                return page if shown in page and PENDING_ATTRIBUTE not in page else None

            return check

        home = _wait_for(complete("", "index ran"), server, log, 180)
        page = _wait_for(complete("a/", "a ran"), server, log, 180)
        twin = _wait_for(complete("zh/a/", "a ran"), server, log, 60)
        assert PENDING_TEXT not in home and PENDING_TEXT not in page and t(PENDING_TEXT, "zh") not in twin
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    order = [m[1] for m in re.finditer(r"background: proof \d+/\d+ docs/(\S+) ›[^\n]*: running", text)]
    assert order == ["index.md", "a.md"], "in reading order: Part 0 first"
    assert "proof 1/2 docs/index.md › slow: running" not in text.replace("background: proof", ""), "never in serve"


@pytest.mark.build
def test_a_block_that_fails_in_the_background_shows_its_failure_at_once_and_is_not_run_again(
    fixture_site: FixtureSite,
) -> None:
    # It said "running…" (data-proof-pending) until the whole background build had ended, and then
    # serve ran it again itself, waiting out its time limit a second time.
    fixture_site.page(
        "index.md",
        '# Home\n\n```python exec="1" id="broken"\nprint("tried", flush=True)\nraise ValueError("planted")\n```\n',
    )
    go = fixture_site.root / "go"  # the later page's proof waits until the test has seen the failure
    waits = f'import pathlib, time\nwhile not pathlib.Path("{go}").exists():\n    time.sleep(0.1)\nprint("later ran")\n'
    fixture_site.page("later.md", f'# Later\n\n```python exec="1" id="slow"\n{waits}```\n')
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log)
    try:

        def failed() -> str | None:
            page = _get(port, "") or ""
            return page if "floors-proof-failure" in page else None

        home = _wait_for(failed, server, log, 120)
        assert PENDING_ATTRIBUTE not in home and PENDING_TEXT not in home
        assert "ValueError: planted" in home and "docs/index.md" in home
        # Still running behind it: the failure did not wait for the background build's end.
        assert "later ran" not in (_get(port, "later/") or "")
        go.touch()
        _wait_for(
            lambda: _get(port, "later/") if "later ran" in (_get(port, "later/") or "") else None, server, log, 180
        )
        _wait_for(failed, server, log, 30)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert len(re.findall(r"docs/index.md › broken: running", text)) == 1, "run once, in the background"


@pytest.mark.build
def test_a_lab_that_fails_in_the_background_shows_its_failure_and_is_not_run_again(fixture_site: FixtureSite) -> None:
    # The lab page said "running…" until the background build ended; then the session ran it again itself.
    _lab_fixture(fixture_site, FAILING_LAB)
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log)
    try:

        def ended() -> str | None:
            text = log.read_text(encoding="utf-8", errors="replace")
            return text if "serve: the background build ended" in text else None

        _wait_for(ended, server, log, 240)

        def failed() -> str | None:
            page = unescape(_get(port, "labs/1-program/") or "")
            return page if "docs/labs/1-program.py › cell 3: ValueError: a cell that fails" in page else None

        page = _wait_for(failed, server, log, 60)
        assert PENDING_ATTRIBUTE not in page and "(in the background build)" in page
        time.sleep(3)  # what a later build would do: run it again
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    runs = re.findall(r"^(?:INFO\s+-\s+)?(background: )?lab 1/1 docs/labs/1-program.py: running", text, re.MULTILINE)
    assert runs == ["background: "], f"run once, in the background: {runs}"


def test_a_sessions_first_build_leaves_the_api_reference_to_the_next_and_only_the_first() -> None:
    # mkdocstrings rendering the API reference was a seventh of the first build before `make serve` answered.
    page = "Its prose.\n\n::: pytorch_floors.plugin\n    options:\n      members: false\n\nMore prose.\n\n::: a.b\n"
    later = api_later(page, "en")
    assert "正在生成本 API 参考" in api_later(page, "zh"), "in the page's language"
    assert ":::" not in later and "members" not in later and "Its prose.\n\nMore prose." in later
    assert later.index("Rendering this API reference") < later.index("Its prose."), "the placeholder first"
    session = ServeSession(dirty=True, defers=True)
    assert session.leaves_for_later and not ServeSession(dirty=True).leaves_for_later
    session.later.add("reference/plugin.md")
    session.end_build(set(), Path("mkdocs.yml"), Path())
    try:
        assert not session.leaves_for_later and session.signal_dir is not None, "the next build renders it"
        assert "reference/plugin.md" in session.start_build()[1] and not session.later
    finally:
        session.close()


def _edit(watch: EditWatch, path: str = "docs/index.md") -> None:
    watch.on_any_event(FileModifiedEvent(path))


def _written(path: Path, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while not path.is_file() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.is_file()


def test_an_edit_is_shown_before_the_api_reference_left_for_later_which_renders_once_the_author_pauses() -> None:
    # The build that rendered the reference the first build left (about six seconds here) held back an edit
    # saved meanwhile: the first prose edit of `make serve` took 6 s where every other took 1 s (issue 56).
    session = ServeSession(dirty=True, defers=True, quiet=0.3)
    reference = ["reference/a.md", "reference/b.md", "reference/c.md"]
    try:
        session.start_build()
        assert all(session.reference_waits(page) for page in reference), "the first build leaves it"
        session.later.update(reference)
        session.end_build(set(), Path("mkdocs.yml"), Path())
        watch = session.edits = EditWatch()  # the server watches from now on (`on_serve`)
        assert session.signal_dir is not None
        nudged = session.signal_dir / LATER_FILE

        # The build the server's nudge starts renders the reference; an edit comes after its first page.
        assert set(reference) <= session.start_build()[1]
        assert not session.reference_waits("reference/a.md"), "no edit yet: it renders"
        _edit(watch)
        assert session.reference_waits("reference/b.md"), "an edit came: the rest waits"
        assert not session.reference_waits("floors/1-program.md"), "only what was left for this build"
        session.later.update(reference[1:])
        session.end_build(set(), Path("mkdocs.yml"), Path())

        # The edit's build: what was left waits, so the edit shows alone.
        assert not set(reference) & session.start_build()[1]
        assert session.later == set(reference[1:]) and not session.reference_waits("reference/b.md")
        _edit(watch)  # the author saves again while it builds
        session.end_build(set(), Path("mkdocs.yml"), Path())
        began = time.monotonic()
        waiting = session.nudging
        # That edit's own build, which the server starts at once: it holds them back too, and waits with the rest.
        assert not set(reference) & session.start_build()[1]
        session.end_build(set(), Path("mkdocs.yml"), Path())
        assert session.nudging is waiting, "one build is started for them, not one per edit"
        assert _written(nudged), "the pages left start a build of their own once the author pauses"
        assert time.monotonic() - began >= 0.2, "not before"
        nudged.unlink()

        assert set(reference[1:]) <= session.start_build()[1] and not session.later, "no edit since: it renders"
        assert not any(session.reference_waits(page) for page in reference)
        session.end_build(set(), Path("mkdocs.yml"), Path())
        assert not _written(nudged, within=1), "nothing is left: no build is started"

        # An edit before a build that was left nothing holds nothing back.
        _edit(watch)
        assert session.start_build()[1] == set() and not session.later
    finally:
        session.close()


def test_the_build_left_for_later_waits_for_the_watcher_and_for_the_author_to_pause(tmp_path: Path) -> None:
    edits, watching = [0], [False]
    thread = nudge(tmp_path, edits=lambda: edits[0], watching=lambda: watching[0], settle=0, quiet=0.5)
    time.sleep(0.3)
    assert not (tmp_path / LATER_FILE).exists(), "a file written before the server watches is missed"
    watching[0] = True
    for _ in range(6):  # an edit every 0.2 s: never half a second of quiet
        time.sleep(0.2)
        edits[0] += 1
        assert not (tmp_path / LATER_FILE).exists(), "the author is still editing"
    assert _written(tmp_path / LATER_FILE, within=5), "written once the author pauses"
    thread.join(timeout=5)


def test_the_edit_watch_counts_what_is_written_under_the_watched_paths_and_only_that(tmp_path: Path) -> None:
    docs, elsewhere = tmp_path / "docs", tmp_path / "site"
    docs.mkdir()
    elsewhere.mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    observer = PollingObserver(timeout=0.05)
    watch = EditWatch()
    watch.follow(observer, [str(docs), str(tmp_path / "mkdocs.yml"), str(tmp_path / "missing")])
    observer.start()
    try:
        time.sleep(0.3)  # its first look at the paths
        (elsewhere / "index.html").write_text("built", encoding="utf-8")
        (docs / "sub").mkdir()
        time.sleep(0.3)
        assert watch.count == 0, "a folder made, and a file outside the watched paths, are no edit"
        (docs / "sub" / "page.md").write_text("# Page\n", encoding="utf-8")
        deadline = time.monotonic() + 10
        while watch.count == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watch.count >= 1, "a page written is an edit"
        seen = watch.count
        (tmp_path / "mkdocs.yml").write_text("site_name: y\n", encoding="utf-8")
        while watch.count == seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watch.count > seen, "and so is the configuration"
    finally:
        observer.stop()
        observer.join()


REFERENCE_CONFIG = FIXTURE_CONFIG.replace(
    "plugins:\n  - floors\n",
    "plugins:\n  - mkdocstrings:\n      handlers:\n        python:\n          paths: [src]\n  - floors\n",
)


@pytest.mark.build
def test_serve_shows_an_edit_before_the_api_reference_its_first_build_left(fixture_site: FixtureSite) -> None:
    fixture_site.write("mkdocs.yml", REFERENCE_CONFIG)
    fixture_site.write(
        "src/tiny.py", '"""A tiny module."""\n\n\ndef one() -> int:\n    """Return one, documented."""\n    return 1\n'
    )
    fixture_site.page("index.md", "# Home\n\nFirst prose.\n")
    fixture_site.page("other.md", "# Other\n\nOther prose.\n")
    fixture_site.page("reference.md", "# Reference\n\n::: tiny\n")
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log)
    try:
        first = _wait_for(lambda: _get(port, "reference/"), server, log, 120)
        assert "Rendering this API reference" in first, "the first build leaves it"
        # At once: the server's nudge starts the build that renders the reference a second after it watches.
        time.sleep(0.2)
        fixture_site.page("index.md", "# Home\n\nEdited prose.\n")
        _wait_for(lambda: page if "Edited prose" in (page := _get(port, "") or "") else None, server, log, 60)

        def rendered() -> str | None:
            page = _get(port, "reference/") or ""
            return page if "Return one, documented." in page and "Rendering this API reference" not in page else None

        _wait_for(rendered, server, log, 60)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    builds = re.findall(r"serve: \d+ of \d+ pages render again: (.*)", text)
    shown = [index for index, pages in enumerate(builds) if "index.md" in pages.split(", ")]
    assert shown, text[-3000:]
    assert "reference.md" not in builds[shown[0]].split(", "), f"the edit waited for the reference:\n{text[-3000:]}"
    assert any("reference.md" in pages.split(", ") for pages in builds[shown[0] + 1 :]), text[-3000:]


@pytest.mark.build
def test_a_cold_serve_answers_before_converting_a_lab_and_converts_it_right_after(fixture_site: FixtureSite) -> None:
    # The first build of a cold `make serve` converted every lab's notebook (nbconvert), a third of the time
    # to the first page, for pages that wait for the background build anyway.
    go = fixture_site.root / "go"  # the lab's run waits until the test has seen the page converted, unrun
    waits = f'import pathlib, time\nwhile not pathlib.Path("{go}").exists():\n    time.sleep(0.1)\n'
    _lab_fixture(fixture_site, LAB.replace('print("the lab ran")', waits + 'print("the lab ran")'))
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log)
    try:
        first = unescape(_wait_for(lambda: _get(port, "labs/1-program/"), server, log, 120))
        assert "Converting this lab's notebook" in first and "pathlib.Path(" not in first, "not converted yet"
        assert f"<article {PENDING_ATTRIBUTE}" in first

        def converted() -> str | None:
            page = _get(port, "labs/1-program/") or ""
            return page if "pathlib.Path(" in unescape(page) else None

        # Converted by the next build, which starts once no edit has come for a few seconds: the lab has not run yet.
        page = unescape(_wait_for(converted, server, log, 60))
        assert (
            'class="jupyter-wrapper"' in page and f"<article {PENDING_ATTRIBUTE}" in page and "Converting" not in page
        )
        go.touch()

        def ran() -> str | None:
            page = _get(port, "labs/1-program/") or ""
            return page if "the lab ran" in page and PENDING_ATTRIBUTE not in page else None

        _wait_for(ran, server, log, 180)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    runs = re.findall(r"^(?:INFO\s+-\s+)?(background: )?lab 1/1 docs/labs/1-program.py: running", text, re.MULTILINE)
    assert runs == ["background: "], f"run once, in the background: {runs}"


class _RunningBackground:
    """Stands in for a session's background build: the pages it has run so far, never finished."""

    def __init__(self) -> None:
        self.ran: set[str] = set()
        self.finished = False

    def done(self) -> set[str]:
        return set(self.ran)


def test_the_labs_are_shown_again_together_once_the_background_has_run_every_one() -> None:
    # Labs render all together or not at all (plan_rebuild): rendering them all after each lab ran took as long
    # as the next lab's run, on the same two cores at the same time (a cold serve of this site: 7 such builds).
    session = ServeSession(dirty=True, defers=True)
    background = _RunningBackground()
    session.background = background  # type: ignore[assignment]  # only `done` and `finished` are read
    session.builds = 1
    pending = {"a.md", "zh/a.md", "labs/one.py", "labs/two.py"}
    labs = {"labs/one.py", "labs/two.py", "labs/cached.py"}

    def ready_after(ran: set[str]) -> set[str]:
        background.ran |= ran
        defer, ready = session.start_build()
        session.end_build(pending - ready, Path("mkdocs.yml"), Path(), labs=labs)
        assert defer, "the background build still runs"
        return ready

    session.end_build(pending, Path("mkdocs.yml"), Path(), labs=labs)
    assert session.pending_labs == {"labs/one.py", "labs/two.py"}, "the labs that wait, not every lab"
    assert ready_after({"labs/one.py"}) == set(), "one lab of two has run"
    # A translation has no blocks of its own: it waited on none, and showed "running…" until the background ended.
    assert ready_after({"a.md"}) == {"a.md", "zh/a.md"}, "a page and its translation are shown as soon as it has run"
    assert ready_after({"labs/two.py"}) == {"labs/one.py", "labs/two.py"}
    background.finished = True
    pending.add("labs/one.py")
    session.end_build(pending, Path("mkdocs.yml"), Path(), labs=labs)
    assert session.start_build() == (False, pending), "once it has ended, every page that waits"


@pytest.mark.build
def test_a_background_build_runs_every_proof_into_the_cache_then_ends_writing_no_site(
    fixture_site: FixtureSite, tmp_path: Path
) -> None:
    # Its site is never read (the session renders its own): rendering every page's template, the report, the
    # notebooks and the search index once the proofs had run was the last stretch of every cold serve.
    fixture_site.page("index.md", '# Home\n\n```python exec="1" id="home"\nprint("home ran")\n```\n')
    fixture_site.page("a.md", '# Aye\n\n```python exec="1" id="a"\nprint("a ran")\n```\n')
    signals, cache = tmp_path / "signals", tmp_path / "cache"
    signals.mkdir()
    as_the_session_starts_it = {
        BACKGROUND_VARIABLE: str(os.getpid()),
        SIGNALS_VARIABLE: str(signals),
        "FLOORS_CACHE_DIR": str(cache),
    }
    background = run_mkdocs(fixture_site.root, tmp_path / "background-site", env=as_the_session_starts_it)
    assert background.returncode == 0, background.log[-3000:]
    assert "Documentation built" not in background.log, "it ended before MkDocs wrote the pages"
    written = sorted(p.name for p in (tmp_path / "background-site").rglob("*.html"))
    assert written == [], f"it wrote {written}"
    after = run_mkdocs(fixture_site.root, tmp_path / "site", env={"FLOORS_CACHE_DIR": str(cache)})
    assert after.returncode == 0, after.log[-3000:]
    report = json.loads((tmp_path / "site" / "build-report.json").read_text(encoding="utf-8"))
    assert {(b["block_id"], b["status"]) for b in report["blocks"]} == {("home", "cached"), ("a", "cached")}
    assert "home ran" in _html(tmp_path / "site", "").read_text(encoding="utf-8")


@pytest.mark.build
def test_a_background_build_whose_serve_is_gone_ends_leaving_nothing_in_the_temporary_folder(
    fixture_site: FixtureSite, tmp_path: Path
) -> None:
    # It ended with os._exit, which runs no exit handler: multiprocessing's folder of its fork server's socket
    # (`pymp-*`) stayed behind each time a serve process was killed during its cold start.
    block = '```python exec="1" id="slow" timeout="300"\nimport time\ntime.sleep(99)\n```\n'
    fixture_site.page("index.md", f"# Home\n\n{block}")
    serve = subprocess.Popen(["sleep", "300"])  # stands for the serve process
    temp = Path(tempfile.mkdtemp(prefix="bg-"))  # short: a Unix socket's path is limited to about a hundred bytes
    signals = tmp_path / "signals"
    signals.mkdir()
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "TMPDIR": str(temp),
        BACKGROUND_VARIABLE: str(serve.pid),
        SIGNALS_VARIABLE: str(signals),
        "FLOORS_CACHE_DIR": str(tmp_path / "cache"),
    }
    command = [sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")]
    log = tmp_path / "background.log"
    with log.open("wb") as out:
        build = subprocess.Popen(command, cwd=fixture_site.root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "slow: running" not in log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            assert build.poll() is None, log.read_text(encoding="utf-8")[-3000:]
            time.sleep(0.2)
        assert any(p.name.startswith("pymp-") for p in temp.iterdir()), "its block processes come from a fork server"
        serve.kill()
        serve.wait()
        build.wait(timeout=30)
    finally:
        serve.kill()
        build.kill()
    kept = sorted(p.name for p in temp.iterdir() if p.name.startswith("pymp-"))
    shutil.rmtree(temp, ignore_errors=True)
    assert kept == [], f"{kept} left in the temporary folder:\n{log.read_text(encoding='utf-8')[-3000:]}"


@pytest.mark.build
def test_a_build_runs_its_pages_proofs_in_the_navigations_order(fixture_site: FixtureSite) -> None:
    # MkDocs' own order puts a top-level page (compile.md) before a folder's (floors/…): the background
    # build of a serve session made every floor wait behind the compile page's proofs.
    config = (fixture_site.root / "mkdocs.yml").read_text(encoding="utf-8")
    fixture_site.write(
        "mkdocs.yml",
        config + "nav:\n  - index.md\n  - floors/one.md\n  - compile.md\n  - What changed: what-changed.md\n",
    )
    for name in ("index.md", "floors/one.md", "compile.md"):
        stem = Path(name).stem
        fixture_site.page(name, f'# {stem}\n\n```python exec="1" id="{stem}"\nprint("{stem} ran")\n```\n')
    fixture_site.page("what-changed.md", "# What changed\n\n<!-- floors:what-changed -->\n")
    built = fixture_site.build(strict=True)
    assert built.returncode == 0, built.log[-3000:]
    order = [m[1] for m in re.finditer(r"proof \d+/\d+ docs/(\S+) › \S+: (?:running|cached)", built.log)]
    assert order == ["index.md", "floors/one.md", "compile.md"], built.log[-3000:]


@pytest.mark.build
def test_plain_mkdocs_serve_answers_before_the_proofs_run_and_says_what_dirty_adds(fixture_site: FixtureSite) -> None:
    # `mkdocs serve`, the command MkDocs users type, first answered once every proof had run.
    go = fixture_site.root / "go"
    waits = f'import pathlib, time\nwhile not pathlib.Path("{go}").exists():\n    time.sleep(0.1)\nprint("home ran")\n'
    fixture_site.page("index.md", f'# Home\n\n```python exec="1" id="waits"\n{waits}```\n')
    log = fixture_site.root / "serve.log"
    port, server = _serve_dirty(fixture_site.root, log, dirty=False)
    try:
        first = _wait_for(lambda: _get(port, ""), server, log, 120)
        assert f"<article {PENDING_ATTRIBUTE}" in first and PENDING_TEXT in first

        def heartbeat() -> str | None:
            # A proof that runs for minutes (a C++ compile) left the terminal silent: it says what runs.
            text = log.read_text(encoding="utf-8", errors="replace")
            return text if "background: still running docs/index.md › waits" in text else None

        _wait_for(heartbeat, server, log, HEARTBEAT_S + 30)
        go.touch()

        def complete() -> str | None:
            page = _get(port, "") or ""
            return page if "home ran" in page and PENDING_ATTRIBUTE not in page else None

        _wait_for(complete, server, log, 180)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "serve: without --dirty every edit renders every page again" in text


@pytest.mark.build
def test_a_build_on_a_cold_cache_writes_no_pending_block(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", '# Home\n\n```python exec="1" id="home"\nprint("home ran")\n```\n')
    built = fixture_site.build(strict=True)
    assert built.returncode == 0, built.log[-3000:]
    html = built.page("")
    assert "home ran" in html and PENDING_ATTRIBUTE not in html and PENDING_TEXT not in html


@pytest.mark.build
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "terminate"])
def test_stopping_serve_while_the_background_runs_proofs_leaves_no_process(
    fixture_site: FixtureSite, stop: signal.Signals
) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="sleeper" timeout="900" workdir="."
        import subprocess, time
        child = subprocess.Popen(["sleep", "300"])
        open("child.txt", "w").write(str(child.pid))
        time.sleep(600)
        ```
        """,
    )
    log = fixture_site.root / "serve.log"
    # A folder of its own, with a short path: the fork server's socket lives there, and a Unix socket's path is
    # limited to about a hundred bytes (pytest's folder for this test under a worker was too deep).
    temp = Path(tempfile.mkdtemp(prefix="serve-"))
    port, server = _serve_dirty(fixture_site.root, log, temp=temp)
    marker = fixture_site.root / "child.txt"
    try:
        _wait_for(lambda: "started" if marker.exists() and marker.read_text() else None, server, log, 180)
        assert PENDING_ATTRIBUTE in (_get(port, "") or ""), "the block runs in the background build"
    finally:
        server.send_signal(stop)
        server.wait(timeout=60)
    assert gone(int(marker.read_text())), "the block's child"
    root = str(fixture_site.root)

    def left() -> list[str]:
        found = []
        for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
            with contextlib.suppress(psutil.Error):
                if process.info["cwd"] == root or root in " ".join(process.info["cmdline"] or []):
                    found.append(" ".join(process.info["cmdline"] or []))
        return found

    deadline = time.monotonic() + 15
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left() == [], "the background build and everything it started"
    # The site MkDocs served from (`mkdocs_*`) and the session's signal folder (`floors-serve-*`): SIGTERM ended
    # serve before either was removed, and each stop left both in the machine's temporary folder. The background
    # build's fork server's folder (`pymp-*`, multiprocessing's): SIGTERM ended that build before its exit handlers
    # removed it, at every stop of a cold serve. (A block's scratch, `floors-<kind>-<pid>-*`, that a killed block
    # process left is the next build's to sweep.)
    kept = sorted(path.name for path in temp.iterdir() if path.name.startswith(("mkdocs_", "floors-serve-", "pymp-")))
    shutil.rmtree(temp, ignore_errors=True)
    assert kept == [], f"{kept} left in the temporary folder:\n{log.read_text(encoding='utf-8')[-3000:]}"


def test_sigterm_stops_serve_as_ctrl_c_does_unless_something_else_handles_it() -> None:
    before = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        restore = interrupt_on_terminate()
        handler = signal.getsignal(signal.SIGTERM)
        assert callable(handler), "SIGTERM is handled now"
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGTERM, None)
        restore()
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "and as before once serve has shut down"

        def own(_signal: int, _frame: object) -> None: ...

        signal.signal(signal.SIGTERM, own)
        interrupt_on_terminate()()
        assert signal.getsignal(signal.SIGTERM) is own, "a program that handles SIGTERM itself keeps its handling"
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        elsewhere = threading.Thread(target=interrupt_on_terminate)
        elsewhere.start()
        elsewhere.join()
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "only the main thread may set a handler"
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_waiting_page_shows_placeholders_and_says_how_many_proofs_are_left() -> None:
    block = f"<pre><code>{SKIPPED_OUTPUT}</code></pre>"
    shown = pending_page(f"<p>prose</p>{block}<p>more</p>{block}", lab=False, language="en")
    assert PENDING_TEXT in shown and SKIPPED_OUTPUT not in shown and "in the background" in shown
    assert "2 of this page's proofs are still running" in unescape(shown)
    assert "1 of this page's proofs is still" in unescape(pending_page(block, lab=False, language="en"))
    assert "(<code>make serve</code> answers first" in shown, "the command is code, the words escaped"


@pytest.mark.parametrize("lab", [False, True], ids=["proofs", "lab"])
def test_a_waiting_chinese_page_says_so_in_chinese(lab: bool) -> None:
    # The serve-only notes were rendered without the page's language: English on every Chinese page.
    shown = pending_page(f"<p>正文</p><pre><code>{t(SKIPPED_OUTPUT, 'zh')}</code></pre>", lab=lab, language="zh")
    note = shown.split("</div>")[0]
    assert t("Running", "zh") in note and "<code>make serve</code>" in note
    assert not re.search(r"[A-Za-z]{4,}", re.sub(r"<[^>]+>|make serve", "", note)), note
    assert t(PENDING_TEXT, "zh") in shown and PENDING_TEXT not in shown and t(SKIPPED_OUTPUT, "zh") not in shown
    assert lab or "1 个证明脚本" in note, "it counts the Chinese placeholders (the fence writes them in Chinese)"


def test_the_partial_rebuilds_note_is_in_the_reports_language() -> None:
    note = partial_note({"zh/a.md", "zh/b.md"}, "zh")
    assert t("A partial rebuild", "zh") in note and "<code>docs/zh/a.md</code>、<code>docs/zh/b.md</code>" in note
    assert "（<code>mkdocs serve --dirty</code>）：" in note, "Chinese punctuation around the command"
    assert not re.search(r"[A-Za-z]{4,}", re.sub(r"<[^>]+>|mkdocs serve --dirty|docs/zh/\w+\.md", "", note)), note
    page = '<html><body><article class="md-content__inner md-typeset">x</article></body></html>'
    assert f'<article {PENDING_ATTRIBUTE} class="md-content__inner' in mark_pending(page)
