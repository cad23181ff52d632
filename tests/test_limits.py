"""A block's time limit: time crowded out of the CPU does not count; sleeping, waiting and running do."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_engine import Pages, make_pages

from pytorch_floors.execution.process.limits import MAX_STRETCH, Usage, stretches, timeout_message

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.mark.parametrize(
    ("usage", "stretched"),
    [
        (Usage(wall=120, cpu=6, crowded=110), True),  # a crowded machine: it waited 110 s for a CPU
        (Usage(wall=120, cpu=0.1, crowded=0.0), False),  # it slept, or waited on a lock: that counts
        (Usage(wall=121, cpu=119, crowded=0.5), False),  # it spun, and has had what it was owed
        (Usage(wall=120 * MAX_STRETCH, cpu=6, crowded=1190), False),  # even a crowded block ends
        (Usage(wall=120, cpu=None, crowded=None), False),  # no /proc: wall time, as before
    ],
    ids=["crowded", "waiting", "spinning", "past-the-stretch", "unknown"],
)
def test_a_limit_is_stretched_only_by_the_time_a_block_was_crowded_out(usage: Usage, stretched: bool) -> None:
    assert stretches(120, usage) is stretched


def test_the_timeout_message_says_what_the_block_got() -> None:
    crowded = timeout_message(120, Usage(wall=1200, cpu=12, crowded=1180))
    assert "even stretched 10 times for a crowded machine" in crowded
    assert "waited 1180.0 s for a free CPU, time the limit does not count" in crowded
    assert timeout_message(5, Usage(wall=5, cpu=0.0, crowded=0.0)).startswith(
        "the block did not finish within its time limit of 5 s: it ran 0.0 CPU s in 5 s"
    )
    assert "this platform does not say" in timeout_message(5, Usage(wall=5, cpu=None, crowded=None))


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    yield make_pages(tmp_path)


@linux_only
def test_a_sleeping_block_ends_at_its_limit(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="sleeps" timeout="2"
        import time
        time.sleep(60)
        ```
        """
    )
    (failure,) = pages.engine.failures
    assert "BlockTimeout: the block did not finish within its time limit of 2 s: it ran" in str(failure)


@linux_only
def test_a_block_crowded_out_of_its_core_finishes_past_its_wall_limit(pages: Pages) -> None:
    # The block and four spinning neighbours share one core: it gets about a fifth of it, so its two
    # CPU seconds of work take several times its 2 s limit in wall time, which a wall limit failed.
    hogs = [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        html = pages.render(
            """\
            ```python exec="1" id="crowded" timeout="2"
            import os, time
            os.sched_setaffinity(0, {0})
            start = time.perf_counter()
            cpu = time.process_time()
            while time.process_time() - cpu < 2.0:
                pass
            print("wall over cpu", round((time.perf_counter() - start) / (time.process_time() - cpu), 1))
            ```
            """
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert pages.engine.failures == [], [str(f) for f in pages.engine.failures]
    ratio = float(html.split("wall over cpu ", 1)[1].split()[0])
    assert ratio > 1.5, "the block was not crowded out: the test shows nothing"
