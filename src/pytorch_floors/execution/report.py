"""The build report: every executed block, its time and its cache status."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from html import escape

from pytorch_floors.execution.result import BlockResult

__all__ = ["report_html", "report_json"]


def report_json(records: Sequence[BlockResult], provenance: dict[str, str | int]) -> str:
    """The build report as JSON.

    Args:
        records: One record per executed block.
        provenance: The build's provenance fields.

    Returns:
        A JSON document with `provenance`, `totals` and `blocks`.
    """
    totals: dict[str, float] = {"blocks": len(records)}
    for status in ("ran", "cached", "skipped", "failed"):
        totals[status] = sum(1 for r in records if r.status == status)
    totals["seconds_ran"] = round(sum(r.seconds or 0 for r in records if r.status == "ran"), 3)
    return json.dumps({"provenance": provenance, "totals": totals, "blocks": [asdict(r) for r in records]}, indent=2)


def report_html(records: Sequence[BlockResult]) -> str:
    """The build report as an HTML table, slowest block first.

    Args:
        records: One record per executed block.

    Returns:
        A summary paragraph and a table.
    """
    ran = [r for r in records if r.status == "ran"]
    cached = [r for r in records if r.status == "cached"]
    summary = (
        f"<p>{len(records)} executed blocks: {len(ran)} ran in this build "
        f"({sum(r.seconds or 0 for r in ran):.2f} s in total), {len(cached)} came from the cache, "
        f"{sum(1 for r in records if r.status == 'failed')} failed.</p>"
    )
    rows = []
    for record in sorted(records, key=lambda r: -(r.seconds or 0)):
        seconds = f"{record.seconds:.2f}" if record.seconds is not None else "–"
        rows.append(
            f"<tr><td><code>{escape(record.page)}</code></td><td><code>{escape(record.block_id)}</code></td>"
            f"<td>{escape(record.proof or '–')}</td><td>{record.status}</td><td>{seconds}</td></tr>"
        )
    return (
        summary + '<table class="floors-report"><caption>Executed blocks, slowest first</caption>'
        '<thead><tr><th scope="col">Page</th><th scope="col">Block</th><th scope="col">Proof</th>'
        '<th scope="col">Status</th><th scope="col">Seconds</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
