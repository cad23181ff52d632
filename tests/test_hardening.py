"""Faults a hostile or careless block can cause, each pinned by the case that once got through.

The engine is driven in-process, as in `test_engine.py`: a Markdown instance renders small pages
of a throw-away project through the formatter, no MkDocs build.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest
from test_engine import Pages, make_pages

from conftest import without_spans
from pytorch_floors.execution import OutputCache
from pytorch_floors.execution.bundle import BundleError, bundle
from pytorch_floors.execution.cache import CacheError
from pytorch_floors.execution.options import OptionError, parse_timeout
from pytorch_floors.execution.output import PathScrubber, clean_text
from pytorch_floors.execution.process import runner, scratch
from pytorch_floors.execution.process.sandbox import block_environment
from pytorch_floors.execution.scan import ScanError, included_paths, scan_markdown
from pytorch_floors.execution.secrets import SecretFinder

SECRET = "ghp_fake123floors"

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="reads /proc and relies on the child subreaper, which only Linux has (macOS ends a block's group only)",
)


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    yield make_pages(tmp_path)


# A block's code that walks every ancestor (its parent, theirs, ... up to init) and prints what each one's
# environment and memory give it: `refused <pid> <file> <error>`, or (`show = True` set before it) the
# environment itself and any token found in the writable memory, else only whether a token was there.
# Shared by the proof and lab tests (`ANCESTOR_WALK` is a plain script).
ANCESTOR_WALK = """\
import os, re
def ancestors():
    pid = os.getpid()
    while True:
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        if pid <= 1:
            return
        yield pid
def heap(pid):
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
        for line in maps:
            span, perms = line.split()[:2]
            low, high = (int(x, 16) for x in span.split("-"))
            if perms.startswith("rw") and high - low < 1 << 26:
                try:
                    mem.seek(low)
                    yield mem.read(high - low)
                except OSError:
                    continue
for pid in ancestors():
    try:
        environ = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
        print("environ", pid, environ if show else "ghp_" in environ)
    except OSError as error:
        print("refused", pid, "environ", type(error).__name__)
    try:
        for chunk in heap(pid):
            for found in re.findall(rb"ghp_[A-Za-z0-9]+", chunk):
                print("memory", pid, found.decode() if show else True)
    except OSError as error:
        print("refused", pid, "mem", type(error).__name__)
