"""MkDocs hooks: the registry drives the navigation, titles and gauge; proofs run through the engine.

Listed under `hooks:` in `mkdocs.yml`. Environment variables:

- `FLOORS_EXEC=off` renders every executed block without running it (render-only build);
- `FLOORS_EXEC_CACHE=on|off|refresh` reads and writes, bypasses, or rebuilds the output cache;
- `FLOORS_CACHE_DIR` moves the caches (default: `.cache` in the project);
- `FLOORS_EXEC_TIMEOUT` sets the default per-block time limit in seconds (a fence's `timeout` wins);
- `FLOORS_EXEC_ONLY=floors/3-*` runs only the blocks of matching pages (others render as skipped),
  for a quick look at the page being written.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import time
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from markdown_exec import markdown_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from pytorch_floors.anchors import CITABLE_PAGES, add_copy_links, apply_aliases, read_aliases, read_lock
from pytorch_floors.changes import ManifestRecorder
from pytorch_floors.citation import cite_page_html, edition
from pytorch_floors.execution import (
    BlockResult,
    Engine,
    OutputCache,
    ScanError,
    Status,
    activate,
    active_engine,
    scan_markdown,
)
from pytorch_floors.execution.cache import CacheMode
from pytorch_floors.execution.options import OptionError, parse_timeout
from pytorch_floors.execution.report import report_html, report_json
from pytorch_floors.execution.runner import end_all
from pytorch_floors.floors import FLOORS, MAP_PAGE, floor_for_page
from pytorch_floors.gauge import page_gauges, render_gauge
from pytorch_floors.handouts import cite_links_html, handout_context
from pytorch_floors.labs import configure_jupyter, finish_lab_page, publish_notebooks
from pytorch_floors.listings import lighten_listings
from pytorch_floors.provenance import collect, of_outputs
from pytorch_floors.search_scope import narrow_search
from pytorch_floors.standalone import BundleError, bundle

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

PROOFS_MARKER = "<!-- floors:proofs -->"
REPORT_MARKER = "<!-- floors:build-report -->"
EDITION_MARKER = "<!-- floors:edition -->"
BIBTEX_MARKER = "<!-- floors:bibtex -->"
HANDOUTS_MARKER = "<!-- floors:handouts -->"
NO_HANDOUTS = "*This build has no PDFs: `make pdf` builds the site with them.*"
_state: dict[str, Any] = {"serving": False, "files": None, "provenance": None, "aliases": {}}


def on_startup(*, command: Literal["build", "gh-deploy", "serve"], dirty: bool) -> None:
    """Remember whether this is `mkdocs serve`: there a failed proof shows a banner instead of stopping."""
    _state["serving"] = command == "serve"


def on_shutdown() -> None:
    """End every block process still running, with everything it started (`mkdocs serve` stopped mid-build)."""
    end_all()


def _fill_nav(nav: list[Any], docs_dir: Path) -> None:
    for entry in nav:
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if title == "Floors" and value == []:
                entry[title] = [{f"{f.number} · {f.title}": f.page} for f in FLOORS]
            elif title == "Labs" and value == []:
                entry[title] = [{f"Lab {f.number} · {f.title}": f.lab} for f in FLOORS if (docs_dir / f.lab).is_file()]
            elif isinstance(value, list):
                _fill_nav(value, docs_dir)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the navigation's floor and lab sections from the registry and start the build's engine."""
    project_dir = Path(config.config_file_path).parent.resolve()
    _fill_nav(config.nav or [], Path(config.docs_dir))
    markdown_config.save(config.markdown_extensions, config.mdx_configs)
    mode = os.environ.get("FLOORS_EXEC_CACHE", "on")
    if mode not in ("on", "off", "refresh"):
        raise PluginError(f"FLOORS_EXEC_CACHE must be on, off or refresh, not {mode!r}")
    cache_mode: CacheMode = mode  # type: ignore[assignment]
    cache_root = Path(os.environ.get("FLOORS_CACHE_DIR") or project_dir / ".cache")
    try:
        default_timeout = parse_timeout(os.environ.get("FLOORS_EXEC_TIMEOUT", "120"))
    except OptionError as error:
        raise PluginError(f"FLOORS_EXEC_TIMEOUT: {error}") from None
    provenance = collect()
    engine = Engine(
        project_dir,
        OutputCache(cache_root / "floors-exec", cache_mode),
        execute=os.environ.get("FLOORS_EXEC", "on") != "off",
        default_timeout=default_timeout,
        only=os.environ.get("FLOORS_EXEC_ONLY") or None,
        provenance=provenance.as_dict(),
    )
    activate(engine)
    configure_jupyter(config, project_dir, cache_root)
    _state["jupyter_cache"] = cache_root / "mkdocs-jupyter"
    _state["provenance"] = provenance
    # PDFs exist only where `make pdf` prints them after its build: other builds must not link them.
    _state["handouts"] = os.environ.get("FLOORS_HANDOUTS", "off") == "on"
    try:
        _state["aliases"] = read_aliases(project_dir / "anchors.aliases")
    except ValueError as error:
        raise PluginError(str(error)) from None
    _state["manifest"] = ManifestRecorder(read_lock(project_dir / "anchors.lock"), _state["aliases"])
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Plan every executed block of the site and publish the proof scripts for download."""
    engine = active_engine()
    docs_dir = Path(config.docs_dir)
    for file in files.documentation_pages():
        if not file.src_uri.endswith(".md"):
            continue
        try:
            blocks = scan_markdown(
                (docs_dir / file.src_uri).read_text(encoding="utf-8"), file.src_uri, engine.project_dir
            )
        except ScanError as error:
            raise PluginError(str(error)) from None
        if blocks:
            engine.planned[file.src_uri] = blocks
    snippets = engine.project_dir / "snippets"
    for path in sorted(snippets.rglob("*.py")) if snippets.is_dir() else []:
        # The download carries the helpers it imports, so it runs without this package.
        uri = path.relative_to(engine.project_dir).as_posix()
        try:
            content = bundle(path.read_text(encoding="utf-8"), uri, Path(__file__).parent)
        except BundleError as error:
            raise PluginError(str(error)) from None
        files.append(File.generated(config, uri, content=content))
    _state["files"] = files
    log.info("proofs: %d executed blocks planned on %d pages", engine.total, len(engine.planned))
    return files


def _cache_files() -> set[Path]:
    root: Path | None = _state.get("jupyter_cache")
    return set(root.rglob("*.json")) if root is not None and root.is_dir() else set()


def _first_docstring_line(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except (OSError, SyntaxError):
        return ""
    return doc.strip().splitlines()[0] if doc else ""


def _proofs_table(engine: Engine) -> str:
    # One short table per page, under the page's name: two columns fit a phone, and the
    # floor is said once in its heading instead of on every row.
    order = {f.page: f.number for f in FLOORS}
    sections = []
    for page, blocks in sorted(engine.planned.items(), key=lambda item: (order.get(item[0], 0), item[0])):
        floor = floor_for_page(page)
        where = floor.heading if floor else "Part 0 · The map" if page == MAP_PAGE else page
        rows = [f"### [{where}]({page})", "", "| Proof | What it shows |", "|---|---|"]
        for block in blocks:
            for proof in block.proofs:
                summary = _first_docstring_line(engine.project_dir / proof).replace("|", "\\|")
                rows.append(f"| [`{Path(proof).name}`]({proof})<br>block `{block.block_id}` | {summary} |")
        sections.append("\n".join(rows))
    return "\n\n".join(sections)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Start the page's proofs afresh; give floor pages their title and description from the registry."""
    engine = active_engine()
    engine.begin_page(page.file.src_uri, page.url)
    _state["notebook_clock"] = (time.perf_counter(), _cache_files())
    floor = floor_for_page(page.file.src_uri)
    if floor is not None and page.file.src_uri == floor.page:
        if markdown.lstrip().startswith("# "):
            raise PluginError(
                f"docs/{floor.page}: floor pages take their title from the registry; remove the '# ' heading"
            )
        page.meta.setdefault("description", floor.summary)
        # A floor outranks its lab (which repeats the floor's words in code) for the floor's own subject.
        page.meta.setdefault("search", {"boost": 4})
        markdown = f"# {floor.heading}\n\n{markdown}"
        if (Path(config.docs_dir) / floor.lab).is_file():
            # "Check yourself" closes every floor page; its lab follows it there.
            markdown += (
                f"\n\n**Lab {floor.number}.** Practise this floor on your own machine: "
                f"[Lab {floor.number} · {floor.title}](../{floor.lab}) — run, change and measure, with self-checks. "
                "Download it as a notebook from the lab's page.\n"
            )
    if floor is not None and page.file.src_uri == floor.lab:
        page.meta.setdefault(
            "description", f"Lab {floor.number}, {floor.title}: exercises that measure what the floor explains."
        )
    if not page.meta.get("description"):
        log.warning("docs/%s has no description: add 'description:' to its front matter", page.file.src_uri)
    if PROOFS_MARKER in markdown:
        markdown = markdown.replace(PROOFS_MARKER, _proofs_table(engine))
    if EDITION_MARKER in markdown or BIBTEX_MARKER in markdown:
        name = edition()
        markdown = markdown.replace(EDITION_MARKER, name)
        markdown = markdown.replace(BIBTEX_MARKER, cite_page_html(config.site_url or "/", name, int(name[:4])))
    if HANDOUTS_MARKER in markdown:
        links = cite_links_html(page.url) if _state["handouts"] else NO_HANDOUTS
        markdown = markdown.replace(HANDOUTS_MARKER, links)
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Close the page's proof processes; stop the build if one of its proofs failed (except under serve)."""
    engine = active_engine()
    engine.end_page()
    engine.unaccounted()
    floor = floor_for_page(page.file.src_uri)
    if floor is not None and page.file.src_uri == floor.lab:
        # mkdocs-jupyter executes the notebook while rendering the page; a new cache file means it ran.
        started, before = _state["notebook_clock"]
        executed = engine.execute and (engine.only is None or fnmatch(floor.lab, engine.only))
        status: Status = "skipped" if not executed else "ran" if _cache_files() - before else "cached"
        engine.records.append(
            BlockResult(
                page.file.src_uri,
                "notebook",
                floor.lab,
                status,
                time.perf_counter() - started if status != "cached" else None,
            )
        )
    html = narrow_search(_leave_out_of_search(lighten_listings(html, page.file.src_uri)))
    failed = [f for f in engine.failures if f.page == page.file.src_uri]
    if failed and not _state["serving"]:
        raise PluginError("a proof failed:\n" + "\n".join(str(f) for f in failed))
    if page.file.src_uri in CITABLE_PAGES:
        _state["manifest"].record(page.file.src_uri, html)
        html = add_copy_links(html, f"{(config.site_url or '/').rstrip('/')}/{page.url}")
        try:
            html = apply_aliases(html, _state["aliases"].get(page.url, {}))
        except ValueError as error:
            raise PluginError(f"docs/{page.file.src_uri}: {error}") from None
    return html


