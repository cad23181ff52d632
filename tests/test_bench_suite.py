"""`make bench-suite` reads the phase times `make test` prints: the two agree on one line's form."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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
        "environments",
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


def test_a_run_logs_each_tests_phases_and_the_timeline_says_who_waited(tmp_path: Path) -> None:
    # Two stand-in tests, one slow: the log holds setup, call and teardown of each, and the summary
    # names the slow one first and the worker's idle time.
    (tmp_path / "test_two.py").write_text(
        "import time\n\ndef test_quick():\n    pass\n\ndef test_slow():\n    time.sleep(1.2)\n", encoding="utf-8"
    )
    log = tmp_path / "timeline.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "timeline_log", "test_two.py"],
        cwd=tmp_path,
        env={
            # Not a worker of this run's (make check's xdist): the stand-in run is one process, logged as `main`.
            **{name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")},
            "FLOORS_TEST_TIMELINE": str(log),
            "PYTHONPATH": str(ROOT / "tests"),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    timeline = bench_module("timeline")
    phases = timeline.read_timeline(log)
    assert sorted((p.test.split("::")[-1], p.phase) for p in phases) == [
        (name, phase) for name in ("test_quick", "test_slow") for phase in ("call", "setup", "teardown")
    ]
    lines = timeline.summary(phases, top=1)
    assert lines[0].startswith("timeline: 6 phases over ")
    assert "test_two.py::test_slow" in lines[3], lines
    assert " main: busy " in lines[1]
    pids = {p.pid for p in phases}
    assert len(pids) == 1 and 0 < phases[0].pid != os.getpid(), "each line names the process that ran the test"


def test_the_timeline_counts_a_workers_gaps_as_idle_and_lists_the_tail() -> None:
    timeline = bench_module("timeline")
    phases = [
        timeline.Phase("gw0", "a", "call", 0.0, 10.0),
        timeline.Phase("gw1", "b", "call", 0.0, 2.0),
        timeline.Phase("gw1", "c", "call", 6.0, 7.0),
    ]
    lines = timeline.summary(phases, top=3)
    assert lines[1] == "  gw0: busy 10 s, idle 0 s, its last test ended at 10 s"
    assert lines[2] == "  gw1: busy 3 s, idle 7 s, its last test ended at 7 s"
    assert lines[-2:] == ["  after the first worker ended (7 s), 1 tests of 1 s or more ran:", "    a"]


def test_the_cpu_sampler_sees_a_busy_child_and_the_machines_busy_time(tmp_path: Path) -> None:
    """A child that burns 0.6 s of CPU, then lingers: the samples name it, with at least half a second of CPU."""
    out = tmp_path / "cpu.jsonl"
    sampler = subprocess.Popen([sys.executable, str(ROOT / "bench" / "cpu_sampler.py"), str(out), "--interval", "0.1"])
    burner = "import time\nwhile time.process_time() < 0.6: pass\ntime.sleep(1.0)  # cpu-sampler-test\n"
    try:
        waited = time.monotonic()
        # Its first sample, which counts nothing of what ran before it, is written before the child starts.
        while not (out.is_file() and out.stat().st_size) and time.monotonic() - waited < 30:
            time.sleep(0.05)
        child = subprocess.run([sys.executable, "-c", burner], check=True)
        assert child.returncode == 0
    finally:
        sampler.terminate()
        assert sampler.wait(timeout=10) == 0
    samples = bench_module("timeline").read_cpu_samples(out)
    burners = [pid for pid, command in samples.command.items() if "cpu-sampler-test" in command]
    assert len(burners) == 1, samples.command
    burned = sum(cpu for _, pid, cpu in samples.used if pid == burners[0])
    assert 0.5 <= burned <= 1.2, burned
    assert samples.parent[burners[0]] == os.getpid()
    assert sum(busy for _, busy in samples.busy) >= burned - 0.05, "the machine was busy at least that long"


def test_cpu_is_counted_against_the_test_whose_worker_started_the_process_then() -> None:
    timeline = bench_module("timeline")
    phases = [
        timeline.Phase("gw0", "t.py::a", "call", 100.0, 110.0, pid=10),
        timeline.Phase("gw0", "u.py::b", "call", 110.0, 120.0, pid=10),
        timeline.Phase("gw1", "u.py::c", "call", 100.0, 120.0, pid=11),
    ]
    samples = timeline.CpuSamples(
        busy=[(105.0, 9.0), (115.0, 9.0), (300.0, 50.0)],  # the last sample is after the run
        parent={20: 10, 30: 20, 40: 1, 50: 11},
        command={20: "node playwright", 30: "chromium", 40: "[kdamond.0]", 50: "mkdocs build"},
        used=[(105.0, 30, 2.0), (115.0, 30, 3.0), (105.0, 10, 1.0), (106.0, 40, 1.0), (119.0, 50, 4.0)],
    )
    shares = timeline.cpu_shares(phases, samples)
    assert shares.by_test == {"t.py::a": 3.0, "u.py::b": 3.0, "u.py::c": 4.0}, "a grandchild counts for its worker"
    assert shares.outside == {"[kdamond.0]": 1.0}
    assert shares.machine == 18.0 and shares.span == 20.0
    lines = timeline.cpu_summary(phases, samples, top=2)
    assert lines[0].startswith("cpu: 18 CPU s over 20 s: 0.90 cores busy on average; 10 CPU s were the tests'")
    assert "1 the machine's own, 7 in processes too short to sample" in lines[0]
    assert lines[2] == "       4.0 CPU s  u.py::c" and lines[5] == "       7.0 CPU s  u.py", lines
    assert lines[-1] == "       1.0 CPU s  [kdamond.0]"
    old = [timeline.Phase("gw0", "t.py::a", "call", 100.0, 110.0)]
    assert timeline.cpu_summary(old, samples) == [
        "cpu: the timeline names no worker's process, so no CPU can be counted against a test"
    ]


def test_a_process_name_with_parentheses_and_spaces_is_read_whole() -> None:
    sampler = bench_module("cpu_sampler")
    fields = " ".join(["S", "7", *["0"] * 9, "150", "50", *["0"] * 6, "4242", "0"])
    assert sampler.process_stat(f"99 (Web Content (x) 2) {fields}") == ("Web Content (x) 2", 7, 200, "4242")
    assert sampler.machine_busy_ticks("cpu  10 2 3 100 7 1 1 4 0 0\ncpu0 1 1 1 1 1 1 1\n") == 21


ZEN_3 = "Vendor ID: AuthenticAMD\nModel name: AMD EPYC\nCPU family: 25\nModel: 1\nFlags: fpu sse2 avx avx2 fma\n"
ZEN_4 = "Model name:   AMD EPYC\nCPU family:   25\nModel:   17\nFlags:   avx avx2 avx512f avx512_bf16\n"
XEON = "Model name: Intel(R) Xeon(R) Platinum 8581C\nCPU family: 6\nModel: 207\nFlags: avx2 avx512f amx_tile\n"


def test_a_records_cpu_tells_two_cpus_of_one_model_name_apart() -> None:
    """A virtual machine's lscpu said "AMD EPYC" for a Zen 4 with AVX-512 and a Zen 3 without, and the records and
    README named both alike, though this suite took 740 s on one and 1,480 s on the other."""
    label = bench_module("records").cpu_label
    assert label(ZEN_3) == "AMD EPYC (family 25, model 1; AVX2)"
    assert label(ZEN_4) == "AMD EPYC (family 25, model 17; AVX-512)"
    assert label(XEON) == "Intel(R) Xeon(R) Platinum 8581C (family 6, model 207; AVX-512, AMX)"
    assert label("Model name: Apple M2\n") == "Apple M2", "no family or model said: the name alone"
    assert label("Architecture: x86_64\n") is None


# A stand-in for `mkdocs serve` started by a shell without job control (a background job: SIGINT ignored, as a
# child inherits it): the floors plugin's SIGTERM handling, then the main thread waiting as serve's build loop does.
_SERVE_LIKE = """
import signal, sys, threading
from pytorch_floors.plugin.serve.stopping import interrupt_on_terminate
interrupt_on_terminate()
try:
    # Said inside the try: the parent signals as soon as it reads it (a SIGTERM before the try once ended the
    # child by an uncaught KeyboardInterrupt).
    print("waiting", flush=True)
    with (condition := threading.Condition()):
        condition.wait()
