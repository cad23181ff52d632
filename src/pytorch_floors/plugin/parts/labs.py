"""The labs: mkdocs-jupyter follows the plugin's settings, and each lab page's run is accounted for.

mkdocs-jupyter executes a lab's notebook while rendering its page, through the project's executor
(`labs.kernel`); this part tells it what to run, gives it its cache, records each page's run (ran,
cached, deferred, failed: `labs.accounting`) and publishes the notebooks beside the lab pages.
"""

from __future__ import annotations

import logging
import os
from fnmatch import fnmatch
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

# mkdocs-jupyter's own naming of a page's cache file (its version is pinned): which file is this lab's.
from mkdocs_jupyter.plugin import _compute_cache_key as jupyter_cache_key  # type: ignore[import-untyped]
from mkdocs_jupyter.plugin import _get_cache_path as jupyter_cache_path

from pytorch_floors.editions.course_pack import write_packs
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.engine import Engine
from pytorch_floors.execution.facts import TorchFacts
from pytorch_floors.floors import LABS, Lab
from pytorch_floors.i18n.languages import LANGUAGES
from pytorch_floors.labs.accounting import keep_lab_time, lab_outcome, lab_run_key, own_new_files, runs_later
from pytorch_floors.labs.kernel import LabRuns, bind, unbind
from pytorch_floors.labs.launch import configure_launch, run_times_file
from pytorch_floors.labs.notebooks import (
    JUPYTER_DIR,
    finish_lab_page,
    jupyter_cache_dir,
    jupyter_environment,
    lab_failure_banner,
    lab_inputs,
    publish_notebooks,
    translate_lab_outputs,
)
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.parts.serving import Serving
from pytorch_floors.plugin.serve import render_later

