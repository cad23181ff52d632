"""Machine tiers: the kinds of machine the site promises to hold on, as settings this machine can take.

`make machines` builds the site as each of them; `make record TIER=<name>` records the proofs as one
of them when the name is a tier's (any other name records this machine as it is: a GPU server, a
laptop, a CI runner of the recording workflow).

- `as-is`: a laptop or workstation as it is; this machine, nothing changed.
- `one-core-scalar`: a single-vCPU CI runner, an old or throttled CPU; one CPU, `OMP_NUM_THREADS=1`,
  `MKL_NUM_THREADS=1`, `ATEN_CPU_CAPABILITY=default`.
- `loaded`: a shared JupyterHub, Colab's free tier, a busy CI host; two CPU hogs run beside the build.
- `spawn`: macOS and Windows Python, where the fork server is not the default; `FLOORS_START_METHOD=spawn`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["TIERS", "Tier", "as_tier", "tier_named"]


@dataclass(frozen=True)
class Tier:
    """One kind of machine: extra environment, a CPU affinity, and CPU hogs beside the run.

    Attributes:
        name: The tier's name.
        stands_for: The machines it stands for, in words.
        env: Environment variables the run gets.
        cpus: The CPUs the run is pinned to (`taskset -c` syntax, such as `0`), or `None`.
        hogs: Processes that keep a core busy each while the run lasts.
    """

    name: str
    stands_for: str
    env: dict[str, str] = field(default_factory=dict)
    cpus: str | None = None
    hogs: int = 0


TIERS = (
    Tier("as-is", "a laptop or workstation as it is"),
    Tier(
        "one-core-scalar",
        "a single-vCPU runner with scalar kernels",
        {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"},
        cpus="0",
    ),
    Tier("loaded", "a shared JupyterHub or a busy CI host", hogs=2),
    Tier("spawn", "macOS or Windows Python (no fork server)", {"FLOORS_START_METHOD": "spawn"}),
)
"""Every tier, in the order `make machines` builds them."""


def tier_named(name: str) -> Tier | None:
    """The tier of that name, or `None` (the name of a real machine, recorded as it is).

    Args:
        name: A tier's name.

    Returns:
        The tier, or `None`.
    """
    return next((tier for tier in TIERS if tier.name == name), None)


def _cpus(written: str) -> set[int]:
    chosen: set[int] = set()
    for part in written.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return chosen


@contextlib.contextmanager
def as_tier(tier: Tier) -> Iterator[None]:
    """Make this process (and every process it starts) run as `tier`, until the block ends.

    Args:
        tier: The tier.

    Yields:
        Nothing; the environment, CPU affinity and hogs are undone afterwards.
    """
    saved_env = {name: os.environ.get(name) for name in tier.env}
    saved_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    os.environ.update(tier.env)
    if tier.cpus is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, _cpus(tier.cpus))
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(tier.hogs)
    ]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        if saved_cpus is not None and tier.cpus is not None:
            os.sched_setaffinity(0, saved_cpus)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
