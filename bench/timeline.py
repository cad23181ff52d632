"""Where a parallel test run's time went: each worker's busy and idle time, the costliest tests, and the tail.

    python bench/timeline.py test-output/timeline-rest.jsonl [--top 15] [--cpu test-output/cpu-rest.jsonl]

`make test` logs its parallel phase (`pytest-rest`) to `test-output/timeline-rest.jsonl`
(`FLOORS_TEST_TIMELINE`, tests/conftest.py: a JSON line per setup, call and teardown, on the worker
that ran it) and prints this summary after it. A worker's idle time is the span in which it ran no
test (it waited on nothing pytest can see, or had nothing left); a test's setup that waits on a build
another worker holds the lock for is busy time here, and shows as a long setup. The tail is what
ran after the first worker finished: the run's wall time is its slowest worker's.

With `--cpu` (the samples `bench/cpu_sampler.py` took beside the run) it also says how many cores were busy,
and which tests used the CPU: each process is counted against the worker it descends from (a browser, a
build, a kernel a test started), at the time it ran, so against the test that worker was running then;
what no worker started (the machine's own daemons) is listed apart. Wall time says which test waited;
CPU time says which one to make cheaper when every core is busy. Standard library only.
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Phase:
    """One setup, call or teardown of one test, on one worker."""

    worker: str
    test: str
    phase: str
    start: float
    end: float
    pid: int = 0
    """The worker's process (0 in a log from before it was written): what a CPU sample's process descends from."""

    @property
    def seconds(self) -> float:
        return self.end - self.start


def read_timeline(path: Path) -> list[Phase]:
    """The phases logged in `path`; a line that is not one is skipped (a run killed mid-write leaves half a line)."""
    phases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
            phases.append(
                Phase(
                    str(item["worker"]),
                    str(item["test"]),
                    str(item["phase"]),
                    float(item["start"]),
                    float(item["end"]),
                    int(item.get("pid", 0)),
                )
            )
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


@dataclass
class CpuSamples:
    """What `bench/cpu_sampler.py` wrote: the machine's busy seconds per sample, each process's parent,
    command and CPU seconds per sample."""

    busy: list[tuple[float, float]] = field(default_factory=list)
    parent: dict[int, int] = field(default_factory=dict)
    command: dict[int, str] = field(default_factory=dict)
    used: list[tuple[float, int, float]] = field(default_factory=list)
    """(time, pid, CPU seconds since the sample before)."""


def read_cpu_samples(path: Path) -> CpuSamples:
    """The samples in `path`; a line that is not one is skipped (the sampler stopped mid-write)."""
    samples = CpuSamples()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
            if "busy" in item:
                samples.busy.append((float(item["t"]), float(item["busy"])))
            elif "command" in item:
                # A pid used again: the later process's parent and command (its samples come after it).
                samples.parent[int(item["pid"])] = int(item["ppid"])
                samples.command[int(item["pid"])] = str(item["command"])
            else:
                samples.used.append((float(item["t"]), int(item["pid"]), float(item["cpu"])))
        except (ValueError, KeyError, TypeError):
            continue
    return samples


@dataclass(frozen=True)
class CpuShares:
    """A run's CPU seconds: the machine's, each test's (with what its worker started), and what no worker started."""

    span: float
    machine: float
    by_test: dict[str, float]
    outside: dict[str, float]


def cpu_shares(phases: list[Phase], samples: CpuSamples) -> CpuShares:
    """Count each process's CPU against the test its worker ran at that time (see the module's docstring)."""
    begin, finish = min(p.start for p in phases), max(p.end for p in phases)
    workers = {p.pid: p.worker for p in phases if p.pid}
    spans: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for phase in phases:
        spans[phase.worker].append((phase.start, phase.end, phase.test))
    for own in spans.values():
        own.sort()

    def worker_of(pid: int) -> str | None:
        for _ in range(64):  # a chain of parents, never a loop
            if pid in workers:
                return workers[pid]
            if pid not in samples.parent:
                return None
            pid = samples.parent[pid]
        return None

    def test_at(worker: str, when: float) -> str:
        own = spans[worker]
        index = bisect.bisect_right(own, (when, float("inf"), "")) - 1
        # A sample is taken after the CPU was used: it counts for a test that ended within the interval before it.
        if index >= 0 and own[index][1] >= when - 1.0:
            return own[index][2]
        return f"{worker}, between tests"

    by_test: dict[str, float] = defaultdict(float)
    outside: dict[str, float] = defaultdict(float)
    for when, pid, seconds in samples.used:
        if not begin <= when <= finish + 1.0:
            continue
        worker = worker_of(pid)
        if worker is None:
            outside[samples.command.get(pid, "?")[:100]] += seconds
        else:
            by_test[test_at(worker, when)] += seconds
    machine = sum(seconds for when, seconds in samples.busy if begin <= when <= finish + 1.0)
    return CpuShares(finish - begin, machine, dict(by_test), dict(outside))


def _most(seconds: dict[str, float], top: int) -> list[tuple[str, float]]:
    return sorted(seconds.items(), key=lambda item: -item[1])[:top]


def cpu_summary(phases: list[Phase], samples: CpuSamples, top: int = 15) -> list[str]:
    """The CPU lines to print: cores busy, the tests' share, the costliest tests and files by CPU, the rest."""
    if not phases or not samples.busy:
        return ["cpu: no samples (bench/cpu_sampler.py takes them on Linux)"]
    if not any(p.pid for p in phases):
        return ["cpu: the timeline names no worker's process, so no CPU can be counted against a test"]
    shares = cpu_shares(phases, samples)
    tests, machines_own = sum(shares.by_test.values()), sum(shares.outside.values())
    unseen = max(0.0, shares.machine - tests - machines_own)
    lines = [
        f"cpu: {shares.machine:.0f} CPU s over {shares.span:.0f} s: {shares.machine / shares.span:.2f} cores busy "
        f"on average; {tests:.0f} CPU s were the tests' (with what they started), {machines_own:.0f} the "
        f"machine's own, {unseen:.0f} in processes too short to sample",
        f"  the {top} tests that used the most CPU (setup + call + teardown, and their processes):",
    ]
    lines += [f"    {seconds:6.1f} CPU s  {test}" for test, seconds in _most(shares.by_test, top)]
    by_file: dict[str, float] = defaultdict(float)
    for test, seconds in shares.by_test.items():
        by_file[test.split("::", 1)[0]] += seconds
    lines.append(f"  the {top} test files that used the most CPU:")
    lines += [f"    {seconds:6.1f} CPU s  {name}" for name, seconds in _most(by_file, top)]
    lines.append("  outside the tests (processes no worker started), the most:")
    lines += [f"    {seconds:6.1f} CPU s  {name}" for name, seconds in _most(shares.outside, 5)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", type=Path, help="the JSON lines a run logged (FLOORS_TEST_TIMELINE)")
    parser.add_argument("--top", type=int, default=15, help="how many tests to list (default 15)")
    parser.add_argument("--cpu", type=Path, help="the samples bench/cpu_sampler.py took beside the run")
    args = parser.parse_args(argv)
    if not args.timeline.is_file():
        print(f"timeline: {args.timeline} does not exist (was FLOORS_TEST_TIMELINE set?)", file=sys.stderr)
        return 1
    phases = read_timeline(args.timeline)
    print("\n".join(summary(phases, args.top)))
    if args.cpu is not None:
        samples = read_cpu_samples(args.cpu) if args.cpu.is_file() else CpuSamples()
        print("\n".join(cpu_summary(phases, samples, args.top)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
