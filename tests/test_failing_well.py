"""A failure is reported once and names itself; one failed phase or build hides nothing else."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import re
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest

import conftest
from conftest import ROOT, Build, LocalServer, needs_build, trimmed_log


def test_a_failed_shared_build_is_one_line_per_test_and_one_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conftest, "FAILED_BUILDS", tmp_path / "failed-builds")
    log = "\n".join(
        ["INFO - start", "ERROR - docs/labs/6-kernels.py: a cell failed", *[f"INFO - line {n}" for n in range(200)]]
    )
    failed = Build(1, log, tmp_path / "site", 1.0)
    messages = []
    for _ in range(3):
        with pytest.raises(pytest.fail.Exception) as raised:
            needs_build(failed, "site")
        messages.append(str(raised.value))
    assert messages == ["needs the shared build 'site', which failed (its log is at the end of this run)"] * 3
    (written,) = (tmp_path / "failed-builds").glob("*.log")
    text = written.read_text()
    assert text.startswith("ERROR - docs/labs/6-kernels.py: a cell failed\n...")
    assert text.count("\n") < 50, "trimmed to the errors and the last lines"
    assert needs_build(Build(0, "", tmp_path, 1.0), "site").returncode == 0


def test_the_trimmed_log_keeps_every_error_line() -> None:
    log = "\n".join(["ERROR - one", *["INFO"] * 100, "ERROR - two", *["INFO"] * 50])
    assert re.findall(r"ERROR - \w+", trimmed_log(log)) == ["ERROR - one", "ERROR - two"]


def test_make_test_runs_every_phase_and_lists_what_failed(tmp_path: Path) -> None:
    """`make test`'s phases run whatever failed before them; the last line lists every phase that failed."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # The same recipe, with phases that fail or pass on purpose (no venv, no tests run).
    fake = tmp_path / "Makefile"
    phases = re.search(r"^PHASES := (.+)$", makefile, re.M)
    assert phases, "the Makefile names its test phases in PHASES"
    names = phases[1].split()
    recipe = makefile[makefile.index("## test:") :].split("\n\n", 1)[0]
    rules = "\n".join(
        f"{name}:\n\t@echo ran {name}; {'false' if i % 2 == 0 else 'true'}" for i, name in enumerate(names)
    )
    needs = re.search(r"^test: (.+)$", recipe, re.M)
    assert needs, "make test sets up first"
    fake.write_text(f"PHASES := {' '.join(names)}\n{rules}\n{needs[1]}:\n\t@true\n{recipe}\n")
    done = subprocess.run(["make", "-s", "-f", str(fake), "test"], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    for name in names:
        assert f"ran {name}" in done.stdout, f"phase {name} did not run after an earlier one failed"
    failed = [name for i, name in enumerate(names) if i % 2 == 0]
    assert done.stdout.strip().splitlines()[-1] == f"make test: failed phases: {' '.join(failed)}"


def _run_types_and_patterns(tmp_path: Path, typecheck: str, patterns: str) -> subprocess.CompletedProcess[str]:
    wrapper = tmp_path / "wrapper.mk"
    wrapper.write_text(
        f"include {ROOT / 'Makefile'}\ntypecheck:\n\t@{typecheck}\npytest-patterns:\n\t@{patterns}\n", encoding="utf-8"
    )
    command = ["make", "--no-print-directory", "-f", str(wrapper), "-o", "setup", "types-and-patterns"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def test_mypy_runs_beside_the_pattern_tests_and_either_fails_the_phase(tmp_path: Path) -> None:
    # Each side waits for the other's mark before it ends: only two at once can both finish.
    wait_for = "for i in $$(seq 600); do test -f {0} && break; sleep 0.1; done; test -f {0}"
    typing, testing = tmp_path / "typing-began", tmp_path / "patterns-began"
    typecheck = f"touch {typing}; {wait_for.format(testing)}; echo typed"
    patterns = f"touch {testing}; {wait_for.format(typing)}; echo patterns ran"
    done = _run_types_and_patterns(tmp_path, typecheck, patterns)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "typed" in done.stdout and "patterns ran" in done.stdout
    for failing in ("typecheck", "pytest-patterns"):
        shown = {"typecheck": "echo typed", "pytest-patterns": "echo patterns ran"}
        shown[failing] += "; false"
        done = _run_types_and_patterns(tmp_path, shown["typecheck"], shown["pytest-patterns"])
        assert done.returncode != 0 and f"types-and-patterns: {failing} failed" in done.stdout, done.stdout
        assert "typed" in done.stdout and "patterns ran" in done.stdout  # the other side ran to its end


def test_the_tests_web_server_fails_on_a_request_it_broke_on_and_not_on_a_client_that_left() -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/left":
                raise BrokenPipeError("the browser closed the page")
            raise ValueError("the handler is broken")

        def log_message(self, format: str, *args: object) -> None:
            pass

    for path, fails in (("/left", False), ("/broken", True)):
        server = LocalServer(Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with contextlib.suppress(OSError, http.client.HTTPException):
            urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}{path}", timeout=30)
        if fails:
            with pytest.raises(AssertionError, match="the handler is broken"):
                server.check()
        else:
            server.check()
