"""Issue 55's defects of the files a build reads from the project: each refused in one line, never a traceback.

`translations.lock`, the glossary, `messages.zh.yml` and a page's front matter are YAML a person (or an
attacker's pull request) writes; an include in a page's prose is a path. A file that is not UTF-8, not
YAML, too large, or an alias bomb, and an include of a file that is not there, are each one line naming
the file and line, from the build and from the command line alike.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FixtureSite
from pytorch_floors.errors import InputError
from pytorch_floors.i18n import messages
from pytorch_floors.i18n.check import problems
from pytorch_floors.i18n.glossary import MAX_TERM, glossary
from pytorch_floors.i18n.search import teach_segmenter, teach_segmenter_behind
from pytorch_floors.i18n.translation import LOCK_FILE, read_lock
from pytorch_floors.i18n.yaml_files import MAX_BYTES, MAX_DEPTH, parse_yaml, read_yaml


def _bomb(levels: int, first: str = "a") -> str:
    """A "billion laughs" map: each level holds nine aliases of the one before (9**levels strings at the last)."""
    names = [chr(ord(first) + n) for n in range(levels + 1)]
    lines = [f'{names[0]}: &{names[0]} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{name}: &{name} [{', '.join([f'*{before}'] * 9)}]" for before, name in itertools.pairwise(names)]
    return "\n".join(lines) + "\n"


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


# --- D11: alias bombs and oversized terms -------------------------------------------------------------------


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    for name, where in [("glossary.yml", "glossary"), ("messages.zh.yml", "messages"), (LOCK_FILE, "lock")]:
        path = tmp_path / name
        path.write_text(_bomb(3), encoding="utf-8")
        readers: dict[str, Callable[[Path], object]] = {
            "glossary": glossary,
            "messages": messages._catalog,
            "lock": read_lock,
        }
        read = readers[where]
        with pytest.raises(InputError, match=rf"^{name}:1: an anchor or alias \(& or \*\)"):
            read(path)
    # An alias of a plain value is refused as well: none of these files needs one.
    with pytest.raises(InputError, match=r"^x:2: an anchor or alias"):
        parse_yaml("a: value\nc: &n v\nb: *n\n", "x")


def test_an_alias_bomb_in_the_lock_is_one_line_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "docs" / "zh").mkdir(parents=True)
    (tmp_path / LOCK_FILE).write_text(_bomb(4), encoding="utf-8")
    done = _translations(tmp_path, "check")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "translations: translations.lock:1: an anchor or alias (& or *); write the value out where it is used"
    )


def test_an_alias_bomb_in_a_translations_front_matter_is_a_problem_not_an_expansion() -> None:
    english = "# Title { #title }\n\nText.\n"
    bomb = "\n".join(f"  {line}" for line in _bomb(3).splitlines())
    chinese = f"---\nclaims:\n{bomb}\n---\n\n# 标题 {{ #title }}\n\n正文。\n"
    assert problems("zh/x.md", english, chinese) == [
        "front matter:3: an anchor or alias (& or *); write the value out where it is used"
    ]


def test_deep_nesting_is_refused_in_one_line() -> None:
    with pytest.raises(InputError, match=rf"^f.yml:1: nested more than {MAX_DEPTH} deep"):
        parse_yaml("[" * 10_000 + "]" * 10_000, "f.yml")


def test_an_oversized_glossary_term_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "glossary.yml"
    path.write_text(f"- {{en: tensor, zh: 张量}}\n- {{en: huge, zh: {'长' * 100_000}}}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^glossary.yml: term 2 \('huge'\) has a word of 100000 characters"):
        glossary(path)
    path.write_text(f"- {{en: tensor, zh: 张量, avoid: ['{'x' * (MAX_TERM + 1)}']}}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"each must have 1 to {MAX_TERM}"):
        glossary(path)
    path.write_text("- {en: tensor, zh: 张量, avoid: 跨步}\n", encoding="utf-8")
    with pytest.raises(InputError, match="`avoid` and `allow` must be lists"):
        glossary(path)


def test_the_segmenter_refuses_a_word_longer_than_a_term_before_learning_it(monkeypatch: pytest.MonkeyPatch) -> None:
    learned: list[str] = []
    jieba = pytest.importorskip("jieba")
    monkeypatch.setattr(jieba, "add_word", learned.append)
    with pytest.raises(InputError, match=f"a word of 10000000 characters for the segmenter.*at most {MAX_TERM}"):
        teach_segmenter(["张量", "长" * 10_000_000])
    assert learned == [], "nothing is learned from a list that holds a word too long"
    assert teach_segmenter(["张量"]) and learned == ["张量"]


def test_the_segmenter_learns_in_a_thread_and_refuses_a_long_word_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A build waited half a second for jieba's dictionary before it asked torch (a second more) about the machine.
    learned: list[str] = []
    jieba = pytest.importorskip("jieba")
    started = threading.Event()

    def add_word(word: str) -> None:
        started.wait(timeout=10)  # learning waits until the caller has moved on: it runs behind it
        learned.append(word)

    monkeypatch.setattr(jieba, "add_word", add_word)
    with pytest.raises(InputError, match="a word of 10000000 characters for the segmenter"):
        teach_segmenter_behind(["张量", "长" * 10_000_000])
    taught = teach_segmenter_behind(["张量"])
    assert learned == [], "the caller went on before the word was learned"
    started.set()
    assert taught() and learned == ["张量"]


def test_the_packages_own_yaml_reads_as_before() -> None:
    package = Path(messages.__file__).parent
    assert read_yaml(package / "messages.zh.yml") == messages.ZH
    assert len(glossary()) > 10
    assert read_lock(Path(__file__).resolve().parents[1] / LOCK_FILE)
