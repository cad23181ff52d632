"""What the build does with a claim that did not hold: the policy, read from `FLOORS_CLAIMS`.

A claim that did not hold is always shown on its page ("did not hold on this machine") and
counted in the build report. By default it is also logged as a WARNING, so `mkdocs build
--strict` (the published build) fails: the site must not publish a page whose text its own
measurement contradicts. `FLOORS_CLAIMS=advisory` logs it as INFO instead, for a machine too
busy or too different to measure fairly (a loaded CI runner, a laptop on battery).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from mkdocs.exceptions import PluginError

from pytorch_floors.execution.result import BlockResult

__all__ = ["claims_advisory", "claims_summary"]


def claims_advisory(environ: Mapping[str, str] | None = None) -> bool:
    """Whether claims that do not hold are advisory in this build.

    Args:
        environ: The build's environment (default: this process's).

    Returns:
        `True` for `FLOORS_CLAIMS=advisory`, `False` for `warn` or unset.

    Raises:
        PluginError: For any other value (a typo must not quietly pick a policy).
    """
    value = (os.environ if environ is None else environ).get("FLOORS_CLAIMS", "warn")
    if value not in ("warn", "advisory"):
        raise PluginError(f"FLOORS_CLAIMS must be warn or advisory, not {value!r}")
    return value == "advisory"


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
