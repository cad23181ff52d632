"""A failure is reported once and names itself; one failed phase or build hides nothing else."""

from __future__ import annotations

import contextlib
import functools
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


def _run_patterns_and_beside(tmp_path: Path, **recipes: str) -> subprocess.CompletedProcess[str]:
    """`make patterns-and-beside` with its targets replaced by the shell lines given (by target name)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    beside = re.search(r"^BESIDE_PATTERNS := (.+)$", makefile, re.M)
    assert beside, "the Makefile names what runs beside the pattern tests"
    # A target left out would run for real, each time (the network lane: a minute of this test, unseen).
    assert set(recipes) == {"pytest-patterns", *beside[1].split()}, "replace every target of the phase"
    wrapper = tmp_path / "wrapper.mk"
    rules = "".join(f"{target}:\n\t@{recipe}\n" for target, recipe in recipes.items())
    wrapper.write_text(f"include {ROOT / 'Makefile'}\n{rules}", encoding="utf-8")
    command = ["make", "--no-print-directory", "-f", str(wrapper), "-o", "setup", "patterns-and-beside"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def test_mypy_and_then_the_fast_lane_run_beside_the_pattern_tests_and_any_fails_the_phase(tmp_path: Path) -> None:
    # Each side waits for the other's mark before it ends: only two at once can both finish. The fast lane
    # runs after mypy, on the same core (it finds mypy's last mark).
    wait_for = "for i in $$(seq 600); do test -f {0} && break; sleep 0.1; done; test -f {0}"
    typing, typed, testing = tmp_path / "typing-began", tmp_path / "typing-ended", tmp_path / "patterns-began"
    recipes = {
        "typecheck": f"touch {typing}; {wait_for.format(testing)}; echo typed; touch {typed}",
        "pytest-fast": f"test -f {typed} && echo fast lane ran",
        "pytest-network": f"test -f {typed} && echo network lane ran",
        "pytest-patterns": f"touch {testing}; {wait_for.format(typing)}; echo patterns ran",
    }
    done = _run_patterns_and_beside(tmp_path, **recipes)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = {
        "typecheck": "typed",
        "pytest-fast": "fast lane ran",
        "pytest-network": "network lane ran",
        "pytest-patterns": "patterns ran",
    }
    assert all(line in done.stdout for line in shown.values()), done.stdout
    assert "failed" not in done.stdout
    plain = {target: f"echo {line}" for target, line in shown.items()}
    for failing, recipe in plain.items():
        done = _run_patterns_and_beside(tmp_path, **{**plain, failing: f"{recipe}; false"})
        assert done.returncode != 0, done.stdout
        assert [line for line in done.stdout.splitlines() if "failed" in line] == [
            f"patterns-and-beside: {failing} failed"
        ], done.stdout
        assert all(line in done.stdout for line in shown.values()), done.stdout  # every side ran to its end


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


def _marker_expressions() -> dict[str, str]:
    """The `-m` expression each pytest target of `make test`'s phases runs, with the Makefile's variables filled."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    variables = dict(re.findall(r"^([A-Z_]+) := (.*)$", makefile, re.M))
    found = {}
    for target in ("pytest-patterns", "pytest-fast", "pytest-network", "pytest-rest"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M)  # every line of its recipe
        assert recipe, f"the Makefile has no {target} target"
        expression = re.search(r'-m (?:"([^"]+)"|(\S+))', recipe[1])
        assert expression, f"{target} selects its tests with -m"
        found[target] = re.sub(r"\$\((\w+)\)", lambda m: variables[m[1]], expression[1] or expression[2])
    return found


def test_make_tests_phases_run_every_test_once() -> None:
    """Whatever markers a test carries, exactly one of the patterns, fast-lane, network and rest runs selects it."""
    from _pytest.mark.expression import Expression  # noqa: PLC0415  (pytest's own -m parser)

    markers = _declared_markers()
    expressions = {target: Expression.compile(text) for target, text in _marker_expressions().items()}
    for count in range(2 ** len(markers)):
        carried = frozenset(marker for bit, marker in enumerate(markers) if count >> bit & 1)
        carries = functools.partial(_carries, carried)
        selected = [target for target, expression in expressions.items() if expression.evaluate(carries)]
        assert len(selected) == 1, f"a test marked {sorted(carried) or 'with nothing'} is run by {selected}"


def _carries(carried: frozenset[str], name: str, /, **kwargs: object) -> bool:
    return name in carried


def _declared_markers() -> list[str]:
    import tomllib  # noqa: PLC0415

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    return [line.split(":")[0] for line in declared["markers"]]