print("capabilities", [line for line in open("/proc/self/status") if line.startswith("CapEff")])
"""

_BUILD_IN_A_PROCESS = """\
import sys, textwrap
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_engine import make_pages
pages = make_pages(Path(sys.argv[2]))
html = pages.render(Path(sys.argv[3]).read_text())
print("BUILD", __import__("os").getpid())
print("FAILURES", [str(failure) for failure in pages.engine.failures])
print(html)
"""


@linux_only
@pytest.mark.parametrize("method", ["forkserver", pytest.param("spawn", marks=pytest.mark.waits)])
def test_no_ancestor_of_a_block_gives_it_the_builds_secrets(tmp_path: Path, method: str) -> None:
    # The token must be in the build's environment from its start (what /proc/PID/environ shows), and in a
    # process above the build, as in CI: `sh` stays the build's parent (`; true` keeps it from exec'ing).
    page = tmp_path / "page.md"

    def fence(block_id: str, show: bool) -> str:
        return f'```python exec="1" id="{block_id}"\nshow = {show}\n{ANCESTOR_WALK}```\n\n'

    page.write_text(fence("walk", show=False) + fence("leak", show=True))
    script = tmp_path / "build.py"
    script.write_text(_BUILD_IN_A_PROCESS)
    env = {**os.environ, "GITHUB_TOKEN": SECRET, runner.START_METHOD: method}
    command = f"{sys.executable} {script} {Path(__file__).parent} {tmp_path / 'project'} {page}; true"
    (tmp_path / "project").mkdir()
    done = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=240, check=False)
    out = done.stdout
    assert "BUILD" in out, done.stderr[-3000:]
    build = out.split("BUILD ", 1)[1].split()[0]
    assert SECRET not in out, "a secret reached the page or the build's report"
    # The build process itself hides its environment and memory from the block, root or not.
    assert f"refused {build} environ PermissionError" in out, out[-3000:]
    assert f"refused {build} mem PermissionError" in out, out[-3000:]
    assert f"memory {build}" not in out and f"environ {build}" not in out
    if os.geteuid() == 0:
        # Root without capabilities reads no process of root's that keeps them: `sh` above the build neither.
        assert not re.search(r"^environ ", out, re.MULTILINE), out[-3000:]
    else:
        # `sh` above the build is not the build's to hide (it holds the token: `True`); a block that prints
        # what it read there fails by name, and the page shows the failure, not the token.
        assert re.search(r"^environ \d+ True$", out, re.MULTILINE), out[-3000:]
        assert "block 'leak' (docs/index.md:37): its output holds the value of the build's environment" in out


def test_a_block_whose_output_holds_a_secret_fails_by_name(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    # What no lock can hide (a process above the build, a file): the output itself is checked.
    monkeypatch.setattr(pages.engine, "_secrets", SecretFinder({"GITHUB_TOKEN": SECRET}))
    html = pages.render(
        """\
        ```python exec="1" id="leak"
        print("the token:", "ghp_fake" + "123floors")
        ```

        ```python exec="1" id="shaped"
        print("AKIA" + "ABCDEFGHIJKLMNOP")
        ```
        """
    )
    assert SECRET not in html and "AKIAABCDEFGHIJKLMNOP" not in html
    failures = [str(failure) for failure in pages.engine.failures]
    assert any(
        "'leak'" in f and "holds the value of the build's environment variable GITHUB_TOKEN" in f for f in failures
    )
    assert any("'shaped'" in f and "holds an AWS access key" in f for f in failures), failures


@pytest.mark.parametrize(
    ("html", "printed"),
    [
        ("0", 'tok[:4] + "\\x1b[0m" + tok[4:]'),
        ("0", 'tok[:4] + "\\x1b[1;31m" + tok[4:9] + "\\r" + tok[:9] + tok[9:]'),
        ("1", '"<span>" + tok[:4] + "<b></b>" + tok[4:] + "</span>"'),
        ("1", '"<span>" + tok[:8] + "\\u200b" + tok[8:] + "</span>"'),
        ("1", '"<span>" + tok.replace("_", "&#95;") + "</span>"'),
    ],
    ids=["colour-escape", "escape-and-carriage-return", "empty-tag", "zero-width-space", "entity"],
)
def test_a_secret_split_so_that_only_the_page_joins_it_fails_by_name(
    pages: Pages, monkeypatch: pytest.MonkeyPatch, html: str, printed: str
) -> None:
    # The check read the raw output; the page showed it after dropping escapes (or the browser after reading HTML).
    monkeypatch.setattr(pages.engine, "_secrets", SecretFinder({"GITHUB_TOKEN": SECRET}))
    code = f'tok = "ghp_fake" + "123floors"\nprint({printed})'
    page = pages.render(f'```python exec="1" html="{html}" id="split"\n{code}\n```\n')
    assert pages.status() == {"split": "failed"}
    [failure] = pages.engine.failures
    assert "holds the value of the build's environment variable GITHUB_TOKEN" in str(failure)
    assert "123floors" not in page


@pytest.mark.parametrize(
    "printed",
    ["<p>a</p><!-- never closed", "<span>x</span><![CDATA[ open", "<span>x</span><div class='open"],
    ids=["comment", "cdata", "tag"],
)
def test_html_output_that_ends_inside_unfinished_markup_fails_by_name(pages: Pages, printed: str) -> None:
    # An unclosed <!-- hid the rest of the page in a browser while the build passed.
    pages.render(f'```python exec="1" html="1" id="open"\nprint({printed!r})\n```\n')
    assert pages.status() == {"open": "failed"}
    [failure] = pages.engine.failures
    assert "its HTML output would break the page: it ends inside unfinished markup" in str(failure)


@linux_only
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root only: an ordinary user holds no capability to drop"
)
def test_a_block_run_as_root_gives_up_every_capability(pages: Pages) -> None:
    html = pages.render(
        """\
        ```python exec="1" id="caps"
        import subprocess
        mine = [l.split()[1] for l in open("/proc/self/status") if l.startswith(("CapEff", "CapBnd"))]
        child = subprocess.run(["grep", "CapEff", "/proc/self/status"], capture_output=True, text=True)
        child = child.stdout.split()[1]
        print("masks", *mine, child)
        ```
        """
    )
    masks = without_spans(html).split("masks ", 1)[1].split()[:3]
    assert masks == ["0000000000000000"] * 3, "a block run as root keeps capabilities (its own, bounding, a child's)"


def test_a_secret_in_a_failure_message_is_withheld(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages.engine, "_secrets", SecretFinder({"GITHUB_TOKEN": SECRET}))
    html = pages.render(
        """\
        ```python exec="1" id="raises"
        raise RuntimeError("ghp_fake123floors")
        ```
        """
    )
    assert SECRET not in html and SECRET not in str(pages.engine.failures)
    assert "<GITHUB_TOKEN withheld>" in str(pages.engine.failures)


@linux_only
def test_a_process_that_leaves_the_blocks_group_still_ends_with_the_block(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="escape" workdir="."
        import pathlib, subprocess
        child = subprocess.Popen(["sleep", "6003"], start_new_session=True)
        pathlib.Path("pids").write_text(str(child.pid))
        ```
        """
    )
    assert pages.status() == {"escape": "ran"}
    assert not _alive(pages.root / "pids")


