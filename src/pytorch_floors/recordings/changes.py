"""What changed between two recordings of one tier: the torch, the outputs, every claim's verdict.

`make torch VERSION=X` (tools/move_torch.py) records the build's own tiers again on the new torch and
prints this for each, from the recordings before and after (`python -m pytorch_floors compare-recordings`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pytorch_floors.recordings.schema import Recording

__all__ = ["ClaimChange", "RecordingChanges", "recording_changes"]

_OUTCOMES = ("held", "missed", "not applicable")


@dataclass(frozen=True)
class ClaimChange:
    """A claim whose verdict is not what it was.

    Attributes:
        page: The page of its block.
        block_id: The block.
        statement: The claim.
        before: Its outcome in the earlier recording (`held`, `missed`, `not applicable`, or `absent`).
        after: Its outcome in the later one (the same words).
    """

    page: str
    block_id: str
    statement: str
    before: str
    after: str


@dataclass(frozen=True)
class RecordingChanges:
    """One tier's recording before and after.

    Attributes:
        tier: The tier.
        torch_before: torch's version in the earlier recording.
        torch_after: torch's version in the later one.
        blocks: Blocks the later recording holds.
        outputs_changed: Blocks, in both, whose output is not the same text.
        outcomes_before: How many claims held, missed and did not apply before (`_OUTCOMES`' order).
        outcomes_after: The same, after.
        claims: Each claim whose verdict changed, in the later recording's order.
        added: Blocks only the later recording holds.
        removed: Blocks only the earlier one held.
    """

    tier: str
    torch_before: str
    torch_after: str
    blocks: int
    outputs_changed: tuple[tuple[str, str], ...]
    outcomes_before: tuple[int, int, int]
    outcomes_after: tuple[int, int, int]
    claims: tuple[ClaimChange, ...]
    added: tuple[tuple[str, str], ...]
    removed: tuple[tuple[str, str], ...]

    def lines(self) -> list[str]:
        """The changes in words, a summary line first, then one line per claim whose verdict changed."""
        counts = ", ".join(
            f"{name} {before} -> {after}"
            for name, before, after in zip(_OUTCOMES, self.outcomes_before, self.outcomes_after, strict=True)
        )
        lines = [
            f"{self.tier}: torch {self.torch_before} -> {self.torch_after}: {self.blocks} blocks, "
            f"{len(self.outputs_changed)} outputs changed; claims {counts}"
        ]
        lines += [f"  {page} › {block}: new block" for page, block in self.added]
        lines += [f"  {page} › {block}: no longer recorded" for page, block in self.removed]
        lines += [f"  {c.page} › {c.block_id}: {c.before} -> {c.after}: {c.statement}" for c in self.claims]
        return lines


def _outcomes(recording: Recording) -> tuple[int, int, int]:
    counted = Counter(c.outcome for b in recording.blocks for c in b.claims)
    held, missed, inapplicable = (counted[name] for name in _OUTCOMES)
    return held, missed, inapplicable


def recording_changes(before: Recording, after: Recording) -> RecordingChanges:
    """Compare one tier's earlier recording with its later one.

    Args:
        before: The earlier recording.
        after: The later recording of the same tier.

    Returns:
        What changed: torch, outputs, counts of verdicts, each claim whose verdict changed (a claim is
        known by its block and statement).
    """
    earlier = {b.key: b for b in before.blocks}
    later = {b.key: b for b in after.blocks}
    claims = []
    for block in after.blocks:
        old = earlier.get(block.key)
        if old is None:
            continue
        was = {c.statement: c.outcome for c in old.claims}
        claims += [
            ClaimChange(block.page, block.block_id, c.statement, was.get(c.statement, "absent"), c.outcome)
            for c in block.claims
            if was.get(c.statement, "absent") != c.outcome
        ]
    return RecordingChanges(
        tier=after.tier,
        torch_before=before.machine.torch_version,
        torch_after=after.machine.torch_version,
        blocks=len(after.blocks),
        outputs_changed=tuple(k for k, b in later.items() if k in earlier and earlier[k].output != b.output),
        outcomes_before=_outcomes(before),
        outcomes_after=_outcomes(after),
        claims=tuple(claims),
        added=tuple(k for k in later if k not in earlier),
        removed=tuple(k for k in earlier if k not in later),
    )
