"""The engine in-process: a Markdown instance renders pages through the formatter, no MkDocs build.

Each test here pins a way a block used to vanish, leak or lie while the build passed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import re
import shutil
import sys
import textwrap
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest
from markdown import Markdown

from conftest import TWO_PROOFS, without_spans
from pytorch_floors.execution import BlockResult, Engine, OutputCache, ProofFailure, scan_markdown
from pytorch_floors.execution.cache import machine_fingerprint
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.output import TAIL_LINES
from pytorch_floors.execution.process.runner import end_all
from pytorch_floors.execution.progress import Progress
from pytorch_floors.execution.provenance import collect, of_outputs
from pytorch_floors.execution.report import report_json
from pytorch_floors.execution.secrets import SecretFinder
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.plugin.fence import formatter, validator
from pytorch_floors.plugin.pages import report_html


@dataclass
class Pages:
    """Renders pages of a throw-away project the way the MkDocs hooks do, in this process."""

    root: Path
    engine: Engine

    def render(self, body: str, page: str = "index.md", *, rendered: str | None = None) -> str:
        """Scan `body` as the page's source; render it, or `rendered` (what a hook turned it into)."""
        text = textwrap.dedent(body)
        self.engine.plan(page, scan_markdown(text, page, self.root))
        text = text if rendered is None else rendered
        self.engine.begin_page(page, page.removesuffix(".md") + "/")
        md = Markdown(
            extensions=["pymdownx.snippets", "pymdownx.superfences"],
            extension_configs={
                "pymdownx.snippets": {"base_path": [str(self.root)], "check_paths": True},
                "pymdownx.superfences": {
                    "custom_fences": [
                        {
                            "name": "python",
                            "class": "python",
                            "validator": validator,
                            "format": partial(formatter, engine=self.engine, languages={page: PageLanguage()}),
                        }
                    ]
                },
            },
        )
        html: str = md.convert(text)
        self.engine.end_page()
        self.engine.unaccounted()
        return self.engine.unshown(html)

    def status(self) -> dict[str, str]:
        return {r.block_id: r.status for r in self.engine.records}


def make_pages(root: Path, **engine_options: Any) -> Pages:
    engine = Engine(root, OutputCache(root / ".cache" / "floors-exec"), **engine_options)
    return Pages(root, engine)


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    yield make_pages(tmp_path)


# --- every planned block ends ran, cached or failed ------------------------------------------------


