"""Where a build's proofs and labs have got to, as structured events: what a serve session's background build tells it.

The session used to follow its background build by matching the build's log lines against a
pattern: a reworded log line, and live reload silently stopped updating. Now the engine and the lab
kernel hand each step to a callback as a `Progress` event; the background build writes each as one
line of JSON after `PREFIX` on its output, and the session reads the event, never the wording of a
log line. The line comes from another process: `parse_progress` checks every field.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal

__all__ = ["PREFIX", "STATES", "Progress", "parse_progress"]

PREFIX = "floors-progress "
"""What starts an event's line on the background build's output."""

STATES = ("running", "ran", "cached", "failed", "waits")
"""What a step can report: it started, it ended (run, from the cache, or failed), or it waits for another build."""

_FIELDS = {"kind": str, "number": int, "total": int, "page": str, "where": str, "state": str, "detail": str}


@dataclass(frozen=True)
class Progress:
    """One step of a build's proofs and labs.

    Attributes:
        kind: `proof` or `lab`.
        number: Its place among the build's proofs (or labs), from 1.
        total: How many the build has.
        page: The page's source path relative to `docs/` (`floors/4-dispatcher.md`, `labs/4-dispatcher.py`).
        where: The block or lab as the log names it (`docs/floors/4-dispatcher.md › op-schema`).
        state: One of `STATES`.
        detail: The rest, in words (`limit 120 s`, `in 1.2 s`).
    """

    kind: Literal["proof", "lab"]
    number: int
    total: int
    page: str
    where: str
    state: str
    detail: str = ""

    def line(self) -> str:
        """The event as one line of the build's output."""
        return PREFIX + json.dumps(asdict(self), ensure_ascii=False)

    def words(self) -> str:
        """The event as the session's log says it: `proof 3/12 docs/x.md › id: running (limit 120 s)`."""
        detail = f" ({self.detail})" if self.detail and self.state == "running" else f" {self.detail}".rstrip()
        return f"{self.kind} {self.number}/{self.total} {self.where}: {self.state}{detail}"


def parse_progress(line: str) -> Progress | None:
    """The event a line of the background build's output carries, or `None` for any other line.

    Args:
        line: One line of output, without its end.

    Returns:
        The event.

    Raises:
        ValueError: If the line starts with `PREFIX` but is not an event this version writes (named).
    """
    if not line.startswith(PREFIX):
        return None
    try:
        data = json.loads(line[len(PREFIX) :])
    except ValueError as error:
        raise ValueError(f"a progress event that is not JSON: {line[:200]!r} ({error})") from None
    if not isinstance(data, dict) or set(data) != set(_FIELDS):
        raise ValueError(f"a progress event without the fields {sorted(_FIELDS)}: {line[:200]!r}")
    for name, kind in _FIELDS.items():
        if type(data[name]) is not kind:
            raise ValueError(f"a progress event whose {name} is not {kind.__name__}: {line[:200]!r}")
    if data["kind"] not in {"proof", "lab"} or data["state"] not in STATES:
        raise ValueError(f"a progress event of an unknown kind or state: {line[:200]!r}")
    return Progress(**data)
