"""A lab page's run, accounted for: ran, cached, skipped, waiting for the background build, or failed.

mkdocs-jupyter executes a lab while it renders the lab's page, through the project's executor
(`labs.kernel`), which records the run; the build takes the records (`take_runs`) once the page has
rendered and hands them here, with its settings, as plain data. What comes back is plain too
(`LabOutcome`): the build report's row, the failure the page shows (and a serve session's background
build reports), whether the page waits for that background build, and whether what mkdocs-jupyter
has just cached of the page must go. The plugin, which alone knows where mkdocs-jupyter keeps that
cache and how it names a page's files, does the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Literal

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.result import BlockResult, Status
from pytorch_floors.floors import Lab
from pytorch_floors.labs.kernel import CellError, LabRun
from pytorch_floors.labs.launch import Launch, keep_run_time, run_seconds

__all__ = [
    "LAB_BLOCK",
    "How",
    "LabOutcome",
    "keep_lab_time",
    "lab_executes",
    "lab_outcome",
    "lab_run_key",
    "own_new_files",
    "runs_later",
]

LAB_BLOCK = "notebook"
"""The block id a lab's run has in the build report (a lab is one block)."""

How = Literal["ran", "cached", "skipped", "deferred", "failed-before", "failed"]
"""How a lab's page came by what it shows.

`ran`, `cached` and `skipped` as the report's statuses say; `deferred`: it did not run, a serve
session's background build runs it; `failed-before`: it did not run, as it failed in that background
build as it is now; `failed`: a cell raised (only under serve, where the build runs on).
"""


@dataclass(frozen=True)
class LabOutcome:
    """What a lab page's run comes to in this build.

    Attributes:
        lab: The lab's source path relative to `docs/` (`labs/3-boundary.py`), also its page.
        status: The build report's status.
        seconds: How long the run took; `None` if it did not run here.
        failure: Why it failed, in one line, if it did.
        how: Which way it came to this (`How`).
    """

    lab: str
    status: Status
    seconds: float | None
    failure: str | None
    how: How

    @property
    def drops_conversion(self) -> bool:
        """What mkdocs-jupyter has just cached of the page must go: it never ran, or it failed.

        A later build would otherwise take the unexecuted page, or the failed run, for a result.
        """
        return self.how in ("deferred", "failed-before", "failed")

    @property
    def pending(self) -> bool:
        """The page waits for the serve session's background build, which runs the lab."""
        return self.how == "deferred"

    @property
    def new_failure(self) -> bool:
        """It failed in this build (not only in the background build before): a background build reports it."""
        return self.how == "failed"

    def result(self) -> BlockResult:
        """The build report's row for the lab."""
        return BlockResult(self.lab, LAB_BLOCK, self.lab, self.status, self.seconds, error=self.failure)

    def proof_failure(self) -> ProofFailure | None:
        """The failure as a serve session shows it on the lab's page (its first line), or `None` if it did not fail."""
        if self.failure is None:
            return None
        return ProofFailure(self.lab, LAB_BLOCK, (f"docs/{self.lab}", 1), self.failure)


def lab_executes(lab: str, *, execute: bool, only: str | None) -> bool:
    """Whether this build executes the lab: execution is on, and the lab matches `only` if that is set.

    Args:
        lab: The lab's source path relative to `docs/`.
        execute: The build's `execute` setting.
        only: The build's `only` pattern (matched against source paths relative to `docs/`), if any.

    Returns:
        Whether mkdocs-jupyter is to execute it (else its run is recorded as skipped).
    """
    return execute and (only is None or fnmatch(lab, only))


def _cell_failures(lab: str, errors: Iterable[CellError]) -> str:
    return "; ".join(f"docs/{lab} › cell {error.cell + 1}: {error.error}" for error in errors)