__all__ = ["Labs", "labs_follow"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def labs_follow(config: MkDocsConfig, settings: Settings, cache_dir: Path | None = None) -> None:
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
        skipped = {entry.lab for entry in LABS if not fnmatch(entry.lab, settings.only)}
        jupyter.config["execute_ignore"] = sorted({*jupyter.config.get("execute_ignore", []), *skipped})


class Labs:
    """One build's labs: what mkdocs-jupyter runs, each lab page's run, the notebooks and packs."""

    def __init__(
        self,
        config: MkDocsConfig,
        settings: Settings,
        *,
        cache_root: Path,
        facts: TorchFacts,
        serve: Serving,
        engine: Engine,
    ) -> None:
        """Point mkdocs-jupyter at the build's settings and cache, and nbconvert at the project's templates."""
        self.settings, self.serve, self.engine = settings, serve, engine
        project_dir = engine.project_dir
        self.planned: list[str] = []
        self.notebook_cache_before: set[Path] = set()
        self.runs = LabRuns()  # this build's alone: bound for its length, unbound by close()
        bind(self.runs)
        self.runs.defer_labs(serve.defer)
        # The labs' progress goes where the proofs' does (a background build's events).
        self.runs.report_progress(engine.on_progress)
        labs_run = config.plugins.get("mkdocs-jupyter") is not None
        lab_cache = self._lab_cache(project_dir, Path(config.docs_dir), cache_root, facts) if labs_run else None
        labs_follow(config, settings, lab_cache)
        self.runs.keep_going_on(serve.serving)
        # nbconvert finds the project's templates and configuration through these variables; they are
        # set for this build only, and `close` puts the build process's own back.
        jupyter_env = jupyter_environment(project_dir / JUPYTER_DIR, os.environ) if labs_run else {}
        self._saved_env = {name: os.environ.get(name) for name in jupyter_env}
        os.environ.update(jupyter_env)
        self.jupyter_cache = cache_root / "mkdocs-jupyter"
        self._times = run_times_file(cache_root, lab_cache) if lab_cache else None

    def configure_launch(self, config: MkDocsConfig) -> None:
        """The labs' launch links and run times, from the engine's records (read as the build fills them)."""
        self.launch = configure_launch(
            self.settings.repository, self._times, self.engine.project_dir, self.engine.records, self.settings.published
        )

    def _lab_cache(self, project_dir: Path, docs_dir: Path, cache_root: Path, facts: TorchFacts) -> Path:
        """`jupyter_cache_dir`, which a serve session keeps while the labs and what they depend on are unchanged."""
        session = self.serve.session
        if session is None:
            return jupyter_cache_dir(project_dir, docs_dir, cache_root, facts)

        def compute() -> tuple[Path, list[Path]]:
            return jupyter_cache_dir(project_dir, docs_dir, cache_root, facts), lab_inputs(project_dir, docs_dir)

        return session.memo.get(("labs", project_dir, docs_dir, cache_root), compute)

    def close(self) -> None:
        """Put the build process's own nbconvert variables back, and let go of the kernel's binding."""
        unbind(self.runs)
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}

    def on_files(self, files: Files, config: MkDocsConfig) -> None:
        """The labs this build renders, in the registry's order (the kernel numbers their progress)."""
        if config.plugins.get("mkdocs-jupyter") is not None:
            present = {f.src_uri for f in files.documentation_pages()}
            self.planned = [entry.lab for entry in LABS if entry.lab in present]
        self.runs.plan_labs(self.planned)

    def on_pre_page(self, page: Page, facts: PageFacts, config: MkDocsConfig) -> None:
        """A lab whose conversion is not cached renders with the next build, in a cold serve session's first one.

        Converting the labs (nbconvert) was about a third of that build, for pages that wait for the
        background build anyway (`plugin.serve.later`).
        """
        session = self.serve.session
        if session is None or not session.leaves_for_later or not self.serve.defer or facts.kind != "lab":
            return
        paths = self._lab_cache_paths(page, config)
        if paths is not None and not paths[0].exists():
            render_later(page, f"docs/{facts.source}", facts.language.code, self.runs, session.later.add)

    def on_page_markdown(self, page: Page, facts: PageFacts, config: MkDocsConfig) -> None:
        """Start the page with no lab run of its own; a lab that failed in the background is not run again."""
        self.notebook_cache_before = self._cache_files() if self.serve.serving else set()
        self.runs.take_runs()  # a lab's run is the one recorded while its page renders
        if facts.kind == "lab" and not facts.translated:
            run_key = self._lab_run_key(page, config)
            self.runs.defer_labs(runs_later(run_key, defer=self.serve.defer, known_failures=self.engine.known_failures))

    def on_page_content(self, html: str, page: Page, facts: PageFacts, config: MkDocsConfig) -> str:
        """Record an English lab page's run and give the page what it shows; show a translated one's in its language."""
        if facts.lab is None:
            return html
        if facts.translated:
            # Its English lab's run, shown once more (the same code): its printed lines are translated here.
            return translate_lab_outputs(html, facts.language.code)
        html = self._lab_page(html, page, config, facts.lab, facts.language.code)
        self.runs.defer_labs(self.serve.defer)
        return html

    def on_post_page(self, output: str, page: Page, facts: PageFacts, files: Files) -> str:
        """A lab page's run time and install line; a translated lab ran as its English lab (the same code)."""
        english = files.get_file_from_path(facts.source)
        return finish_lab_page(
            output,
            src_uri=facts.source,
            site_folder=facts.language.prefix,
            source=Path((english.abs_src_path if english is not None else None) or page.file.abs_src_path or ""),
            page_url=page.url,
            launch=self.launch,
            language=facts.language.code,
        )

    def on_post_build(self, config: MkDocsConfig) -> None:
        """Each language's notebooks and course packs beside its lab pages (`site/zh/labs/…`, `site/zh/packs/`)."""
        if not self.serve.rebuilds_any(self.planned):
            return  # a partial build that renders no lab leaves the notebooks and packs of the build that did
        session = self.serve.session
        if session is not None and session.later & set(self.planned):
            return  # a session's first build that converted no lab leaves them to the next (`plugin.serve.later`)
        for language in LANGUAGES:
            docs = Path(config.docs_dir) / language.folder
            if docs.is_dir():
                publish_notebooks(Path(config.site_dir) / language.folder, docs, self.launch, language.code)
                # Without PDFs: `make pdf` packs again. Every language's packs carry the site's one set of proofs.
                write_packs(
                    Path(config.site_dir) / language.folder,
                    proofs_root=Path(config.site_dir),
                    language=language.code,
                )

    def _cache_files(self) -> set[Path]:
        """The files in mkdocs-jupyter's cache folder: ours (`cache_dir` points it there), its files its own.

        No public way exists to drop one lab's cached conversion, so the build names the files by
        mkdocs-jupyter's own private helpers (`_lab_cache_paths`); tests/test_house_rules.py fails when
        an upgrade renames them.
        """
        root = self.jupyter_cache
        return set(root.rglob("*.json")) if root.is_dir() else set()

    def _lab_page(self, html: str, page: Page, config: MkDocsConfig, entry: Lab, language: str) -> str:
        """Record a lab page's run (`labs.accounting`: ran, cached, deferred, failed) and give the page what it shows.

        mkdocs-jupyter executes the notebook while rendering the page, through the project's executor,
        which records the run; none means the notebook came from mkdocs-jupyter's cache.
        """
        engine = self.engine
        runs = self.runs.take_runs()
        run_key = self._lab_run_key(page, config)
        known = engine.known_failures.get(run_key) if run_key else None
        outcome = lab_outcome(
            entry.lab,
            runs,
            execute=self.settings.execute,
            only=engine.only,
            known_failure=known.summary if known is not None else None,
        )
        if outcome.drops_conversion:
            # A run that never happened, or failed: a later build must not take its cached page for a result.
            self._drop_this_labs_conversion(page, config)
        if outcome.pending:
            html = self.serve.pending(page.file.src_uri, html, lab=True, language=language)
        failure = outcome.proof_failure()
        if failure is not None:
            log.error("lab failed: %s", outcome.failure)
            html = lab_failure_banner(failure.summary, language) + html
            if outcome.new_failure and engine.report_failure is not None and run_key:
                # A session's background build: the session shows it on the lab's page at once.
                engine.report_failure(run_key, failure)
        engine.record(outcome.result())
        kept = keep_lab_time(outcome, entry, Path(page.file.abs_src_path or ""), self.launch)
        if outcome.status == "cached":
            took = f" (ran in {format_seconds(kept)})" if kept is not None else ""
            log.info("lab %s: cached%s", self.runs.lab_place(f"docs/{entry.lab}"), took)
            self.runs.lab_progress(f"docs/{entry.lab}", "cached", took.strip())
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
