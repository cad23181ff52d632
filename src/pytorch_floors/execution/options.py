"""The fence options an executed block may use, and what each value must look like.

markdown-exec's validator accepts options this engine does not honour (`returncode`,
`tabs`, `idprefix`, ...) and passes any other word on silently, so a misspelled
`timout="300"` used to leave a block at the default limit without a word. Every
option is checked here, once, when the page is scanned: an unknown option or a bad
value is an error naming the page and line.

`BlockOptions.parse` is the one parser of a fence's option strings, and the scan its one caller: the
fence, the engine, its cache and a recording all read the typed `BlockOptions` the scan kept on the block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class BlockOptions:
    """An executed block's options, typed: read once, by the page's scan, and handed to every later step.

    The scan keeps them on the block (`ExecBlock.options`); the fence looks them up there by the block's
    id, and the engine, its cache key and a recording read the same object. Nothing reads the fence's
    option strings again.

    Attributes:
        id: The block's id, unique on its page.
        timeout: Seconds it may run, or `None`: the build's default (`limit`).
        session: The session whose namespace it shares, or `""` (a process of its own).
        html: It prints HTML (a figure), shown as is, instead of console text.
        width: The console width it sees as `COLUMNS`, or `None`.
        workdir: The directory it runs in, relative to the project, or `None` (the project itself).
        result: The language its output is highlighted as, or `""` (text, or nothing for HTML).
        source_above: Its code is shown above its output (`source="above"`).
        written: The options as the page writes them (`name -> value`): the cache key and a recording's
            digest cover these (`digest.keyed_options`), so a recording stays comparable byte for byte.
    """

    id: str
    timeout: float | None = None
    session: str = ""
    html: bool = False
    width: int | None = None
    workdir: str | None = None
    result: str = ""
    source_above: bool = False
    written: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, written: Mapping[str, str]) -> BlockOptions:
        """Read an executed fence's options as the page writes them: the one parser of them.

        Args:
            written: The fence's options as written (`name -> value`).

        Returns:
            The options.

        Raises:
            OptionError: Naming the first unknown option or bad value and what is allowed, or a missing `id`.
        """
        for name, value in written.items():
            if name not in ALLOWED:
                known = ", ".join(sorted(ALLOWED))
                raise OptionError(f"unknown option {name}={value!r}; an executed block takes only: {known}")
            _check_value(name, value)
        if not written.get("id"):
            raise OptionError('executed block has no id; add id="..." to the fence')
        width, workdir, timeout = written.get("width", ""), written.get("workdir", ""), written.get("timeout")
        return cls(
            id=written["id"],
            timeout=parse_timeout(timeout) if timeout is not None else None,
            session=written.get("session", ""),
            html=written.get("html", "").lower() in _TRUE,
            width=int(width) if width else None,
            workdir=workdir or None,
            result=written.get("result", ""),
            source_above=written.get("source") == "above",
            written=dict(written),
        )

    def limit(self, default: float) -> float:
        """Seconds the block may run.

        Args:
            default: The build's limit, for a block that sets none.

        Returns:
            Its own `timeout`, else `default`.
        """
        return default if self.timeout is None else self.timeout

    @property
    def result_language(self) -> str:
        """What its output is fenced as: its `result`, else text for console output; `""` shows HTML as it is."""
        return self.result or ("" if self.html else "text")
