"""The labs' self-checks grade: they fail unfilled, pass with the solutions, and catch wrong answers.

Each lab runs in a fresh kernel (nbclient) in four versions, with errors allowed so that every
self-check is graded separately:

- **as shipped to a student**: the solution cells removed. Every self-check must fail with
  `NotFilled`, naming what to fill, and no other cell may fail.
- **solved**: the lab as written. Every self-check passes and nothing reaches stderr.
- **planted**: known-wrong answers in the solution cells (the mistakes issue 16 lists among them).
  Each planted exercise's self-check must fail with `WrongAnswer`; the others still pass.
- **changed**: the exercises' suggested "Change" edits applied, with the answers a student who
  did the change right would give. Every self-check passes.

Known-wrong answers and changes live in `lab_answers.py`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import jupytext
import nbclient
import pytest
from lab_answers import CHANGES, PLANTED, PLANTED_ALONE, Change, Wrong

from conftest import ROOT
from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.lab_cells import SELF_CHECK, exercises, student_notebook, with_answers


@dataclass(frozen=True)
class Graded:
    """What one run of a lab did: per exercise, its self-check's outcome; other cells' errors."""

    checks: dict[str, tuple[str, str]]  # anchor -> ("passed" | exception name, printed text or message)
    other_errors: list[str]
    stderr: str
    seconds: float


def read(floor: Floor) -> Any:
    return jupytext.read(ROOT / "docs" / floor.lab)


def run(notebook: Any) -> Graded:
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(ROOT)}}
    )
    start = time.perf_counter()
    client.execute(cwd=str(ROOT))
    seconds = time.perf_counter() - start
    check_cells = {index: e.anchor for e in exercises(notebook) for index in e.checks}
    checks: dict[str, tuple[str, str]] = {}
    other_errors, stderr = [], ""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        errors = [out for out in cell.outputs if out.output_type == "error"]
        stderr += "".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stderr")
        printed = "".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stdout")
        if index in check_cells:
            outcome = (errors[0].ename, errors[0].evalue) if errors else ("passed", printed)
            checks[check_cells[index]] = outcome
        elif errors:
            other_errors.append(f"cell {index}: {errors[0].ename}: {errors[0].evalue}")
    return Graded(checks, other_errors, stderr, seconds)


def apply(notebook: Any, change: Change) -> Any:
    changed = with_answers(notebook, change.answers)
    for old, new in change.edits.items():
        hits = [cell for cell in changed.cells if cell.cell_type == "code" and old in cell.source]
        assert len(hits) == 1, f"the edit {old!r} must match exactly one code cell, matched {len(hits)}"
        hits[0].source = hits[0].source.replace(old, new)
    return changed


def anchors(floor: Floor) -> list[str]:
    return [e.anchor for e in exercises(read(floor))]


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_every_exercise_has_an_answer_a_solution_and_a_check(floor: Floor) -> None:
    notebook = read(floor)
    for exercise in exercises(notebook):
        assert exercise.answers and len(exercise.solutions) == 1 and len(exercise.checks) == 1, exercise
        check = notebook.cells[exercise.checks[0]].source
        assert check.startswith(SELF_CHECK) and "require(" in check, f"{exercise.anchor}: the check reads the answers"
    assert set(PLANTED[floor.key]) == set(anchors(floor)), "every exercise's check is shown to catch a wrong answer"
    assert set(CHANGES[floor.key]) == set(anchors(floor)), "every exercise's suggested change is tried"


@pytest.mark.slow
@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_as_shipped_every_check_asks_for_the_answer(floor: Floor) -> None:
    graded = run(student_notebook(read(floor)))
    print(f"{floor.key} shipped: {graded.seconds:.1f} s")
    assert not graded.other_errors, "only self-checks may fail before the answers are filled in"
    assert set(graded.checks) == set(anchors(floor))
    for anchor, (outcome, message) in graded.checks.items():
        assert outcome == "NotFilled", f"{anchor}: {outcome}: {message}"
        assert message.startswith("fill in "), f"{anchor}: {message}"


@pytest.mark.slow
@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_with_the_solutions_every_check_passes(floor: Floor) -> None:
    graded = run(read(floor))
    print(f"{floor.key} solved: {graded.seconds:.1f} s")
    assert not graded.other_errors
    failed = {a: c for a, c in graded.checks.items() if c[0] != "passed"}
    assert not failed
    assert all(text.rstrip().splitlines()[-1].startswith("self-check passed") for _, text in graded.checks.values())
    assert graded.stderr == "", "nothing may be printed to stderr"
    assert graded.seconds < 60, f"{floor.lab} took {graded.seconds:.1f} s; keep each lab within about 20 s"


@pytest.mark.slow
@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_planted_wrong_answers_are_caught(floor: Floor) -> None:
    planted = PLANTED[floor.key]
    assert planted, f"{floor.lab}: plant at least one known-wrong answer"
    graded = run(with_answers(read(floor), {anchor: wrong.source for anchor, wrong in planted.items()}))
    print(f"{floor.key} planted: {graded.seconds:.1f} s")
    assert not graded.other_errors
    for anchor, (outcome, message) in graded.checks.items():
        if anchor in planted:
            assert outcome == "WrongAnswer", f"{anchor}: planted {planted[anchor].mistake!r} was not caught"
            assert planted[anchor].message in message, f"{anchor}: {message}"
        else:
            assert outcome == "passed", f"{anchor}: {outcome}: {message}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "anchor", "wrong"), PLANTED_ALONE, ids=lambda v: v.mistake if isinstance(v, Wrong) else v
)
def test_more_wrong_answers_are_caught_one_at_a_time(key: str, anchor: str, wrong: Wrong) -> None:
    floor = next(floor for floor in FLOORS if floor.key == key)
    graded = run(with_answers(read(floor), {anchor: wrong.source}))
    outcome, message = graded.checks[anchor]
    assert outcome == "WrongAnswer", f"{anchor}: planted {wrong.mistake!r} was not caught"
    assert wrong.message in message, message


@pytest.mark.slow
@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_the_suggested_changes_keep_the_checks_valid(floor: Floor) -> None:
    changes = CHANGES[floor.key]
    notebook = read(floor)
    for change in changes.values():
        notebook = apply(notebook, change)
    graded = run(notebook)
    print(f"{floor.key} changed: {graded.seconds:.1f} s")
    assert not graded.other_errors
    failed = {a: c for a, c in graded.checks.items() if c[0] != "passed"}
    assert not failed
