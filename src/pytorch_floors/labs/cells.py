"""The lab format: which cells hold the student's answers, their solutions and the self-checks.

A lab (`docs/labs/N-slug.py`, percent format) marks its cells with jupytext cell tags:

- `answer`: the cell the student fills. As shipped it holds placeholders (`None` or `...`), and
  every self-check that reads them fails with a message saying what to fill.
- `solution`: the reference answer, the cell right after its `answer` cell. It assigns the same
  names, so a notebook run with it passes, and one run without it (the student's notebook) fails
  until the student fills the answer cell.

A self-check is a code cell whose first line starts with `# SELF-CHECK`. Each answer, solution and
self-check belongs to the exercise whose heading (`## Exercise n · Title <a id="anchor"></a>`)
precedes it, and is named by that heading's anchor.

The helpers the self-checks call (`require`, `expect`, `best_time`, ...) are written once, in
`pytorch_floors/labs/checker.py`. Each lab marks where they go with one code cell tagged `checker`
that holds a comment; `with_checker` puts the helpers' source in that cell, wherever the lab runs
or is published (`read_lab`): the site's executor, both downloadable notebooks, the text version
and the grading tests all read the lab through it.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupytext

from pytorch_floors.errors import FloorsError, InputError
from pytorch_floors.floors import LABS, Lab
from pytorch_floors.i18n.yaml_files import read_yaml
from pytorch_floors.labs.messages import translated_messages

__all__ = [
    "ANSWER",
    "CHECKER",
    "SELF_CHECK",
    "SOLUTION",
    "Exercise",
    "checker_source",
    "exercises",
    "lab_language",
    "lab_name",
    "lab_text",
    "percent_text",
    "published_lab",
    "read_lab",
    "student_notebook",
    "with_answers",
    "with_checker",
]

ANSWER = "answer"
SOLUTION = "solution"
SELF_CHECK = "# SELF-CHECK"
CHECKER = "checker"
"""The tag of the cell where the self-check helpers go: in the lab's source, one comment line."""

_CHECKER_FILE = Path(__file__).with_name("checker.py")
_TITLE = re.compile(r"^# (?P<title>.+?)\s*$", re.M)

_EXERCISE = re.compile(r"^## (?:Exercise|练习) .*<a id=\"(?P<id>[^\"]+)\"></a>$", re.M)


def _tags(cell: Any) -> list[str]:
    tags: list[str] = cell.get("metadata", {}).get("tags", [])
    return tags


@dataclass(frozen=True)
class Exercise:
    """The cells of one exercise, by index in the notebook."""

    anchor: str
    heading: int
    answers: tuple[int, ...]
    solutions: tuple[int, ...]
    checks: tuple[int, ...]


def _kind(cell: Any) -> str | None:
    if cell.cell_type != "code":
        return None
    if ANSWER in _tags(cell):
        return "answers"
    if SOLUTION in _tags(cell):
        return "solutions"
    return "checks" if cell.source.startswith(SELF_CHECK) else None


def exercises(notebook: Any) -> list[Exercise]:
    """The notebook's exercises with the indices of their answer, solution and self-check cells.

    Raises:
        InputError: A solution cell that does not follow an answer cell, or an answer, solution or
            self-check before the first exercise heading.
    """
    found: list[tuple[str, int, dict[str, list[int]]]] = []
    for index, cell in enumerate(notebook.cells):
        heading = _EXERCISE.search(cell.source) if cell.cell_type == "markdown" else None
        if heading:
            found.append((heading["id"], index, {"answers": [], "solutions": [], "checks": []}))
            continue
        kind = _kind(cell)
        if kind is None:
            continue
        if not found:
            raise InputError(f"cell {index}: {kind[:-1]} cell before the first exercise heading")
        if kind == "solutions" and ANSWER not in _tags(notebook.cells[index - 1]):
            raise InputError(f"cell {index}: a solution cell must directly follow its answer cell")
        found[-1][2][kind].append(index)
    return [
        Exercise(anchor, heading, tuple(cells["answers"]), tuple(cells["solutions"]), tuple(cells["checks"]))
        for anchor, heading, cells in found
    ]


def student_notebook(notebook: Any) -> Any:
    """A copy of `notebook` without its solution cells: what a student runs before filling anything."""
    student = copy.deepcopy(notebook)
    student.cells = [cell for cell in student.cells if SOLUTION not in _tags(cell)]
    return student


def with_answers(notebook: Any, answers: dict[str, str]) -> Any:
    """A copy of `notebook` whose solution cells of the named exercises hold other code.

    Args:
        notebook: A lab.
        answers: Exercise anchor -> the source to put in that exercise's (single) solution cell.

    Raises:
        KeyError: An anchor that names no exercise with exactly one solution cell.
    """
    planted = copy.deepcopy(notebook)
    by_anchor = {e.anchor: e for e in exercises(planted)}
    for anchor, source in answers.items():
        exercise = by_anchor.get(anchor)
        if exercise is None or len(exercise.solutions) != 1:
            raise KeyError(f"no exercise {anchor!r} with one solution cell")
        planted.cells[exercise.solutions[0]].source = source
    return planted


_CHECKER_LANGUAGE = 'LANGUAGE = "en"'
"""The line of `checker.py` that names the language its messages are in."""

_CHECKER_WORDS = "_SAID: dict[str, str] = {}"
"""The line of `checker.py` holding its messages in other languages: none in English (English labs carry none)."""

_CHECKER_CATALOG = "checker.{language}.yml"
"""Each language's words for the helpers' messages, beside the interface's catalogs (`i18n/checker.zh.yml`)."""


