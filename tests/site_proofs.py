"""The site's proofs run once, as its build runs them, into the cache the build then reads.

The pattern tests (`tests/test_floor_proofs.py`) require every proof's claims to hold on a run of its
own, alone on the machine. The site build runs the same proofs again (each page's blocks, in page
order, through the build's `Engine`), and before this module it ran them cold in every fresh clone:
every proof executed twice per `make test`, the second time beside other tests. Here the pattern
phase runs each page's blocks through the same engine the build and `make record` use
(`pytorch_floors.recordings.recorder.planned_blocks`: the build's own scan, the same code, options,
sessions, cache key and claims), in the cache's `refresh` mode: everything runs again, and what it
measured is stored under the key the build looks up. The site build of the later phase then reads
every block from the cache, and the claims it shows are the ones the pattern phase required to hold.

A page runs when a pattern test first asks for one of its proofs, and once per session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from pytorch_floors.execution.cache import OutputCache, machine_fingerprint
from pytorch_floors.execution.engine import Engine, ProofFailure
from pytorch_floors.execution.facts import torch_facts
from pytorch_floors.execution.provenance import collect
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock
from pytorch_floors.recordings.recorder import planned_blocks


@dataclass
class BlockRun:
    """What one planned block did on its run: its result, or the failure the build would have stopped on."""

    block: ExecBlock
    result: BlockResult | None = None
    failure: ProofFailure | None = None


@dataclass
class SiteProofs:
    """The site's planned blocks, run page by page into `cache_dir` as the build would run them.

    Args:
        project_dir: The project root (blocks run there; includes are relative to it).
        cache_dir: The build's cache folder (`.cache`): the outputs go to its `floors-exec`.
        lock: Held while a page runs, so no build of the project writes the same cache meanwhile.
    """

    project_dir: Path
    cache_dir: Path
    lock: Path
    _planned: dict[str, list[ExecBlock]] | None = None
    _engine: Engine | None = None
    _runs: dict[str, list[BlockRun]] = field(default_factory=dict)

    @property
    def planned(self) -> dict[str, list[ExecBlock]]:
        """Every page's executed blocks, as the build's scan finds them."""
        if self._planned is None:
            self._planned = planned_blocks(self.project_dir / "docs", self.project_dir)
        return self._planned

    def pages_showing(self, proof: str) -> list[str]:
        """The pages with a block that includes `proof` (a path relative to the project root)."""
        return [page for page, blocks in self.planned.items() if any(proof in block.proofs for block in blocks)]

    def runs_of(self, proof: str) -> list[BlockRun]:
        """The runs of every block that includes `proof`, each page run first if it has not run yet."""
        return [run for page in self.pages_showing(proof) for run in self._page(page) if proof in run.block.proofs]

    def _page(self, page: str) -> list[BlockRun]:
        if page not in self._runs:
            engine = self._started()
            runs = []
            self.lock.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(self.lock):
                engine.begin_page(page, "")
                for block in self.planned[page]:
                    run = BlockRun(block)
                    try:
                        engine.run_scanned(block)
                    except ProofFailure as failure:
                        run.failure = failure
                    run.result = next(
                        (r for r in reversed(engine.records) if (r.page, r.block_id) == (page, block.block_id)), None
                    )
                    runs.append(run)
                engine.end_page()
            self._runs[page] = runs
        return self._runs[page]

    def _started(self) -> Engine:
        if self._engine is None:
            facts = torch_facts()
            self._engine = Engine(
                self.project_dir,
                OutputCache(self.cache_dir / "floors-exec", "refresh"),
                provenance=collect(facts),
                # The pattern tests judge the claims themselves, and name every one that missed.
                advisory_claims=True,
                machine=machine_fingerprint(facts),
            )
            for page, blocks in self.planned.items():
                self._engine.plan(page, blocks)
        return self._engine

    def close(self) -> None:
        """End every process the runs started."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None
