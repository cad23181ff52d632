"""State, as code, the pattern a page claims, so that every run of the proof checks it.

A proof measures, then says what the page says about its numbers:

    claim("time per call is flat below 1k elements", held=ratio < 1.5, detail=f"ratio {ratio:.2f}")

A claim that cannot apply on the machine at hand (thread scaling on one core, a CUDA lane on a
machine without CUDA, a vector-width comparison under `ATEN_CPU_CAPABILITY=default`) says so
instead of passing or failing on numbers that mean nothing:

    claim("a sum runs faster on two threads", held=speedup > 1.2, applies=cores > 1, why_not="one core")
    not_applicable("a CUDA copy overlaps compute", why="no CUDA device")

It is shown as `not applicable on this machine: <why>`, counted apart from the claims that held
and those that did not, and fails nothing.

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
from types import FrameType

__all__ = ["CHANNEL", "NOT_APPLICABLE", "Claim", "ClaimFormatError", "claim", "not_applicable", "parse_claims"]

CHANNEL = "FLOORS_CLAIMS_FILE"
"""The environment variable naming the file the build reads claims from."""

NOT_APPLICABLE = "not applicable on this machine"
"""The words for a claim that could not be checked here (followed by why)."""


@dataclass(frozen=True)
class Claim:
    """One pattern a proof checked on the numbers it measured.

    Attributes:
        statement: What the page claims, in the page's words ("copy time grows with size").
        held: Whether it held on the numbers of this run. A claim that does not apply records
            True: nothing measured here contradicts it, and a reader that predates `applies`
            (it reads only `held`) fails nothing on it. `outcome` tells the three apart.
        detail: The measured figures it was judged on ("ratio 1.12"), printed by code.
        line: The proof's line that stated it (0 when unknown).
        file: The file name Python gave that line's code (maps the line back to the proof).
        applies: False when the claim cannot apply on this machine, so it was not judged.
        why_not: Why it does not apply ("one core: no second thread"); empty when it applies.
    """

    statement: str
    held: bool
    detail: str = ""
    line: int = 0
    file: str = ""
    applies: bool = True
    why_not: str = ""

    @property
    def outcome(self) -> str:
        """`held`, `missed` or `not applicable`: how the build counts it."""
        if not self.applies:
            return "not applicable"
        return "held" if self.held else "missed"

    @property
    def missed(self) -> bool:
        """It applied here and did not hold: the one outcome that fails a strict build."""
        return self.outcome == "missed"

    @property
    def verdict(self) -> str:
        """The words a reader sees, never colour alone: `held`, `did not hold on this machine`, or the why.

        A claim that does not apply reads `not applicable on this machine: <why>`.
        """
        if not self.applies:
            return f"{NOT_APPLICABLE}: {self.why_not}"
        return "held" if self.held else "did not hold on this machine"


class ClaimFormatError(ValueError):
    """A line of the claims file is not a claim (a proof wrote to the channel by hand?)."""


def claim(statement: str, held: object, detail: str = "", *, applies: object = True, why_not: str = "") -> bool:
    """State that a pattern holds on the numbers just measured.

    Args:
        statement: The pattern, as the page words it.
        held: Whether it held (anything `bool()` accepts: a comparison, a numpy or one-element torch bool).
            Not judged when the claim does not apply.
        detail: The figures it was judged on, so a reader can see by how much.
        applies: Whether the claim can apply on this machine at all (False: one core for a
            thread-scaling claim, no CUDA for a CUDA claim). It is then shown as not applicable,
            counted apart, and fails nothing.
        why_not: Why it does not apply, in words a reader understands; required when `applies` is false.

    Returns:
        Whether it was checked and held, so the proof can go on to explain either way
        (False for a claim that does not apply: nothing was checked).

    Raises:
        ValueError: If the statement is empty, or a claim that does not apply does not say why.
    """
    return _state(statement, held, detail, applies=applies, why_not=why_not, caller=sys._getframe(1))


def not_applicable(statement: str, why: str, detail: str = "") -> bool:
    """State a claim that cannot apply on this machine, and why: shown and counted, never failing.

    Args:
        statement: The pattern, as the page words it.
        why: Why this machine cannot show it ("no CUDA device", "one core").
        detail: Figures that explain why, if any.

    Returns:
        False: nothing was checked.
    """
    return _state(statement, True, detail, applies=False, why_not=why, caller=sys._getframe(1))


def _state(statement: str, held: object, detail: str, *, applies: object, why_not: str, caller: FrameType) -> bool:
    """Record one claim (through the channel, or printed) for `claim` and `not_applicable`."""
    if not statement.strip():
        raise ValueError("a claim needs a statement: what does the page say about these numbers?")
    applying = bool(applies)
    why = why_not.strip().rstrip(".")
    if not applying and not why:
        raise ValueError(f"a claim that does not apply needs why_not: why can this machine not show it? ({statement})")
    if applying:
        why = ""
    # A claim that does not apply is not judged: `held` records True (nothing here contradicts it).
    verdict = bool(held) if applying else True
    record = Claim(statement, verdict, detail, caller.f_lineno, caller.f_code.co_filename, applying, why)
    path = os.environ.get(CHANNEL)
    if path:
        fields = dict(record.__dict__)
        if applying:
            # A claim that applies is written as it was before `applies` existed.
            del fields["applies"], fields["why_not"]
        line = json.dumps(fields, ensure_ascii=True) + "\n"
        # One write per line in append mode: lines from forked children and subprocesses never interleave.
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(descriptor, line.encode("ascii"))
        finally:
            os.close(descriptor)
    else:
        suffix = f" ({detail})" if detail else ""
        if applying:
            print(f"claim {record.verdict}: {statement}{suffix}", flush=True)
        else:
            print(f"claim {record.verdict} (not checked: {statement}){suffix}", flush=True)
    return verdict and applying


def parse_claims(text: str) -> list[Claim]:
    """Read the claims a run wrote to the channel, in the order they were stated.

    Args:
        text: The file's contents, one JSON object per line. `applies` and `why_not` are
            optional (a line without them is a claim that applies, as every line was before they existed).

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
            applies, why_not = data.get("applies", True), data.get("why_not", "")
        except (ValueError, KeyError, TypeError) as error:
            raise ClaimFormatError(f"claims line {number} is not a claim ({error}): {line[:80]!r}") from None
        if not (isinstance(statement, str) and isinstance(held, bool) and isinstance(detail, str)):
            raise ClaimFormatError(f"claims line {number} has fields of the wrong type: {line[:80]!r}")
        if not (isinstance(where_line, int) and isinstance(where_file, str)):
            raise ClaimFormatError(f"claims line {number} has a location of the wrong type: {line[:80]!r}")
        if not (isinstance(applies, bool) and isinstance(why_not, str)):
            raise ClaimFormatError(f"claims line {number} has applies/why_not of the wrong type: {line[:80]!r}")
        if not applies and not why_not.strip():
            raise ClaimFormatError(f"claims line {number} does not apply but does not say why: {line[:80]!r}")
        if not applies and not held:
            raise ClaimFormatError(f"claims line {number} does not apply yet records held false: {line[:80]!r}")
        claims.append(Claim(statement, held, detail, where_line, where_file, applies, why_not if not applies else ""))
    return claims
