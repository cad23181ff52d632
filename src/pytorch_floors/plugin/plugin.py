"""The `floors` MkDocs plugin: MkDocs' events, handed to a fresh build object for every build.

Listed under `plugins:` in `mkdocs.yml` (declared as the `floors` entry point in
`pyproject.toml`); its options are [`FloorsConfig`][pytorch_floors.plugin.config.FloorsConfig].

The plugin holds no state of a build itself: `on_config` creates a
[`SiteBuild`][pytorch_floors.plugin.build.SiteBuild], whose parts (`plugin.parts`) own the engine,
the records and everything else one build gathers, and the other events hand over to it. MkDocs keeps one
plugin object for the whole process (it has `on_startup`), so under `mkdocs serve`, or two
builds in one process, nothing of one build reaches the next.

When a file of this package changed since the process imported it (an edit under `mkdocs serve`),
`mkdocs serve` starts again in the same process (`execv`, the same command line): the build, its
templates and the proof server all import the new code, and no module is ever dropped from
`sys.modules` by hand. The browser's live reload reconnects to the new server on its own.

Under `mkdocs serve` the plugin keeps a [`ServeSession`][pytorch_floors.plugin.serve.session.ServeSession]
from one build to the next: torch's facts are asked once, and with `--dirty` (`make serve`) each build
renders only the pages an edit can have changed, and keeps what the others contributed
([`pytorch_floors.plugin.serve`][pytorch_floors.plugin.serve]); on a cold cache it answers at once and
runs the proofs and labs in a background build, showing each page again as it is done. `mkdocs build`
has no session (the background build is one, told so by `FLOORS_SERVE_BACKGROUND`: it keeps going past a
failed proof, as serve does, ends with the serve process, and ends once it has run every proof and lab,
writing no site).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn, cast

from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext

from pytorch_floors.editions.verify import MARK
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.process.runner import StartMethodError, end_all, start_method
from pytorch_floors.plugin.build import SiteBuild
from pytorch_floors.plugin.config import FloorsConfig, Settings
from pytorch_floors.plugin.serve import (
    BACKGROUND_VARIABLE,
    SIGNALS_VARIABLE,
    EditWatch,
    ServeSession,
    interrupt_on_terminate,
    quiet_dirty_warning,
    watch_parent,
)
from pytorch_floors.render.splice import find_start_tag, insert_after
from pytorch_floors.render.templates import template

__all__ = ["FloorsPlugin", "mark_page", "package_state"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def package_state() -> dict[str, tuple[int, int]]:
    """Each file of this package with its modification time and size: what its imported modules were read from.

    Returns:
        Path relative to the package -> `(mtime_ns, size)`.
    """
    return {
        path.relative_to(_PACKAGE_DIR).as_posix(): (path.stat().st_mtime_ns, path.stat().st_size)
        for path in sorted(_PACKAGE_DIR.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def mark_page(html: str, build_id: str) -> str:
    """The page with this build's mark first in its `<head>`, which `python -m pytorch_floors verify` looks for.

    The plugin writes it, not a theme template: a build that skipped the plugin has no mark, whatever its theme.
    """
    # A page without a head is no page (a redirect stub is written by its plugin, without a template).
    return insert_after(
        html, find_start_tag(html, "head"), template("build_mark.html").render(name=MARK, content=build_id)
    )


def restart_serve(site_dir: str) -> None:
    """Start this `mkdocs serve` again, in place, so every module is imported from the edited files.

    Args:
        site_dir: The site folder `mkdocs serve` made for itself; removed first, as its own exit
            would have (only a folder under the temporary directory that MkDocs names `mkdocs_*`).
    """
    end_all()
    site = Path(site_dir)
    if site.parent == Path(tempfile.gettempdir()) and site.name.startswith("mkdocs_"):
        shutil.rmtree(site, ignore_errors=True)
    # multiprocessing's folder of this process's fork server socket (`pymp-*`): an exit handler removes it, and
    # `execv` runs none. (The fork server itself ends when this process's end of its pipe closes.)
    shutil.rmtree(multiprocessing.util.get_temp_dir(), ignore_errors=True)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


class FloorsPlugin(BasePlugin[FloorsConfig]):  # type: ignore[no-untyped-call]  # MkDocs' Config is untyped
    """Runs the site's proofs and fills navigation, titles, gauge and reports from the floor registry."""

    def __init__(self) -> None:
        """Start with no build; remember which files the package's modules were imported from."""
        self.serving = False
        self.restarts = False
        self.session: ServeSession | None = None
        self._watching_parent = False
        self._leftovers: list[Path] = []
        self._loaded = package_state()
        self._build: SiteBuild | None = None
        self._reading_for_mike = False
        self._restore_terminate: Callable[[], None] = lambda: None

    @property
    def build(self) -> SiteBuild:
        """The build in progress.

        Raises:
            RuntimeError: If an event arrives before `on_config` created the build.
        """
        if self._build is None:
            raise RuntimeError("the floors plugin received a build event before on_config")
        return self._build

    def on_startup(self, *, command: Literal["build", "gh-deploy", "serve", "mike"], dirty: bool) -> None:
        """Remember whether this is `mkdocs serve`: there a failed proof shows a banner instead of stopping.

        `mkdocs serve` starts a session that its builds share (`--dirty`: each renders what an edit changed).
        `mike` (its `deploy` and `set-default`, which `make publish` runs) only reads the configuration, for
        its branch and `site_dir`: `on_config` starts no build for it (`mike deploy` builds in a `mkdocs build`
        process of its own).
        """
        self._reading_for_mike = command == "mike"
        background = os.environ.get(BACKGROUND_VARIABLE, "")
        # A serve session's background build keeps going past a failed proof, as serve does.
        self.serving = command == "serve" or (command == "build" and background.isdigit())
        self.restarts = command == "serve"
        if command == "build" and background.isdigit() and not self._watching_parent:
            signals = os.environ.get(SIGNALS_VARIABLE)
            self._leftovers.extend([Path(signals)] if signals else [])
            watch_parent(int(background), self._leftovers)
            self._watching_parent = True
        # Live reload is what shows a page again once the background build has run its proofs: plain
        # `mkdocs serve` answers before they have run too, and only each rebuild is slower without --dirty.
        defers = "--no-livereload" not in sys.argv[1:]
        self.session = ServeSession(dirty=dirty, defers=defers) if command == "serve" else None
        if command in ("serve", "build"):
            # on_shutdown runs (it ends the block processes), MkDocs removes the site it served, and the exit
            # handlers remove the fork server's folder: a serve session stops its background build so.
            self._restore_terminate = interrupt_on_terminate()
        if self.session is not None and not dirty:
            log.info(
                "serve: without --dirty every edit renders every page again; `make serve` (mkdocs serve --dirty) "
                "renders only the pages an edit can change"
            )
        quiet_dirty_warning(self.session is not None and self.session.dirty)

    def on_shutdown(self) -> None:
        """End every block process still running, with everything it started (`mkdocs serve` stopped mid-build).

        The serve session ends with it.
        """
        quiet_dirty_warning(False)
        self._reading_for_mike = False  # MkDocs keeps a plugin for the next configuration it loads in this process
        if self.session is not None:
            self.session.close()
        self.session = None
        end_all()
        self._restore_terminate()
        self._restore_terminate = lambda: None

    def on_serve(self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any) -> LiveReloadServer:
        """Watch the folder the session's background build touches as it finishes a page; count the author's edits."""
        if self.session is not None:
            # What MkDocs watches for edits: its docs, its configuration and the `watch` list (`plugin.serve.edits`).
            self.session.edits = EditWatch()
            watched = [config.docs_dir, *([config.config_file_path] if config.config_file_path else []), *config.watch]
            self.session.edits.follow(server.observer, watched)
        if self.session is not None and self.session.signal_dir is not None:
            server.watch(str(self.session.signal_dir))
            if self.session.later:
                # The next build renders what the first left for it, once the server watches and the author pauses.
                self.session.start_later_build(watching=server.observer.is_alive, settle=1.0)
        return server

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        """Start a new build, with its own engine, and register the executed fence bound to it.

        Raises:
            PluginError: A platform or start method the engine cannot keep its guarantees under, or
                anything the build refuses while it starts.
        """
        if self._build is not None:
            self._build.close()
            self._build = None
        if self._reading_for_mike:
            # A build would ask torch for its facts, in a process that imports torch, and run nothing.
            return config
        if self.restarts and package_state() != self._loaded:
            log.info("pytorch_floors changed on disk: mkdocs serve starts again, so the build runs the new code")
            if self.session is not None:
                self.session.close()  # its background build ran the old code
            restart_serve(config.site_dir)
        if self._watching_parent:
            self._leftovers.append(Path(config.site_dir))  # a background build's site: nobody reads it
        settings = Settings.of(self.config)
        with _as_plugin_error():
            if settings.execute:
                start_method()  # before anything runs
            self._build = SiteBuild(config, settings, serving=self.serving, session=self.session)
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Plan every executed block of the site and publish the proof scripts for download."""
        with _as_plugin_error():
            return self.build.on_files(files, config)

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        """Keep the titles of the pages a serve build does not render again."""
        self.build.on_nav(nav)
        return nav

    def on_env(self, env: Environment, config: MkDocsConfig, files: Files) -> Environment:
        """Keep a serve session's compiled templates; complete a partial build's records.

        A serve session's background build that had nothing to run ends here, before it writes its site.
        """
        if self.build.is_background:
            self._end_background()
        self.build.on_env(env)
        return env

    def _end_background(self) -> NoReturn:
        """End a serve session's background build, which has run every proof and lab it had to run.

        MkDocs has no event that ends a build early. SystemExit passes its `except Exception` (no build error
        is reported) and its `finally`, then `on_shutdown` ends what the build started; the process exits with 0.
        """
        with _as_plugin_error():
            self.build.end_background()
        self.build.close()
        self._build = None
        raise SystemExit(0)

    def on_pre_page(self, page: Page, /, *, config: MkDocsConfig, files: Files) -> Page:
        """Leave a lab's conversion to the next build, in a cold serve session's first build."""
        self.build.on_pre_page(page, config)
        return page

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Start the page's proofs afresh; give floor pages their title and description from the registry."""
        with _as_plugin_error():
            return self.build.on_page_markdown(markdown, page, config)

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Close the page's proof processes; stop the build if one of its proofs failed (except under serve).

        A serve session's background build ends after the last page with a proof or a lab to run: MkDocs reads
        every page before it writes any, and what it would do after that page writes a site that nobody reads.
        """
        with _as_plugin_error():
            html = self.build.on_page_content(html, page, config)
        if self.build.ran_the_last(page):
            self._end_background()
        return html

    def on_page_context(
        self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext:
        """Hand the gauge and the provenance to the `floors-header` partial; fill the build report page."""
        # MkDocs types the context as a TypedDict; the build adds its own keys for the theme's partials.
        with _as_plugin_error():
            return cast(TemplateContext, self.build.on_page_context(cast(dict[str, Any], context), page, config))

    def on_template_context(
        self, context: TemplateContext, /, *, template_name: str, config: MkDocsConfig
    ) -> TemplateContext:
        """Give the 404 page the whole building's gauge."""
        with _as_plugin_error():
            return cast(
                TemplateContext, self.build.on_template_context(cast(dict[str, Any], context), template_name, config)
            )

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        """Refuse a page that leaks the build machine's absolute paths; mark the page as this build's."""
        with _as_plugin_error():
            return mark_page(self.build.on_post_page(output, page), self.build.build_id)

    def on_post_template(self, output_content: str, template_name: str, config: MkDocsConfig) -> str:
        """Mark the pages rendered from a template alone (the 404 page) as this build's."""
        return mark_page(output_content, self.build.build_id) if template_name.endswith(".html") else output_content

    def on_post_build(self, config: MkDocsConfig) -> None:
        """Write the build report and the manifest; end the build's processes."""
        try:
            with _as_plugin_error():
                self.build.on_post_build(config)
        finally:
            self.build.close()

    def on_build_error(self, error: Exception) -> None:
        """End the build's processes when the build stops with an error."""
        if self._build is not None:
            self._build.close()


@contextlib.contextmanager
def _as_plugin_error() -> Iterator[None]:
    """Turn the domain's refusals ([`FloorsError`][pytorch_floors.errors.FloorsError]) into MkDocs' own.

    MkDocs prints a `PluginError` as one line and stops the build; any other exception is a bug, and
    keeps its traceback.
    """
    try:
        yield
    except StartMethodError as error:
        raise PluginError(f"floors: {error}") from None
    except FloorsError as error:
        raise PluginError(str(error)) from None
