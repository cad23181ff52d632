import re
from pathlib import Path

import pytest

from pytorch_floors.execution.cache import OutputCache, machine_fingerprint
from pytorch_floors.execution.imports import local_imports, sources_digest
from pytorch_floors.execution.scan import ScanError, scan_markdown

PAGE = """\
Some prose.

```python exec="1" id="first"
print(1)
```

```python
print("not executed")
```

```python exec="1" id="second" session="s" timeout="5"
import math
--8<-- "snippets/proof.py"
```
"""


def test_scan_finds_blocks_options_and_line_map(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "proof.py").write_text("a = 1\nb = 2\nraise ValueError\n")
    blocks = scan_markdown(PAGE, "p.md", tmp_path)
    assert [b.block_id for b in blocks] == ["first", "second"]
    second = blocks[1]
    assert second.session == "s" and second.options["timeout"] == "5"
    assert second.proofs == ["snippets/proof.py"]
    assert second.locate(1) == ("docs/p.md", 12)
    assert second.locate(4) == ("snippets/proof.py", 3)
    assert second.locate(99) == ("docs/p.md", 11)


def test_scan_requires_unique_ids(tmp_path: Path) -> None:
    with pytest.raises(ScanError, match=r"docs/p.md:1: executed block has no id"):
        scan_markdown('```python exec="1"\nprint()\n```\n', "p.md", tmp_path)
    twice = '```python exec="1" id="a"\n```\n\n```python exec="on" id="a"\n```\n'
    with pytest.raises(ScanError, match="used twice"):
        scan_markdown(twice, "p.md", tmp_path)


def test_cache_key_covers_code_options_and_history() -> None:
    base = OutputCache.key("print(1)", {"html": False}, [])
    assert base == OutputCache.key("print(1)", {"html": False}, [])
    assert base != OutputCache.key("print(2)", {"html": False}, [])
    assert base != OutputCache.key("print(1)", {"html": True}, [])
    assert base != OutputCache.key("print(1)", {"html": False}, ["x = 1"])
    assert set(machine_fingerprint()) >= {"torch", "python", "cpu", "device", "omp_threads"}


def test_cache_modes(tmp_path: Path) -> None:
    on = OutputCache(tmp_path, "on")
    on.put("ab12", "out", 1.5)
    hit = on.get("ab12")
    assert hit is not None and hit.output == "out" and hit.seconds == 1.5
    assert OutputCache(tmp_path, "refresh").get("ab12") is None
    off = OutputCache(tmp_path / "off", "off")
    off.put("cd34", "out", 1.0)
    assert not (tmp_path / "off").exists()


@pytest.mark.parametrize(
    ("fence", "message"),
    [
        ('```python exec="1" id="a" timeout="abc"', "timeout must be a number"),
        ('```python exec="1" id="a" timeout="inf"', "timeout must be a finite number"),
        ('```python exec="1" id="a" timeout="nan"', "timeout must be a finite number"),
        ('```python exec="1" id="a" timeout="0"', "timeout must be a finite number"),
        ('```python exec="1" id="a" timout="300"', "unknown option timout="),
        ('```python exec="1" id="a" returncode="1"', "unknown option returncode="),
        ('```python exec="1" id="a" width="wide"', "width must be a positive whole number"),
        ('```python exec="1" id="a" workdir="../elsewhere"', "workdir must be a directory inside the project"),
        ('```py exec="1" id="a"', "only ```python fences execute; write python, not py"),
    ],
)
def test_scan_refuses_fences_that_would_not_run_as_written(tmp_path: Path, fence: str, message: str) -> None:
    with pytest.raises(ScanError, match=re.escape(f"docs/p.md:3: {message}")):
        scan_markdown(f"Text.\n\n{fence}\nprint(1)\n```\n", "p.md", tmp_path)


def test_scan_refuses_an_unclosed_fence(tmp_path: Path) -> None:
    page = 'Text.\n\n```python exec="1" id="a"\nprint(1)\n\nMore text.\n'
    with pytest.raises(ScanError, match=r"docs/p.md:3: the fence opened here is never closed"):
        scan_markdown(page, "p.md", tmp_path)
    with pytest.raises(ScanError, match=r"docs/p.md:1: the fence opened here is never closed"):
        scan_markdown("```text\nplain\n", "p.md", tmp_path)


def test_a_block_depends_on_the_project_files_it_imports_and_no_others(tmp_path: Path) -> None:
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.style import colour\n"
        '_LAZY = {"colour": "pkg.style"}\n'
    )
    (package / "measure.py").write_text("from . import units\n")
    (package / "units.py").write_text("MS = 1e-3\n")
    (package / "style.py").write_text("colour = 'red'\n")
    roots = (tmp_path / "src", tmp_path)
    files = {p.relative_to(tmp_path).as_posix() for p in local_imports("import torch\nfrom pkg import measure", roots)}
    assert files == {"src/pkg/__init__.py", "src/pkg/measure.py", "src/pkg/units.py"}
    lazy = {p.name for p in local_imports("from pkg import colour", roots)}
    assert lazy == {"__init__.py", "style.py"}

    before = sources_digest("from pkg import measure", roots)
    (package / "style.py").write_text("colour = 'blue'\n")
    assert sources_digest("from pkg import measure", roots) == before
    moved = tmp_path.parent / f"{tmp_path.name}-moved"
    tmp_path.rename(moved)
    assert sources_digest("from pkg import measure", (moved / "src", moved)) == before
    moved.rename(tmp_path)
    (package / "units.py").write_text("MS = 0.001\n")
    assert sources_digest("from pkg import measure", roots) != before
