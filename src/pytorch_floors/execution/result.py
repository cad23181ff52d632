"""What happened to one executed block: the record passed from engine to page and report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytorch_floors.claims import Claim

if TYPE_CHECKING:
    from pytorch_floors.execution.provenance import Provenance

__all__ = ["BlockResult", "Status"]

Status = Literal["ran", "cached", "skipped", "failed"]


@dataclass(frozen=True)
class BlockResult:
    """The outcome of one block (or one lab notebook) in this build: a row of the build report.

    Attributes:
        page: Source path of the page, relative to `docs/`.
        block_id: The block's id (`notebook` for a lab).
        proof: The proof file it includes, if any.
        status: `ran`, `cached`, `skipped` (execution disabled) or `failed`.
        seconds: The block's execution time (for a cached block, when it last ran); `None` if it did not run.
        output: What the block printed, as shown on the page (empty when it failed or was skipped).
        error: The one-line failure, when `status` is `failed`.
        provenance: What the output was measured on (for a cached block, the run that produced it).
        claims: The patterns the block stated and whether they held, on the run that produced the output.
        digest: The digest of the block's inputs (`pytorch_floors.execution.digest`), when the engine read them.
    """

    page: str
    block_id: str
    proof: str | None
    status: Status
    seconds: float | None
    output: str = ""
    error: str | None = None
    provenance: Provenance | None = None
    claims: tuple[Claim, ...] = ()
    digest: str | None = None

    @property
    def claims_missed(self) -> tuple[Claim, ...]:
        """The claims that did not hold."""
        return tuple(c for c in self.claims if not c.held)
