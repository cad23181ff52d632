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

A bad value, in either place, is a configuration error naming the option and the variable. The
build reads [`Settings`][pytorch_floors.plugin.config.Settings], never the variables themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from mkdocs.config.base import BaseConfigOption, Config, ValidationError

from pytorch_floors.execution.cache import CacheMode
from pytorch_floors.execution.options import OptionError, parse_timeout
from pytorch_floors.render.citation import edition
from pytorch_floors.render.headings import published_edition

__all__ = ["FloorsConfig", "Settings"]

T = TypeVar("T")
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
    recordings = _Setting[str | None]("FLOORS_RECORDINGS", _text, "recordings")


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

    @classmethod
    def of(cls, options: FloorsConfig) -> Settings:
        """Read the plugin's validated options.

        Args:
            options: The plugin's configuration.

        Returns:
            The settings.
        """
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
            published=published_edition(),
            edition=edition(),
        )
