"""`make bench-suite` reads the phase times `make test` prints: the two agree on one line's form."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT, bench_module


def _suite() -> ModuleType:
    return bench_module("suite")


def test_the_phase_times_make_test_prints_are_what_the_benchmark_reads(tmp_path: Path) -> None:
    # make test's own loop over two stand-in phases, one failing: the loop goes on after it, and the line
    # it prints names both, in order (its environments are left as they are: -o for each target that makes one).
    wrapper = tmp_path / "wrapper.mk"
    wrapper.write_text(f"include {ROOT / 'Makefile'}\nfirst: ; @sleep 1\nsecond: ; @false\n", encoding="utf-8")
    command = [
        "make",
        "--no-print-directory",
        "-f",
        str(wrapper),
        "-o",
        "setup",
        "-o",
        "setup-properdocs",
        "-o",
        "browser",
        "test",
    ]
    done = subprocess.run(
        [*command, "PHASES=first second"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "make test: failed phases: second" in done.stdout, done.stdout + done.stderr
    phases = _suite().phase_seconds(done.stdout)
    assert list(phases) == ["first", "second"] and phases["first"] >= 1, phases


def test_a_run_that_stopped_in_setup_says_so() -> None:
    with pytest.raises(ValueError, match="stopped before its phases"):
        _suite().phase_seconds("error: python3.11 not found\n")


def test_the_table_counts_what_ran_outside_the_phases_as_setup() -> None:
    shown = _suite().table("fresh", 1000.0, {"lint": 2, "pytest-rest": 598}, 0)
    assert "setup and browser check      400 s" in shown and "(target ≤ 900 s" in shown, shown
    assert "make test, fresh: passed" in shown
