"""Suite benchmark: the wall time of `make test`, phase by phase, from a fresh clone and warm.

Run with `make bench-suite` (a fresh clone of this checkout's HEAD in a temporary folder: setup,
the browser check and every phase, as CI and a new contributor run it) or `make bench-suite WARM=1`
(this checkout, its environments already set up). It runs the standard library only, so it can
time a clone that has no environment yet.

`make test` prints one line of phase times (`make test: phase seconds: lint=2 types-and-patterns=140 ...`);
this reads it, and counts as setup whatever the run took outside the phases (the environments, the
browser check). It prints each phase, the total against the targets (10 minutes warm, 15 from a
fresh clone, on two cores), the CPU and the load average at the start and the end: on a busy machine
every figure grows. Only committed work is in a fresh clone.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Its neighbour `records.py`, whether this runs as a script or a test loads it by its path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import cpu_model, write_record

ROOT = Path(__file__).resolve().parent.parent
PHASE_LINE = re.compile(r"^make test: phase seconds:((?: [\w-]+=\d+)*)\s*$", re.MULTILINE)
TARGETS = {"warm": 600, "fresh": 900}
"""Seconds `make test` may take on two cores: with its environments set up, and from a fresh clone."""


def phase_seconds(log: str) -> dict[str, int]:
    """The phase times `make test` printed (its last such line), in the order it ran them.

    Args:
        log: What `make test` printed.

    Returns:
        Seconds per phase.

    Raises:
        ValueError: If the log holds no such line (the run stopped before its phases, in setup).
    """
    found = PHASE_LINE.findall(log)
    if not found:
        raise ValueError("make test printed no phase times: it stopped before its phases (see the log)")
    return {name: int(seconds) for name, seconds in (item.split("=") for item in found[-1].split())}


def table(kind: str, total: float, phases: dict[str, int], returncode: int) -> str:
    """The run's figures, one line each."""
    setup = max(0.0, total - sum(phases.values()))
    rows = [("setup and browser check", setup), *phases.items()]
    lines = [f"make test, {kind}: {'passed' if returncode == 0 else f'failed (exit {returncode})'}"]
    lines += [f"  {name:<24} {seconds:7.0f} s" for name, seconds in rows]
    target = TARGETS[kind]
    tested = sum(phases.values())
    lines.append(
        f"  {'phases (set up)':<24} {tested:7.0f} s  (budget ≤ {TARGETS['warm']} s on two cores: "
        f"{tested / TARGETS['warm']:.2f} of it)"
    )
    lines.append(f"  {'total':<24} {total:7.0f} s  (target ≤ {target} s on two cores: {total / target:.2f} of it)")
    return "\n".join(lines)


def run_make_test(project: Path, log_path: Path) -> tuple[int, float, str]:
    """`make test` in `project`, its output teed to the terminal and to `log_path`."""
    start = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            ["make", "test"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            log.write(line)
        returncode = process.wait()
    return returncode, time.perf_counter() - start, log_path.read_text(encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", action="store_true", help="time this checkout, its environments set up")
    parser.add_argument("--record", action="store_true", help="write the figures to bench/records/ (README's table)")
    args = parser.parse_args()
    kind = "warm" if args.warm else "fresh"
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="floors-suite-") as scratch:
        project = ROOT
        if not args.warm:
            project = Path(scratch) / "clone"
            subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(project)], check=True)
        returncode, total, log = run_make_test(project, Path(scratch) / "make-test.log")
    print()
    try:
        phases = phase_seconds(log)
    except ValueError as error:
        print(f"make test, {kind}: {error}")
        return returncode or 1
    print(table(kind, total, phases, returncode))
    print(f"  CPU: {cpu_model()}, {os.cpu_count()} logical cores")
    if args.record:
        # A failed run's times are recorded too, marked so: the README's table says it failed.
        setup = round(max(0.0, total - sum(phases.values())))
        figures = {"phase": phases, "phases": sum(phases.values()), "setup": setup, "passed": returncode == 0}
        print(f"  recorded in {write_record(f'suite-{kind}', {**figures, 'total': round(total)}, load_before)}")
    print(f"  load (1-minute average): {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    return returncode


if __name__ == "__main__":
    sys.exit(main())
