"""One site build: a thin conductor that hands each of MkDocs' events to the build's parts, in a fixed order.

The [`floors` plugin][pytorch_floors.plugin.plugin.FloorsPlugin] creates a `SiteBuild` in `on_config`
and hands it every later event of that build. Everything a build gathers lives on its parts
(`plugin.parts`, one concern each) and ends with it, so a second build in the same process
(`mkdocs serve`) starts from nothing but what its serve session lends it on purpose
([`ServeSession`][pytorch_floors.plugin.serve.session.ServeSession]): torch's facts, and under
`--dirty` what the pages it does not render again contributed to the build that did.

The parts, and the order every event visits them in:

1. `Serving`: the build's part of a serve session (its mark, what it defers, which pages render).
2. `Registry`: the floor registry's navigation, titles, descriptions, gauge; the site's chrome.
3. `Editions`: the edition's address, anchors, manifest, What changed, handouts.
4. `Translations`: the languages' navigation, each translated page's standing, the report.
5. `Recordings`: other machines' runs, shown beside each proof.
6. `Proofs`: the engine, the scan, the downloads, the page checks, the build report.
7. `Labs`: what mkdocs-jupyter runs, each lab page's run, the notebooks and packs.

A page's facts (`PageFacts`: its English source, language, floor, kind) are computed once, in
`on_files`, and handed to every part's page hooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from pytorch_floors.execution.engine import Engine
from pytorch_floors.execution.facts import torch_facts
from pytorch_floors.i18n.languages import twin_uri
from pytorch_floors.page_facts import PageFacts, page_facts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.pages import marker_contents
from pytorch_floors.plugin.parts import Editions, Labs, Proofs, Recordings, Registry, Serving, Translations
from pytorch_floors.plugin.parts.urls import url_from
from pytorch_floors.plugin.serve import ServeSession

__all__ = ["SiteBuild"]


class SiteBuild:
    """One build of the site: its parts, each event handed to them in a fixed order, and each page's facts."""

    def __init__(
        self, config: MkDocsConfig, settings: Settings, *, serving: bool = False, session: ServeSession | None = None
    ) -> None:
        """Start the build's parts: the navigation from the registry, the engine, the labs' settings.

        Args:
            config: The MkDocs configuration (after every plugin's `on_config` before this one).
            settings: The plugin's options.
            serving: This is `mkdocs serve`: a failed proof shows a banner instead of stopping the build.
            session: What this `mkdocs serve` kept from its earlier builds (`plugin.serve`); `None` for
                `mkdocs build`, which renders every page.

        Raises:
            FloorsError: If `anchors.aliases`, `translations.lock`, a recording or `repo_url` cannot be read.
        """
        project_dir = Path(config.config_file_path).parent.resolve()
        cache_root = Path(settings.cache_dir) if settings.cache_dir else project_dir / ".cache"
        self.serve = Serving(settings, serving=serving, session=session)
        self.editions = Editions(config, settings, project_dir)
        self.registry = Registry(config)
        self.translations = Translations(config, project_dir)
        # Torch's facts come from a block's process: the build itself never imports torch. A serve
        # session asks once: the machine does not change between two edits.
        facts = session.facts if session is not None and session.facts is not None else torch_facts()
        if session is not None:
            session.facts = facts
        self.recordings = Recordings(project_dir, settings, self.serve.memo)
        self.proofs = Proofs(
            config,
            settings,
            project_dir=project_dir,
            cache_root=cache_root,
            facts=facts,
            serve=self.serve,
            recordings=self.recordings,
            languages=self.translations.page_languages,
        )
        self.labs = Labs(
            config, settings, cache_root=cache_root, facts=facts, serve=self.serve, engine=self.proofs.engine
        )
        self.serve.forget_search_index(config)
        self.labs.configure_launch(config)
        self.files: Files | None = None
        # Every page's facts (its English source, language, floor, kind), computed once in `on_files`.
        self.facts: dict[str, PageFacts] = {}
        self.last_to_run: str | None = None
        """A background build's last page, in the order they render, with a proof or a lab to run (`on_nav`)."""

    @property
    def engine(self) -> Engine:
        """The build's engine (`Proofs`)."""
        return self.proofs.engine

    @property
    def build_id(self) -> str:
        """This build's mark, on every page and in the report (`verify` matches them)."""
        return self.serve.build_id

    def close(self) -> None:
        """End the processes of the build's blocks (at its end, and when it stops with an error)."""
        self.proofs.close()
        self.labs.close()

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

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Compute every page's facts and read each Markdown page once; plan the blocks, the labs and the pages.

        Raises:
            FloorsError: If a page's executed blocks break a rule, a proof cannot be bundled, or pages
                have executed blocks but `mkdocs.yml` gives SuperFences no executed fence.
        """
        self.files = files
        docs_dir = Path(config.docs_dir)
        # Each Markdown page's source, read once for the scan, the includes' check and the translations' standing.
        sources: dict[str, str] = {}
        for file in files.documentation_pages():
            self.facts[file.src_uri] = page_facts(file.src_uri)
            if file.src_uri.endswith(".md"):
                sources[file.src_uri] = (docs_dir / file.src_uri).read_text(encoding="utf-8")
        self.serve.on_files(files, config, self.facts, self.engine)
        self.proofs.on_files(files, config, self.facts, sources)
        self.translations.on_files(files, docs_dir, self.facts, sources, self.serve.memo)
        self.editions.on_files(files)
        self.labs.on_files(files, config)
        self.serve.plan_pages(
            files,
            config,
            self.engine.project_dir,
            self.labs.planned,
            self.editions.manifest,
            shown=lambda: marker_contents(self.engine.planned, self.engine.project_dir),
        )
        return files

    def on_nav(self, nav: Navigation) -> None:
        """Link the languages; render the pages in reading order; title the pages this build does not render."""
        files = self._files()
        self.translations.on_nav(nav)
        self.registry.on_nav(nav, files)
        self.serve.on_nav(files)
        if self.serve.is_background:
            # It runs what the session shows: the pages with nothing to run (the API reference, the twins) last,
            # so that it ends as soon as it has run the last proof or lab (`ran_the_last`).
            for file in [f for f in files.documentation_pages() if not self._runs(f.src_uri)]:
                files.remove(file)
                files.append(file)
            running = [f.src_uri for f in files.documentation_pages() if self._runs(f.src_uri)]
            self.last_to_run = running[-1] if running else None

    def on_env(self, env: Environment) -> None:
        """Give the theme the site's words; keep the session's compiled templates and the kept pages' records."""
        self.translations.on_env(env)
        self.serve.on_env(env, self._files(), self.engine)

    def _runs(self, src_uri: str) -> bool:
        facts = self.facts.get(src_uri)
        return src_uri in self.engine.planned or (facts is not None and facts.lab is not None)

    @property
    def is_background(self) -> bool:
        """This build is a serve session's background build: it ends once it has run every proof and lab."""
        return self.serve.is_background

    def ran_the_last(self, page: Page) -> bool:
        """Whether `page` is the last of a background build's pages with a proof or a lab to run (else never)."""
        return self.last_to_run is not None and page.file.src_uri == self.last_to_run

    def end_background(self) -> None:
        """A serve session's background build, every proof and lab run: its last page closed, its proofs summarised.

        What MkDocs would do next (read the pages with nothing to run, render every page's template, write the
        report, the notebooks and the search index) makes a site that nobody reads: the session renders its own.
        """
        self.engine.end_page()
        self.proofs.summarise()

    def on_pre_page(self, page: Page, config: MkDocsConfig) -> None:
        """A lab whose conversion is not cached renders with the next build, in a cold serve session's first one."""
        self.labs.on_pre_page(page, self._page(page), config)

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig) -> str:
        """The page's language first, its proofs started, its title and markers filled, its links last.

        Raises:
            FloorsError: If a floor page has its own `# ` title, or a marker cannot be filled.
        """
        facts, files = self._page(page), self._files()
        markdown = self.translations.on_page_markdown(markdown, page, facts, files)
        markdown = self.serve.on_page_markdown(markdown, facts)
        markdown = self.proofs.on_page_markdown(markdown, facts, page)
        self.labs.on_page_markdown(page, facts, config)
        markdown = self.registry.on_page_markdown(markdown, page, facts, config)
        markdown = self.editions.on_page_markdown(markdown, page, facts, config)
        return self.translations.finish_markdown(markdown, page, facts, files)

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig) -> str:
        """Close the page's proofs (stopping on a failure, except under serve); account a lab's run; cite headings.

        Raises:
            FloorsError: If a proof of the page failed (not under serve), or its anchor aliases do not apply.
        """
        facts = self._page(page)
        html = self.proofs.on_page_content(html, facts)
        html = self.labs.on_page_content(html, page, facts, config)
        html = self.serve.on_page_content(html, facts, self.engine)
        html = self.translations.on_page_content(html, page, facts, self._files())
        html = self.registry.on_page_content(html)
        return self.editions.on_page_content(html, page, facts, config)

    def on_page_context(self, context: dict[str, Any], page: Page, config: MkDocsConfig) -> dict[str, Any]:
        """Hand the language, gauge, handout, provenance and machines to the theme; fill the report pages."""
        facts, files = self._page(page), self._files()
        self.translations.on_page_context(context, page, facts, files)
        self.registry.on_page_context(context, page, files)
        self.editions.on_page_context(context, page)
        self.proofs.on_page_context(context, page, facts)
        self.recordings.on_page_context(context, page.file.src_uri, self.engine)
        if page.content:
            url_of = url_from(files, page)
            page.content = self.recordings.machines(
                page.content,
                self.engine,
                self.proofs.planned_blocks(),
                lambda src: url_of(twin_uri(src, facts.language)),  # the claims' pages in this page's language
                self.proofs.report_language(facts.language.code),  # with every page's claims' translations
            )
        return context

    def on_template_context(self, context: dict[str, Any], template_name: str, config: MkDocsConfig) -> dict[str, Any]:
        """Give the 404 page the whole building's gauge, with links that work from any missing URL."""
        return self.registry.on_template_context(context, template_name, config, self._files())

    def on_post_page(self, output: str, page: Page) -> str:
        """Refuse a page that leaks the build machine's path; mark a pending page; finish a lab's page.

        Raises:
            FloorsError: If the page shows the project's absolute path (not under serve, where it is logged).
        """
        facts = self._page(page)
        output = self.proofs.on_post_page(output, page)
        output = self.serve.on_post_page(output, facts)
        output = self.registry.on_post_page(output)
        output = self.translations.on_post_page(output, facts)
        return self.labs.on_post_page(output, page, facts, self._files())

    def on_post_build(self, config: MkDocsConfig) -> None:
        """Write the notebooks, the reports and the manifest; summarise; hand the session what it keeps.

        Raises:
            FloorsError: If the manifest cannot be written.
        """
        site_dir, files = Path(config.site_dir), self._files()
        self.labs.on_post_build(config)
        self.proofs.on_post_build(config, files, self.labs.planned)
        self.recordings.on_post_build(site_dir)
        self.editions.on_post_build(site_dir)
        self.translations.on_post_build(site_dir, self.engine)
        self.editions.write_versions(site_dir)
        self.proofs.summarise()
        self.serve.remember(config, files, self.engine, self.editions.manifest)
        # After `remember`: a partial build's index is whole only once the session has merged it.
        self.translations.split_search(site_dir, self.serve.memo)
        self.serve.end_build(config, self.engine.project_dir)
