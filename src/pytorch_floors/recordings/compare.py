"""What a build shows of the recordings: per block, current and stale tiers; every claim on every machine.

A recording is current for a block when its digest is the block's in this build: the same code,
session, options and imported files. Anything else is stale: shown as a note, never as a result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pytorch_floors.claims import Claim
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.i18n.messages import t
from pytorch_floors.recordings.contention import contended
from pytorch_floors.recordings.html import UntrustedHTML, allowed_html
from pytorch_floors.recordings.schema import RecordedBlock, Recording
from pytorch_floors.tiers.kinds import tier_named

__all__ = [
    "BlockTiers",
    "ClaimRow",
    "Orphan",
    "ShownTier",
    "claim_table",
    "machine_in_words",
    "orphans",
    "stands_for_in",
    "tiers_for",
]

_CPU_NOISE = re.compile(r"\((?:R|TM|tm)\)|\bCPU\b|\bProcessor\b|@.*$|\b\d+-Core\b")


def _short_cpu(cpu: str) -> str:
    words = _CPU_NOISE.sub(" ", cpu).split()
    return " ".join(words) or cpu


def machine_in_words(
    provenance: Provenance, recorded: str | None = None, cpu_share: float | None = None, language: str = "en"
) -> str:
    """A machine as a tab's label says it: "NVIDIA H200 + 16 threads, torch 2.11.0, recorded 2026-12-03".

    Args:
        provenance: The run's provenance.
        recorded: The date it was recorded (a tier's), or `None` for this build's own run.
        cpu_share: The share of its cores the recording run got (`recordings.contention`), if measured:
            a contended run says so, and how much it got.
        language: The page's language (`en`, `zh`).

    Returns:
        The words.
    """
    if provenance.accelerator not in {"", "none"}:
        device = provenance.accelerator.split(":", 1)[-1].strip()
    else:
        device = _short_cpu(provenance.cpu)
    count = provenance.threads
    threads = t("{count} thread", language, count=count) if count == 1 else t("{count} threads", language, count=count)
    kernels = t(", kernels without AVX2", language) if provenance.cpu_capability.upper() == "DEFAULT" else ""
    words = t(
        "{device} + {threads}{kernels}, torch {version}",
        language,
        device=device,
        threads=threads,
        kernels=kernels,
        version=provenance.torch_version,
    )
    words = t("{words}, recorded {date}", language, words=words, date=recorded) if recorded else words
    if contended(cpu_share):
        words += t(
            " while other work held its cores (a busy process got {share} of one)", language, share=f"{cpu_share:.0%}"
        )
    return words


def _gpu(provenance: Provenance) -> bool:
    return provenance.accelerator not in {"", "none"}


@dataclass(frozen=True)
class ShownTier:
    """A tier's recording of one block, as the page shows it.

    Attributes:
        tier: The tier's name.
        label: Its machine in words.
        block: What it recorded.
        elsewhere: It is shown first, in place of this build's output, because it measured what this
            build could not (a CUDA lane on a CPU build; see `_stands_in`).
        same: It printed this build's output character for character, and its claims came out as this
            build's did: one line under the output says so instead of a tab (a page pays for every copy).
        stands_for: The kind of machine the tier stands for, in words (its recording's).
        contended: Other work held the cores while the tier was recorded (`recordings.contention`).
    """

    tier: str
    label: str
    block: RecordedBlock
    elsewhere: bool = False
    same: bool = False
    stands_for: str = ""
    contended: bool = False


@dataclass(frozen=True)
class BlockTiers:
    """The recordings of one block of this build.

    Attributes:
        current: Tiers whose recording is of this version of the block, the one shown first leading.
        stale: Tiers whose recording is of an earlier version.
    """

    current: tuple[ShownTier, ...] = ()
    stale: tuple[ShownTier, ...] = ()

    @property
    def lead(self) -> ShownTier | None:
        """The tier shown in place of this build's output, if any."""
        return self.current[0] if self.current and self.current[0].elsewhere else None


def _stands_in(result: BlockResult, recorded: RecordedBlock) -> bool:
    """Whether the tier measured what this build could not, so that its output leads.

    Either this build checked none of the block's claims and the tier checked some (any tier), or the
    tier has the accelerator this build lacks and checked a claim that could not apply here (a CUDA
    lane on a CPU build).
    """
    own = result.claims
    if not own:
        return False
    if not any(c.applies for c in own) and any(c.applies for c in recorded.claims):
        return True
    here = result.provenance
    gpu_only = here is not None and not _gpu(here) and _gpu(recorded.provenance)
    unchecked = {c.statement for c in own if not c.applies}
    return gpu_only and any(c.applies and c.statement in unchecked for c in recorded.claims)


def _same(result: BlockResult, recorded: RecordedBlock) -> bool:
    def outcomes(claims: Iterable[Claim]) -> list[tuple[str, str]]:
        return [(c.statement, c.outcome) for c in claims]

    return _shown(result.output, html=recorded.html) == recorded.output and outcomes(recorded.claims) == outcomes(
        result.claims
    )


@functools.lru_cache(maxsize=256)
def _shown(output: str, *, html: bool) -> str:
    """This build's output as a recording of it is shown: HTML written out again from the allow-list.

    Kept for the outputs last asked for: each block's output is compared with every tier's recording, by every
    page and summary that shows the tiers (the build report's machines table read each figure some 40 times).
    """
    if not html:
        return output
    try:
        return allowed_html(output)
    except UntrustedHTML:
        return output  # this build's own figure, of elements no recording may hold: so no recording is the same


def stands_for_in(recording: Recording, language: str) -> str:
    """What a recording stands for in the page's language: a tier's own words translated, a machine's as written."""
    tier = tier_named(recording.tier)
    if tier is None or tier.stands_for != recording.stands_for:
        return recording.stands_for
    return tier.stands_for_in(language)


def tiers_for(result: BlockResult, recordings: Iterable[Recording], language: str = "en") -> BlockTiers:
    """The current and stale recordings of one block of this build.

    Args:
        result: The block's result in this build (its digest says which version it is).
        recordings: Every tier's recording.
        language: The page's language (`en`, `zh`): what each tier stands for is said in it.

    Returns:
        The block's tiers; a tier shown in place of this build's output comes first (a GPU tier first).
    """
    current, stale = [], []
    for recording in recordings:
        block = recording.block(result.page, result.block_id)
        if block is None:
            continue
        shown = ShownTier(
            recording.tier,
            machine_in_words(block.provenance, recording.recorded, recording.cpu_share, language),
            block,
            same=_same(result, block),
            stands_for=stands_for_in(recording, language),
            contended=contended(recording.cpu_share),
        )
        if result.digest is None or block.digest != result.digest:
            stale.append(shown)
        elif _stands_in(result, block):
            current.append(replace(shown, elsewhere=True))
        else:
            current.append(shown)
    current.sort(key=lambda t: (not t.elsewhere, not _gpu(t.block.provenance), t.tier))
    # Only the first may stand in for this build's output; the others are tabs like any.
    current = current[:1] + [replace(t, elsewhere=False) for t in current[1:]]
    return BlockTiers(tuple(current), tuple(stale))


@dataclass(frozen=True)
class Orphan:
    """A recorded block that this build's pages no longer have (`make record` prunes it).

    Attributes:
        tier: The tier that recorded it.
        page: Its page.
        block_id: Its id.
    """

    tier: str
    page: str
    block_id: str


def orphans(recordings: Iterable[Recording], planned: Iterable[tuple[str, str]]) -> list[Orphan]:
    """The recorded blocks no page of this build has.

    Args:
        recordings: Every tier's recording.
        planned: This build's blocks, as `(page, block id)`.

    Returns:
        Each one, by tier.
    """
    exists = set(planned)
    return [Orphan(r.tier, b.page, b.block_id) for r in recordings for b in r.blocks if b.key not in exists]


@dataclass(frozen=True)
class ClaimRow:
    """One claim of the site on every machine.

    Attributes:
        page: The page of the block that states it.
        block_id: The block.
        statement: The claim, in the page's words.
        outcomes: Per machine (this build first, then each tier): `held`, `missed`, `not applicable`,
            `stale` (recorded for an earlier version of the block) or `not recorded`.
    """

    page: str
    block_id: str
    statement: str
    outcomes: tuple[str, ...]

    @property
    def applied(self) -> int:
        """On how many machines the claim was checked (stale and unrecorded ones left out)."""
        return sum(1 for o in self.outcomes if o in {"held", "missed"})

    @property
    def held_everywhere(self) -> bool:
        """It held on every machine where it applied, and it applied on at least one."""
        return self.applied > 0 and "missed" not in self.outcomes


def claim_table(records: Sequence[BlockResult], recordings: Sequence[Recording]) -> list[ClaimRow]:
    """Every claim this build's blocks stated, with its outcome here and on each tier.

    A claim is matched across machines by its block and its statement; a tier whose recording of the
    block is stale counts as `stale` for each of its claims.

    Args:
        records: This build's results.
        recordings: Every tier's recording, in the table's column order.

    Returns:
        One row per claim, in page order.
    """
    rows = []
    for record in records:
        for claim in record.claims:
            outcomes = [claim.outcome]
            for recording in recordings:
                block = recording.block(record.page, record.block_id)
                if block is None:
                    outcomes.append("not recorded")
                elif block.digest != record.digest:
                    outcomes.append("stale")
                else:
                    same = next((c for c in block.claims if c.statement == claim.statement), None)
                    outcomes.append(same.outcome if same is not None else "not recorded")
            rows.append(ClaimRow(record.page, record.block_id, claim.statement, tuple(outcomes)))
    return rows
