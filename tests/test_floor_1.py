"""Pattern tests for Floor 1, the program: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from conftest import ROOT

Loader = Callable[[str], ModuleType]

WRAPPING = "wrapping an array costs the same at any size"


def test_the_wrapping_claim_compares_sizes_within_a_round_and_can_miss(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: beside other work the wrapping claim missed at x12.7; a busy moment now slows both sizes alike."""
    proof = load_proof("1-program/numpy_sharing.py")
    small, large = proof.SIZES[0], proof.SIZES[-1]
    busy = [1.0, 8.0, 1.0, 8.0, 1.0]  # each round's load, shared by everything timed in it

    def rounds(wrap_growth: float) -> dict[str, list[float]]:
        times = {
            f"from_numpy {small}": 1e-6,
            f"from_numpy {large}": wrap_growth * 1e-6,
            f"tensor {small}": 5e-6,
            f"tensor {large}": 2e-4,
        }
        found = {key: [load * seconds for load in busy] for key, seconds in times.items()}
        found[f"from_numpy {large}"][2] *= 13  # one burst on the large array only
        return found

    flat = rounds(1.0)
    assert max(flat[f"from_numpy {large}"]) / min(flat[f"from_numpy {small}"]) > 5, "the scene: separate rounds miss"
    stated: dict[str, bool] = {}

    def record(statement: str, held: object, detail: str = "", *, applies: object = True, why_not: str = "") -> bool:
        stated[statement] = bool(held)
        return bool(held)

    monkeypatch.setattr(proof, "claim", record)
    proof.check_costs(proof.growths(flat))
    assert stated == {WRAPPING: True, "copying grows with the size, far more than wrapping": True}
    proof.check_costs(proof.growths(rounds(6.0)))
    assert stated[WRAPPING] is False


def test_module_to_with_nothing_to_change_still_walks_its_tensors(load_proof: Loader) -> None:
    """Issue 60: the page said `model.to(device)` costs nothing when the data is there; it copies nothing, but
    `Module._apply` still asks every parameter and buffer, which the proof now counts and the page says."""
    walk = load_proof("1-program/to_returns.py").module_to_in_place()
    assert walk["same module"] is True and walk["kept"] is True
    assert walk["asked"] == walk["tensors"] > 0
    for page in ("docs/floors/1-program.md", "docs/zh/floors/1-program.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "`model.to(device)` and `batch.to(device)` cost" not in text and "没有任何开销" not in text, page
        assert "parameter and buffer" in text or "每个参数和缓冲区" in text, page
