"""How much of its cores a recording run got: a recording made while other work held them says so.

A tier recorded beside other work shows threads slowing everything down, and a reader who sees
its tab cannot tell that from the machine. So the recorder measures, before and after the run,
what share of each core it may use a busy process actually got: one child per core spins for a
moment and reports its CPU time over the wall time. On a quiet machine each gets nearly all of
its core; beside one other busy process per core, about half.
"""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["CONTENDED_BELOW", "contended", "cpu_share"]

CONTENDED_BELOW = 0.9
"""A share under this means other work held the cores while the tier was recorded."""

_SPIN = """
import time
wall, cpu = time.perf_counter(), time.process_time()
while time.perf_counter() - wall < {seconds}:
    pass
print((time.process_time() - cpu) / (time.perf_counter() - wall))
"""


def _cores() -> int:
    """The cores this process may run on (its affinity where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_share(seconds: float = 0.5) -> float:
    """The mean share of a core that one spinning process per usable core got, over `seconds`.

    Args:
        seconds: How long each child spins (its interpreter's start is not counted).

    Returns:
        A number near 1 on a quiet machine, lower the more other work holds the cores.

    Raises:
        OSError: If a child cannot be started.
        subprocess.CalledProcessError: If a child fails.
    """
    code = _SPIN.format(seconds=seconds)
    children = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(_cores())
    ]
    shares = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, child.args, out)
        shares.append(float(out))
    return sum(shares) / len(shares)


def contended(share: float | None) -> bool:
    """Whether a recording's measured share says other work held its cores (`None`: not measured)."""
    return share is not None and share < CONTENDED_BELOW
