"""The `FLOORS_*` settings' one parser: the plugin reads its options through it, and `publish` checks them with it.

Each parser takes a value from `mkdocs.yml` (YAML gives booleans and numbers) or from a variable
(text), and returns it typed or raises `ValueError` saying what it expected.
[`from_environment`][pytorch_floors.settings.from_environment] reads every variable that is set and
refuses a bad one as a `FloorsError` naming the variable, so that the plugin (`plugin.config`) and
`publish`, which must refuse a build told not to measure before mike renders anything, read the
same value in the same way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Literal, TypeVar

from pytorch_floors.errors import FloorsError

__all__ = [
    "MAX_TIMEOUT",
    "OTHER_PARSERS",
    "PARSERS",
    "SWITCH_OFF",
    "SWITCH_ON",
    "cache_mode",
    "claims_policy",
    "environment_value",
    "from_environment",
    "glob",
    "read",
    "read_text",
    "seconds",
    "switch",
    "text",
    "timeout_seconds",
]

T = TypeVar("T")

MAX_TIMEOUT = 86_400.0
"""The longest time limit a block may ask for: a day (longer ones overflow the operating system's waits)."""
SWITCH_ON = frozenset({"1", "yes", "on", "true"})
"""The words for on, in a `FLOORS_*` switch and in a block's options (`exec`, `html`) alike."""
SWITCH_OFF = frozenset({"0", "no", "off", "false"})
"""The words for off."""
_SWITCH = {word: True for word in SWITCH_ON} | {word: False for word in SWITCH_OFF}

_CACHE_MODES: dict[object, Literal["on", "off", "refresh"]] = {
    "on": "on",
    "off": "off",
    "refresh": "refresh",
    # YAML reads a bare `on`/`off` as a boolean.
    True: "on",
    False: "off",
}


def switch(value: object) -> bool:
    """`on`/`true`/`yes`/`1` or `off`/`false`/`no`/`0` (any case), or a YAML boolean: a block option's words too."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _SWITCH:
        return _SWITCH[value.lower()]
    raise ValueError(f"expected on or off, not {value!r}")


def cache_mode(value: object) -> Literal["on", "off", "refresh"]:
    """`on`, `off` or `refresh` (YAML's bare `on`/`off` are booleans)."""
    if isinstance(value, str | bool) and value in _CACHE_MODES:
        return _CACHE_MODES[value]
    raise ValueError(f"expected on, off or refresh, not {value!r}")


def timeout_seconds(value: str) -> float:
    """A time limit in seconds, from text: a block's `timeout` or `FLOORS_EXEC_TIMEOUT`.

    Returns:
        A finite number of seconds greater than zero and at most `MAX_TIMEOUT`.

    Raises:
        ValueError: If the value is not a finite positive number (`abc`, `inf`, `nan`, `0`, `-1`),
            or is longer than a day (`3e6`).
    """
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"timeout must be a number of seconds, not {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"timeout must be a finite number of seconds above 0, not {value!r}")
    if seconds > MAX_TIMEOUT:
        raise ValueError(f"timeout must be at most {MAX_TIMEOUT:.0f} seconds (a day), not {value!r}")
    return seconds


def seconds(value: object) -> float:
    """A time limit in seconds (`timeout_seconds`), from text or a YAML number."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a number of seconds, not {value!r}")
    return timeout_seconds(str(value))


def text(value: object) -> str | None:
    """Text, or `None` when empty (unset); only spaces are refused: they name no folder and match no page."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, not {value!r}")
    if not value.strip():
        raise ValueError(f"expected text, not only blanks ({value!r}); leave it empty to unset it")
    return value


def glob(value: object) -> str | None:
    """A glob of pages relative to `docs/` (`floors/3-*`), or `None` when empty: every page."""
    if isinstance(value, str) and value and not value.strip():
        raise ValueError(
            f"a glob of only blanks ({value!r}) matches no page and would skip every block and lab; "
            "leave it empty to run every page"
        )
    return text(value)


def claims_policy(value: object) -> Literal["warn", "advisory"]:
    """`warn` or `advisory`."""
    if value == "warn":
        return "warn"
    if value == "advisory":
        return "advisory"
    raise ValueError(f"expected warn or advisory, not {value!r}")


PARSERS: dict[str, Callable[[object], object]] = {
    "FLOORS_EXEC": switch,
    "FLOORS_EXEC_CACHE": cache_mode,
    "FLOORS_CACHE_DIR": text,
    "FLOORS_EXEC_TIMEOUT": seconds,
    "FLOORS_EXEC_ONLY": glob,
    "FLOORS_HANDOUTS": switch,
    "FLOORS_CLAIMS": claims_policy,
    "FLOORS_RECORDINGS": text,
}
"""Each of the plugin's variables and its parser (`plugin.config.FloorsConfig` names the options they set)."""

OTHER_PARSERS: dict[str, Callable[[object], object]] = {
    "FLOORS_EDITION": text,
    "FLOORS_REPOSITORY": text,
    "FLOORS_PREVIOUS_MANIFEST": text,
    "FLOORS_CHROMIUM": text,
    "FLOORS_START_METHOD": text,  # execution.process.runner says which methods this platform offers
}
"""The variables read outside the plugin's options: the edition `make publish` builds, the GitHub
repository it is published to (whose `gh-pages` Colab opens the labs from), the previous edition's
manifest, another Chromium for the handouts, and how block processes start."""


def environment_value(name: str, parse: Callable[[object], T], environ: Mapping[str, str]) -> T | None:
    """One variable's value, parsed, or `None` when it is unset or empty (a Makefile's `FLOORS_EXEC_ONLY=`).

    Args:
        name: The variable (`FLOORS_EXEC_ONLY`).
        parse: Its parser, `PARSERS[name]`.
        environ: The environment (`os.environ`).

    Returns:
        The parsed value, or `None`.

    Raises:
        FloorsError: If the value is not one the parser accepts, naming the variable and the value.
    """
    raw = environ.get(name, "")
    if not raw:
        return None
    try:
        return parse(raw)
    except ValueError as error:
        raise FloorsError(f"{name}={raw!r}: {error}") from None


def from_environment(environ: Mapping[str, str]) -> dict[str, object]:
    """Every one of the plugin's variables that is set, parsed (as the plugin will read it).

    Args:
        environ: The environment (`os.environ`).

    Returns:
        Each set variable's parsed value.

    Raises:
        FloorsError: At the first variable whose value its parser refuses, naming it and the value.
    """
    values = {name: environment_value(name, parse, environ) for name, parse in PARSERS.items()}
    return {name: value for name, value in values.items() if value is not None}


def read(name: str, environ: Mapping[str, str] | None = None) -> object:
    """A `FLOORS_*` variable, read and parsed the one way: every module that needs a setting asks here.

    Args:
        name: A variable of `PARSERS` or `OTHER_PARSERS`.
        environ: The environment (default: this process's).

    Returns:
        Its parsed value, or `None` when it is unset or empty.

    Raises:
        KeyError: If the name is no setting's (a typo in the caller, not a reader's mistake).
        FloorsError: If the value is not one its parser accepts, naming the variable and the value.
    """
    parse = PARSERS.get(name) or OTHER_PARSERS[name]
    return environment_value(name, parse, os.environ if environ is None else environ)


def read_text(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`read` for a variable whose value is text (a path, a name): the text, or `None` when unset.

    Raises:
        KeyError: If the name is no setting's, or its value is not text.
        FloorsError: If the value is refused (only blanks).
    """
    if (PARSERS.get(name) or OTHER_PARSERS[name]) is not text:
        raise KeyError(f"{name} is not a text setting")
    value = read(name, environ)
    return value if isinstance(value, str) else None