def lab_outcome(
    lab: str, runs: Sequence[LabRun], *, execute: bool, only: str | None, known_failure: str | None
) -> LabOutcome:
    """Account for a lab page's run from what the executor recorded while the page rendered.

    No run means mkdocs-jupyter took the executed page from its cache. A cell that raised makes the
    lab failed (the kernel records raised cells only under serve, where the build runs on: a deferred
    run has none). A deferred run did not happen: a serve session's background build runs the lab, or
    already failed it as it is now (`known_failure`), which the page shows at once.

    Args:
        lab: The lab's source path relative to `docs/` (`labs/3-boundary.py`).
        runs: The runs recorded while its page rendered (`labs.kernel.LabRuns.take_runs`), oldest first.
        execute: The build's `execute` setting.
        only: The build's `only` pattern, if any.
        known_failure: What the session's background build found failed in the lab, as it is now, if it did.

    Returns:
        The outcome.
    """
    status: Status = "skipped" if not lab_executes(lab, execute=execute, only=only) else "ran" if runs else "cached"
    last = runs[-1] if runs else None
    if last is not None and last.errors:
        return LabOutcome(lab, "failed", last.seconds, _cell_failures(lab, last.errors), "failed")
    if last is not None and last.deferred and known_failure is not None:
        return LabOutcome(lab, "failed", None, f"{known_failure} (in the background build)", "failed-before")
    if last is not None and last.deferred:
        return LabOutcome(lab, "skipped", None, None, "deferred")
    return LabOutcome(lab, status, last.seconds if last is not None else None, None, status)


def lab_run_key(executed_page: Path) -> str:
    """What identifies a lab's run between a serve session and its background build.

    Args:
        executed_page: The file mkdocs-jupyter caches the lab's executed page in (the same in both builds).

    Returns:
        The key (`lab:<path>`), under which the background build reports the lab's failure.
    """
    return f"lab:{executed_page}"


def runs_later(run_key: str, *, defer: bool, known_failures: Collection[str]) -> bool:
    """Whether a lab renders without running: the background build runs it, or failed it as it is now.

    Args:
        run_key: The lab's `lab_run_key` (empty when the build cannot name its cache file).
        defer: The build defers every lab to a serve session's background build.
        known_failures: The run keys the background build reported failed.

    Returns:
        Whether the lab's run is deferred (`labs.kernel.LabRuns.defer_labs`) while its page renders.
    """
    return defer or (bool(run_key) and run_key in known_failures)


def own_new_files(own: Iterable[Path], before: Collection[Path], now: Collection[Path]) -> list[Path]:
    """The files of a page, among those new in a cache folder since the page started rendering.

    A serve session's background build writes its executed labs into the same folder meanwhile:
    only the files the page's own names (executed or not) are its to remove, and only those written
    since it started.

    Args:
        own: The page's files, resolved.
        before: The folder's files when the page started rendering.
        now: The folder's files now.

    Returns:
        The page's own new files, sorted.
    """
    written = {path.resolve() for path in set(now) - set(before)}
    return sorted(written & set(own))


def keep_lab_time(outcome: LabOutcome, entry: Lab, source: Path, launch: Launch) -> float | None:
    """Keep the run time of a lab that ran; find the kept time of one taken from the cache.

    Call it once the outcome's `result` is in the build's records (`launch.records`): a cached lab's
    time is looked up through its record.

    Args:
        outcome: The lab's outcome (`lab_outcome`).
        entry: The lab (a floor's or an annex's).
        source: The lab's source file (its text keys the time).
        launch: The build's launch settings (where the times are kept).

    Returns:
        For a cached lab, how long the run that filled the cache took (`None` if no time was kept for
        it: the page's download box says why); for one that ran, its time; otherwise `None`.
    """
    if outcome.status == "cached":
        try:
            return run_seconds(entry, source.read_text(encoding="utf-8"), launch)
        except FloorsError:
            return None
    if outcome.status == "ran" and outcome.seconds is not None:
        keep_run_time(entry, source.read_text(encoding="utf-8"), outcome.seconds, launch)
        return outcome.seconds
    return None
