"""Sample every process's CPU time while a test run goes on, for `bench/timeline.py --cpu` to share out by test.

    python bench/cpu_sampler.py OUT [--interval 1.0]      # runs until it is sent SIGTERM or SIGINT

`make test`'s parallel phase runs it beside pytest. Wall time alone could not say where that phase's minutes
go: its three workers share two cores, so a test that waits looks as costly as one that computes. Each
sample reads `/proc`: the machine's busy time (`/proc/stat`) and each process's user and system time, its
parent and its command line, so that a browser, a build or a kernel started by a test is counted against the
worker that started it. JSON lines: `{"t", "busy"}` once per sample (CPU seconds the whole machine used since
the last), `{"t", "pid", "ppid", "command"}` when a process is first seen, `{"t", "pid", "cpu"}` for each
process that used CPU since the last sample. A process that lived less than one interval is missed: the
machine's busy time is the total, the processes' the share that could be told. Linux only (elsewhere it
says so and exits 0); standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
"""Clock ticks per second: the unit of /proc's CPU times."""


def machine_busy_ticks(stat: str) -> int:
    """The ticks all CPUs spent busy, from `/proc/stat`'s first line (everything but idle and I/O wait)."""
    fields = [int(value) for value in stat.split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, *rest = fields
    steal = rest[0] if rest else 0
    return user + nice + system + irq + softirq + steal


def process_stat(stat: str) -> tuple[str, int, int, str]:
    """A process's name, parent, CPU ticks (user + system) and start time, from its `/proc/PID/stat` line.

    The name sits in parentheses and may hold spaces or parentheses itself: the fields after it are read
    from the last closing parenthesis on.
    """
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return name, int(fields[1]), int(fields[11]) + int(fields[12]), fields[19]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # the process ended between the listing and the read
        return None


def _command(pid: str, name: str) -> str:
    try:
        raw = (PROC / pid / "cmdline").read_bytes()
    except OSError:
        raw = b""
    command = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return command[:300] if command else f"[{name}]"  # a kernel thread has no command line: its name, bracketed


def samples(interval: float) -> Iterator[list[dict[str, object]]]:
    """Each sample's lines, every `interval` seconds, from the first (which sees every process for the first time)."""
    seen: dict[tuple[str, str], int] = {}
    last_busy: int | None = None
    first = True  # the processes already running: their CPU time so far was spent before the run
    while True:
        now = time.time()
        lines: list[dict[str, object]] = []
        busy_stat = _read(PROC / "stat")
        if busy_stat is not None:
            busy = machine_busy_ticks(busy_stat)
            if last_busy is not None:
                lines.append({"t": now, "busy": (busy - last_busy) / TICK})
            last_busy = busy
        for entry in os.listdir(PROC):
            if not entry.isdigit():
                continue
            stat = _read(PROC / entry / "stat")
            if stat is None:
                continue
            name, parent, ticks, started = process_stat(stat)
            key = (entry, started)  # a pid used again is another process
            if key not in seen:
                lines.append({"t": now, "pid": int(entry), "ppid": parent, "command": _command(entry, name)})
            if not first and ticks > seen.get(key, 0):
                lines.append({"t": now, "pid": int(entry), "cpu": (ticks - seen.get(key, 0)) / TICK})
            seen[key] = ticks
        first = False
        yield lines
        time.sleep(max(0.0, interval - (time.time() - now)))


def record(out: IO[str], interval: float) -> None:
    """Append samples to `out` until SIGTERM or SIGINT; each sample's lines are flushed whole."""
    stop = False

    def stopping(_signal: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    for lines in samples(interval):
        out.write("".join(json.dumps(line) + "\n" for line in lines))
        out.flush()
        if stop:
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the JSON lines to write (replaced)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between samples (default 1)")
    args = parser.parse_args(argv)
    if not (PROC / "stat").is_file():
        print("cpu_sampler: no /proc here (Linux only): no CPU samples are taken", file=sys.stderr)
        return 0
    with args.out.open("w", encoding="utf-8") as out:
        record(out, args.interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
