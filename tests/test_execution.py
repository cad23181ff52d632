"""The execution engine closes markdown-exec's seven defects; one test (or more) per defect."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from test_engine import gone

from conftest import TWO_PROOFS, Build, FixtureSite
from pytorch_floors.floors import FLOORS
from pytorch_floors.labs import notebooks as labs

PROOF = '''\
"""A proof that counts its runs in a file, so a test can tell a run from a cache hit."""
from pathlib import Path
runs = Path("runs.txt")
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
print("answer", 6 * 7)
'''


def report(build: Build) -> dict[str, str]:
    data = json.loads((build.site / "build-report.json").read_text())
    return {f"{b['page']}#{b['block_id']}": b["status"] for b in data["blocks"]}


# --- defect 1: no cache ---------------------------------------------------------------------------


def test_outputs_are_cached_and_invalidated_by_content(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/counted.py", PROOF)
    fixture_site.write("snippets/other.py", 'print("other")\n')
    fixture_site.page(
        "index.md",
        """\
        # Home

        ```python exec="1" id="counted" workdir="."
        --8<-- "snippets/counted.py"
        ```

        ```python exec="1" id="other"
        --8<-- "snippets/other.py"
        ```
        """,
    )
    first = fixture_site.build()
    assert first.returncode == 0, first.log
    assert report(first) == {"index.md#counted": "ran", "index.md#other": "ran"}
    assert "answer 42" in first.page("")

    # Editing prose re-executes nothing.
    page = fixture_site.root / "docs/index.md"
    page.write_text(page.read_text().replace("# Home", "# Home, reworded"))
    second = fixture_site.build()
    assert report(second) == {"index.md#counted": "cached", "index.md#other": "cached"}
    assert "answer 42" in second.page("") and "reworded" in second.page("")

    # Editing a proof re-executes only the blocks that include it.
    fixture_site.write("snippets/other.py", 'print("other, edited")\n')
    third = fixture_site.build()
    assert report(third) == {"index.md#counted": "cached", "index.md#other": "ran"}
    assert (fixture_site.root / "runs.txt").read_text() == "x"

    # Bypass and rebuild on request.
    assert report(fixture_site.build(env={"FLOORS_EXEC_CACHE": "off"}))["index.md#counted"] == "ran"
    assert report(fixture_site.build(env={"FLOORS_EXEC_CACHE": "refresh"}))["index.md#counted"] == "ran"
    assert report(fixture_site.build())["index.md#counted"] == "cached"


def test_cache_key_includes_session_history(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="define" session="s"
        value = 1
        ```

        ```python exec="1" id="use" session="s"
        print("value is", value)
        ```
        """,
    )
    assert "value is 1" in fixture_site.build().page("")
    page = fixture_site.root / "docs/index.md"
    page.write_text(page.read_text().replace("value = 1", "value = 2"))
    rebuilt = fixture_site.build()
    assert report(rebuilt) == {"index.md#define": "ran", "index.md#use": "ran"}
    assert "value is 2" in rebuilt.page("")


def test_a_cached_session_block_is_replayed_before_a_changed_one(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="define" session="s"
        value = 5
        ```

        ```python exec="1" id="use" session="s"
        print("double is", 2 * value)
        ```
        """,
    )
    fixture_site.build()
    page = fixture_site.root / "docs/index.md"
    page.write_text(page.read_text().replace("2 * value", "3 * value"))
    rebuilt = fixture_site.build()
    assert report(rebuilt) == {"index.md#define": "cached", "index.md#use": "ran"}
    assert "double is 15" in rebuilt.page("")


# --- defect 2: no time limit ----------------------------------------------------------------------


def test_a_block_that_never_ends_fails_within_its_limit(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="forever" timeout="3"
        while True:
            pass
        ```
        """,
    )
    start = time.perf_counter()
    build = fixture_site.build(timeout=120)
    assert time.perf_counter() - start < 60
    assert build.returncode != 0
    assert "docs/index.md › block 'forever'" in build.log
    assert "time limit of 3 s" in build.log


# --- defects 3 and 4: failures that only warn, and sys.exit ending the build quietly --------------


def test_a_raising_proof_fails_the_build_without_strict_naming_page_id_file_and_line(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/broken.py", "a = 1\nb = 0\nprint(a / b)\n")
    fixture_site.page(
        "guide/broken.md",
        """\
        ```python exec="1" id="divide"
        --8<-- "snippets/broken.py"
        ```
        """,
    )
    build = fixture_site.build(strict=False)
    assert build.returncode != 0
    assert (
        "docs/guide/broken.md › block 'divide' (snippets/broken.py:3): ZeroDivisionError: division by zero" in build.log
    )


def test_sys_exit_in_a_proof_fails_the_build(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        Text.

        ```python exec="1" id="leave"
        import sys
        print("before")
        sys.exit(0)
        ```
        """,
    )
    build = fixture_site.build(strict=False)
    assert build.returncode != 0
    assert "docs/index.md › block 'leave' (docs/index.md:10): SystemExit" in build.log


