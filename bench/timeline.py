"""Where a parallel test run's time went: each worker's busy and idle time, the costliest tests, and the tail.

    python bench/timeline.py test-output/timeline-rest.jsonl [--top 15]

`make test` logs its parallel phase (`pytest-rest`) to `test-output/timeline-rest.jsonl`
(`FLOORS_TEST_TIMELINE`, tests/conftest.py: a JSON line per setup, call and teardown, on the worker
that ran it) and prints this summary after it. A worker's idle time is the span in which it ran no
test (it waited on nothing pytest can see, or had nothing left); a test's setup that waits on a build
another worker holds the lock for is busy time here, and shows as a long setup. The tail is what
ran after the first worker finished: the run's wall time is its slowest worker's. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Phase:
    """One setup, call or teardown of one test, on one worker."""

    worker: str
    test: str
    phase: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


def read_timeline(path: Path) -> list[Phase]:
    """The phases logged in `path`; a line that is not one is skipped (a run killed mid-write leaves half a line)."""
    phases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
            phases.append(Phase(str(item["worker"]), str(item["test"]), str(item["phase"]), item["start"], item["end"]))
        except (ValueError, KeyError, TypeError):
            continue
    return phases


def summary(phases: list[Phase], top: int = 15) -> list[str]:
    """The lines to print: the span, each worker, the costliest tests, and what ran after the first worker ended."""
    if not phases:
        return ["timeline: no test was logged"]
    begin, finish = min(p.start for p in phases), max(p.end for p in phases)
    lines = [f"timeline: {len(phases)} phases over {finish - begin:.0f} s"]
    by_worker: dict[str, list[Phase]] = defaultdict(list)
    for phase in phases:
        by_worker[phase.worker].append(phase)
    ends = {}
    for worker, own in sorted(by_worker.items()):
        busy = sum(p.seconds for p in own)
        ends[worker] = max(p.end for p in own)
        lines.append(
            f"  {worker}: busy {busy:.0f} s, idle {max(0.0, finish - begin - busy):.0f} s, its last test ended at "
            f"{ends[worker] - begin:.0f} s"
        )
    per_test: dict[str, float] = defaultdict(float)
    for phase in phases:
        per_test[phase.test] += phase.seconds
    lines.append(f"  the {top} costliest tests (setup + call + teardown):")
    lines += [
        f"    {seconds:6.1f} s  {test}" for test, seconds in sorted(per_test.items(), key=lambda kv: -kv[1])[:top]
    ]
    first_done = min(ends.values())
    tail = sorted({p.test for p in phases if p.end > first_done and p.seconds > 1})
    lines.append(f"  after the first worker ended ({first_done - begin:.0f} s), {len(tail)} tests of 1 s or more ran:")
    lines += [f"    {test}" for test in tail[:top]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", type=Path, help="the JSON lines a run logged (FLOORS_TEST_TIMELINE)")
    parser.add_argument("--top", type=int, default=15, help="how many tests to list (default 15)")
    args = parser.parse_args(argv)
    if not args.timeline.is_file():
        print(f"timeline: {args.timeline} does not exist (was FLOORS_TEST_TIMELINE set?)", file=sys.stderr)
        return 1
    print("\n".join(summary(read_timeline(args.timeline), args.top)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
