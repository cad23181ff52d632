"""The `floors` MkDocs plugin: its options, and a fresh build object for every build.

Listed under `plugins:` in `mkdocs.yml` (declared as the `floors` entry point in
`pyproject.toml`). Each option may also be set by an environment variable, which wins
over `mkdocs.yml` (the Makefile, the tests and the publish step set them):

| option | variable | values |
|---|---|---|
| `execute` | `FLOORS_EXEC` | `on` / `off`: run blocks and labs, or render without running (render-only) |
| `cache` | `FLOORS_EXEC_CACHE` | `on` reads and writes, `off` bypasses, `refresh` re-runs and rewrites |
| `cache_dir` | `FLOORS_CACHE_DIR` | where the caches live (default `.cache` in the project) |
| `timeout` | `FLOORS_EXEC_TIMEOUT` | default per-block limit in seconds (a fence's `timeout` wins) |
| `only` | `FLOORS_EXEC_ONLY` | a glob of pages (relative to `docs/`) whose blocks and labs run; others are skipped |
| `handouts` | `FLOORS_HANDOUTS` | `on` links the PDF handouts (`make pdf`) |
| `claims` | `FLOORS_CLAIMS` | `warn`: a claim that did not hold is a WARNING (fails `--strict`); `advisory`: INFO |

A bad value, in either place, is a configuration error naming the option and the variable.

The plugin holds no state of a build itself: `on_config` creates a
[`SiteBuild`][pytorch_floors.site_build.SiteBuild], which owns the engine, the records and
everything else one build gathers, and the other events hand over to it. MkDocs keeps one
plugin object for the whole process (it has `on_startup`), so under `mkdocs serve`, or two
builds in one process, nothing of one build reaches the next. When a file of this package
changed since its modules were imported (an edit under `mkdocs serve`), `on_config` first
drops the package's modules, so the rebuild imports them afresh, and restarts the proof
server, so blocks run the new code too. Only this module, the plugin's shell, is not re-read.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from mkdocs.config.base import BaseConfigOption, Config, ValidationError
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext

from pytorch_floors.execution.options import OptionError, parse_timeout

if TYPE_CHECKING:
    from pytorch_floors.site_build import SiteBuild

__all__ = ["FloorsConfig", "FloorsPlugin", "package_state"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

T = TypeVar("T")
_PACKAGE = __name__.rpartition(".")[0]
_SWITCH = {"on": True, "true": True, "off": False, "false": False}


class _Setting(BaseConfigOption[T], Generic[T]):
    """An option read from `mkdocs.yml`, unless its environment variable is set (non-empty)."""

    def __init__(self, variable: str, parse: Callable[[object], T], default: T) -> None:
        super().__init__()
        self.variable, self.parse, self.default = variable, parse, default

    def run_validation(self, value: object) -> T:
        raw = os.environ.get(self.variable, "")
        if raw:
            try:
                return self.parse(raw)
            except ValueError as error:
                raise ValidationError(f"{self.variable}={raw!r}: {error}") from None
        try:
            return self.parse(value)
        except ValueError as error:
            raise ValidationError(str(error)) from None


def _switch(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _SWITCH:
        return _SWITCH[value.lower()]
    raise ValueError(f"expected on or off, not {value!r}")


_CACHE_MODES: dict[object, Literal["on", "off", "refresh"]] = {
    "on": "on",
    "off": "off",
    "refresh": "refresh",
    # YAML reads a bare `on`/`off` as a boolean.
    True: "on",
    False: "off",
}


def _cache_mode(value: object) -> Literal["on", "off", "refresh"]:
    if isinstance(value, str | bool) and value in _CACHE_MODES:
        return _CACHE_MODES[value]
    raise ValueError(f"expected on, off or refresh, not {value!r}")


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a number of seconds, not {value!r}")
    try:
        return parse_timeout(str(value))
    except OptionError as error:
        raise ValueError(str(error)) from None


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, not {value!r}")
    return value


def _claims_policy(value: object) -> Literal["warn", "advisory"]:
    if value == "warn":
        return "warn"
    if value == "advisory":
        return "advisory"
    raise ValueError(f"expected warn or advisory, not {value!r}")


class FloorsConfig(Config):  # type: ignore[no-untyped-call]  # MkDocs' Config.__init_subclass__ is untyped
    """The plugin's options (each overridden by its `FLOORS_*` environment variable when that is set)."""

    execute = _Setting("FLOORS_EXEC", _switch, True)
    cache = _Setting[Literal["on", "off", "refresh"]]("FLOORS_EXEC_CACHE", _cache_mode, "on")
    cache_dir = _Setting("FLOORS_CACHE_DIR", _text, None)
    timeout = _Setting("FLOORS_EXEC_TIMEOUT", _seconds, 120.0)
    only = _Setting("FLOORS_EXEC_ONLY", _text, None)
    handouts = _Setting("FLOORS_HANDOUTS", _switch, False)
    claims = _Setting[Literal["warn", "advisory"]]("FLOORS_CLAIMS", _claims_policy, "warn")


