"""Record a tier: every proof of the site run as the build runs it, written as the tier's recording.

The recorder reads the pages' Markdown with the build's own scan, and runs each block through the
build's [`Engine`][pytorch_floors.execution.engine.Engine]: the same code (includes expanded), the
same isolation, time limits, environment rules, cache and claims. It needs torch, numpy and this
package's engine core, not MkDocs, so it also runs on a bare GPU box with its own torch.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from pytorch_floors.execution.cache import CacheMode, OutputCache, machine_fingerprint
from pytorch_floors.execution.engine import Engine, ProofFailure
from pytorch_floors.execution.facts import torch_facts
from pytorch_floors.execution.provenance import collect
from pytorch_floors.execution.scan import ExecBlock, ScanError, scan_markdown
from pytorch_floors.floors import ANNEXES, FLOORS, MAP_PAGE
from pytorch_floors.i18n.languages import english_source
from pytorch_floors.recordings.contention import cpu_share
from pytorch_floors.recordings.schema import RecordedBlock, Recording, RecordingError, read_recordings, write_recording

__all__ = ["Pruned", "planned_blocks", "prune", "record_site"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def _reading_order(page: str) -> tuple[int, str]:
    """Part 0 first, then the floors from the top, the annexes, then every other page by path."""
    order = {MAP_PAGE: 0, **{floor.page: floor.number for floor in FLOORS}}
    order |= {annex.page: len(FLOORS) + 1 + i for i, annex in enumerate(ANNEXES)}
    return (order.get(page, len(order) + 1), page)


def planned_blocks(docs_dir: Path, project_dir: Path) -> dict[str, list[ExecBlock]]:
    """Every page's executed blocks, as the build's scan finds them, pages in reading order.

    Args:
        docs_dir: The site's `docs/` folder.
        project_dir: The project root (snippet includes are relative to it).

    Returns:
        Each page with executed blocks (relative to `docs_dir`) and its blocks.

    Raises:
        RecordingError: If a page breaks a rule of the scan (the build would refuse it too).
    """
    pages: dict[str, list[ExecBlock]] = {}
    for path in sorted(docs_dir.rglob("*.md")):
        page = path.relative_to(docs_dir).as_posix()
        if english_source(page) != page:
            continue  # a translation shows its English page's blocks (`Engine.twin`): they are recorded there
        try:
            blocks = scan_markdown(path.read_text(encoding="utf-8"), page, project_dir)
        except ScanError as error:
            raise RecordingError(str(error)) from None
        if blocks:
            pages[page] = blocks
    return dict(sorted(pages.items(), key=lambda item: _reading_order(item[0])))


def _measured_share() -> float:
    """`contention.cpu_share()`, or a RecordingError saying why the machine's load could not be measured."""
    try:
        return cpu_share()
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        raise RecordingError(f"cannot measure how busy this machine's cores are: {error}") from error


def _each_block(engine: Engine, planned: dict[str, list[ExecBlock]]) -> Iterator[ProofFailure]:
    """Run every planned block, page by page; yield each failure (the engine has recorded it)."""
    for page, blocks in planned.items():
        engine.plan(page, blocks)
    for page, blocks in planned.items():
        engine.begin_page(page, "")
        for block in blocks:
            try:
                engine.run_scanned(block)
            except ProofFailure as failure:
                yield failure
        engine.end_page()


def record_site(
    project_dir: Path,
    docs_dir: Path,
    tier: str,
    *,
    stands_for: str,
    cache_dir: Path,
    cache_mode: CacheMode = "on",
) -> Recording:
    """Run every proof of the site on this machine and return the tier's recording.

    Args:
        project_dir: The project root: blocks run there.
        docs_dir: The site's `docs/` folder.
        tier: The tier's name.
        stands_for: What kind of machine it is, in words.
        cache_dir: The build's cache folder (`.cache/`): an output this machine already measured for
            the same inputs is reused, as a build would, unless `cache_mode` is `refresh`.
        cache_mode: `on`, `refresh` (run everything again) or `off`.

    Returns:
        The recording, one block per planned block, with the share of its cores the run got
        (`recordings.contention`: measured before and after, the lower kept).

    Raises:
        RecordingError: If a proof failed (each failure named by page, block, file and line), or a
            planned block ended without a result.
    """
    planned = planned_blocks(docs_dir, project_dir)
    facts = torch_facts()
    provenance = collect(facts)
    engine = Engine(
        project_dir,
        OutputCache(cache_dir / "floors-exec", cache_mode),
        provenance=provenance,
        # Another tier's missed claim is evidence to record, not an error of this run: it is logged and kept.
        advisory_claims=True,
        machine=machine_fingerprint(facts),
    )
    share_before = _measured_share()
    try:
        failures = list(_each_block(engine, planned))
    finally:
        engine.close()
    share = round(min(share_before, _measured_share()), 2)
    if failures:
        raise RecordingError(
            f"{len(failures)} proof(s) failed; nothing was recorded:\n" + "\n".join(str(f) for f in failures)
        )
    blocks = []
    for page, page_blocks in planned.items():
        for block in page_blocks:
            result = next((r for r in engine.records if (r.page, r.block_id) == (page, block.block_id)), None)
            if result is None or result.digest is None or result.provenance is None or result.seconds is None:
                raise RecordingError(f"docs/{page} › block '{block.block_id}' ended without a result")
            blocks.append(
                RecordedBlock(
                    page=page,
                    block_id=block.block_id,
                    digest=result.digest,
                    html=block.options.html,
                    output=result.output,
                    seconds=round(result.seconds, 3),
                    claims=result.claims,
                    provenance=result.provenance,
                )
            )
    return Recording(
        tier=tier,
        stands_for=stands_for,
        recorded=date.today().isoformat(),
        machine=provenance,
        blocks=tuple(blocks),
        cpu_share=share,
    )


@dataclass(frozen=True)
class Pruned:
    """A recorded block that no page has any more, removed from its tier's recording.

    Attributes:
        tier: The tier.
        page: The page it was recorded on.
        block_id: Its id.
    """

    tier: str
    page: str
    block_id: str


def prune(root: Path, planned: dict[str, list[ExecBlock]], keep: Iterable[str] = ()) -> list[Pruned]:
    """Remove, from every tier's recording, the blocks the site no longer has.

    A block that still exists but changed is left alone: it shows as stale until its tier records it again.

    Args:
        root: The recordings folder.
        planned: The site's blocks (`planned_blocks`).
        keep: Tiers to leave untouched.

    Returns:
        What was removed.
    """
    exists = {(page, block.block_id) for page, blocks in planned.items() for block in blocks}
    removed = []
    for recording in read_recordings(root):
        if recording.tier in set(keep):
            continue
        gone = [b for b in recording.blocks if b.key not in exists]
        if not gone:
            continue
        removed += [Pruned(recording.tier, b.page, b.block_id) for b in gone]
        write_recording(replace(recording, blocks=tuple(b for b in recording.blocks if b.key in exists)), root)
    return removed