# Left out of the search index (Material skips elements marked `data-search-exclude`): the
# collapsed proof sources, which are downloadable scripts, and the code and outputs of lab cells,
# whose prose stays. Otherwise labs outrank the floors with the floors' own words in code, their
# excerpts open on "Copied!", and the index outweighs the page that loads it.
# Material's search parser compares elements by tag name alone, so an excluded element stops being
# skipped at the first closing tag of its own name: marking a <div> that holds other <div>s leaks
# everything after the first inner </div>. Only elements that never nest in their own tag are marked.
_SEARCH_EXCLUDED = ('<details class="floors-proof__source"',)
_NOTEBOOK_EXCLUDED = ("<pre", '<span class="notice"')
_NOTEBOOK_MARK = '<div class="jupyter-wrapper"'


def _leave_out_of_search(html: str) -> str:
    openings = _SEARCH_EXCLUDED + (_NOTEBOOK_EXCLUDED if _NOTEBOOK_MARK in html else ())
    for opening in openings:
        html = html.replace(opening, f"{opening} data-search-exclude")
    return html


def on_page_context(context: dict[str, Any], page: Page, config: MkDocsConfig, nav: Navigation) -> dict[str, Any]:
    """Hand the gauge and the provenance to the `floors-header` partial; fill the build report page."""
    files: Files = _state["files"]

    def url_of(src: str) -> str:
        file = files.get_file_from_path(src)
        return get_relative_url(file.url, page.url) if file else src

    context.update(page_gauges(page.file.src_uri, url_of))
    context["floors_handout"] = handout_context(page.file.src_uri, page.url)
    context["floors_handout_links"] = _state["handouts"]
    # The page states what its outputs were measured on: for cached ones, the run that produced them.
    shown = of_outputs(
        (r.provenance for r in active_engine().records if r.page == page.file.src_uri), _state["provenance"]
    )
    context["floors_provenance"] = shown[0]
    context["floors_provenances"] = shown
    if page.content and REPORT_MARKER in page.content:
        template = config.theme.get_env().get_template("partials/floors-build-report.html")
        page.content = page.content.replace(REPORT_MARKER, report_html(active_engine().records, template))
    return context


