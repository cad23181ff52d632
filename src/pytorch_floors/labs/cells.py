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
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ANSWER", "SELF_CHECK", "SOLUTION", "Exercise", "exercises", "student_notebook", "with_answers"]

ANSWER = "answer"
SOLUTION = "solution"
SELF_CHECK = "# SELF-CHECK"

_EXERCISE = re.compile(r"^## Exercise .*<a id=\"(?P<id>[^\"]+)\"></a>$", re.M)


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
        ValueError: A solution cell that does not follow an answer cell, or an answer, solution or
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
            raise ValueError(f"cell {index}: {kind[:-1]} cell before the first exercise heading")
        if kind == "solutions" and ANSWER not in _tags(notebook.cells[index - 1]):
            raise ValueError(f"cell {index}: a solution cell must directly follow its answer cell")
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