def test_an_error_outside_the_proof_is_a_named_failure_not_a_vanished_block(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_run(code: str, options: dict[str, Any]) -> str:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(pages.engine, "run", broken_run)
    html = pages.render(
        """\
        ```python exec="1" id="victim"
        print(1)
        ```
        """
    )
    assert "floors-proof-failure" in html
    assert pages.status() == {"victim": "failed"}
    assert "docs/index.md › block 'victim' (docs/index.md:1): the proof engine failed: RuntimeError: engine bug" in [
        str(f) for f in pages.engine.failures
    ]


@pytest.mark.parametrize(
    "body",
    [
        'Text\n\n    ```python exec="1" id="indented"\n    print("printed")\n    ```\n',
        '- item\n\n        ```python exec="1" id="indented"\n        print("printed")\n        ```\n',
    ],
    ids=["after-a-paragraph", "eight-spaces-in-a-list"],
)
def test_a_fence_read_as_an_indented_code_block_is_a_named_failure(pages: Pages, body: str) -> None:
    # SuperFences runs it, then shows its source as code: the output never reached the page.
    html = pages.render(body)
    assert "printed\n" not in html.replace('print("printed")', "")
    assert pages.status() == {"indented": "failed"}
    assert [r.status for r in pages.engine.records] == ["failed"]
    [failure] = pages.engine.failures
    assert str(failure).startswith("docs/index.md › block 'indented' (docs/index.md:")
    assert "Markdown reads the fence as an indented code block" in str(failure)
    assert "floors-block" not in html


def test_a_fence_indented_inside_a_list_item_runs_and_shows(pages: Pages) -> None:
    html = pages.render('- item\n\n    ```python exec="1" id="listed"\n    print("printed")\n    ```\n')
    assert pages.status() == {"listed": "ran"} and "printed" in html and "floors-block" not in html


def test_a_block_process_does_not_rerun_the_builds_main_script(
    pages: Pages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Started as the `mkdocs` console script, each block's process imported MkDocs' command line first.
    script = tmp_path / "console_script.py"
    script.write_text(f"open({str(tmp_path / 'rerun.txt')!r}, 'a').write('x')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    html = pages.render('```python exec="1" id="plain"\nimport sys\nprint("mkdocs" in sys.modules)\n```\n')
    assert pages.status() == {"plain": "ran"} and "False" in html
    assert not (tmp_path / "rerun.txt").exists()


def test_the_proof_log_never_says_zero_seconds(pages: Pages, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="mkdocs.plugins.pytorch_floors")
    pages.render('```python exec="1" id="quick"\nprint(1)\n```\n')
    pages.engine.records.clear()
    pages.render('```python exec="1" id="quick"\nprint(1)\n```\n', page="again.md")
    lines = [r.getMessage() for r in caplog.records if "quick" in r.getMessage() and "ran in" in r.getMessage()]
    assert len(lines) == 2 and "cached (ran in" in lines[1], lines
    assert not any("0.00 s" in line for line in lines)
    assert all(re.search(r"ran in \d+(\.\d+)? (s|ms|µs)\b", line) for line in lines), lines


@pytest.mark.parametrize("entry", ["null", "[1, 2, 3]", '{"output": 3, "seconds": 1}', '"text"'])
def test_a_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, entry: str) -> None:
    cache = OutputCache(tmp_path)
    cache.put("ab12", "out", 1.0)
    (tmp_path / "ab" / "ab12.json").write_text(entry)
    assert cache.get("ab12") is None


def test_an_unwritable_cache_fails_the_block_by_name(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    # A read-only cache directory (chmod does not stop root, who runs CI here, so the write is refused directly).
    def refuse(self: Path, *args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refuse)
    html = pages.render('```python exec="1" id="kept"\nprint("hello")\n```\n')
    assert pages.status() == {"kept": "failed"}
    assert "PermissionError" in str(pages.engine.failures[0]) and "floors-proof-failure" in html


def test_a_cache_directory_deleted_under_the_build_is_named_and_the_block_still_runs(
    pages: Pages, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_mkdir = Path.mkdir

    def mkdir_then_vanish(self: Path, *args: Any, **kwargs: Any) -> None:
        real_mkdir(self, *args, **kwargs)
        if self.parent.name == "floors-exec":
            self.rmdir()

    monkeypatch.setattr(Path, "mkdir", mkdir_then_vanish)
    html = pages.render('```python exec="1" id="one"\nprint("ran")\n```\n')
    # The block's output is good; a cache that cannot keep it is a warning naming the cache (issue 34, 10).
    assert pages.status() == {"one": "ran"} and "ran" in html
    assert any("cannot be written (No such file or directory)" in r.getMessage() for r in caplog.records)


def test_a_checkout_moved_elsewhere_reads_its_cache(tmp_path: Path) -> None:
    # CI restores `.cache/` into a clone at another path (actions/cache): nothing in a key may name where
    # the checkout lies, neither the project module a block imports, nor an include, nor a session's history.
    first = tmp_path / "here" / "project"
    (first / "src" / "helpers").mkdir(parents=True)
    (first / "src" / "helpers" / "__init__.py").write_text("def twice(x):\n    return 2 * x\n")
    (first / "snippets").mkdir()
    (first / "snippets" / "part.py").write_text("from helpers import twice\nprint(twice(21))\n")
    page = """\
        ```python exec="1" id="setup" session="s" workdir="."
        import sys
        sys.path.insert(0, "src")  # as the project's own package is installed from src/ (relative: in the project)
        import helpers
        ```

        ```python exec="1" id="included" session="s" workdir="."
        --8<-- "snippets/part.py"
        ```
        """
    made = make_pages(first)
    made.render(page)
    assert made.status() == {"setup": "ran", "included": "ran"}
    moved = tmp_path / "elsewhere" / "deeper" / "clone"
    shutil.copytree(first, moved)
    again = make_pages(moved)
    html = again.render(page)
    assert again.status() == {"setup": "cached", "included": "cached"} and "42" in html
    # The key still follows the content: an edit to the imported module runs its blocks again.
    (moved / "src" / "helpers" / "__init__.py").write_text("def twice(x):\n    return x + x\n")
    edited = make_pages(moved)
    edited.render(page)
    assert edited.status() == {"setup": "ran", "included": "ran"}


def test_a_failing_replay_of_a_cached_session_block_is_recorded(pages: Pages) -> None:
    (pages.root / "flag.txt").write_text("5")
    page = """\
        ```python exec="1" id="define" session="s" workdir="."
        value = int(open("flag.txt").read())
        ```

        ```python exec="1" id="use" session="s"
        print("double is", VALUE_EXPR)
        ```
        """
    pages.render(page.replace("VALUE_EXPR", "2 * value"))
    assert pages.status() == {"define": "ran", "use": "ran"}
    (pages.root / "flag.txt").unlink()
    pages.engine.records.clear()
    html = pages.render(page.replace("VALUE_EXPR", "3 * value"))
    assert pages.status() == {"define": "cached", "use": "failed"}
    assert "an earlier block of its session failed: FileNotFoundError" in str(pages.engine.failures[-1])
    assert "floors-proof-failure" in html


def test_a_planned_block_the_renderer_never_ran_fails(pages: Pages) -> None:
    # Whatever drops a fence between the scan and the renderer (a hook rewriting the page, a fence the
    # Markdown parser reads differently), the block may not leave the build without a result.
    pages.render('Text.\n\n```python exec="1" id="hidden"\nprint(1)\n```\n', rendered="Text.\n")
    assert pages.status() == {"hidden": "failed"}
    assert "rendered without running this block" in str(pages.engine.failures[0])


def test_the_engine_runs_a_block_with_the_options_its_scan_parsed(pages: Pages) -> None:
    # The fence only names the block: its options (here its console width) are the ones the scan parsed.
    code = 'import os\nprint(os.environ["COLUMNS"])'
    fence = f'```python exec="1" id="t" width="33"\n{code}\n```\n'
    pages.engine.plan("index.md", scan_markdown(fence, "index.md", pages.root))
    pages.engine.begin_page("index.md", "")
    assert pages.engine.run(code, "t").strip() == "33"
    assert pages.status() == {"t": "ran"}


def test_the_fence_renders_a_block_as_the_options_its_scan_parsed_say(pages: Pages) -> None:
    # The fence reads no option itself: whether a fence runs (`exec`), the code above its output (`source`)
    # and the language its output is highlighted as (`result`) come from the scan's BlockOptions.
    html = pages.render(
        '```python exec="1" id="shown" source="above"\nprint("out-shown")\n```\n\n'
        '```python exec="yes" id="py" result="python"\nprint("x = 1")\n```\n\n'
        '```python exec="0" id="not"\nprint("never")\n```\n'
    )
    assert pages.status() == {"shown": "ran", "py": "ran"}
    listing, output = (
        html.index('<span class="s2">"out-shown"</span>'),
        html.index('<span class="floors-line">out-shown</span>'),
    )
    assert '<div class="floors-exec">' in html and listing < output
    assert '<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>' in html


def test_proof_times_read_well() -> None:
    assert [format_seconds(s) for s in (0.0, 4e-5, 3e-4, 0.012, 0.3, 1.234, 75.2)] == [
        "0 µs",
        "40 µs",
        "0.3 ms",
        "12 ms",
        "300 ms",
        "1.2 s",
        "75 s",
    ]
    assert json.dumps(format_seconds(99.7e-3)) == '"100 ms"'


# --- no process of a block outlives it --------------------------------------------------------------


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether `pid` has ended (a zombie waiting for its reaper counts as ended)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


SPAWNS = """\
import os, subprocess
children = [subprocess.Popen(["sleep", "300"]).pid]
for _ in range(50):
    pid = os.fork()
    if pid == 0:
        os.execvp("sleep", ["sleep", "300"])
    children.append(pid)
with open("children.txt", "w") as out:
    out.write(" ".join(map(str, children)))
"""


def test_processes_a_block_starts_end_with_the_block(pages: Pages) -> None:
    pages.render(f'```python exec="1" id="spawn" workdir="."\n{SPAWNS}print("started")\n```\n')
    assert pages.status() == {"spawn": "ran"}
    started = pids(pages.root / "children.txt")
    assert len(started) == 51
    assert all(gone(pid) for pid in started)


@pytest.mark.waits
def test_processes_of_a_timed_out_block_end_with_it(pages: Pages) -> None:
    pages.render(f'```python exec="1" id="stuck" timeout="5" workdir="."\n{SPAWNS}while True:\n    pass\n```\n')
    assert pages.status() == {"stuck": "failed"}
    assert "time limit of 5 s" in str(pages.engine.failures[0])
    assert all(gone(pid) for pid in pids(pages.root / "children.txt"))


def test_a_session_process_and_its_children_end_at_shutdown(pages: Pages) -> None:
    fence = f'```python exec="1" id="a" session="s" workdir="."\n{SPAWNS}```\n'
    pages.engine.plan("index.md", scan_markdown(fence, "index.md", pages.root))
    pages.engine.begin_page("index.md", "")
    pages.engine.run(SPAWNS.removesuffix("\n"), "a")
    started = pids(pages.root / "children.txt")
    end_all()
    assert all(gone(pid) for pid in started)


WRITES_PID = 'import os\nopen("pid", "w").write(str(os.getpid()))\n'


def test_closing_a_build_ends_its_own_processes_and_no_other_builds(tmp_path: Path) -> None:
    # Two builds in one process (the next `mkdocs serve` build, a test beside another): the build that
    # ends used to kill every block process of the process, the other build's session too.
    builds = []
    for name in ("ending", "running"):
        (tmp_path / name).mkdir()
        pages = make_pages(tmp_path / name)
        fence = f'```python exec="1" id="a" session="s" workdir="."\n{WRITES_PID}```\n'
        pages.engine.plan("index.md", scan_markdown(fence, "index.md", pages.root))
        pages.engine.begin_page("index.md", "")
        pages.engine.run(WRITES_PID.removesuffix("\n"), "a")
        builds.append((pages.engine, int((pages.root / "pid").read_text())))
    (ending, ending_pid), (running, running_pid) = builds
    ending.close()
    assert gone(ending_pid)
    assert not gone(running_pid, within=1.0)
    running.close()
    assert gone(running_pid)


# --- nothing leaks into a block, and what it prints is what a terminal would show ------------------


def test_each_block_gets_its_own_explicit_environment(pages: Pages, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOORS_TEST_SECRET_TOKEN", "hunter2")
    html = pages.render(
        """\
        ```python exec="1" id="wide" width="40"
        import os
        print("wide", os.environ.get("COLUMNS"))
        ```

        ```python exec="1" id="later"
        import os
        print("later", os.environ.get("COLUMNS"), "FLOORS_TEST_SECRET_TOKEN" in os.environ, "PATH" in os.environ)
        ```
        """
    )
    assert "wide 40" in html
    assert "later None False True" in html


def test_the_fork_server_preloads_torch_and_not_the_build(pages: Pages) -> None:
    html = pages.render(
        """\
        ```python exec="1" id="modules"
        import sys
        names = ("torch", "mkdocs", "markdown", "jinja2", "markdown_exec", "pytorch_floors.plugin.fence")
        loaded = [m for m in names if m in sys.modules]
        print("loaded:", " ".join(loaded))
        ```
        """
    )
    assert "loaded: torch\n" in without_spans(html)


def test_output_behaves_like_a_real_stdout(pages: Pages) -> None:
    (pages.root / "snippets").mkdir()
    (pages.root / "snippets" / "where.py").write_text(
        "import os, subprocess, sys\n"
        'sys.stdout.buffer.write(b"bytes\\n")\n'
        'os.write(1, b"fd1\\n")\n'
        'subprocess.run(["echo", "child"], check=True)\n'
        'print("file", __file__, "argv", sys.argv[0])\n'
    )
    (pages.root / "sub").mkdir()
    html = pages.render(
        """\
        ```python exec="1" id="where"
        --8<-- "snippets/where.py"
        ```

        ```python exec="1" id="cwd" workdir="sub"
        import os
        print("cwd", os.getcwd())
        ```
        """
    )
    assert "bytes\nfd1\nchild\nfile snippets/where.py argv snippets/where.py" in without_spans(html)
    assert "cwd sub" in html


def test_machine_paths_and_control_bytes_never_reach_the_page(pages: Pages) -> None:
    html = pages.render(
        """\
        ```python exec="1" id="paths"
        import sys, tempfile
        from pathlib import Path
        print(sys.prefix, Path.home(), tempfile.gettempdir())
        print("\\x1b[31mred\\x1b[0m and \\x00 nul", end="\\n")
        print("progress 10%\\rprogress 100%")
        ```
        """
    )
    assert sys.prefix not in html and str(Path.home()) + "/" not in html
    assert "&lt;env&gt; ~ &lt;tmp&gt;" in html
    assert "red and \\x00 nul" in html and "\x1b" not in html and "\x00" not in html
    assert "progress 100%" in html and "progress 10%" not in html


def test_too_much_output_fails_clearly(tmp_path: Path) -> None:
    pages = make_pages(tmp_path, max_output=1000)
    pages.render('```python exec="1" id="flood"\nprint("x" * 5000)\n```\n')
    assert pages.status() == {"flood": "failed"}
    assert "OutputTooLarge: the block printed 5,001 bytes; a page shows at most 1,000" in str(pages.engine.failures[0])


def test_html_output_must_be_balanced(pages: Pages) -> None:
    pages.render('```python exec="1" id="escape" html="1"\nprint("<p>hi</p></article></main>")\n```\n')
    assert pages.status() == {"escape": "failed"}
    assert "</article> closes an element it did not open" in str(pages.engine.failures[0])


def test_a_killed_worker_names_the_signal(pages: Pages) -> None:
    pages.render('```python exec="1" id="oom"\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n```\n')
    assert "killed by SIGKILL — out of memory?" in str(pages.engine.failures[0])


@pytest.mark.parametrize(
    ("ending", "said"),
    [
        ("raise ValueError('planted')", "ValueError: planted"),
        ("os._exit(3)", "WorkerDied: the block's process ended without reporting (exit code 3)"),
    ],
    ids=["raises", "dies"],
)
def test_a_failed_block_shows_the_end_of_what_it_printed(
    pages: Pages, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, ending: str, said: str
) -> None:
    # Neither the log nor serve's banner showed what a block printed before it failed.
    monkeypatch.setattr(pages.engine, "_secrets", SecretFinder({"GITHUB_TOKEN": "ghp_fake123floors"}))
    html = pages.render(
        """\
        ```python exec="1" id="noisy"
        import os, sys
        for n in range(100):
            print("step", n)
        print("token ghp_fake" + "123floors in", sys.prefix, "\x1b[31mred\x1b[0m")
        {ending}
        ```
        """.replace("{ending}", ending)
    )
    [failure] = pages.engine.failures
    assert said in str(failure)
    # Its last lines (TAIL_LINES), safe to show: no secret, no machine path, no escape.
    assert failure.output == "…\n" + "\n".join(
        [*(f"step {n}" for n in range(100 - TAIL_LINES + 1, 100)), "token <GITHUB_TOKEN withheld> in <env> red"]
    )
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    assert "What it printed before it failed:\n  | …\n  | step 81\n" in logged, logged
    banner = html.split("floors-proof-failure", 1)[1]
    assert "What it printed before it failed:" in banner and "step 99\ntoken &lt;GITHUB_TOKEN withheld&gt;" in banner
    assert "ghp_fake123floors" not in html + logged and sys.prefix not in html + logged


@pytest.mark.waits
def test_a_block_that_runs_out_of_time_shows_what_it_printed(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="stuck" timeout="1"
        import time
        print("loaded the data")
        time.sleep(60)
        ```
        """
    )
    [failure] = pages.engine.failures
    assert "BlockTimeout" in str(failure) and failure.output == "loaded the data"


def test_a_failure_without_output_shows_none(pages: Pages) -> None:
    html = pages.render('```python exec="1" id="quiet"\nraise ValueError("silent")\n```\n')
    assert pages.engine.failures[0].output == ""
    assert "What it printed" not in html


def test_a_failure_logs_the_proofs_own_frames(pages: Pages, caplog: pytest.LogCaptureFixture) -> None:
    (pages.root / "snippets").mkdir()
    (pages.root / "snippets" / "broken.py").write_text("def f():\n    return 1 / 0\n\n\nf()\n")
    pages.render('```python exec="1" id="broken"\n--8<-- "snippets/broken.py"\n```\n')
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    assert "(snippets/broken.py:2): ZeroDivisionError" in logged
    assert 'File "snippets/broken.py", line 5' in logged and 'File "snippets/broken.py", line 2' in logged
    assert "worker.py" not in logged


# --- the cache key: what a block imports, the thread settings; unused entries pruned ---------------


def test_only_the_project_files_a_block_imports_invalidate_it(pages: Pages) -> None:
    package = pages.root / "src" / "helpers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "units.py").write_text("SCALE = 2\n")
    (package / "style.py").write_text("COLOUR = 'red'\n")
    page = (
        '```python exec="1" id="scaled" workdir="."\n'
        'import sys\nsys.path.insert(0, "src")\nfrom helpers import units\nprint(units.SCALE)\n```\n'
    )
    pages.render(page)
    (package / "style.py").write_text("COLOUR = 'blue'\n")
    pages.render(page)
    (package / "units.py").write_text("SCALE = 3\n")
    html = pages.render(page)
    assert [r.status for r in pages.engine.records] == ["ran", "cached", "ran"]
    assert "3" in html


def test_a_helper_edited_within_the_second_its_bytecode_was_cached_runs_as_edited(pages: Pages) -> None:
    # Python trusts a cached .pyc while the source keeps its modification second and its size: an edit of the same
    # length within that second (a save, then a format-on-save) ran the old code, cached under the new source.
    package = pages.root / "src" / "helpers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    units = package / "units.py"
    units.write_text("SCALE = 2\n")
    page = (
        '```python exec="1" id="scaled" workdir="."\n'
        'import sys\nsys.path.insert(0, "src")\nfrom helpers import units\nprint(units.SCALE)\n```\n'
    )
    assert "2" in pages.render(page)
    py_compile.compile(str(units), cfile=importlib.util.cache_from_source(str(units)), doraise=True)
    cached = units.stat()
    units.write_text("SCALE = 3\n")
    os.utime(units, ns=(cached.st_atime_ns, cached.st_mtime_ns))  # the same second, the same size
    html = pages.render(page)
    assert [r.status for r in pages.engine.records] == ["ran", "ran"]
    assert "3" in html, html


def test_thread_settings_are_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    two = OutputCache.key("print(1)", {}, [])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert OutputCache.key("print(1)", {}, []) != two
    assert {"cores", "usable_cores", "omp_threads"} <= set(machine_fingerprint())


def test_a_complete_build_prunes_entries_nothing_used(tmp_path: Path) -> None:
    old = OutputCache(tmp_path)
    old.put("aa11", "stale", 1.0)
    old.put("bb22", "kept", 1.0)
    fresh = OutputCache(tmp_path)
    assert fresh.get("bb22") is not None
    fresh.put("cc33", "new", 1.0)
    assert fresh.prune() == 1
    assert fresh.get("aa11") is None and fresh.get("bb22") is not None and fresh.get("cc33") is not None


# --- the build report -------------------------------------------------------------------------------


def test_the_build_report_is_a_wrapped_table_with_breakable_paths() -> None:
    records = [
        BlockResult("floors/3-boundary.md", "crossing-cost", "snippets/3-boundary/crossing_cost.py", "ran", 0.0004),
        BlockResult("index.md", "map", None, "cached", 1.234, output="x" * 100),
        BlockResult("index.md", "broken", None, "failed", None, error="boom"),
    ]
    html = report_html(records, "en")
    assert re.search(r'<div class="md-typeset__scrollwrap"><div class="md-typeset__table">\s*<table', html)
    segments = r'<span class="floors-report__segment">{}</span>'
    proof = "<wbr>".join(segments.format(part) for part in ("snippets/", "3-boundary/", "crossing_cost.py"))
    assert proof in html and "<wbr>".join(segments.format(p) for p in ("floors/", "3-boundary.md")) in html
    assert "0.4 ms" in html and "1.2 s" in html and "0.00" not in html
    assert "3 executed blocks: 1 ran in this build (0.4 ms in total), 1 came from the cache, 1 failed." in html
    data = json.loads(report_json(records, {}))
    assert data["totals"]["failed"] == 1 and all("output" not in block for block in data["blocks"])


# --- provenance: a cached output keeps what it was measured on --------------------------------------


def test_a_cached_output_keeps_the_provenance_of_the_run_that_produced_it(tmp_path: Path) -> None:
    earlier = replace(collect(), built="2026-01-02", threads=1)
    page = '```python exec="1" id="measured"\nprint(1)\n```\n'
    first = make_pages(tmp_path, provenance=earlier)
    first.render(page)
    today = collect()
    second = make_pages(tmp_path, provenance=today)
    second.render(page)
    [result] = second.engine.records
    assert result.status == "cached" and result.provenance == earlier
    shown = of_outputs([r.provenance for r in second.engine.records], today)
    assert [p.built for p in shown] == ["2026-01-02"] and shown[0].threads == 1
    assert of_outputs([None], today) == [today]
    mixed = of_outputs([today, earlier, earlier], today)
    assert [p.built for p in mixed] == ["2026-01-02", today.built]


def test_the_scan_expands_includes_exactly_as_the_page_hands_them_over(pages: Pages) -> None:
    # A recording runs the scan's code without Markdown, and its digest is checked against the
    # build's: the two must be the same code, or the engine refuses the block by name.
    (pages.root / "whole.py").write_text("a = 1\n\nif a:\n    print('whole', a)\n", encoding="utf-8")
    (pages.root / "bare.py").write_text("print('no final newline')", encoding="utf-8")
    (pages.root / "parts.py").write_text(
        "x = 1\n# --8<-- [start:show]\nprint('section', x)\n# --8<-- [end:show]\nprint('tail')\n", encoding="utf-8"
    )
    html = pages.render(
        """
        ```python exec="1" id="whole"
        --8<-- "whole.py"
        ```

        ```python exec="1" id="bare"
        --8<-- "bare.py"
        print("after")
        ```

        ```python exec="1" id="ranges"
        --8<-- "parts.py:1:1,5:5"
        ```

        ```python exec="1" id="section"
        x = 2
        --8<-- "parts.py:show"
        ```

        ```python exec="1" id="indented"
        for n in range(2):
            --8<-- "bare.py"
        ```

        - Inside a list item:

            ```python exec="1" id="listed"
            --8<-- "whole.py"
            ```
        """
    )
    # "listed" is "whole" again, inside a list item: the same code, so the same key, and the cache answers.
    assert pages.status() == {
        **dict.fromkeys(["whole", "bare", "ranges", "section", "indented"], "ran"),
        "listed": "cached",
    }
    assert "section 2" in html and "tail" in html
    assert all(r.digest and r.digest.startswith("sha256:") for r in pages.engine.records)


def test_code_the_scan_did_not_find_is_refused_by_name(pages: Pages) -> None:
    pages.engine.plan("index.md", scan_markdown('```python exec="1" id="t"\nprint(1)\n```\n', "index.md", pages.root))
    pages.engine.begin_page("index.md", "")
    with pytest.raises(ProofFailure, match=r"other code than its scan found, first at its line 1 .*'print\(2\)'"):
        pages.engine.run("print(2)", "t")
    assert pages.status() == {"t": "failed"}


def test_a_python_a_block_starts_imports_what_the_build_imports(
    pages: Pages, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # On a bare GPU box this package is a checkout on PYTHONPATH, not installed: a proof's own child
    # process (the CPU-capability proof runs one per setting) could not import it.
    elsewhere = tmp_path / "checkout" / "src"  # not the folder blocks run in, which `-c` puts on the path
    elsewhere.mkdir(parents=True)
    (elsewhere / "floors_on_the_path_only.py").write_text("WHERE = 'on the path'\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    html = pages.render(
        """\
        ```python exec="1" id="child"
        import subprocess, sys
        code = "import floors_on_the_path_only as m; print(m.WHERE)"
        print("child:", subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip())
        ```
        """
    )
    assert "child: on the path" in html


def test_a_failed_child_process_names_what_it_wrote(pages: Pages) -> None:
    pages.render(
        """\
        ```python exec="1" id="child-fails"
        import subprocess, sys
        code = "import sys; print('half way'); sys.exit('the reason the child gave')"
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        ```
        """
    )
    [failure] = pages.engine.failures
    assert "CalledProcessError" in str(failure)
    assert "Its output ended: the reason the child gave" in str(failure)


@pytest.mark.waits  # the open bar's block waits for its thread until shortly before its 6 s limit
def test_an_idle_progress_monitor_is_ended_and_an_open_bar_is_not(pages: Pages) -> None:
    # torch's fx interpreter makes a disabled tqdm bar under torch.compile wherever tqdm is installed;
    # the first bar starts tqdm's monitor thread, which a disabled bar never ends. A block's threads are
    # waited for until shortly before its limit, hence the short limits: the open bar's block waits.
    pages.render(
        """\
        ```python exec="1" id="disabled-bar" timeout="6"
        from tqdm import tqdm
        tqdm(total=3, disable=True)
        print("made a disabled bar")
        ```

        ```python exec="1" id="open-bar" timeout="6"
        import sys
        from tqdm import tqdm
        tqdm.monitor_interval = 0.05  # a monitor again (the last one was ended), which this open bar keeps
        bar = tqdm(total=3, file=sys.stdout)
        ```
        """
    )
    assert pages.status() == {"disabled-bar": "ran", "open-bar": "failed"}
    [failure] = pages.engine.failures
    assert "ThreadsLeftRunning" in str(failure) and "tqdm_monitor" in str(failure)


def test_a_proof_is_numbered_among_the_builds_proofs_whatever_else_was_recorded_before_it(pages: Pages) -> None:
    # A serve session's background build records each lab before the proofs of a page rendered after the labs:
    # its last proof said "proof 97/88", the labs counted with the proofs.
    events: list[Progress] = []
    pages.engine.on_progress = events.append
    pages.engine.record(BlockResult("labs/1-program.py", "notebook", "labs/1-program.py", "ran", 1.0))
    pages.render(TWO_PROOFS)
    assert {(event.where.rsplit(" ", 1)[-1], event.number, event.total) for event in events} == {
        ("one", 1, 2),
        ("two", 2, 2),
    }
