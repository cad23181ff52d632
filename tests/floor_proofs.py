"""The proofs under `snippets/`, found on disk, and the pattern tests' own checks of them, found in the tests.

No test lists the proofs or counts the floors. The folders proofs live in are Part 0's, each
registry floor's (`Floor.snippets_dir`) and each annex's (`COMPILER`, `DISTRIBUTED`: `Elevator.snippets_dir`);
the proofs are the `.py` files there, and `tests/test_floor_proofs.py` runs every one of them and
requires its claims to hold. What a pattern test checks beyond a proof's claims
(`tests/test_floor_N.py`) names the proof it imports with `load_proof("<folder>/<file>.py")`;
`specific_checks` reads those names from the tests' source, so `tests/test_floors.py` can fail a
check that names a proof which is not there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT
from pytorch_floors.floors import ANNEXES, FLOORS, MAP_PAGE
from pytorch_floors.recordings import torch_changes

SNIPPETS = ROOT / "snippets"
"""Where every proof lives, one folder per part of the site."""

MAP_FOLDER = "0-map"
"""Part 0's folder of proofs (its page is `MAP_PAGE`): the one folder of `snippets/` that is no floor's."""

TESTS = ROOT / "tests"

PATTERN_TESTS = "test_floor_*.py"
"""The modules whose tests import proofs to check what is not a claim of their page."""

LOADER = "load_proof"
"""The fixture (`tests/conftest.py`) a pattern test imports a proof with."""


def proof_folders() -> list[str]:
    """The folders a proof may live in, relative to `snippets/`: Part 0's, each floor's, each annex's, and What
    changed inside PyTorch's (`recordings.torch_changes`)."""
    dirs = [
        *(floor.snippets_dir for floor in FLOORS),
        *(annex.snippets_dir for annex in ANNEXES),
        str(Path(torch_changes.PROOF).parent),
    ]
    return [MAP_FOLDER, *(Path(folder).relative_to("snippets").as_posix() for folder in dirs)]


def proof_pages() -> list[str]:
    """The pages that show proofs, relative to `docs/`: Part 0, each floor's page, each annex's page, then What
    changed inside PyTorch."""
    return [MAP_PAGE, *(floor.page for floor in FLOORS), *(annex.page for annex in ANNEXES), torch_changes.PAGE]


def _order(proof: str) -> tuple[int, str]:
    folders = proof_folders()
    folder = proof.split("/", 1)[0]
    return (folders.index(folder) if folder in folders else len(folders), proof)


def proofs() -> list[str]:
    """Every proof on disk, relative to `snippets/` (`3-boundary/crossing_cost.py`), folder by folder.

    Any `.py` file under `snippets/` counts, in a floor's folder or not, so that a proof put where no
    floor reads it is still run by the pattern tests and named by `tests/test_floors.py`.
    """
    return sorted((path.relative_to(SNIPPETS).as_posix() for path in SNIPPETS.rglob("*.py")), key=_order)


def _loads(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == LOADER:
            yield node


def specific_checks() -> tuple[dict[str, list[str]], list[str]]:
    """The proofs the pattern tests import to check what is not a claim, read from the tests' source.

    Returns:
        Each proof a test loads (relative to `snippets/`) with the tests that load it
        (`test_floor_3.py::test_crossover_interpolates_on_log_axes`), and where a test loads a
        proof by a name that is not written out (a name that cannot be checked without running it).
    """
    checks: dict[str, list[str]] = {}
    unnamed: list[str] = []
    for module in sorted(TESTS.glob(PATTERN_TESTS)):
        tree = ast.parse(module.read_text(encoding="utf-8"), str(module))
        for test in tree.body:
            if not isinstance(test, ast.FunctionDef):
                continue
            where = f"{module.name}::{test.name}"
            for call in _loads(test):
                name = call.args[0] if len(call.args) == 1 and not call.keywords else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    checks.setdefault(name.value, []).append(where)
                else:
                    unnamed.append(f"{where} (line {call.lineno})")
    return checks, unnamed


def stated_claims(proof: ModuleType, monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """The claims a proof states while a test runs it, by statement: held or not (one not applying is left out).

    A test feeds a proof's judging code made-up measurements and reads which claims held, so it can show
    each claim missing where its pattern does not hold.
    """
    found: dict[str, bool] = {}

    def record(statement: str, held: object, detail: str = "", *, applies: object = True, why_not: str = "") -> bool:
        if applies:
            found[statement] = bool(held)
        return bool(held) and bool(applies)

    monkeypatch.setattr(proof, "claim", record)
    return found
