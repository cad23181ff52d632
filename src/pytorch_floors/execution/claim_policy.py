"""What the build does with a claim that did not hold, and the line that counts them.

A claim that did not hold is always shown on its page ("did not hold on this machine") and
counted in the build report. By default it is also logged as a WARNING, so `mkdocs build
--strict` (the published build) fails: the site must not publish a page whose text its own
measurement contradicts. The plugin's `claims: advisory` option (or `FLOORS_CLAIMS=advisory`)
logs it as INFO instead, for a machine too busy or too different to measure fairly (a loaded CI
runner, a laptop on battery).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytorch_floors.execution.result import BlockResult

__all__ = ["claims_summary"]


def claims_summary(records: Sequence[BlockResult], *, advisory: bool) -> str:
    """One log line counting the build's claims.

    Args:
        records: The build's block results.
        advisory: The policy in force.

    Returns:
        For example `claims: 64 checked, 63 held, 1 did not hold (advisory)`.
    """
    claims = [claim for record in records for claim in record.claims]
    held = sum(1 for claim in claims if claim.held)
    policy = " (advisory)" if advisory and held < len(claims) else ""
    return f"claims: {len(claims)} checked, {held} held, {len(claims) - held} did not hold{policy}"
