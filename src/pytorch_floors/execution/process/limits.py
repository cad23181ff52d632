"""A block's time limit that contention does not turn into a failure.

A limit counted in wall time fails a block on a crowded machine (a shared JupyterHub node, an
oversubscribed CI host) that would have finished on a quiet one: at a load of 27 a proof that takes
20 s got a fraction of a core and ran past its 120 s. So a block is charged for its wall time less the
time it stood ready to run and waited for a CPU (the scheduler's run-queue wait, from
`/proc/PID/task/TID/schedstat`, of its longest-waiting thread, its descendants' included). Sleeping,
waiting on a lock or on I/O, and running all count; being crowded out does not. A block is stopped
once its charged time reaches the limit, or at `MAX_STRETCH` times the limit in wall time whatever
it got. Where the platform does not say (no `/proc`, as on macOS), the limit stays wall time, and the
message says so.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from pytorch_floors.execution.process.worker import descendants

__all__ = ["MAX_STRETCH", "Usage", "UsageClock", "stretches", "timeout_message"]

MAX_STRETCH = 10.0
"""The most wall time a block gets, in multiples of its limit, however crowded the machine."""

_PROC = Path("/proc")


@dataclass(frozen=True)
class Usage:
    """What a block got while it was waited for.

    Attributes:
        wall: Seconds waited.
        cpu: CPU seconds its threads (and its descendants') ran meanwhile (`None` where unknown).
        crowded: Seconds its longest-waiting thread stood ready to run with no CPU free (`None` where unknown).
    """

    wall: float
    cpu: float | None
    crowded: float | None

    @property
    def charged(self) -> float:
        """The time the limit counts: wall time less the time the block was crowded out."""
        return self.wall - min(self.crowded or 0.0, self.wall)


def stretches(limit: float, usage: Usage) -> bool:
    """Whether a block past its wall limit was crowded out long enough to be given more wall time.

    Args:
        limit: The block's limit in seconds.
        usage: What it got so far.

    Returns:
        True while its charged time is under the limit and its wall time under `MAX_STRETCH` times it.
    """
    if usage.crowded is None:
        return False
    return usage.charged < limit and usage.wall < MAX_STRETCH * limit


def timeout_message(limit: float, usage: Usage) -> str:
    """Why a block was stopped, with what it got: a reader tells a stuck block from a crowded machine.

    Args:
        limit: The block's limit in seconds.
        usage: What it got.

    Returns:
        One sentence.
    """
    said = f"the block did not finish within its time limit of {limit:g} s"
    if usage.crowded is None or usage.cpu is None:
        return f"{said} (wall time: this platform does not say how long the block waited for a CPU)"
    got = (
        f"it ran {usage.cpu:.1f} CPU s in {usage.wall:.0f} s of wall time and waited {usage.crowded:.1f} s "
        "for a free CPU, time the limit does not count"
    )
    if usage.wall >= MAX_STRETCH * limit:
        return f"{said}, even stretched {MAX_STRETCH:g} times for a crowded machine: {got}"
    return f"{said}: {got}"


def _schedstat(task: Path) -> tuple[int, int] | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        # Nanoseconds on a CPU, nanoseconds ready to run and waiting for one, time slices.
        running, waiting = task.joinpath("schedstat").read_text().split()[:2]
        return int(running), int(waiting)
    return None


class UsageClock:
    """Reads the scheduler's accounting of a process, its threads and its descendants, from `/proc`."""

    def __init__(self, pid: int) -> None:
        """Start counting from now.

        Args:
            pid: The block's process (the worker; its descendants are counted too).
        """
        self._pid = pid
        self._start = self._tasks()

    def _tasks(self) -> dict[str, tuple[int, int]] | None:
        if not _PROC.is_dir():
            return None
        found: dict[str, tuple[int, int]] = {}
        for pid in [self._pid, *descendants(self._pid)]:
            with contextlib.suppress(OSError):
                for task in (_PROC / str(pid) / "task").iterdir():
                    if (stat := _schedstat(task)) is not None:
                        found[f"{pid}/{task.name}"] = stat
        return found if found else None

    def usage(self, wall: float) -> Usage:
        """What the process got since the clock started.

        Args:
            wall: Seconds since then.

        Returns:
            The usage (`None` fields where `/proc` says nothing, as off Linux).
        """
        now = self._tasks()
        if now is None or self._start is None:
            return Usage(wall=wall, cpu=None, crowded=None)
        ran, waits = 0, [0]
        for task, (running, waiting) in now.items():
            before = self._start.get(task, (0, 0))
            ran += running - before[0]
            waits.append(waiting - before[1])
        return Usage(wall=wall, cpu=ran / 1e9, crowded=max(waits) / 1e9)
