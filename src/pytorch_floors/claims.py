"""State, as code, the pattern a page claims, so that every run of the proof checks it.

A proof measures, then says what the page says about its numbers:

    claim("time per call is flat below 1k elements", held=ratio < 1.5, detail=f"ratio {ratio:.2f}")

Run on its own (`python proof.py`, or downloaded), each claim prints one line saying whether
it held. Under the site's build the worker names a file in `FLOORS_CLAIMS_FILE`: each claim is
appended to it as one JSON line instead of printed, and the build shows it beside the output
and counts it in the build report. The file is inherited by the proof's subprocesses and
forked children like any environment variable, so their claims arrive too, and nothing depends
on parsing what the proof prints.

Standard library only: a downloaded proof carries this module inside it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

__all__ = ["CHANNEL", "Claim", "ClaimFormatError", "claim", "parse_claims"]

CHANNEL = "FLOORS_CLAIMS_FILE"
"""The environment variable naming the file the build reads claims from."""


@dataclass(frozen=True)
class Claim:
    """One pattern a proof checked on the numbers it measured.

    Attributes:
        statement: What the page claims, in the page's words ("copy time grows with size").
        held: Whether it held on the numbers of this run.
        detail: The measured figures it was judged on ("ratio 1.12"), printed by code.
        line: The proof's line that stated it (0 when unknown).
        file: The file name Python gave that line's code (maps the line back to the proof).
    """

    statement: str
    held: bool
    detail: str = ""
    line: int = 0
    file: str = ""

    @property
    def verdict(self) -> str:
        """`held` or `did not hold on this machine`: the words a reader sees, never colour alone."""
        return "held" if self.held else "did not hold on this machine"


class ClaimFormatError(ValueError):
    """A line of the claims file is not a claim (a proof wrote to the channel by hand?)."""


def claim(statement: str, held: object, detail: str = "") -> bool:
    """State that a pattern holds on the numbers just measured.

    Args:
        statement: The pattern, as the page words it.
        held: Whether it held (anything `bool()` accepts: a comparison, a numpy or one-element torch bool).
        detail: The figures it was judged on, so a reader can see by how much.

    Returns:
        Whether it held, so the proof can go on to explain either way.

    Raises:
        ValueError: If the statement is empty.
    """
    if not statement.strip():
        raise ValueError("a claim needs a statement: what does the page say about these numbers?")
    verdict = bool(held)
    caller = sys._getframe(1)
    record = Claim(statement, verdict, detail, caller.f_lineno, caller.f_code.co_filename)
    path = os.environ.get(CHANNEL)
    if path:
        line = json.dumps(record.__dict__, ensure_ascii=True) + "\n"
        # One write per line in append mode: lines from forked children and subprocesses never interleave.
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(descriptor, line.encode("ascii"))
        finally:
            os.close(descriptor)
    else:
        suffix = f" ({detail})" if detail else ""
        print(f"claim {record.verdict}: {statement}{suffix}", flush=True)
    return verdict


def parse_claims(text: str) -> list[Claim]:
    """Read the claims a run wrote to the channel, in the order they were stated.

    Args:
        text: The file's contents, one JSON object per line.

    Returns:
        The claims.

    Raises:
        ClaimFormatError: If a line is not a claim.
    """
    claims = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            data = json.loads(line)
            statement, held, detail = data["statement"], data["held"], data.get("detail", "")
            where_line, where_file = data.get("line", 0), data.get("file", "")
        except (ValueError, KeyError, TypeError) as error:
            raise ClaimFormatError(f"claims line {number} is not a claim ({error}): {line[:80]!r}") from None
        if not (isinstance(statement, str) and isinstance(held, bool) and isinstance(detail, str)):
            raise ClaimFormatError(f"claims line {number} has fields of the wrong type: {line[:80]!r}")
        if not (isinstance(where_line, int) and isinstance(where_file, str)):
            raise ClaimFormatError(f"claims line {number} has a location of the wrong type: {line[:80]!r}")
        claims.append(Claim(statement, held, detail, where_line, where_file))
    return claims
