"""A real hog for the claims that stand aside when the share of a core changed between two timed runs (issue 60).

    with one_core() as core:
        before = measure()
        with hogs_on(core):
            after = measure()

The test process is pinned to one core, so the hogs started on it take that core's time from the second
measurement and not from the first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_core() -> Iterator[int]:
    """This process pinned to one of its cores (yielded), then given its cores back."""
    original = os.sched_getaffinity(0)
    core = min(original)
    os.sched_setaffinity(0, {core})
    try:
        yield core
    finally:
        os.sched_setaffinity(0, original)


@contextmanager
def hogs_on(core: int, count: int = 5) -> Iterator[None]:
    """`count` processes spinning on `core`, started (and given a moment to be scheduled) before the block and
    ended after it. Five by default: the share still falls by more than a fifth on a core that already runs a
    dozen tasks."""
    spin = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
