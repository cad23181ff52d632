"""The instructors' labs brief: every lab graded on a quiet machine, beside hogs, and on one scalar core.

Run with `make labs-brief` (or `python bench/labs_brief.py [--condition NAME ...] [--record]`). For each
condition the script takes the machine as that tier (`pytorch_floors.tiers.as_tier`: its environment,
CPU affinity and hogs, inherited by every lab kernel it starts) and, for every lab of the registry:

- runs the lab as written in a fresh kernel (tests/lab_kernel.py): every self-check must pass, or say
  why this run cannot grade it ("not graded on this machine", "not applicable");
- grades every planted wrong answer (tests/lab_answers.py: `PLANTED`, then `PLANTED_ALONE` one at a
  time) in that lab's kernel: each is *caught* (`WrongAnswer`), *not graded* (passed, having printed
  why this run cannot show the mistake) or *missed* (passed silently, or failed some other way).

The conditions are the brief's three: `quiet` (this machine as it is), `hogs` (four spinning hogs per
core beside the labs), `one-core-scalar` (the tier of that name: CPU 0, one thread, scalar kernels).
The brief's promise, which `--check` turns into the exit status: every right answer passes (or says
why it is not graded) in every condition, and no planted answer is missed beside the hogs.

Timings depend on the machine: the table names the CPU (`lscpu`) and the load at the start. With
`--record` it is written to `bench/records/labs-brief.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other scripts of bench/ (records)
sys.path.insert(0, str(ROOT / "tests"))

from lab_answers import PLANTED, PLANTED_ALONE, Wrong  # noqa: E402  (the tests' known-wrong answers)
from lab_kernel import Graded, LabKernel  # noqa: E402  (the tests' lab kernel: one run, variants graded in it)
from records import cpu_model  # noqa: E402  (one name for the CPU in every record)

from pytorch_floors.floors import LABS, Lab  # noqa: E402
from pytorch_floors.labs.cells import read_lab, with_answers  # noqa: E402
from pytorch_floors.tiers import Tier, as_tier, tier_named  # noqa: E402

NOT_GRADED = ("not graded on this machine", "not applicable")
"""What a check prints when this run cannot grade it (checker.py's words, English and the lab's own)."""

HOGS = Tier("hogs", "four spinning hogs per core beside the labs", hogs_per_core=4)
"""The brief's busy machine: a shared 2-core host with eight processes spinning beside the student."""


def conditions() -> dict[str, Tier]:
    """The brief's conditions by name."""
    scalar = tier_named("one-core-scalar")
    quiet = tier_named("as-is")
    assert scalar is not None and quiet is not None, "the registry of tiers lost one the brief names"
    return {"quiet": quiet, "hogs": HOGS, "one-core-scalar": scalar}


@dataclass
class LabOutcome:
    """One lab in one condition."""

    lab: str
    seconds: float
    right_passed: int = 0
    right_not_graded: int = 0
    right_failed: list[str] = field(default_factory=list)
    planted_caught: int = 0
    planted_not_graded: list[str] = field(default_factory=list)
    planted_missed: list[str] = field(default_factory=list)


def _said_not_graded(text: str) -> bool:
    return any(words in text for words in NOT_GRADED)


def _grade_right(outcome: LabOutcome, solved: Graded) -> None:
    for anchor, (status, text) in solved.checks.items():
        if status != "passed":
            outcome.right_failed.append(f"{anchor}: {status}: {text.strip()[:200]}")
        elif _said_not_graded(text):
            outcome.right_not_graded += 1
        else:
            outcome.right_passed += 1
    outcome.right_failed += [f"other error: {error[:200]}" for error in solved.other_errors]


def _grade_planted(outcome: LabOutcome, anchor: str, wrong: Wrong, status: str, text: str) -> None:
    name = f"{anchor}: {wrong.mistake}"
    if status == "WrongAnswer" and wrong.message in text:
        outcome.planted_caught += 1
    elif status == "passed" and _said_not_graded(text):
        outcome.planted_not_graded.append(f"{name} ({text.strip().splitlines()[-1][:160]})")
    else:
        outcome.planted_missed.append(f"{name}: {status}: {text.strip()[:200]}")


