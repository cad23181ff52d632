"""A block's time limit: time crowded out of the CPU does not count; sleeping, waiting and running do."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_engine import Pages, make_pages

from conftest import without_spans
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
@pytest.mark.waits
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
@pytest.mark.waits
def test_a_block_crowded_out_of_its_core_finishes_past_its_wall_limit(pages: Pages) -> None:
    # The block and four spinning neighbours share one core: it gets about a fifth of it, so its one CPU
    # second of work takes about 5 s of wall time, past its 3 s limit, which a wall limit failed. The work
    # is well under the limit: a block whose running time alone reaches its limit is rightly stopped
    # (CI: 2 CPU s of work under a 2 s limit was stopped once it had run 2.1 s, crowded time deducted).
    # Each hog in a session of its own, as the block's process is: with the kernel's autogroup
    # scheduling, one session's four hogs would share a single group's share and leave the block half.
    hogs = [
        subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(4)
    ]
    try:
        html = pages.render(
            """\
            ```python exec="1" id="crowded" timeout="3"
            import os, time
            os.sched_setaffinity(0, {0})
            start = time.perf_counter()
            cpu = time.process_time()
            while time.process_time() - cpu < 1.0:
                pass
            print("wall", round(time.perf_counter() - start, 2))
            ```
            """
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert pages.engine.failures == [], [str(f) for f in pages.engine.failures]
    wall = float(without_spans(html).split("wall ", 1)[1].split()[0].rstrip("<"))
    assert wall > 3, f"the block took {wall} s, within its limit: it was not crowded out, and the test shows nothing"