@linux_only
def test_a_double_forked_daemon_ends_with_the_block(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="daemon" workdir="."
        import os, pathlib, subprocess
        if os.fork() == 0:
            os.setsid()
            pathlib.Path("pids").write_text(str(subprocess.Popen(["sleep", "6004"]).pid))
            os._exit(0)
        os.wait()
        ```
        """
    )
    assert pages.status() == {"daemon": "ran"}
    assert not _alive(pages.root / "pids")


@linux_only
@pytest.mark.parametrize(
    ("death", "said"),
    [
        ("os._exit(0)", "ended without reporting (exit code 0)"),
        ("os.kill(os.getpid(), signal.SIGSEGV)", "was killed by SIGSEGV"),
    ],
    ids=["exits", "segfaults"],
)
def test_a_process_that_left_the_group_ends_when_the_blocks_process_dies(pages: Pages, death: str, said: str) -> None:
    # The block's process was the subreaper: once it died, its orphan went to init and outlived the build.
    try:
        pages.render(
            """\
            ```python exec="1" id="dies" workdir="."
            import os, pathlib, signal, subprocess
            child = subprocess.Popen(["sleep", "6007"], start_new_session=True)
            pathlib.Path("pids").write_text(str(child.pid))
            {death}
            ```
            """.replace("{death}", death)
        )
        assert pages.status() == {"dies": "failed"}
        assert f"WorkerDied: the block's process {said}" in str(pages.engine.failures[0])
        assert not _alive(pages.root / "pids"), "a child that left the group outlived its block's process"
    finally:
        for pid in (pages.root / "pids").read_text().split() if (pages.root / "pids").exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def _alive(pids: Path) -> list[int]:
    """The processes named in `pids` (one id per line) still running a few seconds on (killed ones are reaped)."""
    wanted = [int(pid) for pid in pids.read_text().split()]
    assert wanted, "the block wrote no process id"
    deadline = time.monotonic() + 5
    while True:
        alive = [pid for pid in wanted if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


@pytest.mark.parametrize(
    ("stream", "said"),
    [
        ("stdout", "OutputTooLarge: the block printed more than 1,048,576 bytes and was stopped as it wrote"),
        ("stderr", "OutputTooLarge: the block wrote more than 1,048,576 bytes to stderr and was stopped as it wrote"),
    ],
)
def test_output_is_bounded_while_it_is_written(tmp_path: Path, stream: str, said: str) -> None:
    # stderr stays out of the page, but it filled the disk the same way (295 MiB in six seconds).
    pages = make_pages(tmp_path)
    start = time.perf_counter()
    pages.render(
        f"""\
        ```python exec="1" id="flood" timeout="60"
        import sys
        while True:
            sys.{stream}.write("y" * 2**20)
        ```
        """
    )
    seconds = time.perf_counter() - start
    failure = str(pages.engine.failures[0])
    assert said in failure
    # Stopped by the watch, long before the block's own limit would have ended it.
    assert seconds < 30


def _scratch_left() -> list[Path]:
    """The scratch folders this process's blocks ran in that are still in the temporary directory."""
    return sorted(Path(tempfile.gettempdir()).resolve().glob(f"{scratch.prefix(scratch.WORKDIR)}*"))


@linux_only
def test_a_file_a_block_writes_is_bounded_and_the_block_says_so(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    # `timeout="6"` and a loop writing a file left 9.8 GB in the project folder. The limit is lowered
    # here, so the test writes a few MiB (without it, each block writes 8 MiB and passes).
    limit, run = 2**20, runner.BlockProcess.run
    monkeypatch.setattr(
        runner.BlockProcess,
        "run",
        lambda self, request, timeout: run(self, replace(request, max_file_size=limit), timeout),
    )
    before = _scratch_left()
    pages.render(
        """\
        ```python exec="1" id="fill"
        with open("fill.bin", "wb") as out:
            for _ in range(128):
                out.write(b"x" * 2**16)
        ```

        ```python exec="1" id="child"
        import subprocess
        subprocess.run(["dd", "if=/dev/zero", "of=child.bin", "bs=64k", "count=128"], check=True, capture_output=True)
        ```
        """
    )
    assert pages.status() == {"fill": "failed", "child": "failed"}
    fill, child = (str(failure) for failure in pages.engine.failures)
    said = "(a block writes at most 1,048,576 bytes into a file: MAX_FILE_SIZE)"
    assert "OSError: [Errno 27] File too large" in fill and said in fill, fill
    assert "died with <Signals.SIGXFSZ: 25>" in child and said in child, child
    # Written in the blocks' scratch folders, removed with them: nothing is left in the project.
    assert not (pages.root / "fill.bin").exists() and not (pages.root / "child.bin").exists()
    assert _scratch_left() == before


@linux_only
def test_a_file_a_block_or_its_child_writes_is_gone_when_the_block_ends(pages: Pages) -> None:
    # Blocks ran in the project folder: what they wrote stayed in the author's checkout, where it could be
    # committed, and a later build could read what an earlier one left.
    before = _scratch_left()
    html = pages.render(
        """\
        ```python exec="1" id="wrote"
        import os, subprocess
        open("ran.bin", "wb").write(b"x")
        subprocess.run(["dd", "if=/dev/zero", "of=child.bin", "bs=1k", "count=1"], check=True, capture_output=True)
        print("in scratch", os.path.basename(os.getcwd()).startswith("floors-workdir-"), sorted(os.listdir(".")))
        print("cwd", os.getcwd(), os.path.abspath("ran.bin"))
        ```

        ```python exec="1" id="clean"
        import os
        print("left by the block before", os.listdir("."))
        ```

        ```python exec="1" id="failed"
        open("failed.bin", "wb").write(b"x")
        raise SystemExit(3)
        ```

        ```python exec="1" id="killed"
        import os, signal
        open("killed.bin", "wb").write(b"x")
        os.kill(os.getpid(), signal.SIGKILL)
        ```
        """
    )
    assert pages.status() == {"wrote": "ran", "clean": "ran", "failed": "failed", "killed": "failed"}
    assert "in scratch True ['child.bin', 'ran.bin']" in html
    # The folder reads as the project did: `.`, and its files relative; no machine path, no process id.
    assert "cwd . ran.bin" in html and "floors-workdir" not in html and "&lt;tmp&gt;" not in html
    assert "left by the block before []" in html
    assert not list(pages.root.rglob("*.bin"))
    assert _scratch_left() == before


@linux_only
@pytest.mark.waits
def test_a_timed_out_blocks_scratch_folder_is_removed_with_its_children(pages: Pages) -> None:
    before = _scratch_left()
    pages.render(
        """\
        ```python exec="1" id="stuck" timeout="3"
        import subprocess, time
        open("stuck.bin", "wb").write(b"x")
        subprocess.Popen(["sh", "-c", "while true; do echo x >> child.txt; sleep 0.05; done"])
        time.sleep(60)
        ```
        """
    )
    assert pages.status() == {"stuck": "failed"}
    assert "time limit of 3 s" in str(pages.engine.failures[0])
    time.sleep(0.5)  # a child still alive would write its file again
    assert _scratch_left() == before
    assert not list(pages.root.rglob("*.bin")) and not list(pages.root.rglob("child.txt"))


def test_a_block_with_workdir_runs_in_the_project_and_keeps_what_it_writes(pages: Pages) -> None:
    # It asked for a folder of the project (to read its files by relative path): what it writes there is the
    # author's to keep or ignore, as documented in CONTRIBUTING.
    (pages.root / "snippets").mkdir()
    (pages.root / "snippets" / "data.txt").write_text("project data")
    html = pages.render(
        """\
        ```python exec="1" id="there" workdir="snippets"
        import os
        open("kept.txt", "w").write(open("data.txt").read())
        print("cwd", os.getcwd())
        ```
        """
    )
    assert pages.status() == {"there": "ran"} and "cwd snippets" in html
    assert (pages.root / "snippets" / "kept.txt").read_text() == "project data"


def test_blocks_of_a_session_share_one_scratch_folder_for_the_sessions_life(pages: Pages) -> None:
    # A session's blocks share state: a file the first writes, the next reads (in the same process, or in a
    # new one that replays the first from the cache); a block outside the session sees none of it.
    before = _scratch_left()
    page = """\
        ```python exec="1" id="first" session="s"
        open("state.txt", "w").write("from first")
        ```

        ```python exec="1" id="outside"
        import os
        print("outside sees", os.listdir("."))
        ```

        ```python exec="1" id="second" session="s"
        print("SECOND sees", open("state.txt").read())
        ```
        """
    html = pages.render(page)
    assert pages.status() == {"first": "ran", "outside": "ran", "second": "ran"}
    assert "outside sees []" in html and "SECOND sees from first" in html
    assert _scratch_left() == before
    pages.engine.records.clear()
    html = pages.render(page.replace("SECOND", "then"))
    assert pages.status() == {"first": "cached", "outside": "cached", "second": "ran"}
    assert "then sees from first" in html
    assert _scratch_left() == before


def test_a_replayed_session_block_runs_in_its_own_workdir(pages: Pages) -> None:
    # A later block of the session replays a cached earlier one in its new process: where the earlier one ran.
    (pages.root / "snippets").mkdir()
    (pages.root / "snippets" / "data.txt").write_text("project data")
    page = """\
        ```python exec="1" id="reads" session="s" workdir="snippets"
        data = open("data.txt").read()
        ```

        ```python exec="1" id="uses" session="s"
        import os
        print("USES", data, os.listdir("."))
        ```
        """
    pages.render(page)
    pages.engine.records.clear()
    html = pages.render(page.replace("USES", "then uses"))
    assert pages.status() == {"reads": "cached", "uses": "ran"}
    assert "then uses project data []" in html


def test_a_killed_builds_scratch_folder_is_swept_by_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal\n"
            "from pytorch_floors.execution.process import scratch\n"
            "folder = scratch.folder(scratch.WORKDIR)\n"
            "(folder / 'fill.bin').write_bytes(b'x')\n"
            "print(folder, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n",
        ],
        env={**os.environ, "TMPDIR": str(temporary)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.parent == temporary.resolve() and (left / "fill.bin").exists()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    (tmp_path / "project").mkdir()
    make_pages(tmp_path / "project")
    assert not left.exists()


def test_a_relative_pythonpath_reaches_a_block_as_absolute_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A block runs in a scratch folder: `PYTHONPATH=src`, relative to the build's directory, would name nothing.
    monkeypatch.chdir(tmp_path)
    env = block_environment(html=False, width=None, build_env={"PYTHONPATH": os.pathsep.join(["src", "/abs/lib"])})
    assert env["PYTHONPATH"] == os.pathsep.join([str(tmp_path / "src"), "/abs/lib"])


def test_a_thread_of_one_session_block_never_prints_into_the_next(pages: Pages) -> None:
    html = pages.render(
        """\
        ```python exec="1" id="t1" session="s"
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.5), print("late from t1"))).start()
        print("t1 done")
        ```

        ```python exec="1" id="t2" session="s"
        import time
        time.sleep(1)
        print("t2 done")
        ```
        """
    )
    t1, t2 = (r.output or "" for r in pages.engine.records)
    assert "late from t1" in t1
    assert "late from t1" not in t2
    assert "t2 done" in html


@pytest.mark.waits
def test_a_block_that_leaves_a_thread_running_fails_by_name(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="forever" timeout="3"
        import threading, time
        threading.Thread(target=lambda: time.sleep(60), daemon=True, name="poller").start()
        ```
        """
    )
    assert "ThreadsLeftRunning" in str(pages.engine.failures[0])
    assert "poller" in str(pages.engine.failures[0])


@pytest.mark.parametrize("value", ["3e6", "1e7", "86401"])
def test_a_huge_timeout_is_refused_with_its_maximum(value: str) -> None:
    with pytest.raises(OptionError, match="at most 86400 seconds"):
        parse_timeout(value)
    with pytest.raises(ScanError, match=r"docs/index.md:1: timeout must be at most"):
        scan_markdown(f'```python exec="1" id="x" timeout="{value}"\npass\n```\n', "index.md", Path("."))


@pytest.mark.waits
@pytest.mark.parametrize(
    "nap",
    [
        "time.sleep(3)",  # the parent waits for the block under slow's 30 s, not quick's 2 s
        # The worker waits for a block's threads until the limit its request carries: slow's, too.
        'threading.Thread(target=time.sleep, args=(3,), name="napper").start()  # ends after the code does',
    ],
    ids=["parent-waits", "worker-waits-for-threads"],
)
def test_a_replayed_block_keeps_its_own_limit(pages: Pages, nap: str) -> None:
    body = """\
        ```python exec="1" id="slow" session="s" timeout="30"
        import pathlib, threading, time
        if pathlib.Path("nap").exists():
            {nap}
        print("slow")
        ```

        ```python exec="1" id="quick" session="s" timeout="2"
        print("quick {n}")
        ```
        """.replace("{nap}", nap)
    pages.render(body.replace("{n}", "1"))
    (pages.root / "nap").touch()
    # `slow` is cached; `quick` changed, so `slow` is replayed first, in quick's process, under its own limit.
    pages.render(body.replace("{n}", "2"))
    assert pages.engine.failures == []
    assert pages.status() == {"slow": "cached", "quick": "ran"}


def test_the_message_of_a_process_that_exits_reads_as_a_sentence(pages: Pages) -> None:
    pages.render('```python exec="1" id="bye"\nimport os\nos._exit(3)\n```\n')
    failure = str(pages.engine.failures[0])
    assert "WorkerDied: the block's process ended without reporting (exit code 3)" in failure
    assert "the block its process" not in failure


# --- what a page shows of the machine -------------------------------------------------------------


def test_paths_are_replaced_only_where_they_end() -> None:
    project = Path("/srv/floors-project")  # outside the temporary directory, which has its own name
    scrub = PathScrubber(project)
    assert scrub(f"{project}X/notes.txt") == f"{project}X/notes.txt"
    assert scrub(f"{project}/snippets/x.py") == "snippets/x.py"
    assert scrub(f"cd {project}") == "cd ."
    base = tempfile.gettempdir()
    assert scrub(f"{base}/tmpcyw16_ex") == "<tmp>/tmpcyw16_ex"
    assert scrub(f"{base}cyw16_ex") == f"{base}cyw16_ex"


def test_a_right_to_left_override_is_shown_not_obeyed() -> None:
    assert clean_text("price: \u202e0.1$") == "price: \\u202e0.1$"
    assert clean_text("\u2066isolated\u2069") == "\\u2066isolated\\u2069"


# --- every fence is found where it is written ------------------------------------------------------


def test_a_zero_width_space_is_shown_not_hidden() -> None:
    # U+202E was escaped and U+200B passed through raw, hiding inside a name a reader copies.
    assert clean_text("to\u200bken \ufeff") == "to\\u200bken \\ufeff"
    # The joiners stay: emoji and some scripts are written with them.
    assert clean_text("\U0001f469\u200d\U0001f4bb") == "\U0001f469\u200d\U0001f4bb"


def test_an_exception_without_a_message_still_says_what_happened(pages: Pages) -> None:
    # "MemoryError:" printed nothing after the colon.
    pages.render(
        """\
        ```python exec="1" id="memory"
        raise MemoryError
        ```

        ```python exec="1" id="bare"
        raise ValueError()
        ```
        """
    )
    failures = [str(failure) for failure in pages.engine.failures]
    assert any(
        "'memory'" in f
        and f.endswith("MemoryError: the block ran out of memory (the allocation it asked for was refused)")
        for f in failures
    ), failures
    assert any("'bare'" in f and f.endswith("ValueError: (raised without a message)") for f in failures), failures


def test_a_fence_in_a_blockquote_is_found_and_runs(pages: Pages) -> None:
    html = pages.render(
        """\
        A quote:

        > ```python exec="1" id="quoted"
        > print("from the quote")
        > ```
        """
    )
    assert pages.status() == {"quoted": "ran"}
    assert "from the quote" in html


def test_a_fence_in_a_list_inside_a_blockquote_is_found_and_runs(pages: Pages) -> None:
    # It was not found by the scan, so its failure was reported at line 0 of the page.
    html = pages.render(
        """\
        > A quote with a list:
        >
        > - an item
        >
        >     ```python exec="1" id="listed"
        >     print("from the list")
        >     ```
        """
    )
    assert pages.status() == {"listed": "ran"}, [str(f) for f in pages.engine.failures]
    assert "from the list" in html
    assert pages.engine.planned["index.md"][0].fence_line == 5


@pytest.mark.parametrize(
    ("include", "shown"),
    [
        ("--8<-- 'snippets/x.py'", "from x"),
        ('--8<-- "snippets/x.py"', "from x"),
        ("--8<--\nsnippets/x.py\n;snippets/nope.py\nsnippets/y.py\n--8<--", "from x\nfrom y"),
        ("-8<- 'snippets/y.py:1:1'", "from y"),
        (
            's = """\n;--8<-- "snippets/x.py"\n"""\nprint("escaped:", s.strip())',
            'escaped: --8&lt;-- "snippets/x.py"',
        ),
    ],
    ids=["single-quoted", "double-quoted", "block-of-paths", "short-marker-and-lines", "escaped"],
)
def test_every_include_form_pymdownx_accepts_runs_as_markdown_expands_it(
    pages: Pages, include: str, shown: str
) -> None:
    # The single-quoted and block forms were refused: "...handed over other code than its scan found".
    (pages.root / "snippets").mkdir()
    (pages.root / "snippets" / "x.py").write_text('print("from x")\n')
    (pages.root / "snippets" / "y.py").write_text('print("from y")\n')
    body = '```python exec="1" id="inc"\n' + include + "\n```\n"
    html = pages.render(body)
    assert pages.status() == {"inc": "ran"}, [str(f) for f in pages.engine.failures]
    assert shown in without_spans(html)


def test_included_paths_reads_every_form() -> None:
    page = (
        "--8<-- 'a.py'\n;--8<-- 'no.py'\n--8<--\nb.py\n;c.py\n\n--8<-- 'inside.py'\nd.py:2:3\n--8<--\n"
        'text --8<-- "not-a-line.py"\n  --8<-- "e.py"\n'
    )
    assert included_paths(page) == ["a.py", "b.py", "d.py:2:3", "e.py"]


def test_an_executed_fence_in_the_brace_form_is_refused_by_line() -> None:
    text = 'Text\n\n```{.python exec="1" id="br"}\nprint(2)\n```\n'
    with pytest.raises(ScanError, match=r"docs/index.md:3: write an executed block as"):
        scan_markdown(text, "index.md", Path("."))


def test_an_executed_fence_inside_an_html_comment_is_refused_by_line() -> None:
    text = 'Text\n\n<!--\n```python exec="1" id="hidden"\nprint(1)\n```\n-->\n'
    with pytest.raises(ScanError, match=r"docs/index.md:4: an executed block inside an HTML comment"):
        scan_markdown(text, "index.md", Path("."))
    one_line = '<!-- a note -->\n```python exec="1" id="shown"\nprint(1)\n```\n'
    assert [b.block_id for b in scan_markdown(one_line, "index.md", Path("."))] == ["shown"]


# Each opens no comment: `<!--` inside a code span is code (CommonMark: a run of n backticks closes at the
# next run of exactly n, in the same paragraph), so the block after it runs and shows.
_CODE_SPANS = [
    "a comment starts with `<!--` in HTML",
    "a comment starts with ``<!--`` or ``a ` <!--``",
    "two spans: `x` and `` <!-- `` then `y`",
    "a span that runs\nover `two <!--\nlines` of a paragraph",
    "inline ```<!--``` three backticks",
]


@pytest.mark.parametrize("prose", _CODE_SPANS)
def test_a_comment_opener_in_inline_code_opens_no_comment(prose: str) -> None:
    text = f'{prose}\n\n```python exec="1" id="shown"\nprint(1)\n```\n'
    assert [b.block_id for b in scan_markdown(text, "index.md", Path("."))] == ["shown"]


# Each does open one: the backticks around `<!--` are not a code span (unmatched, escaped, of another length,
# or closed only in the next paragraph), or the `<!--` stands outside the span.
_REAL_COMMENTS = [
    "a lone backtick ` then <!-- a real comment",
    "`code` and then <!-- a real comment",
    "an escaped \\`<!--` opener",
    "runs of ``two <!-- and one` differ",
    "a span never closed `<!--\n\nin this paragraph`",
]


@pytest.mark.parametrize("prose", _REAL_COMMENTS)
def test_a_comment_opener_outside_inline_code_still_hides_a_block(prose: str) -> None:
    text = f'{prose}\n\n```python exec="1" id="hidden"\nprint(1)\n```\n'
    with pytest.raises(ScanError, match=r"an executed block inside an HTML comment"):
        scan_markdown(text, "index.md", Path("."))


# --- the engine where fork is not available ---------------------------------------------------------


@pytest.fixture(params=["forkserver", pytest.param("spawn", marks=pytest.mark.waits)])
def method_pages(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pages]:
    """Pages whose blocks start under each start method a platform may offer."""
    monkeypatch.setenv(runner.START_METHOD, request.param)
    runner.end_all()
    monkeypatch.setattr(runner, "_context", None)
    yield make_pages(tmp_path)
    runner.end_all()


@linux_only
def test_every_start_method_keeps_the_engines_guarantees(method_pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    (method_pages.root / "snippets").mkdir()
    (method_pages.root / "snippets" / "where.py").write_text(
        "import os, sys\nos.write(1, b'fd1 ')\n"
        "print('file', __file__.endswith('snippets/where.py'), sys.argv[0] == __file__)\n"
    )
    html = method_pages.render(
        """\
        ```python exec="1" id="dirty"
        import torch
        torch.set_default_dtype(torch.float64)
        torch.manual_seed(7)
        print("changed", torch.get_default_dtype())
        ```

        ```python exec="1" id="where"
        --8<-- "snippets/where.py"
        ```

        ```python exec="1" id="spawned" workdir="."
        import pathlib, subprocess
        inside = subprocess.Popen(["sleep", "6005"])
        outside = subprocess.Popen(["sleep", "6006"], start_new_session=True)
        pathlib.Path("pids").write_text(f"{inside.pid} {outside.pid}")
        ```

        ```python exec="1" id="fresh"
        import os, sys, torch
        print("fresh", torch.get_default_dtype(), "mkdocs" in sys.modules)
        print(open("/proc/self/environ", "rb").read().decode(errors="replace"))
        try:
            print(open(f"/proc/{os.getppid()}/environ", "rb").read().decode(errors="replace"))
        except PermissionError:
            print("the parent is the build, which hides its environment")
        ```
        """
    )
    assert method_pages.engine.failures == []
    assert "changed torch.float64" in html
    assert "fd1 file True True" in html
    assert "fresh torch.float32 False" in html
    assert SECRET not in html
    assert not _alive(method_pages.root / "pids")


def test_fork_windows_and_unknown_start_methods_are_refused_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(runner.StartMethodError, match="fork is refused"):
        runner.start_method({runner.START_METHOD: "fork"})
    with pytest.raises(runner.StartMethodError, match="is not a start method here"):
        runner.start_method({runner.START_METHOD: "threads"})
    assert runner.start_method({}) == "forkserver"
    assert runner.start_method({runner.START_METHOD: "spawn"}) == "spawn"
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(runner.StartMethodError, match="proofs cannot run on Windows"):
        runner.start_method({})


def test_macos_starts_blocks_by_spawn_though_it_offers_the_fork_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # CPython offers forkserver on macOS (it has sendmsg), and the engine took it there: blocks forked
    # from a server that had imported torch (Accelerate, libomp), which is why macOS defaults to spawn.
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr("multiprocessing.get_all_start_methods", lambda: ["spawn", "fork", "forkserver"])
    assert runner.start_method({}) == "spawn"
    assert runner.start_method({runner.START_METHOD: "forkserver"}) == "forkserver", "chosen by name, it is kept"


# --- the cache: a malformed entry is a miss, a read-only one says what to do -------------------------


DEEP_ENTRY = '{"output": "out", "seconds": 1, "claims": ' + "[" * 100_000 + "]" * 100_000 + "}"
"""Nested past the JSON parser's depth."""


