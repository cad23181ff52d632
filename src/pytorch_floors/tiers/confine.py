"""`as_tier`: run as a tier, its settings, affinity and load taken, and given back afterwards."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from pytorch_floors.tiers.copies import Neighbour, checkout
from pytorch_floors.tiers.kinds import HOG, Tier, _cpus, hog_count
from pytorch_floors.tiers.python import _say, tier_python


def _runs_in(folder: Path) -> bool:
    return Path(sys.prefix).resolve() == folder.resolve()


# ---------------------------------------------------------------------------------------------------
# Being a tier
# ---------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def as_tier(tier: Tier, *, python: str | None = None, project: Path | None = None) -> Iterator[None]:
    """Make this process (and every process it starts) run as `tier`, until the block ends.

    The load starts first (hogs and the neighbour are not pinned: they take every core), then the
    environment and the CPU affinity are set, which every process the block starts inherits.

    A tier with an environment of its own runs its Python work there. `python` names the interpreter
    that will (bench/machines.py starts the build with `tier_python`); without it the work is this
    process's own (`make record`), so a process not running in the tier's environment runs itself
    again there, with the same arguments (`os.execv`), the environment made first if it is missing.

    Args:
        tier: The tier.
        python: The interpreter the tier's work runs with, when this process only starts it.
        project: The project (the environments' place and the neighbour's copy; default: this checkout).

    Yields:
        Nothing; the environment, CPU affinity and load are undone afterwards.
    """
    if tier.venv is not None and python is None:
        folder = (project or checkout()) / tier.venv.folder
        if not _runs_in(folder):
            again = tier_python(tier, project)
            _say(f"{tier.name} runs in {tier.venv.folder}: running this command again with {again}")
            os.execv(again, [again, *sys.orig_argv[1:]])
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        for _ in range(hog_count(tier))
    ]
    neighbour = Neighbour(project or checkout()) if tier.neighbour else None
    saved_env = {name: os.environ.get(name) for name in tier.env}
    saved_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        if neighbour is not None:
            neighbour.start()
        os.environ.update(tier.env)
        if tier.cpus is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, _cpus(tier.cpus))
        yield
    finally:
        if neighbour is not None:
            neighbour.stop()
            _say(f"{tier.name}: the neighbour: {neighbour.summary()}")
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