def test_a_crashing_process_fails_the_build(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="crash"
        import os
        os._exit(3)
        ```
        """,
    )
    build = fixture_site.build()
    assert build.returncode != 0
    assert "block 'crash'" in build.log and "exit code 3" in build.log


def test_a_block_without_id_is_refused(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1"
        print(1)
        ```
        """,
    )
    build = fixture_site.build()
    assert build.returncode != 0
    assert "docs/index.md:5: executed block has no id" in build.log


def test_no_absolute_build_path_in_the_page(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="where"
        import os, sys
        print("cwd", os.getcwd(), "env", sys.prefix)
        ```
        """,
    )
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log
    page = build.page("")
    assert "cwd . env &lt;env&gt;" in page
    assert str(fixture_site.root) not in page and sys.prefix not in page


# --- defect 5: state leaking between pages --------------------------------------------------------


def test_global_torch_state_never_leaks_between_pages(fixture_site: FixtureSite) -> None:
    setter = """\
        ```python exec="1" id="set"
        import torch
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        torch.set_num_threads(1)
        leaked_name = 1
        print("set", torch.get_default_dtype())
        ```
        """
    reader = """\
        ```python exec="1" id="read"
        import torch
        print("dtype", torch.get_default_dtype(), "grad", torch.is_grad_enabled(),
              "threads", torch.get_num_threads(), "leaked" if "leaked_name" in globals() else "fresh",
              "draw", round(torch.rand(1).item(), 6))
        ```
        """
    fixture_site.page("a-setter.md", setter)
    fixture_site.page("b-reader.md", reader)
    fixture_site.page("0-reader.md", reader)
    build = fixture_site.build(env={"FLOORS_EXEC_CACHE": "off"})
    assert build.returncode == 0, build.log
    after, before = build.page("b-reader"), build.page("0-reader")
    assert "dtype torch.float32 grad True" in after and "fresh" in after

    pattern = r"dtype \S+ grad \S+ threads \d+ \S+ draw [\d.]+"
    assert re.search(pattern, after) and re.search(pattern, before)
    assert re.search(pattern, after).group(0) == re.search(pattern, before).group(0)  # type: ignore[union-attr]


# --- defect 6: output rendered as Markdown --------------------------------------------------------