def package_state() -> dict[str, tuple[int, int]]:
    """Each file of this package with its modification time and size: what its imported modules were read from.

    Returns:
        Path relative to the package -> `(mtime_ns, size)`.
    """
    root = Path(__file__).parent
    return {
        path.relative_to(root).as_posix(): (path.stat().st_mtime_ns, path.stat().st_size)
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _forget_package() -> None:
    """Stop the proof server and drop the package's modules, so the next import reads the files again."""
    importlib.import_module(f"{_PACKAGE}.execution.runner").restart_fork_server()
    for name in [n for n in sys.modules if n == _PACKAGE or n.startswith(f"{_PACKAGE}.")]:
        if name != __name__:
            del sys.modules[name]
    importlib.invalidate_caches()


class FloorsPlugin(BasePlugin[FloorsConfig]):  # type: ignore[no-untyped-call]  # as FloorsConfig
    """Runs the site's proofs and fills navigation, titles, gauge and reports from the floor registry."""

    def __init__(self) -> None:
        """Start with no build; remember which files the package's modules were imported from."""
        self.serving = False
        self._loaded = package_state()
        self._build: SiteBuild | None = None

    @property
    def build(self) -> SiteBuild:
        """The build in progress.

        Raises:
            RuntimeError: If an event arrives before `on_config` created the build.
        """
        if self._build is None:
            raise RuntimeError("the floors plugin received a build event before on_config")
        return self._build

    def on_startup(self, *, command: Literal["build", "gh-deploy", "serve"], dirty: bool) -> None:
        """Remember whether this is `mkdocs serve`: there a failed proof shows a banner instead of stopping."""
        self.serving = command == "serve"

    def on_shutdown(self) -> None:
        """End every block process still running, with everything it started (`mkdocs serve` stopped mid-build)."""
        importlib.import_module(f"{_PACKAGE}.execution.runner").end_all()

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        """Start a new build: with the package's current code, and its own engine bound to the proof fence."""
        if self._build is not None:
            self._build.close()
            self._build = None
        current = package_state()
        if current != self._loaded:
            log.info("pytorch_floors changed on disk: this build imports it afresh and restarts the proof server")
            _forget_package()
            self._loaded = current
        if self.config.execute:
            # Before anything runs: a platform or start method the engine cannot keep its guarantees under.
            runner = importlib.import_module(f"{_PACKAGE}.execution.runner")
            try:
                runner.start_method()
            except runner.StartMethodError as error:
                raise PluginError(f"floors: {error}") from None
        site_build = importlib.import_module(f"{_PACKAGE}.site_build")
        self._build = site_build.SiteBuild(config, site_build.Settings.of(self.config), serving=self.serving)
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Plan every executed block of the site and publish the proof scripts for download."""
        return self.build.on_files(files, config)

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Start the page's proofs afresh; give floor pages their title and description from the registry."""
        return self.build.on_page_markdown(markdown, page, config)

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Close the page's proof processes; stop the build if one of its proofs failed (except under serve)."""
        return self.build.on_page_content(html, page, config)

    def on_page_context(
        self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext:
        """Hand the gauge and the provenance to the `floors-header` partial; fill the build report page."""
        # MkDocs types the context as a TypedDict; the build adds its own keys for the theme's partials.
        return cast(TemplateContext, self.build.on_page_context(cast(dict[str, Any], context), page, config))

    def on_template_context(
        self, context: TemplateContext, /, *, template_name: str, config: MkDocsConfig
    ) -> TemplateContext:
        """Give the 404 page the whole building's gauge."""
        return cast(
            TemplateContext, self.build.on_template_context(cast(dict[str, Any], context), template_name, config)
        )

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        """Refuse a page that leaks the build machine's absolute paths."""
        return self.build.on_post_page(output, page)

    def on_post_build(self, config: MkDocsConfig) -> None:
        """Write the build report and the manifest; end the build's processes."""
        try:
            self.build.on_post_build(config)
        finally:
            self.build.close()

    def on_build_error(self, error: Exception) -> None:
        """End the build's processes when the build stops with an error."""
        if self._build is not None:
            self._build.close()