@pytest.mark.parametrize(
    "entry",
    [
        '{"output": "out", "seconds": -1, "claims": []}',
        '{"output": "out", "seconds": NaN, "claims": []}',
        '{"output": "out", "seconds": Infinity, "claims": []}',
        '{"output": "out", "seconds": 1, "provenance": {"x": 1}, "claims": []}',
        '{"output": "out", "seconds": 1, "provenance": "Linux", "claims": []}',
        # Nested past the JSON parser's depth: a RecursionError failed the block instead of missing.
        DEEP_ENTRY,
    ],
    ids=["negative", "nan", "infinity", "provenance-object", "provenance-text", "deeply-nested"],
)
def test_a_poisoned_cache_entry_is_a_miss(tmp_path: Path, entry: str) -> None:
    cache = OutputCache(tmp_path)
    cache.put("ab12", "out", 1.0)
    assert cache.get("ab12") is not None
    (tmp_path / "ab" / "ab12.json").write_text(entry)
    assert cache.get("ab12") is None


class _Cycle:
    """Garbage only the collector frees (it refers to itself), with a finalizer that makes more."""


def test_a_deeply_nested_entry_is_a_miss_however_deep_the_collector_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsed, a deep entry put every collection during the parse at the stack's limit: a finalizer run
    there failed with a RecursionError, which pytest reports as the test's failure (it did, once in a
    run). Here a collection runs at every allocation, and each frees garbage whose finalizer makes more."""
    raised: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: raised.append(repr(unraisable.exc_value)))
    armed = True

    def more_garbage() -> None:
        if armed:
            cycle = _Cycle()
            cycle.self = cycle  # type: ignore[attr-defined]
            weakref.finalize(cycle, more_garbage)

    cache = OutputCache(tmp_path)
    cache.put("ab12", "out", 1.0)
    (tmp_path / "ab" / "ab12.json").write_text(DEEP_ENTRY)
    thresholds = gc.get_threshold()
    more_garbage()
    gc.set_threshold(1)
    try:
        missed = cache.get("ab12") is None
    finally:
        armed = False
        gc.set_threshold(*thresholds)
        gc.collect()
    assert missed
    assert raised == [], raised[:3]


def test_brackets_inside_an_entrys_output_are_not_nesting(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path)
    output = "[" * 1_000 + ' a quoted \\" [{ and a backslash \\ ' + "}" * 1_000
    cache.put("ab12", output, 1.0)
    entry = cache.get("ab12")
    assert entry is not None and entry.output == output


def test_a_poisoned_entry_runs_its_block_again(pages: Pages) -> None:
    body = '```python exec="1" id="p"\nprint("measured")\n```\n'
    pages.render(body)
    (entry,) = (pages.root / ".cache" / "floors-exec").glob("??/*.json")
    entry.write_text('{"output": "stale", "seconds": 1, "provenance": {"x": 1}, "claims": []}')
    html = pages.render(body)
    assert pages.engine.failures == []
    assert "measured" in html and "stale" not in html


def test_a_read_only_cache_runs_the_block_uncached_with_one_warning(
    pages: Pages, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Root writes through a folder's mode bits, so the refusal a read-only cache gives is made here.
    cache, write_text = pages.root / ".cache", Path.write_text

    def refuse(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.is_relative_to(cache):
            raise PermissionError(13, "Permission denied", str(self))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse)
    html = pages.render(
        """\
        ```python exec="1" id="one"
        print("first ran")
        ```

        ```python exec="1" id="two"
        print("second ran")
        ```
        """
    )
    assert pages.engine.failures == [], "a block that ran failed because its output could not be kept"
    assert "first ran" in html and "second ran" in html
    warned = [r for r in caplog.records if r.levelname == "WARNING" and "cannot be written" in r.getMessage()]
    assert len(warned) == 1, [r.getMessage() for r in caplog.records]
    assert "run uncached" in warned[0].getMessage() and "FLOORS_CACHE_DIR" in warned[0].getMessage()


def test_a_cache_that_cannot_drop_an_entry_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = OutputCache(tmp_path)
    cache.put("ab12", "out", 1.0)
    unused = OutputCache(tmp_path)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(CacheError, match="make it writable, or build with FLOORS_CACHE_DIR"):
        unused.prune()


# --- a snippet no page includes still fails in one line ----------------------------------------------


def test_a_snippet_that_is_not_python_is_named_by_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"^snippets/9-x/broken.py:2: the proof is not valid Python"):
        bundle("print(1)\ndef (:\n", "snippets/9-x/broken.py", tmp_path)


def test_an_included_snippet_that_is_not_utf8_is_named_by_page_and_file(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "latin.py").write_bytes(b"print('caf\xe9')\n")
    text = '```python exec="1" id="l"\n--8<-- "snippets/latin.py"\n```\n'
    with pytest.raises(ScanError, match=r"docs/index.md:2: snippets/latin.py is not UTF-8 text \(byte 10"):
        scan_markdown(text, "index.md", tmp_path)


# --- what a killed build leaves in the temporary directory --------------------------------------------


def test_scratch_of_a_dead_process_is_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    left = tmp_path / f"floors-claims-{int(dead.stdout)}-abc.jsonl"
    left.write_text("")
    folder = tmp_path / f"floors-previous-{int(dead.stdout)}-xyz"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}")
    mine = tmp_path / f"{scratch.prefix('claims')}def.jsonl"
    mine.write_text("")
    assert scratch.sweep("claims", tmp_path) == [left]
    assert scratch.sweep("previous", tmp_path) == [folder]
    assert mine.exists() and not left.exists() and not folder.exists()


@linux_only
def test_a_failure_comes_back_typed_under_every_start_method(method_pages: Pages) -> None:
    # The worker's reply and its error are records pickled across the pipe: under spawn the parent
    # unpickles what a fresh interpreter built, under forkserver what a forked server's child did.
    method_pages.render(
        '```python exec="1" id="ok"\nprint("fine")\n```\n\n```python exec="1" id="bad"\nx = 1\n1 / x0\n```\n'
    )
    assert method_pages.status() == {"ok": "ran", "bad": "failed"}
    [failure] = method_pages.engine.failures
    assert str(failure) == "docs/index.md › block 'bad' (docs/index.md:7): NameError: name 'x0' is not defined"
    assert 'File "docs/index.md", line 7' in failure.details


def test_a_scratch_folder_a_block_made_unremovable_never_stops_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root removes anything, so the refusal a non-root owner meets (`chmod 0` on a folder a block wrote) is
    # played by rmtree itself: once (permissions given back, then it goes), and for good (it stays, quietly).
    def left(name: str) -> Path:
        folder = tmp_path / f"floors-{scratch.WORKDIR}-999999999-{name}"
        (folder / "inner").mkdir(parents=True)
        return folder

    once, always = left("once"), left("always")
    real, refused = shutil.rmtree, set[Path]()

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path) == always or Path(path) not in refused:
            refused.add(Path(path))
            raise PermissionError(13, "Permission denied", str(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    assert scratch.sweep(scratch.WORKDIR, tmp_path) == [once]
    assert not once.exists() and always.exists()
