"""An include of part of a proof (`--8<-- "proof.py:2:4"`) names the proof's file and the lines it took."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown import Markdown
from test_engine import make_pages

from pytorch_floors.execution.scan import scan_markdown
from pytorch_floors.execution.snippet_target import included_lines, parse_target

LINES = [
    "import math",
    "# --8<-- [start:setup]",
    "x = 2",
    "y = 3",
    "# --8<-- [end:setup]",
    "print(x + y)",
    "raise ValueError('line seven')",
]

TARGETS = [
    "proof.py",
    "proof.py:1:3",
    "proof.py:3",
    "proof.py:6:",
    "proof.py::2",
    "proof.py:-2:",
    "proof.py:1:1,6:7",
    "proof.py:setup",
    "dir.v2/proof.py:2:3",
]


def _pymdownx_lines(base: Path, written: str) -> list[str]:
    """What pymdownx.snippets itself puts in place of the include (the reference)."""
    md = Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": {"base_path": [str(base)]}})
    expanded: list[str] = md.preprocessors["snippet"].run([f'--8<-- "{written}"'])
    return expanded


@pytest.mark.parametrize("written", TARGETS)
def test_the_lines_are_those_pymdownx_snippets_includes(written: str, tmp_path: Path) -> None:
    target = parse_target(written)
    assert target.path.endswith("proof.py") and ":" not in target.path
    (tmp_path / target.path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / target.path).write_text("\n".join(LINES) + "\n", encoding="utf-8")
    as_split = [*LINES, ""]  # the file ends with a newline
    assert [as_split[n - 1] for n in included_lines(target, as_split)] == _pymdownx_lines(tmp_path, written)


def test_a_colon_that_starts_no_range_or_section_is_part_of_the_name() -> None:
    assert parse_target("odd:name:x.py").path == "odd:name:x.py"


def test_a_block_that_includes_a_range_records_the_file_and_its_line(tmp_path: Path) -> None:
    """It used to record a proof named `proof.py:7`, with no lines, so a failure named no file and line."""
    (tmp_path / "proof.py").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    page = '```python exec="1" id="part"\n--8<-- "proof.py:7"\n```\n'
    [block] = scan_markdown(page, "index.md", tmp_path)
    assert block.proofs == ["proof.py"]
    assert block.line_map == [("proof.py", 7), ("proof.py", 8)]  # pymdownx counts the empty line after the last newline
    pages = make_pages(tmp_path)
    pages.render(page)
    [failure] = pages.engine.failures
    assert "proof.py:7" in str(failure) and "line seven" in str(failure)
