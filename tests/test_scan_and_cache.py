import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytorch_floors.execution import cache as cache_module
from pytorch_floors.execution import imports
from pytorch_floors.execution.cache import OutputCache, machine_fingerprint
from pytorch_floors.execution.digest import block_digest, keyed_options
from pytorch_floors.execution.imports import local_imports, sources_digest
from pytorch_floors.execution.options import BlockOptions, OptionError
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
    assert second.session == "s" and second.options.timeout == 5.0
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


# --- a block's options, read once ---------------------------------------------------------------------


def test_a_blocks_options_are_read_once_into_what_the_engine_uses() -> None:
    written = {
        "exec": "1",
        "id": "b",
        "session": "s",
        "timeout": "5",
        "html": "1",
        "width": "80",
        "workdir": "snippets",
    }
    parsed = BlockOptions.parse(written)
    assert (parsed.id, parsed.timeout, parsed.session, parsed.html, parsed.width, parsed.workdir) == (
        "b",
        5.0,
        "s",
        True,
        80,
        "snippets",
    )
    assert parsed.limit(120.0) == 5.0 and parsed.written == written
    plain = BlockOptions.parse({"exec": "1", "id": "a"})
    assert (plain.timeout, plain.session, plain.html, plain.width, plain.workdir) == (None, "", False, None, None)
    assert plain.limit(7.0) == 7.0 and plain.result_language == "text" and not plain.source_above
    shown = BlockOptions.parse({"exec": "1", "id": "a", "html": "1", "source": "above"})
    assert shown.result_language == "" and shown.source_above
    assert BlockOptions.parse({"exec": "1", "id": "a", "result": "python"}).result_language == "python"
    with pytest.raises(OptionError, match="timeout must be a finite number"):
        BlockOptions.parse({"exec": "1", "id": "a", "timeout": "inf"})
    with pytest.raises(OptionError, match="executed block has no id"):
        BlockOptions.parse({"exec": "1"})


def test_the_cache_key_and_digest_read_every_option_as_written_but_id_and_timeout() -> None:
    # A recording is compared by the digest of the options the page wrote: the typed options keep them.
    written = {"exec": "1", "id": "b", "session": "s", "timeout": "5", "html": "1", "source": "above"}
    assert keyed_options(written) == {"exec": "1", "session": "s", "html": "1", "source": "above"}
    assert keyed_options(BlockOptions.parse(written).written) == keyed_options(written)
    digest = block_digest("print(1)", written, [], "")
    assert digest == block_digest("print(1)", {**written, "id": "other", "timeout": "9"}, [], "")
    assert digest != block_digest("print(1)", {**written, "html": "0"}, [], "")
    assert digest != block_digest("print(2)", written, [], "")
    assert digest != block_digest("print(1)", written, ["x = 1"], "")
    assert digest != block_digest("print(1)", written, [], "sources")
    assert digest.startswith("sha256:")


# --- the import scan remembers files, not versions of files ----------------------------------------------


def test_the_import_scan_remembers_one_version_of_each_file(tmp_path: Path) -> None:
    # `mkdocs serve` rebuilds after every edit: remembering each file by its modification time kept
    # every version of it, for the life of the process.
    helper = tmp_path / "helper.py"
    imports._parsed.clear()
    imports._file_imports.clear()
    digests = set()
    for edit in range(1, 21):
        helper.write_text(f"import os\nX = {edit}\n")
        os.utime(helper, ns=(edit * 10**9, edit * 10**9))  # a new time even where the clock is coarse
        digests.add(sources_digest("import helper", (tmp_path,)))
    assert len(digests) == 20
    assert len(imports._parsed) == 1 and len(imports._file_imports) == 1


def test_the_import_scan_remembers_at_most_its_size_of_files(tmp_path: Path) -> None:
    seen: list[str] = []

    def name(path: Path, package: str) -> str:
        seen.append(path.name)
        return path.name

    memo = imports._PerFile(name, size=2)
    files = [tmp_path / f"m{n}.py" for n in range(3)]
    for path in files:
        path.write_text("")
        memo(path)
    memo(files[2])
    assert len(memo) == 2 and seen == ["m0.py", "m1.py", "m2.py"]
    memo(files[0])
    assert seen[-1] == "m0.py" and len(memo) == 2


# --- builds that share a cache ------------------------------------------------------------------------------

HOLDER = """\
import sys
from pathlib import Path
from pytorch_floors.execution.cache import OutputCache
cache = OutputCache(Path(sys.argv[1]))
cache.put("aa11", "theirs", 1.0)
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("ends", ["exits", "is killed"])
def test_a_prune_leaves_the_cache_alone_while_another_build_uses_it(
    tmp_path: Path, ends: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Two builds sharing a cache: the one that finished first used to delete what the other had just written.
    command = [sys.executable, "-c", HOLDER, str(tmp_path)]
    holder = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        mine = OutputCache(tmp_path)
        mine.put("bb22", "mine", 1.0)
        with caplog.at_level(logging.INFO, logger="mkdocs.plugins.pytorch_floors"):
            assert mine.prune() == 0
        assert (tmp_path / "aa" / "aa11.json").is_file()
        assert f"in use by another build (process {holder.pid})" in caplog.text
    finally:
        if ends == "exits":
            holder.communicate("", timeout=30)
        else:
            holder.kill()
            holder.wait(30)
    assert mine.prune() == 1
    assert not (tmp_path / "aa" / "aa11.json").exists() and (tmp_path / "bb" / "bb22.json").is_file()
    assert [p.name for p in (tmp_path / ".builds").iterdir()] == [f"{os.getpid()}.lock"]
    mine.close()
    assert list((tmp_path / ".builds").iterdir()) == []


PRUNER = """\
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("ready", flush=True)
    sys.stdin.read()
"""


def test_a_prune_waits_for_another_builds_prune(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = OutputCache(tmp_path)
    old.put("aa11", "unused", 1.0)
    old.close()
    command = [sys.executable, "-c", PRUNER, str(tmp_path / ".prune.lock")]
    pruning = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert pruning.stdout is not None and pruning.stdout.readline() == "ready\n"
        monkeypatch.setattr(cache_module, "LOCK_WAIT", 0.2)
        assert OutputCache(tmp_path).prune() == 0
        assert (tmp_path / "aa" / "aa11.json").is_file()
    finally:
        pruning.communicate("", timeout=30)
    assert OutputCache(tmp_path).prune() == 1
