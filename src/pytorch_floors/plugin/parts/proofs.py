"""The proofs: the build's engine, the scan that plans every block, the downloads, the page checks, the report.

The engine is built complete here, with what a serve session lends it; the executed fence is bound
to it (`plugin.fence`). Every block ends as *ran*, *cached* or *failed* in `build-report.json`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from markdown_exec import markdown_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from pytorch_floors.errors import FloorsError, InputError
from pytorch_floors.execution.bundle import bundle
from pytorch_floors.execution.cache import CacheError, OutputCache, machine_fingerprint
from pytorch_floors.execution.claim_policy import claims_summary
from pytorch_floors.execution.engine import Engine
from pytorch_floors.execution.facts import TorchFacts
from pytorch_floors.execution.provenance import collect, of_outputs
from pytorch_floors.execution.report import report_json
from pytorch_floors.execution.scan import check_includes, not_utf8, scan_markdown
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.fence import register_fence
from pytorch_floors.plugin.pages import (
    PROOFS_MARKER,
    REPORT_MARKER,
    fill_markers,
    proofs_page,
    report_html,
    without_missing_includes,
)
from pytorch_floors.plugin.parts.recordings import Recordings
from pytorch_floors.plugin.parts.serving import Serving
from pytorch_floors.plugin.serve import partial_note, partial_report

__all__ = ["Proofs"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent.parent
"""The package's folder: what a downloaded proof bundles the helpers it imports from."""

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def _listing_pages(report: str, pages: list[dict[str, str | None]]) -> str:
    """The build report (JSON) with `build.pages`: each HTML file the build wrote (`path`) and its source page."""
    document = json.loads(report)
    document["build"]["pages"] = pages
    return json.dumps(document, indent=2)