def on_template_context(context: dict[str, Any], template_name: str, config: MkDocsConfig) -> dict[str, Any]:
    """Give the 404 page the whole building's gauge, with links that work from any missing URL."""
    if template_name == "404.html":
        root = urlsplit(config.site_url or "/").path.rstrip("/")
        files: Files = _state["files"]

        def absolute(src: str) -> str:
            file = files.get_file_from_path(src)
            return f"{root}/{file.url if file else src}"

        context["floors_building"] = render_gauge(None, lambda f: absolute(f.page))
        context["floors_provenance"] = None
    return context


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Refuse a page that leaks the build machine's absolute paths."""
    project_dir = str(active_engine().project_dir)
    if project_dir in output:
        message = (
            f"docs/{page.file.src_uri}: the page shows the build machine's path {project_dir}; print relative paths"
        )
        if _state["serving"]:
            log.error(message)
        else:
            raise PluginError(message)
    return finish_lab_page(output, page)


def on_post_build(config: MkDocsConfig) -> None:
    """Write the build report as JSON and summarise the proofs in one log line."""
    engine = active_engine()
    engine.end_page()
    publish_notebooks(config)
    provenance = _state["provenance"]
    report = report_json(engine.records, provenance.as_dict() if provenance else {})
    Path(config.site_dir, "build-report.json").write_text(report, encoding="utf-8")
    try:
        _state["manifest"].write(Path(config.site_dir), edition())
    except ValueError as error:
        raise PluginError(str(error)) from None
    versions = Path(config.site_dir, "versions.json")
    if not versions.exists():
        # Material's version selector asks for ../versions.json; outside a mike deployment there is one edition.
        name = edition()
        versions.write_text(json.dumps([{"version": name, "title": name, "aliases": []}]), encoding="utf-8")
    complete = engine.execute and engine.only is None and not engine.failures
    if complete and engine.cache.mode != "off":
        # Only a build that planned every block knows which entries nothing uses any more.
        log.info("proofs: removed %d unused cache entries", engine.cache.prune())
    counts = {s: sum(1 for r in engine.records if r.status == s) for s in ("ran", "cached", "skipped", "failed")}
    log.info("proofs: %(ran)d ran, %(cached)d cached, %(skipped)d skipped, %(failed)d failed", counts)
    if engine.failures and _state["serving"]:
        log.error("proofs failed:\n%s", "\n".join(str(f) for f in engine.failures))
