"""The build report: every executed block, its time and its cache status; every claim and its outcome.

A claim held, did not hold, or was not applicable on this machine; the three are counted apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict

from pytorch_floors.execution.claim_policy import count_claims
from pytorch_floors.execution.result import BlockResult

__all__ = ["claim_rows", "report_json"]


def claim_rows(records: Sequence[BlockResult]) -> list[dict[str, str | int | bool | None]]:
    """Every claim of the build, in page order, with the block that stated it."""
    return [
        {
            "page": record.page,
            "block_id": record.block_id,
            "proof": record.proof,
            "status": record.status,
            "statement": claim.statement,
            "held": claim.held,
            "outcome": claim.outcome,
            "applies": claim.applies,
            "why_not": claim.why_not,
            "result": claim.verdict,
            "detail": claim.detail,
            "file": claim.file,
            "line": claim.line,
        }
        for record in records
        for claim in record.claims
    ]


def report_json(
    records: Sequence[BlockResult],
    provenance: dict[str, str | int],
    *,
    advisory: bool = False,
    build_id: str = "",
    planned: Sequence[tuple[str, str]] = (),
    recordings: Mapping[str, object] | None = None,
    runs: Mapping[str, object] | None = None,
) -> str:
    """The build report as JSON.

    Args:
        records: One record per executed block.
        provenance: The build's provenance fields.
        advisory: Claims that did not hold were logged as advisory (not failing a strict build).
        build_id: The build's id, which every page of the build carries (`editions.verify`).
        planned: Every block and lab the build planned, as `(page, block id)`.
        recordings: What the build showed of other machines' recordings (`recordings.report.recordings_json`).
        runs: What the build was told to run: `{"execute": bool, "only": glob or None}` (`FLOORS_EXEC`,
            `FLOORS_EXEC_ONLY`); `editions.verify` accepts, on request, the blocks it left out so.

    Returns:
        A JSON document with `build`, `provenance`, `totals`, `claims_policy`, `claims`, `blocks` and
        `recordings`.
    """
    totals: dict[str, float] = {"blocks": len(records)}
    for status in ("ran", "cached", "skipped", "failed"):
        totals[status] = sum(1 for r in records if r.status == status)
    totals["seconds_ran"] = round(sum(r.seconds or 0 for r in records if r.status == "ran"), 3)
    claims = claim_rows(records)
    counts = count_claims([claim for record in records for claim in record.claims])
    totals["claims"] = counts.checked
    totals["claims_held"] = counts.held
    # Those that applied here and did not hold; a claim that does not apply is counted apart and fails nothing.
    totals["claims_not_held"] = counts.missed
    totals["claims_not_applicable"] = counts.not_applicable
    # The outputs are on the pages; the report says what ran, where, how long it took and what it showed.
    blocks = [{k: v for k, v in asdict(r).items() if k not in {"output", "claims"}} for r in records]
    document = {
        "build": {
            "id": build_id,
            "planned": [{"page": page, "block_id": block_id} for page, block_id in planned],
            "runs": dict(runs or {"execute": True, "only": None}),
        },
        "provenance": provenance,
        "totals": totals,
        "claims_policy": "advisory" if advisory else "warn",
        "claims": claims,
        "blocks": blocks,
        "recordings": dict(recordings or {}),
    }
    return json.dumps(document, indent=2)