def test_output_is_verbatim_text_and_stderr_stays_out(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="markup"
        import sys
        print("<script>alert(1)</script>")
        print("x.__init__ and **bold**")
        print("a     b")
        print("only in the log", file=sys.stderr)
        ```

        ```python exec="1" id="figure" html="1"
        print('<svg class="chosen"><title>t</title></svg>')
        ```
        """,
    )
    build = fixture_site.build()
    assert build.returncode == 0, build.log
    html = build.page("")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "__init__" in html and "<strong>init</strong>" not in html and "<strong>bold</strong>" not in html
    assert "a     b" in html
    assert "only in the log" not in html
    assert '<svg class="chosen">' in html


# --- progress and report --------------------------------------------------------------------------


def test_build_reports_progress_and_writes_the_report(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", TWO_PROOFS)
    build = fixture_site.build(env={"FLOORS_EXEC_CACHE": "off"})
    assert "proof 1/2 docs/index.md › one" in build.log
    assert "proof 2/2 docs/index.md › two" in build.log
    data = json.loads((build.site / "build-report.json").read_text())
    assert data["totals"]["ran"] == 2 and data["provenance"]["torch_version"]
    assert all(b["seconds"] >= 0 for b in data["blocks"])


def test_render_only_build_runs_nothing(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/counted.py", PROOF)
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="counted" workdir="."
        --8<-- "snippets/counted.py"
        ```
        """,
    )
    build = fixture_site.build(env={"FLOORS_EXEC": "off", "FLOORS_EXEC_CACHE": "off"})
    assert build.returncode == 0, build.log
    assert not (fixture_site.root / "runs.txt").exists()
    assert "execution disabled" in build.page("")


# --- defect 7: mkdocs-jupyter's cache ignores the environment -------------------------------------


class FakePlugin:
    def __init__(self) -> None:
        self.config: dict[str, object] = {"cache_dir": ".cache/mkdocs-jupyter", "execute": True, "execute_ignore": []}


class FakeConfig:
    def __init__(self, docs_dir: Path) -> None:
        self.plugins = {"mkdocs-jupyter": FakePlugin()}
        self.docs_dir = str(docs_dir)


def test_notebook_cache_is_keyed_on_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A project whose first lab imports one module of its own; another module it does not import.
    lab = tmp_path / "docs" / FLOORS[0].lab
    lab.parent.mkdir(parents=True)
    lab.write_text("import helper\nprint(helper.VALUE)\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "src" / "gauge.py").write_text("STYLE = 'a'\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\n", encoding="utf-8")
    machine = {"torch": "2.13.0", "python": "3.11.7", "cpu": "x", "device": "cpu"}
    monkeypatch.setattr(labs, "machine_fingerprint", lambda facts=None: machine)

    def cache_dir() -> object:
        return labs.jupyter_cache_dir(tmp_path, tmp_path / "docs", tmp_path / "cache")

    first = cache_dir()
    assert str(first).startswith(str(tmp_path / "cache" / "mkdocs-jupyter"))
    assert cache_dir() == first
    (tmp_path / "src" / "gauge.py").write_text("STYLE = 'b'\n", encoding="utf-8")
    assert cache_dir() == first, "an edit to a module no lab imports runs no lab again"
    for key, value in (("torch", "2.14.0"), ("device", "NVIDIA H200")):
        machine = {**machine, key: value}
        changed = cache_dir()
        assert changed != first, key
        first = changed
    (tmp_path / "src" / "helper.py").write_text("VALUE = 2\n", encoding="utf-8")
    assert cache_dir() != first, "an edit to a module a lab imports runs the labs again"
    first = cache_dir()
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nnbconvert==9\n", encoding="utf-8")
    assert cache_dir() != first, "other pinned versions render the labs again"


def start_serve(root: Path, **popen: Any) -> tuple[int, subprocess.Popen[Any]]:
    """Start `mkdocs serve` for `root` on a free local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "mkdocs", "serve", "--no-livereload", "--dev-addr", f"127.0.0.1:{port}"]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return port, subprocess.Popen(command, cwd=root, env=env, **popen)


def test_serve_shows_a_failing_proof_on_its_page(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="broken"
        raise ValueError("shown, not swallowed")
        ```
        """,
    )
    port, server = start_serve(fixture_site.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                assert server.poll() is None, "mkdocs serve exited"
                assert time.monotonic() < deadline, "mkdocs serve did not answer"
                time.sleep(0.5)
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert 'class="admonition failure floors-proof-failure" role="alert"' in page
    assert "docs/index.md › block 'broken'" in unescape(page), "the failure, named, in escaped text"
    assert "ValueError: shown, not swallowed" in page
    assert "Traceback" not in page
    assert "block 'broken'" in log


# --- silent passes: a block that cannot run as written stops the build, naming itself -------------


def test_a_misspelled_option_fails_a_real_build_naming_page_and_line(fixture_site: FixtureSite) -> None:
    fixture_site.page(
        "index.md",
        """\
        ```python exec="1" id="slow" timout="300"
        print(1)
        ```
        """,
    )
    build = fixture_site.build(strict=True)
    assert build.returncode != 0
    assert "docs/index.md:5: unknown option timout='300'" in build.log


# --- processes: none outlives its block, the build or serve ---------------------------------------

SLEEPER = """\
        ```python exec="1" id="sleeper" timeout="900" workdir="."
        import subprocess, time
        child = subprocess.Popen(["sleep", "300"])
        open("child.txt", "w").write(str(child.pid))
        time.sleep(WAIT)
        print("woke")
        ```
        """


def test_a_piped_build_does_not_wait_for_a_blocks_children(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", SLEEPER.replace("WAIT", "0"))
    build = fixture_site.build(timeout=120)  # output captured through pipes, as `mkdocs build | cat`
    assert build.returncode == 0, build.log
    child = int((fixture_site.root / "child.txt").read_text())
    assert gone(child)


def test_stopping_serve_ends_a_running_blocks_children(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", SLEEPER.replace("WAIT", "600"))
    _, server = start_serve(fixture_site.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = fixture_site.root / "child.txt"
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or not marker.read_text():
            assert server.poll() is None and time.monotonic() < deadline, "the block never started"
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert gone(int(marker.read_text()))
