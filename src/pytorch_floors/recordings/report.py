"""The build report's part on recordings: the machines shown, what is stale, every claim on every machine.

It is the site's evidence that its patterns hold beyond the machine that built it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytorch_floors.execution.result import BlockResult
from pytorch_floors.i18n.messages import PageLanguage, code_of, t
from pytorch_floors.recordings.compare import (
    ClaimRow,
    Orphan,
    claim_table,
    machine_in_words,
    orphans,
    stands_for_in,
    tiers_for,
)
from pytorch_floors.recordings.schema import Recording
from pytorch_floors.render.templates import render

__all__ = ["OWN", "machines_html", "page_tiers", "recordings_json", "recordings_summary"]

OWN = "this build"
"""The name of this build's own column."""

_WORDS = {
    "held": "held",
    "missed": "did not hold",
    "not applicable": "not applicable",
    "stale": "stale",
    "not recorded": "not recorded",
}


def page_tiers(records: Sequence[BlockResult], recordings: Sequence[Recording], page: str) -> list[str]:
    """The machines a page's tabs show besides this build, in words, each once.

    Args:
        records: This build's results.
        recordings: Every tier's recording.
        page: The page's source path.

    Returns:
        `"<tier>: <machine in words>"` per tier with a current recording of one of the page's blocks.
    """
    shown: dict[str, str] = {}
    for record in records:
        if record.page == page and record.status != "failed":
            for tier in tiers_for(record, recordings).current:
                shown.setdefault(tier.tier, f"{tier.tier}: {tier.label}")
    return list(shown.values())


def _stale(records: Sequence[BlockResult], recordings: Sequence[Recording]) -> list[Orphan]:
    return [
        Orphan(tier.tier, record.page, record.block_id)
        for record in records
        if record.status != "failed"
        for tier in tiers_for(record, recordings).stale
    ]


def recordings_json(
    records: Sequence[BlockResult], recordings: Sequence[Recording], planned: Sequence[tuple[str, str]]
) -> dict[str, object]:
    """The recordings part of `build-report.json`.

    Args:
        records: This build's results.
        recordings: Every tier's recording.
        planned: This build's blocks, as `(page, block id)`.

    Returns:
        `tiers`, `stale`, `orphans` and `claims` (each claim's outcome per machine, and whether it held
        on every machine where it applied).
    """
    return {
        "tiers": [
            {"tier": r.tier, "stands_for": r.stands_for, "recorded": r.recorded, "machine": r.machine.as_dict()}
            for r in recordings
        ],
        "stale": [{"tier": s.tier, "page": s.page, "block_id": s.block_id} for s in _stale(records, recordings)],
        "orphans": [{"tier": o.tier, "page": o.page, "block_id": o.block_id} for o in orphans(recordings, planned)],
        "claims": [
            {
                "page": row.page,
                "block_id": row.block_id,
                "statement": row.statement,
                "outcomes": dict(zip([OWN, *(r.tier for r in recordings)], row.outcomes, strict=True)),
                "held_everywhere": row.held_everywhere,
            }
            for row in claim_table(records, recordings)
        ],
    }


def _summary(rows: Sequence[ClaimRow]) -> dict[str, int]:
    return {
        "checked": len(rows),
        "everywhere": sum(1 for r in rows if r.held_everywhere),
        "missed_somewhere": sum(1 for r in rows if "missed" in r.outcomes),
        "never_applied": sum(1 for r in rows if r.applied == 0),
    }


def machines_html(
    records: Sequence[BlockResult],
    recordings: Sequence[Recording],
    planned: Sequence[tuple[str, str]],
    url_of: Callable[[str], str],
    language: str | PageLanguage,
) -> str:
    """The build report's comparison of machines, as HTML, in the report page's language.

    Args:
        records: This build's results.
        recordings: Every tier's recording.
        planned: This build's blocks, as `(page, block id)`.
        url_of: A page's source path to its link from the report.
        language: The report page's language (`en`, `zh`).

    Returns:
        The tiers, the stale and orphaned recordings, and the tier × claim table.
    """
    code = code_of(language)
    rows = claim_table(records, recordings)
    measured = next((r.provenance for r in records if r.provenance is not None), None)
    return render(
        "machines.html",
        language,
        own_label=machine_in_words(measured, language=code) if measured is not None else OWN,
        tiers=[
            {
                "name": r.tier,
                "label": machine_in_words(r.machine, r.recorded, r.cpu_share, code),
                "stands_for": stands_for_in(r, code),
            }
            for r in recordings
        ],
        columns=[{"name": OWN, "tier": None}, *({"name": r.tier, "tier": r.tier} for r in recordings)],
        rows=[{**row.__dict__, **_row_extra(row, url_of)} for row in rows],
        words={outcome: t(word, code) for outcome, word in _WORDS.items()},
        stale=_stale(records, recordings),
        orphans=orphans(recordings, planned),
        **_summary(rows),
    )


def _row_extra(row: ClaimRow, url_of: Callable[[str], str]) -> dict[str, object]:
    return {"href": url_of(row.page), "applied": row.applied, "held_everywhere": row.held_everywhere}


def recordings_summary(
    records: Sequence[BlockResult], recordings: Sequence[Recording], planned: Sequence[tuple[str, str]]
) -> str:
    """The build log's line on recordings: what is shown, what is stale and what no page has.

    Args:
        records: This build's results.
        recordings: Every tier's recording.
        planned: This build's blocks, as `(page, block id)`.

    Returns:
        One line, naming each stale recording (`make record TIER=...` refreshes it).
    """
    stale, gone = _stale(records, recordings), orphans(recordings, planned)
    shown = sum(len(tiers_for(r, recordings).current) for r in records if r.status != "failed")
    line = (
        f"recordings: {len(recordings)} tiers, {shown} recorded outputs shown, {len(stale)} stale, {len(gone)} orphaned"
    )
    named = [f"{s.tier} › docs/{s.page} › {s.block_id}" for s in stale]
    if named:
        line += f" (stale, make record TIER=<name> refreshes: {'; '.join(named)})"
    if gone:
        line += f" (no page has: {'; '.join(f'{o.tier} › docs/{o.page} › {o.block_id}' for o in gone)})"
    return line
