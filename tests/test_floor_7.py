"""Pattern tests for Floor 7, memory: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

import pytest
import torch
from floor_proofs import stated_claims

from conftest import ROOT
from pytorch_floors.measure import detect_device

Loader = Callable[[str], ModuleType]


def test_address_arithmetic_on_an_odd_view(load_proof: Loader) -> None:
    proof = load_proof("7-memory/address_arithmetic.py")
    views = proof.layouts()
    for t in views.values():
        assert proof.rebuild_with_as_strided(t, views["base"])
    odd = torch.randn(3, 4, 5).permute(2, 0, 1)[1:, ::2, 1:]
    assert proof.check_addresses(odd) == odd.numel()


def test_training_step_formula_on_another_model(load_proof: Loader) -> None:
    proof = load_proof("7-memory/training_step_memory.py")
    guess, real = proof.estimate((32, 48, 16, 5), 8), proof.measure((32, 48, 16, 5), 8)
    assert guess.keys() == real.keys()
    for key, value in real.items():
        assert value > 0 and abs(guess[key] - value) <= 0.02 * value, (key, guess[key], value)


def test_cuda_allocator_counters(load_proof: Loader) -> None:
    proof = load_proof("7-memory/allocator.py")
    if detect_device().type == "cuda":
        rows = {step: (allocated, reserved) for step, allocated, reserved in proof.cuda_story(64)}
        start, after_alloc, after_del = rows["start"], rows["t = torch.empty(64 MiB)"], rows["del t"]
        assert after_alloc[0] - start[0] >= 64 << 20
        assert after_del[0] == start[0] and after_del[1] == after_alloc[1]
    else:
        assert torch.cuda.memory_allocated() == 0 and torch.cuda.memory_reserved() == 0


def test_the_page_names_the_units_the_proofs_print() -> None:
    """Where the page says which units this site counts in, it names every kind the proofs print."""
    root = ROOT
    printed = " ".join(path.read_text(encoding="utf-8") for path in (root / "snippets").glob("*/*.py"))
    binary = "binary=True" in printed or re.search(r"\b(KiB|MiB|GiB)\b", printed) is not None
    decimal = re.search(r"\b(kB|MB|GB)\b", printed) is not None
    page = (root / "docs" / "floors" / "7-memory.md").read_text(encoding="utf-8")
    sentences = [s for s in re.split(r"(?<=[.;])\s+", " ".join(page.split())) if "this site" in s.lower()]
    assert sentences, "floor 7 says which units this site counts in"
    for sentence in sentences:
        assert ("binary" in sentence) == binary and ("decimal" in sentence) == decimal, sentence


def test_the_meta_model_is_sized_past_the_machines_memory(load_proof: Loader) -> None:
    proof = load_proof("7-memory/meta_accounting.py")
    block = 4 * proof.formula_parameters(1)
    blocks = proof.blocks_for(10 * block)
    assert blocks * block > 2 * 10 * block >= (blocks - 1) * block
    assert proof.blocks_for(None) == 4


def test_the_view_claim_compares_sizes_within_a_round_and_can_miss(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: a busy moment on one size missed "a view costs the same at any size"; a real growth still misses."""
    proof = load_proof("7-memory/view_vs_copy_cost.py")
    sides = (32, 2048)
    busy = [1.0, 6.0, 1.0, 6.0, 1.0]  # the load of each round, shared by everything timed in it

    def rounds(view_growth: float) -> dict[str, list[float]]:
        times = {"view": (1e-6, view_growth * 1e-6), "clone": (2e-6, 2e-3), "transpose_copy": (8e-6, 1e-2)}
        found = {
            f"{op} {side}": [load * t for load in busy]
            for op, pair in times.items()
            for side, t in zip(sides, pair, strict=True)
        }
        found[f"view {sides[-1]}"][2] *= 5  # one burst on the large view only
        return found

    flat = rounds(1.0)
    assert max(flat["view 2048"]) / min(flat["view 32"]) > 3, "the scene: separate rounds spread past the line"
    stated = stated_claims(proof, monkeypatch)
    proof.check(proof.growths(flat, sides), 4096)
    assert stated and all(stated.values()), stated
    stated.clear()
    proof.check(proof.growths(rounds(4.0), sides), 4096)
    assert stated["a view costs the same at any size"] is False
    assert [row["bytes"] for row in proof.table(flat, sides)] == [4 * 32 * 32, 4 * 2048 * 2048]


def test_the_page_says_plain_sizes_are_int64_and_only_symbolic_ones_symints(load_proof: Loader) -> None:
    """Issue 60: #tensorimpl said every size and stride is stored as a c10::SymInt; a plain tensor keeps int64_t
    in SizesAndStrides, and only a symbolic one keeps SymInts (SymbolicShapeMeta), as the proof's flag shows."""
    sym = load_proof("7-memory/tensorimpl.py").symbolic_sizes()
    assert sym["flag"] is True and sym["flag, ordinary tensor"] is False
    for page in ("docs/floors/7-memory.md", "docs/zh/floors/7-memory.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "Each is stored as a [`c10::SymInt`]" not in text and "它们都以 [`c10::SymInt`]" not in text, page
        assert "c10/core/impl/SizesAndStrides.h" in text and "`int64_t`" in text, page