class Proofs:
    """One build's proofs: its engine, every page's planned blocks, their downloads, checks and report."""

    def __init__(
        self,
        config: MkDocsConfig,
        settings: Settings,
        *,
        project_dir: Path,
        cache_root: Path,
        facts: TorchFacts,
        serve: Serving,
        recordings: Recordings,
        languages: Mapping[str, PageLanguage],
    ) -> None:
        """Build the engine complete and bind the executed fence to it (`languages`: each page's, as it starts)."""
        self.settings, self.serve, self.recordings = settings, serve, recordings
        self.languages = languages
        self.provenance = collect(facts)
        report_failure, on_progress = serve.background()
        self.engine = Engine(
            project_dir,
            OutputCache(cache_root / "floors-exec", settings.cache),
            execute=settings.execute and not serve.defer,
            default_timeout=settings.timeout,
            only=settings.only,
            provenance=self.provenance,
            advisory_claims=settings.advisory_claims,
            machine=machine_fingerprint(facts),
            # A session's build shows what failed in its background build; that build tells the session.
            known_failures=serve.known_failures,
            report_failure=report_failure,
            on_progress=on_progress,
        )
        register_fence(config, self.engine, recordings.recordings, recordings.lazy_outputs, languages=languages)
        markdown_config.save(config.markdown_extensions, config.mdx_configs)

    def close(self) -> None:
        """End the processes of the build's blocks (at its end, and when it stops with an error)."""
        self.engine.close()

    def planned_blocks(self) -> list[tuple[str, str]]:
        """Every planned block of the site, `(page, block id)`."""
        return [(page, block.block_id) for page, blocks in self.engine.planned.items() for block in blocks]

    def on_files(
        self, files: Files, config: MkDocsConfig, facts: dict[str, PageFacts], sources: dict[str, str]
    ) -> None:
        """Plan every executed block of the site and publish the proof scripts for download.

        Raises:
            FloorsError: If a page's executed blocks break a rule, a proof cannot be bundled, or pages
                have executed blocks but `mkdocs.yml` gives SuperFences no executed fence.
        """
        engine = self.engine
        for src_uri, text in sources.items():
            page = facts[src_uri]
            if page.translated:
                # A translation shows its English page's blocks (`Engine.twin`): planned and run once, there.
                if files.get_file_from_path(page.source) is not None:
                    engine.plan_twin(src_uri, page.source)
                continue
            blocks = scan_markdown(text, src_uri, engine.project_dir)
            if blocks:
                engine.plan(src_uri, blocks)
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
        log.info("proofs: %d executed blocks planned on %d pages", engine.total, len(engine.planned))

    def _bundle(self, path: Path, uri: str) -> str:
        """A proof's download (`execution.bundle`), which a serve session keeps while the proof is unchanged."""

        def compute() -> tuple[str, list[Path]]:
            return bundle(path.read_text(encoding="utf-8"), uri, PACKAGE_DIR), [path]

        return self.serve.memo.get(("bundle", path), compute)

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

    def on_page_markdown(self, markdown: str, facts: PageFacts, page: Page) -> str:
        """Start the page's proofs afresh (fresh processes); fill the Proofs page where the page asks."""
        engine = self.engine
        engine.begin_page(facts.src_uri, page.url)
        if any(block.missing for block in engine.planned.get(facts.src_uri, [])):
            markdown = without_missing_includes(markdown, facts.src_uri, engine.project_dir)
        memo = self.serve.memo
        return fill_markers(
            markdown,
            {PROOFS_MARKER: lambda: proofs_page(engine.planned, engine.project_dir, facts.language.code, memo)},
        )

    def on_page_content(self, html: str, facts: PageFacts) -> str:
        """Close the page's proof processes; stop the build if one of its proofs failed (except under serve).

        Raises:
            FloorsError: If a proof of the page failed (not under serve).
        """
        engine = self.engine
        engine.end_page()
        engine.unaccounted()
        html = engine.unshown(html)
        failed = [f for f in engine.failures if f.page == facts.src_uri]
        if failed and not self.serve.serving:
            raise FloorsError("a proof failed:\n" + "\n".join(str(f) for f in failed))
        return html

    def on_page_context(self, context: dict[str, Any], page: Page, facts: PageFacts) -> None:
        """What the page's outputs were measured on; the build report, where the page asks for it."""
        # For cached outputs: the run that produced them.
        shown = of_outputs((r.provenance for r in self.engine.records if r.page == page.file.src_uri), self.provenance)
        context["floors_provenance"] = shown[0]
        context["floors_provenances"] = shown
        if page.content:

            def build_report() -> str:
                return partial_note(self.serve.plan.rebuilt, facts.language.code) + report_html(
                    self.engine.records, self.report_language(facts.language.code)
                )

            page.content = fill_markers(page.content, {REPORT_MARKER: build_report})

    def report_language(self, code: str) -> PageLanguage:
        """The build report's language, with the claims' translations of every page in it.

        The claims the report lists are those of every page, and every page's Markdown is converted (its
        front matter's translations read) before any page's context is made, where the report is filled in.
        """
        claims = {
            statement: translation
            for language in self.languages.values()
            if language.code == code
            for statement, translation in language.claims.items()
        }
        return PageLanguage(code, claims)

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
            if self.serve.serving:
                log.error(message)
            else:
                raise FloorsError(message)
        return output

    def on_post_build(self, config: MkDocsConfig, files: Files, planned_labs: list[str]) -> None:
        """Write the build report as JSON: every planned block and lab, every claim, every machine."""
        engine = self.engine
        engine.end_page()
        planned = self.planned_blocks()
        planned += [(lab, "notebook") for lab in planned_labs]
        report = report_json(
            engine.records,
            self.provenance.as_dict(),
            advisory=engine.advisory_claims,
            build_id=self.serve.build_id,
            planned=planned,
            recordings=self.recordings.report(engine, self.planned_blocks()),
            runs={"execute": self.settings.execute, "only": self.settings.only},
        )
        report = partial_report(report, self.serve.plan.rebuilt)
        report = _listing_pages(report, _written_pages(config, files))
        Path(config.site_dir, "build-report.json").write_text(report, encoding="utf-8")

    def summarise(self) -> None:
        """Prune the cache after a build that planned every block; summarise the proofs in the log."""
        engine = self.engine
        complete = engine.execute and engine.only is None and not engine.failures and not self.serve.plan.partial
        if complete and engine.cache.mode != "off":
            # Only a build that planned every block knows which entries nothing uses any more.
            try:
                log.info("proofs: removed %d unused cache entries", engine.cache.prune())
            except CacheError as error:
                log.warning("proofs: %s", error)
        counts = {s: sum(1 for r in engine.records if r.status == s) for s in ("ran", "cached", "skipped", "failed")}
        log.info("proofs: %(ran)d ran, %(cached)d cached, %(skipped)d skipped, %(failed)d failed", counts)
        log.info("%s", claims_summary(engine.records, advisory=engine.advisory_claims))
        summary = self.recordings.summary(engine, self.planned_blocks())
        if summary is not None:
            log.info("%s", summary)
        if engine.failures and self.serve.serving:
            log.error("proofs failed:\n%s", "\n".join(str(f) for f in engine.failures))


def _written_pages(config: MkDocsConfig, files: Files) -> list[dict[str, str | None]]:
    """Every HTML page of the site (`verify` checks each is there): the documentation pages, the theme's 404.

    A partial (dirty) build lists every page too: those it did not render are the earlier build's.
    """
    pages: list[dict[str, str | None]] = [
        {"path": file.dest_uri, "page": file.src_uri} for file in files.documentation_pages()
    ]
    site = Path(config.site_dir)
    for name in sorted(config.theme.static_templates):
        if name.endswith(".html") and (site / name).is_file():
            pages.append({"path": name, "page": None})
    return pages
