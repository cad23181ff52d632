"""Issue 55's defects of the files a build reads from the project: each refused in one line, never a traceback.

`translations.lock`, the glossary, `messages.zh.yml` and a page's front matter are YAML a person (or an
attacker's pull request) writes; an include in a page's prose is a path. A file that is not UTF-8, not
YAML, too large, or an alias bomb, and an include of a file that is not there, are each one line naming
the file and line, from the build and from the command line alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FixtureSite
from pytorch_floors.i18n.translation import LOCK_FILE
from pytorch_floors.i18n.yaml_files import MAX_BYTES


def _translations(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "translations", *args, "--project", str(project)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


# --- D10: translations.lock that is not UTF-8, not YAML, or holds a 1 MB key --------------------------------

BAD_LOCKS = {
    "not-yaml": (b"zh/index.md:\n  two: [unclosed\n", "translations.lock:3: not YAML"),
    "not-utf8": (b"zh/index.md:\n  two: \xff\xfe\n", "translations.lock:2: not UTF-8 text (byte 20"),
    "1mb-key": (b"zh/index.md:\n  " + b"k" * 1_000_000 + b": abc\n", "translations.lock:2: not YAML"),
    "too-large": (b"# " + b"x" * MAX_BYTES + b"\n", f"more than the {MAX_BYTES} a YAML file of the site may hold"),
}


@pytest.mark.parametrize("case", list(BAD_LOCKS))
def test_a_broken_translations_lock_is_one_line_from_the_command_line(tmp_path: Path, case: str) -> None:
    content, message = BAD_LOCKS[case]
    (tmp_path / "docs" / "zh").mkdir(parents=True)
    (tmp_path / LOCK_FILE).write_bytes(content)
    for action in ("check", "stamp"):
        done = _translations(tmp_path, action)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("translations: translations.lock") and message in lines[0], (
            lines[:3]
        )
    assert (tmp_path / LOCK_FILE).read_bytes() == content, "a refused stamp leaves the lock as it was"


@pytest.mark.parametrize("case", ["not-yaml", "not-utf8", "1mb-key"])
def test_a_broken_translations_lock_is_one_line_from_the_build(fixture_site: FixtureSite, case: str) -> None:
    content, message = BAD_LOCKS[case]
    fixture_site.page("index.md", "A page.\n")
    (fixture_site.root / LOCK_FILE).write_bytes(content)
    build = fixture_site.build()
    assert build.returncode == 1
    assert "Traceback" not in build.log, build.log[-3000:]
    errors = [line for line in build.log.splitlines() if line.startswith(("Error", "ERROR"))]
    assert len(errors) == 1 and "translations.lock" in errors[0] and message in errors[0], build.log[-3000:]


# --- D10: an include in a page's prose whose file is not there ----------------------------------------------

PROSE = """\
# A page

Some prose, then what an include brings in:

{include}

More prose.
"""


@pytest.mark.parametrize(
    ("include", "files", "message"),
    [
        ('--8<-- "missing.md"', {}, 'docs/index.md:9: --8<-- "missing.md": no such file'),
        ("--8<--\nparts/missing.md\n--8<--", {}, 'docs/index.md:10: --8<-- "parts/missing.md": no such file'),
        ('```text\n--8<-- "missing.txt"\n```', {}, 'docs/index.md:10: --8<-- "missing.txt": no such file'),
        ('--8<-- "../outside.md"', {}, 'docs/index.md:9: --8<-- "../outside.md": no such file'),
        (
            '--8<-- "parts/outer.md"',
            {"parts/outer.md": 'Outer.\n\n--8<-- "parts/gone.md"\n'},
            'parts/outer.md:3 (included at docs/index.md:9): --8<-- "parts/gone.md": no such file in the project',
        ),
        (
            '--8<-- "parts/outer.md:intro"',
            {"parts/outer.md": "No sections here.\n"},
            'docs/index.md:9: --8<-- "parts/outer.md:intro": parts/outer.md has no section',
        ),
    ],
    ids=["prose", "block-of-paths", "plain-code-block", "outside-the-project", "nested", "missing-section"],
)
def test_a_missing_include_in_prose_is_one_line_naming_file_and_line(
    fixture_site: FixtureSite, include: str, files: dict[str, str], message: str
) -> None:
    """pymdownx.snippets (`check_paths`) raised out of the page's Markdown: MkDocs printed a traceback."""
    fixture_site.page("index.md", PROSE.format(include=include))
    (fixture_site.root.parent / "outside.md").write_text("Outside the project.\n", encoding="utf-8")
    for path, text in files.items():
        fixture_site.write(path, text)
    build = fixture_site.build()
    assert build.returncode == 1
    assert "Traceback" not in build.log, build.log[-3000:]
    errors = [line for line in build.log.splitlines() if line.startswith(("Error", "ERROR"))]
    assert len(errors) == 1 and message in errors[0], build.log[-3000:]


def test_includes_that_are_there_still_build(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", PROSE.format(include='--8<-- "parts/outer.md:intro"\n\n;--8<-- "escaped.md"'))
    fixture_site.write(
        "parts/outer.md",
        '--8<-- [start:intro]\nThe intro, including --8<-- "parts/outer.md" of itself.\n--8<-- [end:intro]\n',
    )
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    assert "The intro" in build.page("")