def checker_source(language: str = "en") -> str:
    """The self-check helpers, as the cell that holds them shows them (`checker.py`, without its last newline).

    Args:
        language: The language of the lab they go into: their messages speak it (`LANGUAGE`), from its
            catalog (`i18n/checker.<language>.yml`), which only that language's labs carry.

    Raises:
        FloorsError: `checker.py` lacks a line a language replaces, or a catalog is not a map of strings.
    """
    source = _CHECKER_FILE.read_text(encoding="utf-8").rstrip("\n")
    for line in (_CHECKER_LANGUAGE, _CHECKER_WORDS):
        if source.count(line) != 1:
            raise FloorsError(f"{_CHECKER_FILE.name}: write `{line}` once (a lab's language replaces the line)")
    if language == "en":
        return source
    catalog = _CHECKER_FILE.parents[1] / "i18n" / _CHECKER_CATALOG.format(language=language)
    words = read_yaml(catalog) if catalog.is_file() else {}
    if not isinstance(words, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in words.items()):
        raise FloorsError(f"{catalog.name}: each English message maps to its translation")
    said = json.dumps(words, ensure_ascii=False, indent=4)  # a dict of strings: Python, as JSON writes it
    source = source.replace(_CHECKER_LANGUAGE, f"LANGUAGE = {json.dumps(language)}")
    return source.replace(_CHECKER_WORDS, f"_SAID: dict[str, str] = {said}")


def lab_language(notebook: Any) -> str:
    """The language a lab is written in, as its notebook metadata states it (`floors: {language: zh}`); English if none.

    A translated lab says so in its jupytext header, which is metadata, not code: its code cells stay
    its English lab's, and so does their run (`labs.kernel.code_key`).
    """
    floors = notebook.metadata.get("floors", {})
    language = floors.get("language", "en") if isinstance(floors, dict) else "en"
    return str(language)


def lab_name(notebook: Any) -> str:
    """The lab file a notebook was read from, named by its title (`# Lab 3 · ...` is `docs/labs/3-boundary.py`).

    nbconvert's preprocessors see the notebook, not the file mkdocs-jupyter read it from; the title
    is the lab registry's (`tests/test_labs.py` checks that), so it names the file.
    """
    first = next((cell.source for cell in notebook.cells if cell.cell_type == "markdown"), "")
    title = _TITLE.match(first)
    entry = next((lab for lab in LABS if title and title["title"] in (lab.title, lab.title_zh)), None)
    if entry is None:
        return f"the notebook titled {first.splitlines()[0] if first else '(untitled)'!r}"
    return f"docs/{entry.lab}"


def _is_comment(source: str) -> bool:
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("#") for line in lines)


def with_checker(notebook: Any, lab: str) -> Any:
    """A copy of `notebook` whose `checker` cell holds the self-check helpers instead of its comment.

    The cell keeps its place, tag and metadata, so the cells around it (and the ids the published
    notebooks number them with) are where they were. A cell that already holds the helpers is left
    as it is, so the copy can be made twice.

    Args:
        notebook: A lab, as read by jupytext.
        lab: The lab's file, for the error (`docs/labs/1-program.py`).

    Raises:
        FloorsError: The lab has no code cell tagged `checker`, more than one, or one that holds
            code, which the helpers would silently replace.
    """
    helpers = checker_source(lab_language(notebook))
    marked = [cell for cell in notebook.cells if cell.cell_type == "code" and CHECKER in _tags(cell)]
    if len(marked) != 1:
        raise FloorsError(
            f"{lab}: {len(marked)} code cells tagged {CHECKER!r}; mark where the self-check helpers go with "
            f'exactly one (`# %% tags=["{CHECKER}"]` followed by one comment line)'
        )
    source = marked[0].source
    if source != helpers and not _is_comment(source):
        raise FloorsError(
            f"{lab}: the cell tagged {CHECKER!r} must hold only a comment, which the self-check helpers replace"
        )
    checked = copy.deepcopy(notebook)
    for cell in checked.cells:
        if cell.cell_type == "code" and CHECKER in _tags(cell):
            cell.source = helpers
    return checked


def read_lab(docs_dir: Path, entry: Lab) -> Any:
    """A lab as a notebook, its `checker` cell holding the self-check helpers: the lab as it runs.

    Args:
        docs_dir: The site's pages.
        entry: The lab (a floor's or an annex's).

    Raises:
        FloorsError: The lab does not mark where the helpers go (`with_checker`).
    """
    return with_checker(jupytext.read(docs_dir / entry.lab), f"docs/{entry.lab}")


def published_lab(docs_dir: Path, entry: Lab) -> Any:
    """A lab as its downloads hold it: `read_lab`, its own messages in its language (`messages.translated_messages`).

    A translated lab's code says what it says to its reader (each `expect` message, each `print`) in English,
    so that it runs as its English lab does (`kernel.code_key`); its notebooks and text version say it in the
    lab's language, from the catalog of printed lines its page shows the run's output through.

    Raises:
        FloorsError: The lab does not mark where the helpers go (`with_checker`).
    """
    lab = read_lab(docs_dir, entry)
    return translated_messages(lab, lab_language(lab))


def lab_text(docs_dir: Path, entry: Lab) -> str:
    """The lab's text version, with the helpers in its `checker` cell: a percent-format script that runs on its own.

    It is the lab's source as jupytext writes it back (the header also states jupytext's version),
    solutions included, like the full notebook without its install cell, and says what the full notebook
    says (`published_lab`).
    """
    return percent_text(published_lab(docs_dir, entry))


def percent_text(lab: Any) -> str:
    """A lab notebook written back as jupytext's percent-format script (`lab_text`, of a lab already read)."""
    text: str = jupytext.writes(lab, fmt="py:percent")
    return text
