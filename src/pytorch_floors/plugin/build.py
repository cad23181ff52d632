"""One site build: the registry drives the navigation, titles and gauge; proofs run through the engine.

The [`floors` plugin][pytorch_floors.plugin.plugin.FloorsPlugin] creates a `SiteBuild` in `on_config`
and hands it every later event of that build. Everything a build gathers (its engine and
records, the files, the provenance, the manifest) lives on this object and ends with it, so a
second build in the same process (`mkdocs serve`) starts from nothing but what its serve session
lends it on purpose ([`ServeSession`][pytorch_floors.plugin.serve.session.ServeSession]): torch's facts, and
under `--dirty` what the pages it does not render again contributed to the build that did.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import uuid
from fnmatch import fnmatch
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment
from markdown.extensions.toc import slugify
from markdown_exec import markdown_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

# mkdocs-jupyter's own naming of a page's cache file (its version is pinned): which file is this lab's.
from mkdocs_jupyter.plugin import _compute_cache_key as jupyter_cache_key  # type: ignore[import-untyped]
from mkdocs_jupyter.plugin import _get_cache_path as jupyter_cache_path

from pytorch_floors.editions.anchors import CITABLE_PAGES, apply_aliases, page_url, read_aliases, read_lock
from pytorch_floors.editions.course_pack import write_packs
from pytorch_floors.editions.handouts import cite_links_html, handout_context
from pytorch_floors.editions.manifest import ManifestRecorder
from pytorch_floors.editions.what_changed import PAGE as WHAT_CHANGED_PAGE
from pytorch_floors.editions.what_changed import fill
from pytorch_floors.errors import FloorsError, InputError
from pytorch_floors.execution.bundle import bundle
from pytorch_floors.execution.cache import CacheError, OutputCache, machine_fingerprint
from pytorch_floors.execution.claim_policy import claims_summary
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.engine import Engine
from pytorch_floors.execution.facts import TorchFacts, torch_facts
from pytorch_floors.execution.provenance import collect, of_outputs
from pytorch_floors.execution.report import report_html, report_json
from pytorch_floors.execution.scan import check_includes, not_utf8, scan_markdown
from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.i18n.catch_up import CaughtUp, catch_up
from pytorch_floors.i18n.glossary import glossary
from pytorch_floors.i18n.languages import DEFAULT, LANGUAGES, twin_uri
from pytorch_floors.i18n.messages import t, use
from pytorch_floors.i18n.search import teach_segmenter
from pytorch_floors.i18n.sections import join_chinese_lines, page_text, sections
from pytorch_floors.i18n.translation import LOCK_FILE, Staleness, staleness
from pytorch_floors.i18n.translation import read_lock as read_translation_lock
from pytorch_floors.labs.accounting import keep_lab_time, lab_outcome, lab_run_key, own_new_files, runs_later
from pytorch_floors.labs.kernel import (
    defer_labs,
    keep_going,
    lab_place,
    lab_progress,
    plan_labs,
    report_progress,
    take_runs,
)
from pytorch_floors.labs.launch import configure_launch, run_times_file
from pytorch_floors.labs.notebooks import (
    JUPYTER_DIR,
    finish_lab_page,
    jupyter_cache_dir,
    jupyter_environment,
    lab_failure_banner,
    lab_inputs,
    publish_notebooks,
)
from pytorch_floors.page_facts import PageFacts, page_facts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.fence import register_fence
from pytorch_floors.plugin.languages import (
    LANGUAGE_SECTION,
    STALE_MARKER,
    link_languages,
    nav_items,
    split_search_index,
    stale_markdown,
    stale_notes,
    title_anchor,
    translated_nav,
    untranslated_links,
)
from pytorch_floors.plugin.pages import (
    BIBTEX_MARKER,
    EDITION_MARKER,
    HANDOUTS_MARKER,
    MACHINES_MARKER,
    NO_HANDOUTS,
    PROOFS_MARKER,
    REPORT_MARKER,
    fill_markers,
    fill_nav,
    proofs_page,
    without_missing_includes,
)
from pytorch_floors.plugin.serve import (
    BACKGROUND_VARIABLE,
    SIGNALS_VARIABLE,
    PageInput,
    PageState,
    Plan,
    ServeSession,
    emit_progress,
    inputs_digest,
    mark_pending,
    merge_search_index,
    page_input,
    partial_note,
    partial_report,
    pending_page,
    report_background_failure,
    with_sources,
)
from pytorch_floors.recordings.report import machines_html, page_tiers, recordings_json, recordings_summary
from pytorch_floors.recordings.schema import read_recordings
from pytorch_floors.recordings.tabs import LazyOutputs
from pytorch_floors.render.chrome import squeeze_chrome
from pytorch_floors.render.citation import cite_page_html
from pytorch_floors.render.gauge import page_gauges, render_gauge
from pytorch_floors.render.headings import finish_headings, pinned_site_url
from pytorch_floors.render.listings import listing_language
from pytorch_floors.render.search_scope import narrow_search
from pytorch_floors.render.templates import template

__all__ = ["SiteBuild"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent
"""The package's folder: what a downloaded proof bundles the helpers it imports from."""

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def _labs_follow(config: MkDocsConfig, settings: Settings, cache_dir: Path | None = None) -> None:
    """Give mkdocs-jupyter, which executes the labs, the plugin's `execute` and `only` settings and its cache.

    The settings are the plugin's, read once (from `mkdocs.yml` or the `FLOORS_*` variables): the
    labs run or are skipped exactly as the proofs are. The patterns are merged as a set, so a
    pattern `mkdocs.yml` already ignores is listed once.
    """
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None:
        return
    if cache_dir is not None:
        jupyter.config["cache_dir"] = str(cache_dir)
    if not settings.execute:
        jupyter.config["execute"] = False
    if settings.only:
        skipped = {floor.lab for floor in FLOORS if not fnmatch(floor.lab, settings.only)}
        jupyter.config["execute_ignore"] = sorted({*jupyter.config.get("execute_ignore", []), *skipped})


