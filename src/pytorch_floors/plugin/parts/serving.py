"""A build's part of a serve session: its mark, what it defers, which pages it renders, what it lends the next."""

from __future__ import annotations

import functools
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from pytorch_floors.editions.anchors import page_url
from pytorch_floors.editions.manifest import ManifestRecorder
from pytorch_floors.execution.engine import Engine, ProofFailure
from pytorch_floors.execution.progress import Progress
from pytorch_floors.floors import LABS
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.serve import (
    BACKGROUND_VARIABLE,
    SIGNALS_VARIABLE,
    Memo,
    PageInput,
    PageState,
    Plan,
    ServeSession,
    api_later,
    emit_progress,
    inputs_digest,
    mark_pending,
    merge_search_index,
    page_input,
    pending_page,
    report_background_failure,
    with_sources,
)

__all__ = ["Serving"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


class Serving:
    """What one build takes from its serve session and gives back (for `mkdocs build`: a mark, every page)."""

    def __init__(self, settings: Settings, *, serving: bool, session: ServeSession | None) -> None:
        """Join the session (none for `mkdocs build`).

        Args:
            settings: The plugin's options.
            serving: This is `mkdocs serve` (or its background build): a failed proof shows a banner.
            session: What this `mkdocs serve` kept from its earlier builds.
        """
        self.settings = settings
        self.serving = serving
        self.session = session
        signals = os.environ.get(SIGNALS_VARIABLE)
        # A serve session's background build (`plugin.serve.background`), told so by its session.
        self.is_background = bool(serving and signals and os.environ.get(BACKGROUND_VARIABLE, "").isdigit())
        # What the build computes from files that seldom change: the session's, kept from build to build; else this
        # build's own.
        self.memo = session.memo if session is not None else Memo()
        # Every page of this build carries it, and so does the report: `verify` matches them. A dirty
        # session keeps one: the pages a build does not render carry the mark of the build that did.
        self.build_id = session.build_id if session is not None and session.dirty else uuid.uuid4().hex
        self.plan = Plan(None, "a published build renders every page")
        # On a cold cache, a session with live reload runs no proof or lab itself: its background build does.
        defer, self.ready = session.start_build() if session is not None else (False, set())
        self.defer = defer and settings.execute
        self.pending_pages: set[str] = set()
        self.page_inputs: dict[str, PageInput] = {}
        self.inputs = ""
        self.shown: dict[str, str] = {}

    @property
    def known_failures(self) -> dict[str, ProofFailure] | None:
        """The blocks that failed in the session's background build, by cache key (`None` without a session)."""
        return self.session.failed if self.session is not None else None

    def background(self) -> tuple[Callable[[str, ProofFailure], None] | None, Callable[[Progress], None] | None]:
        """Where a session's background build tells the session each new failure and each step (else nowhere).

        Its progress travels to the session as events on its output, never as the wording of its log.
        """
        signals = os.environ.get(SIGNALS_VARIABLE)
        if not self.is_background or not signals:
            return None, None
        return functools.partial(report_background_failure, Path(signals)), emit_progress

    def forget_search_index(self, config: MkDocsConfig) -> None:
        """Material merges a dirty build's index with the last one for one page only; `remember` merges all."""
        search = config.plugins.get("material/search")
        session = self.session
        if session is not None and session.dirty and search is not None and hasattr(search, "search_index_prev"):
            # No public way: `search_index_prev` is the plugin's own state (tests/test_house_rules.py checks the name).
            search.search_index_prev = None

    def pending(self, src_uri: str, html: str, *, lab: bool, language: str) -> str:
        """A page whose proofs or lab the background build runs: it shows "running…" (in its language) until then."""
        self.pending_pages.add(src_uri)
        return pending_page(html, lab=lab, language=language)

    def rebuilds_any(self, pages: list[str]) -> bool:
        """This build renders every page, or one of `pages`."""
        return not self.plan.partial or any(self.plan.rebuilds(page) for page in pages)

    def on_files(self, files: Files, config: MkDocsConfig, facts: dict[str, PageFacts], engine: Engine) -> None:
        """What each page's rendering depends on (a session only), its English page's included."""
        session = self.session
        if session is None:
            return
        docs_dir = Path(config.docs_dir)
        labs = {entry.lab for entry in LABS} if config.plugins.get("mkdocs-jupyter") is not None else set()
        for file in files.documentation_pages():
            if file.src_uri.endswith((".md", ".py")):
                self.page_inputs[file.src_uri] = page_input(
                    file.src_uri,
                    docs_dir / file.src_uri,
                    engine.project_dir,
                    engine.import_roots,
                    lab=file.src_uri in labs,
                    memo=session.memo,
                )
        # A translated page renders again with its English page (its blocks, and its sections where it is behind).
        self.page_inputs = with_sources(self.page_inputs, lambda src: facts[src].source)

    def plan_pages(
        self,
        files: Files,
        config: MkDocsConfig,
        project_dir: Path,
        planned_labs: list[str],
        manifest: ManifestRecorder,
        *,
        shown: Callable[[], Mapping[str, str]],
    ) -> None:
        """Tell MkDocs which pages this build renders: under a dirty serve session, what an edit changed.

        MkDocs asks each page's file `is_modified()` in a dirty build (`mkdocs serve --dirty`, and
        `mkdocs build --dirty`). Outside a serve session every page answers yes, so a built site is
        always whole; in one, the session's plan answers, and the pages it leaves out lend this
        build their sections of the edition's manifest (What changed compares them). `shown` gives what
        some markers show (`plugin.pages.marker_contents`): a page showing only those, unchanged, is left out.
        It reads every proof file, so it is asked only under a session: a plain build renders every page.
        """
        pages = files.documentation_pages()
        session = self.session
        if session is not None:
            removed = session.remove_stale([file.dest_uri for file in files], Path(config.site_dir))
            if removed:
                log.info("serve: removed from the site what no file writes any more: %s", ", ".join(removed))
            theme_dir = config.theme.custom_dir
            recordings = [project_dir / self.settings.recordings] if self.settings.recordings else []
            self.inputs = inputs_digest(
                Path(config.config_file_path),
                project_dir,
                Path(theme_dir) if theme_dir else None,
                recordings,  # the other machines' outputs, which the pages' tabs show
            )
            self.shown = dict(shown())
            self.plan = session.plan(self.page_inputs, self.inputs, also=self.ready, shown=self.shown)
        plan = self.plan
        for file in pages:
            file.is_modified = functools.partial(plan.rebuilds, file.src_uri)  # type: ignore[method-assign]
        if not plan.partial or session is None:
            if session is not None and session.dirty:
                log.info("serve: every page renders (%s)", plan.why)
            return
        for page, state in session.kept(plan):
            if state.manifest is not None:
                manifest.pages[page_url(page)] = state.manifest
        jupyter = config.plugins.get("mkdocs-jupyter")
        if jupyter is not None and not any(plan.rebuilds(lab) for lab in planned_labs):
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

    def on_nav(self, files: Files) -> None:
        """Give the pages this build does not render their titles."""
        if self.session is None or not self.plan.partial:
            return
        for page, state in self.session.kept(self.plan):
            file = files.get_file_from_path(page)
            if file is not None and file.page is not None and file.page.title is None and state.title:
                file.page.title = state.title

    def on_env(self, env: Environment, files: Files, engine: Engine) -> None:
        """Keep the session's compiled templates; lend the report the records of the pages not rendered again."""
        if self.session is None:
            return
        env.bytecode_cache = self.session.templates
        if not self.plan.partial:
            return
        order = {file.src_uri: index for index, file in enumerate(files.documentation_pages())}
        kept = [state for _page, state in self.session.kept(self.plan)]
        engine.adopt(
            [record for state in kept for record in state.records],
            [failure for state in kept for failure in state.failures],
            lambda record: order.get(record.page, len(order)),
        )

    def on_page_markdown(self, markdown: str, facts: PageFacts) -> str:
        """An API reference page renders with the next build, in some builds of a serve session.

        In its first one (`plugin.serve.later`), and in a build that an edit came before or during, which shows
        the edit first (`ServeSession.reference_waits`). mkdocstrings rendering it from the package's docstrings
        was a seventh of the first build, and an edit saved while the next build rendered it waited about six
        seconds to be shown.
        """
        session, seen = self.session, self.page_inputs.get(facts.src_uri)
        if session is None or seen is None or not seen.api or not session.reference_waits(facts.src_uri):
            return markdown
        if session.builds > 0 and not session.later:
            log.info("serve: an edit came while the API reference rendered: the rest of it renders after the edit")
        session.later.add(facts.src_uri)
        return api_later(markdown, facts.language.code)

    def on_page_content(self, html: str, facts: PageFacts, engine: Engine) -> str:
        """A page (not a lab's: its part says) whose proofs the background build runs shows "running…".

        A translation's blocks are its English page's (they run once, for both): it waits on those.
        """
        src_uri = facts.src_uri
        if facts.lab is not None and not facts.translated:
            return html
        if (
            self.defer
            and (engine.only is None or fnmatch(src_uri, engine.only))
            and any(r.status == "skipped" for r in engine.records if r.page in (src_uri, facts.source))
        ):
            return self.pending(src_uri, html, lab=False, language=facts.language.code)
        return html

    def on_post_page(self, output: str, facts: PageFacts) -> str:
        """A pending page asks to be shown again once its background build has run it."""
        return mark_pending(output) if facts.src_uri in self.pending_pages else output

    def remember(self, config: MkDocsConfig, files: Files, engine: Engine, manifest: ManifestRecorder) -> None:
        """Keep, for the session's next build, what each page contributed to this one (a dirty session only)."""
        session = self.session
        if session is None or not session.dirty:
            return
        pages = files.documentation_pages()
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
                records=[r for r in engine.records if r.page == file.src_uri],
                failures=[f for f in engine.failures if f.page == file.src_uri],
                manifest=manifest.pages.get(page_url(file.src_uri)),
                search=search.get(file.url, []),
            )
        session.pages, session.inputs, session.shown = states, self.inputs, self.shown

    def end_build(self, config: MkDocsConfig, project_dir: Path) -> None:
        """Tell the session which pages still wait for their background build."""
        if self.session is not None:
            waiting = {page for page in self.session.pending if not self.plan.rebuilds(page)} | self.pending_pages
            labs = {page for page, seen in self.page_inputs.items() if seen.lab}
            self.session.end_build(waiting, Path(config.config_file_path), project_dir, labs=labs)
