"""The engine in-process: a Markdown instance renders pages through the formatter, no MkDocs build.

Each test here pins a way a block used to vanish, leak or lie while the build passed.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markdown_exec
import pytest
from markdown import Markdown

from pytorch_floors.execution import Engine, OutputCache, ProofFailure, activate, formatter, scan_markdown
from pytorch_floors.execution.fence import format_seconds


@dataclass
class Pages:
    """Renders pages of a throw-away project the way the MkDocs hooks do, in this process."""

    root: Path
    engine: Engine

    def render(self, body: str, page: str = "index.md", *, rendered: str | None = None) -> str:
        """Scan `body` as the page's source; render it, or `rendered` (what a hook turned it into)."""
        text = textwrap.dedent(body)
        self.engine.planned[page] = scan_markdown(text, page, self.root)
        text = text if rendered is None else rendered
        self.engine.begin_page(page, page.removesuffix(".md") + "/")
        md = Markdown(
            extensions=["pymdownx.snippets", "pymdownx.superfences"],
            extension_configs={
                "pymdownx.snippets": {"base_path": [str(self.root)], "check_paths": True},
                "pymdownx.superfences": {
                    "custom_fences": [
                        {"name": "python", "class": "python", "validator": markdown_exec.validator, "format": formatter}
                    ]
                },
            },
        )
        html: str = md.convert(text)
        self.engine.end_page()
        self.engine.unaccounted()
        return html

    def status(self) -> dict[str, str]:
        return {r.block_id: r.status for r in self.engine.records}


def make_pages(root: Path, **engine_options: Any) -> Pages:
    engine = Engine(root, OutputCache(root / ".cache" / "floors-exec"), **engine_options)
    activate(engine)
    return Pages(root, engine)


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    yield make_pages(tmp_path)
    activate(None)


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


def test_a_cache_directory_deleted_under_the_build_fails_by_name_or_works(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = Path.mkdir

    def mkdir_then_vanish(self: Path, *args: Any, **kwargs: Any) -> None:
        real_mkdir(self, *args, **kwargs)
        if self.parent.name == "floors-exec":
            self.rmdir()

    monkeypatch.setattr(Path, "mkdir", mkdir_then_vanish)
    pages.render('```python exec="1" id="one"\nprint(1)\n```\n')
    assert pages.status() == {"one": "failed"}
    assert "FileNotFoundError" in str(pages.engine.failures[0])


def test_a_failing_replay_of_a_cached_session_block_is_recorded(pages: Pages) -> None:
    (pages.root / "flag.txt").write_text("5")
    page = """\
        ```python exec="1" id="define" session="s"
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


def test_a_bad_timeout_that_reaches_the_engine_is_a_named_failure(pages: Pages) -> None:
    pages.engine.planned["index.md"] = []
    with pytest.raises(ProofFailure, match="timeout must be a finite number"):
        pages.engine.planned["index.md"] = scan_markdown('```python exec="1" id="t"\n```\n', "index.md", pages.root)
        pages.engine.begin_page("index.md", "")
        pages.engine.run("print(1)", {"id": "t", "extra": {"timeout": "inf"}})
    assert pages.status() == {"t": "failed"}


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
