"""What the build does with a claim that did not hold, and the line that counts them.

A claim that did not hold is always shown on its page ("did not hold on this machine") and
counted in the build report. By default it is also logged as a WARNING, so `mkdocs build
--strict` (the published build) fails: the site must not publish a page whose text its own
measurement contradicts. The plugin's `claims: advisory` option (or `FLOORS_CLAIMS=advisory`)
logs it as INFO instead, for a machine too busy or too different to measure fairly (a loaded CI
runner, a laptop on battery).

A claim that cannot apply on this machine (thread scaling on one core, a CUDA lane without CUDA)
is shown as "not applicable on this machine: <why>" and counted apart; it fails nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytorch_floors.claims import Claim
from pytorch_floors.execution.result import BlockResult

__all__ = ["ClaimCounts", "claims_summary", "count_claims"]


@dataclass(frozen=True)
class ClaimCounts:
    """The build's claims, counted by outcome."""

    checked: int
    held: int
    missed: int
    not_applicable: int


def count_claims(claims: Sequence[Claim]) -> ClaimCounts:
    """Count claims as held, missed (applied and did not hold) or not applicable."""
    outcomes = [claim.outcome for claim in claims]
    return ClaimCounts(
        len(outcomes), outcomes.count("held"), outcomes.count("missed"), outcomes.count("not applicable")
    )


def claims_summary(records: Sequence[BlockResult], *, advisory: bool) -> str:
    """One log line counting the build's claims.

    Args:
        records: The build's block results.
        advisory: The policy in force.

    Returns:
        For example `claims: 64 checked, 62 held, 1 did not hold, 1 not applicable on this machine (advisory)`.
    """
    counts = count_claims([claim for record in records for claim in record.claims])
    policy = " (advisory)" if advisory and counts.missed else ""
    return (
        f"claims: {counts.checked} checked, {counts.held} held, {counts.missed} did not hold, "
        f"{counts.not_applicable} not applicable on this machine{policy}"
    )
