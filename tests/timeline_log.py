"""A pytest plugin that logs when each test's setup, call and teardown ran, and on which worker.

tests/conftest.py loads it for every run; it writes only when `FLOORS_TEST_TIMELINE` names a file, as
`make test` does for its parallel phase (`bench/timeline.py` reads the log).
"""

from __future__ import annotations

import json
import os

import pytest

TIMELINE = "FLOORS_TEST_TIMELINE"
"""Where each test's setup, call and teardown are logged with their start and end (`bench/timeline.py` reads it)."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Log each phase of each test on the worker that ran it, when `FLOORS_TEST_TIMELINE` names a file.

    A JSON line per phase (worker, its process id, test, phase, start, end; seconds since the epoch): `make test`
    writes one for its parallel phase, so where its minutes go, and which worker waited for which, can be read
    after any run.
    """
    path = os.environ.get(TIMELINE)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if not path or (worker == "main" and getattr(report, "node", None) is not None):  # xdist's controller
        return
    line = {
        "worker": worker,
        "pid": os.getpid(),  # what a CPU sampler joins a process's ancestry on (bench/cpu_sampler.py)
        "test": report.nodeid,
        "phase": report.when,
        "start": report.start,
        "end": report.stop,
    }
    with open(path, "a", encoding="utf-8") as log:  # one short append per line: workers never interleave inside one
        log.write(json.dumps(line) + "\n")
