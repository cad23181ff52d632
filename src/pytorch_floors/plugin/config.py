"""The plugin's options: read once, from `mkdocs.yml` or their `FLOORS_*` variables, into one typed object.

Each option may be set by an environment variable, which wins over `mkdocs.yml` (the Makefile,
the tests and the publish step set them):

| option | variable | values |
|---|---|---|
| `execute` | `FLOORS_EXEC` | `on` / `off`: run blocks and labs, or render without running (render-only) |
| `cache` | `FLOORS_EXEC_CACHE` | `on` reads and writes, `off` bypasses, `refresh` re-runs and rewrites |
| `cache_dir` | `FLOORS_CACHE_DIR` | where the caches live (default `.cache` in the project) |
| `timeout` | `FLOORS_EXEC_TIMEOUT` | default per-block limit in seconds (a fence's `timeout` wins) |
| `only` | `FLOORS_EXEC_ONLY` | a glob of pages (relative to `docs/`) whose blocks and labs run; others are skipped |
| `handouts` | `FLOORS_HANDOUTS` | `on` links the PDF handouts (`make pdf`) |
| `recordings` | `FLOORS_RECORDINGS` | other machines' recordings: a folder relative to the project (`recordings`) |
| `claims` | `FLOORS_CLAIMS` | `warn`: a claim that did not hold is a WARNING (fails `--strict`); `advisory`: INFO |

A bad value, in either place, is a configuration error naming the option and the variable; a value
of only blanks is one (a glob of `" "` would skip every block). `pytorch_floors.settings` parses
them, for the plugin and for `publish` alike. The build reads
[`Settings`][pytorch_floors.plugin.config.Settings], never the variables themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from mkdocs.config.base import BaseConfigOption, Config, ValidationError

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.cache import CacheMode
from pytorch_floors.render.citation import edition
from pytorch_floors.settings import (
    PARSERS,
    cache_mode,
    claims_policy,
    environment_value,
    glob,
    read_text,
    seconds,
    switch,
    text,
)

__all__ = ["FloorsConfig", "Settings"]

T = TypeVar("T")


class _Setting(BaseConfigOption[T], Generic[T]):
    """An option read from `mkdocs.yml`, unless its environment variable is set (non-empty).

    Both are read by the variable's parser in `pytorch_floors.settings.PARSERS`, the one `publish` checks with.
    """

    def __init__(self, variable: str, parse: Callable[[object], T], default: T) -> None:
        super().__init__()
        if PARSERS.get(variable) is not parse:
            raise TypeError(f"{variable} is read by pytorch_floors.settings.PARSERS[{variable!r}], not by {parse}")
        self.variable, self.parse, self.default = variable, parse, default

    def run_validation(self, value: object) -> T:
        try:
            given = environment_value(self.variable, self.parse, os.environ)
        except FloorsError as error:
            raise ValidationError(str(error)) from None
        if given is not None:
            return given
        try:
            return self.parse(value)
        except ValueError as error:
            raise ValidationError(str(error)) from None


class FloorsConfig(Config):  # type: ignore[no-untyped-call]  # MkDocs' Config.__init_subclass__ is untyped
    """The plugin's options (each overridden by its `FLOORS_*` environment variable when that is set)."""

    execute = _Setting("FLOORS_EXEC", switch, True)
    cache = _Setting[Literal["on", "off", "refresh"]]("FLOORS_EXEC_CACHE", cache_mode, "on")
    cache_dir = _Setting("FLOORS_CACHE_DIR", text, None)
    timeout = _Setting("FLOORS_EXEC_TIMEOUT", seconds, 120.0)
    only = _Setting("FLOORS_EXEC_ONLY", glob, None)
    handouts = _Setting("FLOORS_HANDOUTS", switch, False)
    claims = _Setting[Literal["warn", "advisory"]]("FLOORS_CLAIMS", claims_policy, "warn")
    recordings = _Setting[str | None]("FLOORS_RECORDINGS", text, "recordings")


@dataclass(frozen=True)
class Settings:
    """The plugin's options, validated (see [`FloorsConfig`][pytorch_floors.plugin.config.FloorsConfig]).

    Attributes:
        execute: Run blocks and labs; `False` renders without running them (render-only build).
        cache: `on` reads and writes the output cache, `off` bypasses it, `refresh` rewrites it.
        cache_dir: Where the caches live, if not `.cache` in the project.
        timeout: The default per-block limit in seconds.
        only: A glob of pages (relative to `docs/`) whose blocks and labs run, if not all.
        handouts: Link the PDF handouts (`make pdf` builds them).
        advisory_claims: Log a claim that did not hold as INFO, not as a WARNING that fails `--strict`.
        recordings: The folder of other machines' recordings (`make record`), relative to the project.
        published: The edition this build publishes (`FLOORS_EDITION`, set by `make publish`), if any.
        edition: The edition this build is: the published one, else the build's year and month.
        previous_manifest: An earlier edition's `manifest.json` that What changed compares with
            (`FLOORS_PREVIOUS_MANIFEST`), if any.
        repository: The GitHub repository the editions are published to (`FLOORS_REPOSITORY`), whose
            `gh-pages` branch Colab opens the labs from; `None`: not configured, so no Colab links.
    """

    execute: bool = True
    cache: CacheMode = "on"
    cache_dir: str | None = None
    timeout: float = 120.0
    only: str | None = None
    handouts: bool = False
    advisory_claims: bool = False
    recordings: str | None = "recordings"
    published: str | None = None
    edition: str = ""
    previous_manifest: str | None = None
    repository: str | None = None

    @classmethod
    def of(cls, options: FloorsConfig) -> Settings:
        """Read the plugin's validated options.

        Args:
            options: The plugin's configuration.

        Returns:
            The settings.
        """
        published = read_text("FLOORS_EDITION")
        return cls(
            execute=options.execute,
            cache=options.cache,
            cache_dir=options.cache_dir,
            timeout=options.timeout,
            only=options.only,
            handouts=options.handouts,
            advisory_claims=options.claims == "advisory",
            recordings=options.recordings,
            # Read once, here: a build is one edition from its first page to its report.
            published=published,
            edition=edition(published),
            previous_manifest=read_text("FLOORS_PREVIOUS_MANIFEST"),
            repository=read_text("FLOORS_REPOSITORY"),
        )
