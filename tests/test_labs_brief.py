"""bench/labs_brief.py sorts each graded answer as the instructors' brief counts it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from lab_answers import Wrong

from conftest import ROOT


def _brief() -> ModuleType:
    spec = importlib.util.spec_from_file_location("labs_brief", ROOT / "bench" / "labs_brief.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["labs_brief"] = module
    spec.loader.exec_module(module)
    return module


def test_a_planted_answer_is_caught_not_graded_or_missed() -> None:
    brief = _brief()
    wrong = Wrong("one thread counted twice", "X = 1\n", "your bound is below")
    outcome = brief.LabOutcome("8-chip", 0.0)
    brief._grade_planted(outcome, "threads", wrong, "WrongAnswer", "your bound is below what ran")
    brief._grade_planted(outcome, "threads", wrong, "passed", "self-check passed\nnot graded on this machine: x")
    brief._grade_planted(outcome, "threads", wrong, "passed", "self-check passed")
    brief._grade_planted(outcome, "threads", wrong, "WrongAnswer", "another complaint")
    assert outcome.planted_caught == 1
    assert len(outcome.planted_not_graded) == 1
    assert len(outcome.planted_missed) == 2


def test_the_promise_is_broken_by_a_failed_right_answer_anywhere_and_a_miss_beside_the_hogs_only() -> None:
    brief = _brief()
    quiet = brief.LabOutcome("2-python", 0.0, planted_missed=["a: b"])
    hogs = brief.LabOutcome("2-python", 0.0, planted_missed=["a: b"])
    scalar = brief.LabOutcome("2-python", 0.0, right_failed=["c: WrongAnswer: d"])
    found = brief.problems({"quiet": [quiet], "hogs": [hogs], "one-core-scalar": [scalar]})
    assert found == [
        "one-core-scalar › 2-python › right answer failed: c: WrongAnswer: d",
        "hogs › 2-python › planted answer missed: a: b",
    ]