def grade_lab(floor: Lab) -> LabOutcome:
    """Run one lab as written and grade every planted answer of it, in this process's condition."""
    notebook = read_lab(ROOT / "docs", floor)
    started = time.perf_counter()
    kernel = LabKernel(notebook)
    try:
        outcome = LabOutcome(floor.key, 0.0)
        _grade_right(outcome, kernel.first)  # the lab as written, run whole
        planted = PLANTED.get(floor.key, {})
        if planted:
            graded = kernel.graded(with_answers(notebook, {a: w.source for a, w in planted.items()}))
            for anchor, wrong in planted.items():
                _grade_planted(outcome, anchor, wrong, *graded.checks[anchor])
        for key, anchor, wrong in PLANTED_ALONE:
            if key == floor.key:
                graded = kernel.graded(with_answers(notebook, {anchor: wrong.source}))
                _grade_planted(outcome, anchor, wrong, *graded.checks[anchor])
    finally:
        kernel.close()
    outcome.seconds = time.perf_counter() - started
    return outcome


def brief(names: list[str], labs: list[str]) -> dict[str, list[LabOutcome]]:
    """Every chosen lab graded in every chosen condition, the conditions one after the other."""
    chosen = [lab for lab in LABS if not labs or lab.key in labs]
    table: dict[str, list[LabOutcome]] = {}
    for name in names:
        tier = conditions()[name]
        print(f"labs brief: {name} ({tier.stands_for})", file=sys.stderr, flush=True)
        with as_tier(tier):
            table[name] = []
            for floor in chosen:
                outcome = grade_lab(floor)
                print(
                    f"  {floor.key}: right {outcome.right_passed} passed, {outcome.right_not_graded} not graded,"
                    f" {len(outcome.right_failed)} failed; planted {outcome.planted_caught} caught,"
                    f" {len(outcome.planted_not_graded)} not graded, {len(outcome.planted_missed)} missed"
                    f" ({outcome.seconds:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                table[name].append(outcome)
    return table


def problems(table: dict[str, list[LabOutcome]]) -> list[str]:
    """What breaks the brief's promise: a right answer failed anywhere, a planted one missed beside the hogs."""
    found = [
        f"{name} › {o.lab} › right answer failed: {f}"
        for name, rows in table.items()
        for o in rows
        for f in o.right_failed
    ]
    found += [f"hogs › {o.lab} › planted answer missed: {m}" for o in table.get("hogs", []) for m in o.planted_missed]
    return found


def summary(table: dict[str, list[LabOutcome]]) -> dict[str, dict[str, int]]:
    """Per condition, the counts the brief's table prints."""
    return {
        name: {
            "right_passed": sum(o.right_passed for o in rows),
            "right_not_graded": sum(o.right_not_graded for o in rows),
            "right_failed": sum(len(o.right_failed) for o in rows),
            "planted_caught": sum(o.planted_caught for o in rows),
            "planted_not_graded": sum(len(o.planted_not_graded) for o in rows),
            "planted_missed": sum(len(o.planted_missed) for o in rows),
        }
        for name, rows in table.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--condition", action="append", choices=list(conditions()), help="default: all three")
    parser.add_argument("--lab", action="append", default=[], help="a lab's key (8-chip); default: every lab")
    parser.add_argument("--record", action="store_true", help="write bench/records/labs-brief.json")
    parser.add_argument("--check", action="store_true", help="exit 1 when the brief's promise is broken")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    table = brief(args.condition or list(conditions()), args.lab)
    print(f"\nlabs brief on {cpu_model()}, {os.cpu_count()} logical CPUs, load {load:.2f} at the start")
    print(
        f"{'condition':16} {'right: passed / not graded / failed':36} {'planted: caught / not graded / missed':38} time"
    )
    for name, rows in table.items():
        right = (
            f"{sum(o.right_passed for o in rows)} / {sum(o.right_not_graded for o in rows)}"
            f" / {sum(len(o.right_failed) for o in rows)}"
        )
        planted = (
            f"{sum(o.planted_caught for o in rows)} / {sum(len(o.planted_not_graded) for o in rows)}"
            f" / {sum(len(o.planted_missed) for o in rows)}"
        )
        print(f"{name:16} {right:36} {planted:38} {sum(o.seconds for o in rows):.0f} s")
        for o in rows:
            for line in o.planted_not_graded:
                print(f"    {o.lab} not graded: {line}")
    broken = problems(table)
    for line in broken:
        print(f"labs brief: {line}")
    if args.record:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
        record = {
            "commit": commit or "unknown",
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "load": round(load, 2),
            "date": time.strftime("%Y-%m-%d"),
            "figures": summary(table),
            "conditions": {name: [asdict(o) for o in rows] for name, rows in table.items()},
        }
        out = ROOT / "bench" / "records" / "labs-brief.json"
        out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"labs brief: wrote {out.relative_to(ROOT)}")
    return 1 if args.check and broken else 0


if __name__ == "__main__":
    sys.exit(main())