except KeyboardInterrupt:
    sys.exit(0)
"""


def _started(code: str, *ignored: signal.Signals) -> subprocess.Popen[str]:
    def ignore() -> None:
        for number in ignored:
            signal.signal(number, signal.SIG_IGN)

    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ignore,  # noqa: PLW1509  (what a shell does to a background job, before Python starts)
    )
    assert child.stdout is not None and child.stdout.readline() == "waiting\n"
    return child


def test_the_bench_stops_a_serve_that_ignores_ctrl_c_as_a_background_jobs_does() -> None:
    """`make bench &` from a script: the cold serve ignored SIGINT and the bench crashed, its figures lost."""
    child = _started(_SERVE_LIKE, signal.SIGINT)
    bench_module("build").stop_serve(child, grace=20)
    assert child.returncode == 0, "serve stops cleanly (its plugins' on_shutdown runs), not killed"


def test_the_bench_kills_a_serve_that_does_not_stop_and_says_so() -> None:
    child = _started(_SERVE_LIKE.replace("interrupt_on_terminate()", ""), signal.SIGINT, signal.SIGTERM)
    with pytest.raises(SystemExit, match=r"had not ended 1 s after SIGTERM: killed"):
        bench_module("build").stop_serve(child, grace=1)
    assert child.returncode == -signal.SIGKILL


def test_a_failed_bench_build_says_why_however_long_its_log() -> None:
    # make bench's cold build failed strictly on a claim that did not hold, and printed only the log's last
    # 6,000 characters: the labs' conversion lines, not the claim (issue 56).
    warning = "WARNING -  claims: docs/floors/6-kernels.md › threads: a claim did not hold"
    log = "INFO    -  Building documentation...\n" + warning + "\n" + "INFO    -  lab 1/9: cached\n" * 500
    said = bench_module("build").failed_build(log)
    assert warning in said and said.index(warning) < said.index("the log's end:")
    assert said.endswith("INFO    -  lab 1/9: cached\n")
