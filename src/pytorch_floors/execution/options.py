"""The fence options an executed block may use, and what each value must look like.

markdown-exec's validator accepts options this engine does not honour (`returncode`,
`tabs`, `idprefix`, ...) and passes any other word on silently, so a misspelled
`timout="300"` used to leave a block at the default limit without a word. Every
option is checked here, once, when the page is scanned: an unknown option or a bad
value is an error naming the page and line.

When the page renders, the fence hands the engine the options as markdown-exec's validator
parsed them (a dict); `BlockOptions.parse` reads that dict once into what the engine uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytorch_floors.errors import FloorsError
from pytorch_floors.settings import MAX_TIMEOUT, SWITCH_OFF, SWITCH_ON, timeout_seconds

__all__ = [
    "ALLOWED",
    "MAX_TIMEOUT",
    "NO_ID",
    "SWITCH_OFF",
    "SWITCH_ON",
    "BlockOptions",
    "OptionError",
    "parse_timeout",
    "validate_options",
]


_IDENTIFIER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]*$")
_TRUE = SWITCH_ON
_BOOLEAN = SWITCH_ON | SWITCH_OFF

ALLOWED: dict[str, str] = {
    "exec": "run the block (1)",
    "id": "the block's id, unique on its page",
    "html": "the block prints HTML (a figure) instead of console text (1 or 0)",
    "session": "share a namespace with the page's other blocks of that session",
    "timeout": "seconds the block may run (a positive number, at most a day)",
    "source": "show the code above the output (above)",
    "result": "the language the output is highlighted as (text by default)",
    "width": "console width the block sees as COLUMNS (a positive integer)",
    "workdir": "directory the block runs in, relative to the project",
}
"""Every option an executed fence may carry, with what it does (shown in error messages)."""


NO_ID = "(no id)"
"""What names a block whose fence reached the engine without an id."""


class OptionError(FloorsError, ValueError):
    """A fence option is unknown, or its value is not one the engine can honour."""


def parse_timeout(value: str) -> float:
    """Read a time limit in seconds.

    Args:
        value: The text of a `timeout` option or of `FLOORS_EXEC_TIMEOUT`.

    Returns:
        The limit, a finite number of seconds greater than zero and at most `MAX_TIMEOUT`.

    Raises:
        OptionError: If the value is not a finite positive number (`abc`, `inf`, `nan`, `0`, `-1`),
            or is longer than a day (`3e6`).
    """
    try:
        return timeout_seconds(value)
    except ValueError as error:
        raise OptionError(str(error)) from None


def _check_value(name: str, value: str) -> None:
    if name in {"exec", "html"} and value.lower() not in _BOOLEAN:
        raise OptionError(f"{name} must be 1 or 0, not {value!r}")
    if name in {"id", "session", "result"} and not _IDENTIFIER.match(value):
        raise OptionError(f"{name} must be a word (letters, digits, _ . : -), not {value!r}")
    if name == "timeout":
        parse_timeout(value)
    if name == "source" and value != "above":
        raise OptionError(f'source must be "above" (the only layout the proof frame has), not {value!r}')
    if name == "width" and not (value.isdigit() and int(value) > 0):
        raise OptionError(f"width must be a positive whole number of columns, not {value!r}")
    if name == "workdir" and (not value or value.startswith("/") or ".." in value.split("/")):
        raise OptionError(f"workdir must be a directory inside the project, given relatively, not {value!r}")


def validate_options(options: Mapping[str, str]) -> None:
    """Refuse unknown options and values the engine cannot honour.

    Args:
        options: The fence's options as written (`name -> value`).

    Raises:
        OptionError: Naming the first bad option and what is allowed.
    """
    for name, value in options.items():
        if name not in ALLOWED:
            known = ", ".join(sorted(ALLOWED))
            raise OptionError(f"unknown option {name}={value!r}; an executed block takes only: {known}")
        _check_value(name, value)


@dataclass(frozen=True)
class BlockOptions:
    """An executed block's options, as the engine uses them: read once from what the fence hands over.

    Attributes:
        id: The block's id (`NO_ID` when the fence gave none).
        timeout: Seconds it may run: its `timeout`, else the build's default.
        session: The session whose namespace it shares, or `""` (a process of its own).
        html: It prints HTML (a figure), shown as is, instead of console text.
        width: The console width it sees as `COLUMNS`, or `None`.
        workdir: The directory it runs in, relative to the project, or `None` (the project itself).
    """

    id: str
    timeout: float
    session: str = ""
    html: bool = False
    width: int | None = None
    workdir: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any], *, default_timeout: float) -> BlockOptions:
        """Read the options markdown-exec's validator parsed from a fence (`timeout` is among its `extra`).

        Args:
            options: The options, as the fence hands them to the engine.
            default_timeout: The build's limit, for a block that sets none.

        Returns:
            The options.

        Raises:
            OptionError: If the time limit is not one the engine can honour.
        """
        extra: Mapping[str, Any] = options.get("extra") or {}
        width, workdir = options.get("width"), options.get("workdir")
        return cls(
            id=str(options.get("id") or NO_ID),
            timeout=parse_timeout(str(extra.get("timeout", default_timeout))),
            session=str(options.get("session") or ""),
            html=bool(options.get("html")),
            width=int(width) if width else None,
            workdir=str(workdir) if workdir else None,
        )

    @classmethod
    def from_written(cls, written: Mapping[str, str], *, default_timeout: float) -> BlockOptions:
        """Read the options as the page writes them (a recording runs blocks without Markdown).

        Args:
            written: The fence's options as written, already checked by `validate_options`.
            default_timeout: The limit for a block that sets none.

        Returns:
            The options, as `parse` reads the same fence.

        Raises:
            OptionError: If the time limit is not one the engine can honour.
        """
        width, workdir = written.get("width", ""), written.get("workdir", "")
        return cls(
            id=written.get("id") or NO_ID,
            timeout=parse_timeout(written.get("timeout", str(default_timeout))),
            session=written.get("session", ""),
            html=written.get("html", "").lower() in _TRUE,
            width=int(width) if width else None,
            workdir=workdir or None,
        )