def _listing_pages(report: str, pages: list[dict[str, str | None]]) -> str:
    """The build report (JSON) with `build.pages`: each HTML file the build wrote (`path`) and its source page."""
    document = json.loads(report)
    document["build"]["pages"] = pages
    return json.dumps(document, indent=2)


class SiteBuild:
    """One build of the site: its engine, the pages' proofs and what the pages and reports are given."""

    def __init__(
        self, config: MkDocsConfig, settings: Settings, *, serving: bool = False, session: ServeSession | None = None
    ) -> None:
        """Fill the navigation's floor and lab sections from the registry and start the build's engine.

        Args:
            config: The MkDocs configuration (after every plugin's `on_config` before this one).
            settings: The plugin's options.
            serving: This is `mkdocs serve`: a failed proof shows a banner instead of stopping the build.
            session: What this `mkdocs serve` kept from its earlier builds (`plugin.serve`); `None` for
                `mkdocs build`, which renders every page.

        Raises:
            FloorsError: If `anchors.aliases` cannot be read.
        """
        self.serving = serving
        self.settings = settings
        self._join(session)
        self.planned_labs: list[str] = []
        project_dir = Path(config.config_file_path).parent.resolve()
        name = settings.published
        config.site_url = pinned_site_url(config.site_url, name)
        if name is not None:
            config.extra["floors_edition"] = name
        fill_nav(config.nav or [], Path(config.docs_dir))
        self._languages(config, project_dir)
        listing_language(config.mdx_configs)
        cache_root = Path(settings.cache_dir) if settings.cache_dir else project_dir / ".cache"
        # Torch's facts come from a block's process: the build itself never imports torch. A serve
        # session asks once: the machine does not change between two edits.
        facts = session.facts if session is not None and session.facts is not None else torch_facts()
        if session is not None:
            session.facts = facts
        self.provenance = collect(facts)
        self.engine = Engine(
            project_dir,
            OutputCache(cache_root / "floors-exec", settings.cache),
            execute=settings.execute,
            default_timeout=settings.timeout,
            only=settings.only,
            provenance=self.provenance,
            advisory_claims=settings.advisory_claims,
            machine=machine_fingerprint(facts),
        )
        self.recordings = read_recordings(project_dir / settings.recordings) if settings.recordings else ()
        self.engine.execute = settings.execute and not self.defer
        self._share_failures(session)
        defer_labs(self.defer)
        self.lazy_outputs = LazyOutputs()
        register_fence(config, self.engine, self.recordings, self.lazy_outputs)
        markdown_config.save(config.markdown_extensions, config.mdx_configs)
        labs_run = config.plugins.get("mkdocs-jupyter") is not None
        lab_cache = self._lab_cache(project_dir, Path(config.docs_dir), cache_root, facts) if labs_run else None
        _labs_follow(config, settings, lab_cache)
        keep_going(serving)
        # nbconvert finds the project's templates and configuration through these variables; they are
        # set for this build only, and `close` puts the build process's own back.
        jupyter_env = jupyter_environment(project_dir / JUPYTER_DIR, os.environ) if labs_run else {}
        self._saved_env = {name: os.environ.get(name) for name in jupyter_env}
        os.environ.update(jupyter_env)
        self.jupyter_cache = cache_root / "mkdocs-jupyter"
        search = config.plugins.get("material/search")
        if session is not None and session.dirty and search is not None and hasattr(search, "search_index_prev"):
            # Material merges a dirty build's index with the last one for one page only; `_remember` merges all.
            # No public way: `search_index_prev` is the plugin's own state (tests/test_house_rules.py checks the name).
            search.search_index_prev = None
        self.files: Files | None = None
        self.notebook_cache_before: set[Path] = set()
        self.aliases = read_aliases(project_dir / "anchors.aliases")
        self.manifest = ManifestRecorder(read_lock(project_dir / "anchors.lock"), self.aliases)
        times = run_times_file(cache_root, lab_cache) if lab_cache else None
        self.launch = configure_launch(self.settings.repository, times, project_dir, self.engine.records)

    def _languages(self, config: MkDocsConfig, project_dir: Path) -> None:
        """Put each translation's pages in the navigation; read what the translations recorded (`i18n`).

        Raises:
            FloorsError: If `translations.lock` cannot be read.
        """
        for language in LANGUAGES[1:]:
            translated = translated_nav(config.nav or [], Path(config.docs_dir), language)
            if translated and config.nav is not None:
                config.nav.append({LANGUAGE_SECTION: translated})
        teach_segmenter(term.zh for term in glossary())
        self.staleness: dict[str, Staleness] = {}
        self.caught_up: dict[str, CaughtUp] = {}
        self.untranslated_claims: dict[str, list[str]] = {}
        self.translations = read_translation_lock(project_dir / LOCK_FILE)
        self.nav: Navigation | None = None

    def _share_failures(self, session: ServeSession | None) -> None:
        """A session's build shows what failed in its background build; that build tells the session."""
        if session is not None:
            self.engine.known_failures = session.failed
        signals = os.environ.get(SIGNALS_VARIABLE)
        background = bool(self.serving and signals and os.environ.get(BACKGROUND_VARIABLE, "").isdigit())
        if background and signals:
            self.engine.report_failure = functools.partial(report_background_failure, Path(signals))
        # Its progress travels to the session as events on its output, never as the wording of its log.
        self.engine.on_progress = emit_progress if background else None
        report_progress(emit_progress if background else None)

    def _join(self, session: ServeSession | None) -> None:
        """Take this build's part of a serve session (none for `mkdocs build`): its mark, and what it defers."""
        self.session = session
        # Every page of this build carries it, and so does the report: `verify` matches them. A dirty
        # session keeps one: the pages a build does not render carry the mark of the build that did.
        self.build_id = session.build_id if session is not None and session.dirty else uuid.uuid4().hex
        self.plan = Plan(None, "a published build renders every page")
        # On a cold cache, a session with live reload runs no proof or lab itself: its background build does.
        self.defer, self.ready = session.start_build() if session is not None else (False, set())
        self.defer = self.defer and self.settings.execute
        self.pending_pages: set[str] = set()
        self.page_inputs: dict[str, PageInput] = {}
        self.inputs = ""
        # Every page's facts (its English source, language, floor, kind), computed once in `on_files`.
        self.facts: dict[str, PageFacts] = {}

    def _lab_cache(self, project_dir: Path, docs_dir: Path, cache_root: Path, facts: TorchFacts) -> Path:
        """`jupyter_cache_dir`, which a serve session keeps while the labs and what they depend on are unchanged."""
        if self.session is None:
            return jupyter_cache_dir(project_dir, docs_dir, cache_root, facts)

        def compute() -> tuple[Path, list[Path]]:
            return jupyter_cache_dir(project_dir, docs_dir, cache_root, facts), lab_inputs(project_dir, docs_dir)

        return self.session.memo.get(("labs", project_dir, docs_dir, cache_root), compute)

    def _bundle(self, path: Path, uri: str) -> str:
        """A proof's download (`execution.bundle`), which a serve session keeps while the proof is unchanged."""

        def compute() -> tuple[str, list[Path]]:
            return bundle(path.read_text(encoding="utf-8"), uri, PACKAGE_DIR), [path]

        return compute()[0] if self.session is None else self.session.memo.get(("bundle", path), compute)

    def close(self) -> None:
        """End the processes of the build's blocks (at its end, and when it stops with an error)."""
        self.engine.close()
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Plan every executed block of the site and publish the proof scripts for download.

        Raises:
            FloorsError: If a page's executed blocks break a rule, a proof cannot be bundled, or pages
                have executed blocks but `mkdocs.yml` gives SuperFences no executed fence.
        """
        engine = self.engine
        docs_dir = Path(config.docs_dir)
        labs = {floor.lab for floor in FLOORS} if config.plugins.get("mkdocs-jupyter") is not None else set()
        # Each Markdown page's source, read once for the scan, the includes' check and the translations' standing.
        sources: dict[str, str] = {}
        for file in files.documentation_pages():
            facts = self.facts[file.src_uri] = page_facts(file.src_uri)
            if self.session is not None and file.src_uri.endswith((".md", ".py")):
                self.page_inputs[file.src_uri] = page_input(
                    file.src_uri,
                    docs_dir / file.src_uri,
                    engine.project_dir,
                    engine.import_roots,
                    lab=file.src_uri in labs,
                    memo=self.session.memo,
                )
            if not file.src_uri.endswith(".md"):
                continue
            text = sources[file.src_uri] = (docs_dir / file.src_uri).read_text(encoding="utf-8")
            if facts.translated:
                # A translation shows its English page's blocks (`Engine.twin`): planned and run once, there.
                if files.get_file_from_path(facts.source) is not None:
                    engine.twins[file.src_uri] = facts.source
                continue
            blocks = scan_markdown(text, file.src_uri, engine.project_dir)
            if blocks:
                engine.plan(file.src_uri, blocks)
        # A translated page renders again with its English page (its blocks, and its sections where it is behind).
        self.page_inputs = with_sources(self.page_inputs, lambda src: self.facts[src].source)
        self._check_includes(sources, config)
        snippets = engine.project_dir / "snippets"
        for path in sorted(snippets.rglob("*.py")) if snippets.is_dir() else []:
            # The download carries the helpers it imports, so it runs without this package.
            uri = path.relative_to(engine.project_dir).as_posix()
            try:
                content = self._bundle(path, uri)
            except UnicodeDecodeError as error:
                raise InputError(f"{uri}: {not_utf8(error)}") from None
            files.append(File.generated(config, uri, content=content))
        self.files = files
        self._stale_translations(files, docs_dir, sources)
        # "What changed" renders last: it compares with every citable page this build records.
        what_changed = files.get_file_from_path(WHAT_CHANGED_PAGE)
        if what_changed is not None:
            files.remove(what_changed)
            files.append(what_changed)
        if labs:
            present = {f.src_uri for f in files.documentation_pages()}
            self.planned_labs = [floor.lab for floor in FLOORS if floor.lab in present]  # the registry's order
        plan_labs(self.planned_labs)
        log.info("proofs: %d executed blocks planned on %d pages", engine.total, len(engine.planned))
        self._plan_pages(files, config)
        return files

    def _check_includes(self, sources: dict[str, str], config: MkDocsConfig) -> None:
        """Refuse by file and line an include that pymdownx.snippets would stop the build on with a traceback.

        Only where it would (`check_paths`) and reads from the project's folder, as the engine does.

        Raises:
            ScanError: The first such include of a page (`execution.scan.check_includes`).
        """
        options = config.mdx_configs.get("pymdownx.snippets", {})
        bases = options.get("base_path", ["."])
        bases = [bases] if isinstance(bases, str) else bases
        project_dir = self.engine.project_dir
        if "pymdownx.snippets" not in config.markdown_extensions or not options.get("check_paths"):
            return
        if [Path(base).resolve() for base in bases] != [project_dir]:
            return  # includes read from elsewhere: pymdownx.snippets says it in its own words
        for src_uri, text in sources.items():
            if any(block.missing for block in self.engine.planned.get(src_uri, [])):
                text = without_missing_includes(text, src_uri, project_dir)  # noqa: PLW2901  (as on_page_markdown does)
            check_includes(text, f"docs/{src_uri}", project_dir)

    def _plan_pages(self, files: Files, config: MkDocsConfig) -> None:
        """Tell MkDocs which pages this build renders: under a dirty serve session, what an edit changed.

        MkDocs asks each page's file `is_modified()` in a dirty build (`mkdocs serve --dirty`, and
        `mkdocs build --dirty`). Outside a serve session every page answers yes, so a built site is
        always whole; in one, the session's plan answers, and the pages it leaves out lend this
        build their sections of the edition's manifest (What changed compares them).
        """
        pages = files.documentation_pages()
        if self.session is not None:
            removed = self.session.remove_stale([file.dest_uri for file in files], Path(config.site_dir))
            if removed:
                log.info("serve: removed from the site what no file writes any more: %s", ", ".join(removed))
            theme_dir = config.theme.custom_dir
            recordings = [self.engine.project_dir / self.settings.recordings] if self.settings.recordings else []
            self.inputs = inputs_digest(
                Path(config.config_file_path),
                self.engine.project_dir,
                Path(theme_dir) if theme_dir else None,
                recordings,  # the other machines' outputs, which the pages' tabs show
            )
            self.plan = self.session.plan(self.page_inputs, self.inputs, also=self.ready)
        plan = self.plan
        for file in pages:
            file.is_modified = functools.partial(plan.rebuilds, file.src_uri)  # type: ignore[method-assign]
        if not plan.partial or self.session is None:
            if self.session is not None and self.session.dirty:
                log.info("serve: every page renders (%s)", plan.why)
            return
        for page, state in self.session.kept(plan):
            if state.manifest is not None:
                self.manifest.pages[page_url(page)] = state.manifest
        jupyter = config.plugins.get("mkdocs-jupyter")
        if jupyter is not None and not any(plan.rebuilds(lab) for lab in self.planned_labs):
            # mkdocs-jupyter forgets every cached run it did not use in a build: this one renders no lab.
            # Its `cache` option, set for this build only: no per-build way exists (tests/test_house_rules.py).
            jupyter.config["cache"] = False
        mkdocstrings = config.plugins.get("mkdocstrings")
        api = [page for page, seen in self.page_inputs.items() if seen.api]
        if mkdocstrings is not None and not any(plan.rebuilds(page) for page in api):
            # Its inventory (`objects.inv`) lists what the API pages rendered: this build renders none.
            mkdocstrings.config["enable_inventory"] = False
        names = sorted(plan.rebuilt or ())
        log.info("serve: %d of %d pages render again: %s", len(names), len(pages), ", ".join(names))

    def on_nav(self, nav: Navigation) -> None:
        """Render the pages in reading order; give the pages this build does not render their titles.

        MkDocs renders pages, and so runs their proofs, in the order of its files: folders after
        files, alphabetically, so the compile page (`compile.md`) came before every floor, and a
        serve session's background build made each floor wait behind its compile-heavy proofs.
        The navigation's order is the reader's; pages outside it follow, and "What changed" stays last.
        """
        link_languages(nav)
        self.nav = nav
        files = self._files()
        ordered = [page.file for page in nav.pages]
        what_changed = files.get_file_from_path(WHAT_CHANGED_PAGE)
        last = [what_changed] if what_changed is not None else []
        rest = [file for file in files.documentation_pages() if file not in ordered and file not in last]
        for moved in [*ordered, *rest, *last]:
            if files.get_file_from_path(moved.src_uri) is moved:
                files.remove(moved)
                files.append(moved)
        if self.session is None or not self.plan.partial:
            return
        for page, state in self.session.kept(self.plan):
            file = self._files().get_file_from_path(page)
            if file is not None and file.page is not None and file.page.title is None and state.title:
                file.page.title = state.title

    def on_env(self, env: Environment) -> None:
        """Keep the session's compiled templates; lend the report the records of the pages not rendered again."""
        # The theme's partials write the site's own words in the page's language (`i18n.messages.t`).
        env.globals["floors_t"] = t
        if self.session is None:
            return
        env.bytecode_cache = self.session.templates
        if not self.plan.partial:
            return
        order = {file.src_uri: index for index, file in enumerate(self._files().documentation_pages())}
        kept = [record for _page, state in self.session.kept(self.plan) for record in state.records]
        records = sorted([*kept, *self.engine.records], key=lambda record: order.get(record.page, len(order)))
        self.engine.records[:] = records  # the same list: the launch settings read it
        self.engine.failures.extend(f for _page, state in self.session.kept(self.plan) for f in state.failures)

    def _planned_blocks(self) -> list[tuple[str, str]]:
        return [(page, block.block_id) for page, blocks in self.engine.planned.items() for block in blocks]

    def _cache_files(self) -> set[Path]:
        """The files in mkdocs-jupyter's cache folder: ours (`cache_dir` points it there), its files its own.

        No public way exists to drop one lab's cached conversion, so the build names the files by
        mkdocs-jupyter's own private helpers (`_lab_cache_paths`); tests/test_house_rules.py fails when
        an upgrade renames them.
        """
        root = self.jupyter_cache
        return set(root.rglob("*.json")) if root.is_dir() else set()

    def _lab_page(self, html: str, page: Page, config: MkDocsConfig, floor: Floor) -> str:
        """Record a lab page's run (`labs.accounting`: ran, cached, deferred, failed) and give the page what it shows.

        mkdocs-jupyter executes the notebook while rendering the page, through the project's executor,
        which records the run; none means the notebook came from mkdocs-jupyter's cache.
        """
        engine = self.engine
        runs = take_runs()
        run_key = self._lab_run_key(page, config)
        known = engine.known_failures.get(run_key) if run_key else None
        outcome = lab_outcome(
            floor.lab,
            runs,
            execute=self.settings.execute,
            only=engine.only,
            known_failure=known.summary if known is not None else None,
        )
        if outcome.drops_conversion:
            # A run that never happened, or failed: a later build must not take its cached page for a result.
            self._drop_this_labs_conversion(page, config)
        if outcome.pending:
            self.pending_pages.add(page.file.src_uri)
            html = pending_page(html, lab=True)
        failure = outcome.proof_failure()
        if failure is not None:
            log.error("lab failed: %s", outcome.failure)
            html = lab_failure_banner(failure.summary) + html
            if outcome.new_failure and engine.report_failure is not None and run_key:
                # A session's background build: the session shows it on the lab's page at once.
                engine.report_failure(run_key, failure)
        engine.record(outcome.result())
        kept = keep_lab_time(outcome, floor, Path(page.file.abs_src_path or ""), self.launch)
        if outcome.status == "cached":
            took = f" (ran in {format_seconds(kept)})" if kept is not None else ""
            log.info("lab %s: cached%s", lab_place(f"docs/{floor.lab}"), took)
            lab_progress(f"docs/{floor.lab}", "cached", took.strip())
        return html

    @staticmethod
    def _lab_cache_paths(page: Page, config: MkDocsConfig) -> tuple[Path, Path] | None:
        """The files mkdocs-jupyter caches a lab's page in, executed and not: its own naming, pinned with it.

        Their folder is keyed on the machine and what the labs import (`jupyter_cache_dir`), their names
        on the notebook: the same in a serve session and in its background build.
        """
        jupyter = config.plugins.get("mkdocs-jupyter")
        source = page.file.abs_src_path
        if jupyter is None or source is None:
            return None
        executed, unexecuted = (
            Path(jupyter_cache_path(jupyter.config["cache_dir"], jupyter_cache_key(source, jupyter.config, run)))
            for run in (True, False)
        )
        return executed.resolve(), unexecuted.resolve()

    def _lab_run_key(self, page: Page, config: MkDocsConfig) -> str:
        """What identifies a lab's run (`labs.accounting.lab_run_key`), or an empty string if mkdocs-jupyter is off."""
        paths = self._lab_cache_paths(page, config)
        return lab_run_key(paths[0]) if paths is not None else ""

    def _drop_this_labs_conversion(self, page: Page, config: MkDocsConfig) -> None:
        """Remove what mkdocs-jupyter just cached of this lab's page, and nothing else.

        The session's background build writes its executed labs into the same folder meanwhile: every
        file new since the page started was removed once, so a lab it had just run was run again by
        the session. Only the paths mkdocs-jupyter keys this notebook to (executed or not) are this page's.
        """
        own = self._lab_cache_paths(page, config)
        if own is None:
            return
        for path in own_new_files(own, self.notebook_cache_before, self._cache_files()):
            path.unlink()

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig) -> str:
        """Start the page's proofs afresh; give floor pages their title and description from the registry.

        Raises:
            FloorsError: If a floor page has its own `# ` title.
        """
        engine = self.engine
        facts = self._page(page)
        language, floor = facts.language, facts.floor
        claims = page.meta.get("claims") if facts.translated else None
        self.untranslated_claims[page.file.src_uri] = use(
            language.code, claims if isinstance(claims, dict) else None
        ).untranslated
        engine.begin_page(page.file.src_uri, page.url)
        if any(block.missing for block in engine.planned.get(page.file.src_uri, [])):
            markdown = without_missing_includes(markdown, page.file.src_uri, engine.project_dir)
        self.notebook_cache_before = self._cache_files() if self.serving else set()
        take_runs()  # a lab's run is the one recorded while its page renders
        if facts.kind == "lab" and not facts.translated:
            # A lab that failed in the session's background build, as it is now, is not run again here.
            run_key = self._lab_run_key(page, config)
            defer_labs(runs_later(run_key, defer=self.defer, known_failures=engine.known_failures))
        if facts.translated:
            markdown = self._translated_page(join_chinese_lines(markdown), page, facts)
        if facts.kind == "floor" and floor is not None:
            if markdown.lstrip().startswith("# "):
                raise InputError(
                    f"docs/{floor.page}: floor pages take their title from the registry; remove the '# ' heading"
                )
            page.meta.setdefault("description", floor.summary_in(language.code))
            # A floor outranks its lab (which repeats the floor's words in code) for the floor's own subject.
            page.meta.setdefault("search", {"boost": 4})
            # The English heading's slug is the title's anchor in every language (a Chinese title's slug is not).
            anchor = slugify(floor.heading, "-")
            markdown = f"# {floor.heading_in(language.code)} {{ #{anchor} }}\n\n{markdown}"
            if (Path(config.docs_dir) / language.prefix / floor.lab).is_file():
                # "Check yourself" closes every floor page; its lab follows it there.
                lead = t("Lab {number}.", number=floor.number)
                practise = t("Practise this floor on your own machine") + ("：" if language.code == "zh" else ": ")
                rest = t("run, change and measure, with self-checks. Download it as a notebook from the lab's page.")
                markdown += f"\n\n**{lead}** {practise}[{floor.lab_title_in(language.code)}](../{floor.lab}) — {rest}\n"
        if facts.kind == "lab" and floor is not None:
            page.meta.setdefault(
                "description",
                t(
                    "Lab {number}, {title}: exercises that measure what the floor explains.",
                    number=floor.number,
                    title=floor.title_in(language.code),
                ),
            )
        if not page.meta.get("description"):
            log.warning("docs/%s has no description: add 'description:' to its front matter", page.file.src_uri)
        name = self.settings.edition
        markdown = fill_markers(
            markdown,
            {
                PROOFS_MARKER: lambda: proofs_page(engine.planned, engine.project_dir),
                EDITION_MARKER: lambda: name,
                BIBTEX_MARKER: lambda: cite_page_html(config.site_url or "/", name, int(name[:4])),
            },
        )
        markdown = fill(markdown, facts.source, self.manifest, self.settings.edition)
        markdown = fill_markers(
            markdown, {STALE_MARKER: lambda: stale_markdown(self.staleness, page.file.src_uri, self._files())}
        )
        markdown = fill_markers(
            markdown,
            {
                HANDOUTS_MARKER: lambda: (
                    cite_links_html(page.url, language) if self.settings.handouts else t(NO_HANDOUTS)
                )
            },
        )
        if language != DEFAULT:
            files = self._files()
            markdown = untranslated_links(
                markdown, page.file.src_uri, lambda src: files.get_file_from_path(src) is not None
            )
        return markdown

    def _stale_translations(self, files: Files, docs_dir: Path, sources: dict[str, str]) -> None:
        """How each translated page (Markdown and labs) stands against its English page (before any page renders)."""
        for file in files.documentation_pages():
            english = self.facts[file.src_uri].source
            if english == file.src_uri or not (docs_dir / english).is_file():
                continue
            text = sources.get(english)
            source = page_text(english, text if text is not None else (docs_dir / english).read_text(encoding="utf-8"))
            recorded = self.translations.get(file.src_uri, {})
            state = staleness(sections(source), recorded)
            if not file.src_uri.endswith(".py"):
                # Where the translation is behind, its page shows the English sections (`i18n.catch_up`).
                behind = catch_up(source, sources[file.src_uri], recorded, lambda _: "")
                self.caught_up[file.src_uri] = behind
            self.staleness[file.src_uri] = state

    def _translated_page(self, markdown: str, page: Page, facts: PageFacts) -> str:
        """A translated page's Markdown: its links to pages without a twin made English, its stale sections noted."""
        files = self._files()
        english_file = files.get_file_from_path(facts.source)
        state = self.staleness.get(page.file.src_uri)
        if english_file is None or state is None:
            return markdown
        href = get_relative_url(english_file.url, page.url)
        note = template("stale_translation.html")

        def render(link: str, _anchor: str) -> str:
            return note.render(href=link)

        if page.file.src_uri.endswith(".py"):
            return markdown
        english = Path(english_file.abs_src_path or "").read_text(encoding="utf-8")
        untranslated = template("untranslated_section.html").render()
        recorded = self.translations.get(page.file.src_uri, {})
        caught = catch_up(english, markdown, recorded, lambda _anchor: untranslated)
        # A section shown in English has its own note; the others the translation is behind on are marked stale.
        older = Staleness(tuple(a for a in state.stale if a not in caught.in_english), state.untranslated)
        return stale_notes(caught.markdown, older, href, render)

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig) -> str:
        """Close the page's proof processes; stop the build if one of its proofs failed (except under serve).

        Raises:
            FloorsError: If a proof of the page failed (not under serve), or its anchor aliases do not apply.
        """
        engine = self.engine
        engine.end_page()
        engine.unaccounted()
        html = engine.unshown(html)
        facts = self._page(page)
        floor = facts.floor
        if floor is not None and facts.kind == "lab" and not facts.translated:
            html = self._lab_page(html, page, config, floor)
            defer_labs(self.defer)
        elif (
            self.defer
            and (engine.only is None or fnmatch(page.file.src_uri, engine.only))
            and any(r.status == "skipped" for r in engine.records if r.page == page.file.src_uri)
        ):
            self.pending_pages.add(page.file.src_uri)
            html = pending_page(html, lab=False)
        html = narrow_search(html)
        failed = [f for f in engine.failures if f.page == page.file.src_uri]
        if failed and not self.serving:
            raise FloorsError("a proof failed:\n" + "\n".join(str(f) for f in failed))
        english = facts.source
        if english in CITABLE_PAGES:
            if english == page.file.src_uri:
                self.manifest.record(page.file.src_uri, html)  # editions compare the English text
            try:
                # An anchor kept as an alias lands on the same section in every language.
                html = apply_aliases(html, self.aliases.get(page_url(english), {}))
            except ValueError as error:
                raise InputError(f"docs/{page.file.src_uri}: {error}") from None
        return finish_headings(
            html, src_uri=page.file.src_uri, page_url=page.url, site_url=config.site_url, name=self.settings.edition
        )

    def _page(self, page: Page) -> PageFacts:
        """The page's facts, as `on_files` computed them (a page MkDocs made later gets its own now)."""
        facts = self.facts.get(page.file.src_uri)
        if facts is None:
            facts = self.facts[page.file.src_uri] = page_facts(page.file.src_uri)
        return facts

    def _files(self) -> Files:
        if self.files is None:
            raise RuntimeError("a page event arrived before on_files")
        return self.files

    def on_page_context(self, context: dict[str, Any], page: Page, config: MkDocsConfig) -> dict[str, Any]:
        """Hand the gauge and the provenance to the `floors-header` partial; fill the build report page."""
        files = self._files()
        facts = self._page(page)
        language = facts.language
        use(language.code, page.meta.get("claims") if isinstance(page.meta.get("claims"), dict) else None)

        def url_of(src: str) -> str:
            file = files.get_file_from_path(src)
            return get_relative_url(file.url, page.url) if file else src

        context["floors_language"] = language.code
        if self.nav is not None:
            context["floors_nav_items"] = nav_items(self.nav, language)
        context["floors_alternates"] = [
            {"code": other.code, "name": other.name, "href": url_of(facts.twin(other))}
            for other in LANGUAGES
            if other != language and files.get_file_from_path(facts.twin(other)) is not None
        ]

        context.update(page_gauges(page.file.src_uri, url_of))
        context["floors_handout"] = handout_context(page.file.src_uri, page.url)
        context["floors_handout_links"] = self.settings.handouts
        # The page states what its outputs were measured on: for cached ones, the run that produced them.
        shown = of_outputs((r.provenance for r in self.engine.records if r.page == page.file.src_uri), self.provenance)
        context["floors_provenance"] = shown[0]
        context["floors_provenances"] = shown
        context["floors_tiers"] = page_tiers(self.engine.records, self.recordings, page.file.src_uri)
        if page.content:

            def build_report() -> str:
                report = config.theme.get_env().get_template("partials/floors-build-report.html")
                return partial_note(self.plan.rebuilt) + report_html(self.engine.records, report)

            page.content = fill_markers(
                page.content,
                {
                    REPORT_MARKER: build_report,
                    MACHINES_MARKER: lambda: machines_html(
                        self.engine.records,
                        self.recordings,
                        self._planned_blocks(),
                        lambda src: url_of(twin_uri(src, language)),  # the claims' pages in this page's language
                    ),
                },
            )
        return context

    def on_template_context(self, context: dict[str, Any], template_name: str, config: MkDocsConfig) -> dict[str, Any]:
        """Give the 404 page the whole building's gauge, with links that work from any missing URL."""
        if template_name == "404.html":
            use(DEFAULT.code)
            root = urlsplit(config.site_url or "/").path.rstrip("/")
            files = self._files()

            def absolute(src: str) -> str:
                file = files.get_file_from_path(src)
                return f"{root}/{file.url if file else src}"

            context["floors_building"] = render_gauge(None, lambda f: absolute(f.page))
            context["floors_provenance"] = None
        return context

    def on_post_page(self, output: str, page: Page) -> str:
        """Refuse a page that leaks the build machine's absolute paths.

        Raises:
            FloorsError: If the page shows the project's absolute path (not under serve, where it is logged).
        """
        project_dir = str(self.engine.project_dir)
        if project_dir in output:
            message = (
                f"docs/{page.file.src_uri}: the page shows the build machine's path {project_dir}; print relative paths"
            )
            if self.serving:
                log.error(message)
            else:
                raise FloorsError(message)
        if page.file.src_uri in self.pending_pages:
            output = mark_pending(output)
        output = squeeze_chrome(output)
        facts = self._page(page)
        language = facts.language
        use(language.code)
        if facts.translated and facts.floor is not None and facts.kind == "lab":
            output = title_anchor(output, slugify(facts.floor.lab_title_in(DEFAULT.code), "-"))
        # A translated lab ran as its English lab (the same code): its run time and install line are that lab's.
        english = self._files().get_file_from_path(facts.source)
        return finish_lab_page(
            output,
            src_uri=facts.source,
            site_folder=language.prefix,
            source=Path((english.abs_src_path if english is not None else None) or page.file.abs_src_path or ""),
            page_url=page.url,
            launch=self.launch,
        )

    def on_post_build(self, config: MkDocsConfig) -> None:
        """Write the build report as JSON and summarise the proofs in one log line.

        Raises:
            FloorsError: If the manifest cannot be written.
        """
        engine = self.engine
        engine.end_page()
        if not self.plan.partial or any(self.plan.rebuilds(lab) for lab in self.planned_labs):
            # A partial build that renders no lab leaves the notebooks and packs of the build that did.
            for language in LANGUAGES:
                # Each language's notebooks and packs beside its lab pages (`site/zh/labs/…`, `site/zh/packs/`).
                docs = Path(config.docs_dir) / language.folder
                if docs.is_dir():
                    use(language.code)
                    publish_notebooks(Path(config.site_dir) / language.folder, docs, self.launch)
                    # Without PDFs: `make pdf` packs again. Every language's packs carry the site's one set of proofs.
                    write_packs(Path(config.site_dir) / language.folder, proofs_root=Path(config.site_dir))
            use(DEFAULT.code)
        planned = self._planned_blocks()
        planned += [(lab, "notebook") for lab in self.planned_labs]
        report = report_json(
            engine.records,
            self.provenance.as_dict(),
            advisory=engine.advisory_claims,
            build_id=self.build_id,
            planned=planned,
            recordings=recordings_json(engine.records, self.recordings, self._planned_blocks()),
            runs={"execute": self.settings.execute, "only": self.settings.only},
        )
        report = partial_report(report, self.plan.rebuilt)
        report = _listing_pages(report, self._written_pages(config))
        Path(config.site_dir, "build-report.json").write_text(report, encoding="utf-8")
        for path, text in self.lazy_outputs.files().items():
            Path(config.site_dir, path).write_text(text, encoding="utf-8")
        self.manifest.write(Path(config.site_dir), self.settings.edition)
        self._write_translation_report(Path(config.site_dir))
        versions = Path(config.site_dir, "versions.json")
        if not versions.exists():
            # Material's version selector asks for ../versions.json; outside a mike deployment there is one edition.
            name = self.settings.edition
            versions.write_text(json.dumps([{"version": name, "title": name, "aliases": []}]), encoding="utf-8")
        complete = engine.execute and engine.only is None and not engine.failures and not self.plan.partial
        if complete and engine.cache.mode != "off":
            # Only a build that planned every block knows which entries nothing uses any more.
            try:
                log.info("proofs: removed %d unused cache entries", engine.cache.prune())
            except CacheError as error:
                log.warning("proofs: %s", error)
        counts = {s: sum(1 for r in engine.records if r.status == s) for s in ("ran", "cached", "skipped", "failed")}
        log.info("proofs: %(ran)d ran, %(cached)d cached, %(skipped)d skipped, %(failed)d failed", counts)
        log.info("%s", claims_summary(engine.records, advisory=engine.advisory_claims))
        if self.recordings:
            log.info("%s", recordings_summary(engine.records, self.recordings, self._planned_blocks()))
        if engine.failures and self.serving:
            log.error("proofs failed:\n%s", "\n".join(str(f) for f in engine.failures))
        self._remember(config)
        # After `_remember`: a partial build's index is whole only once the session has merged it.
        counts = split_search_index(Path(config.site_dir))
        if counts:
            log.info("search: %s", ", ".join(f"{n} sections in {code}" for code, n in counts.items()))
        if self.session is not None:
            waiting = {page for page in self.session.pending if not self.plan.rebuilds(page)} | self.pending_pages
            self.session.end_build(waiting, Path(config.config_file_path), self.engine.project_dir)

    def _write_translation_report(self, site_dir: Path) -> None:
        """`translations.json`: each translated page's stale and untranslated sections, claims and twin blocks."""
        pages: dict[str, dict[str, Any]] = {}
        for page, state in sorted(self.staleness.items()):
            pages[page] = {
                "stale": list(state.stale),
                "untranslated": list(state.untranslated),
                "shown_in_english": list(self.caught_up[page].in_english) if page in self.caught_up else [],
                "left_out": list(self.caught_up[page].dropped) if page in self.caught_up else [],
                "claims_untranslated": self.untranslated_claims.get(page, []),
                "blocks_shown_from_english": len(self.engine.twin_shown.get(page, [])),
            }
        stale = sum(len(state.stale) for state in self.staleness.values())
        if stale:
            log.info("translations: %d stale sections (listed on the build report and What changed)", stale)
        behind = sum(len(caught.in_english) for caught in self.caught_up.values())
        if behind:
            log.info("translations: %d sections not translated yet, shown in English on their translated pages", behind)
        Path(site_dir, "translations.json").write_text(
            json.dumps(pages, ensure_ascii=False, indent=1), encoding="utf-8"
        )

    def _written_pages(self, config: MkDocsConfig) -> list[dict[str, str | None]]:
        """Every HTML page of the site (`verify` checks each is there): the documentation pages, the theme's 404.

        A partial (dirty) build lists every page too: those it did not render are the earlier build's.
        """
        pages: list[dict[str, str | None]] = [
            {"path": file.dest_uri, "page": file.src_uri} for file in self._files().documentation_pages()
        ]
        site = Path(config.site_dir)
        for name in sorted(config.theme.static_templates):
            if name.endswith(".html") and (site / name).is_file():
                pages.append({"path": name, "page": None})
        return pages

    def _remember(self, config: MkDocsConfig) -> None:
        """Keep, for the session's next build, what each page contributed to this one (a dirty session only)."""
        session = self.session
        if session is None or not session.dirty:
            return
        pages = self._files().documentation_pages()
        search: dict[str, list[dict[str, Any]]] = {}
        index = Path(config.site_dir, "search", "search_index.json")
        if index.is_file():
            kept = {state.url: state.search for state in session.pages.values()}
            rebuilt = None if self.plan.rebuilt is None else {f.url for f in pages if self.plan.rebuilds(f.src_uri)}
            search = merge_search_index(index, rebuilt, kept, [f.url for f in pages])
        states = {}
        for file in pages:
            seen = self.page_inputs.get(file.src_uri)
            if seen is None:
                continue
            states[file.src_uri] = PageState(
                url=file.url,
                digest=seen.digest,
                title_key=seen.title_key,
                title=file.page.title if file.page is not None else None,
                records=[r for r in self.engine.records if r.page == file.src_uri],
                failures=[f for f in self.engine.failures if f.page == file.src_uri],
                manifest=self.manifest.pages.get(page_url(file.src_uri)),
                search=search.get(file.url, []),
            )
        session.pages, session.inputs = states, self.inputs
