"""Pattern tests for Floor 3, the boundary: the proofs' claims hold on this machine, and what is not a claim."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from pytorch_floors.claims import Claim


@pytest.mark.parametrize("proof", ["binding_in_library.py", "parser_error.py", "crossing_cost.py", "tiny_add.py"])
def test_floor_3_claims_hold(proof_claims: Callable[[str], list[Claim]], proof: str) -> None:
    proof_claims(f"3-boundary/{proof}")


def test_the_parser_lists_as_many_signatures_as_the_library_stores(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/parser_error.py")
    library = load_proof("3-boundary/binding_in_library.py")
    listed = proof.listed_signatures(proof.parser_message(proof.CALLS['torch.randn(64, 784, dtype="float32")']))
    assert all(s.startswith("(tuple of ints size") for s in listed)
    assert len(listed) == len(library.signature_strings(library.python_library().read_bytes(), "randn"))
    assert len(proof.listed_signatures(proof.parser_message(proof.CALLS['torch.max(torch.ones(3), "dim")']))) >= 3


def test_crossover_interpolates_on_log_axes(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/crossing_cost.py")
    assert proof.crossover([(1, 1.0), (10, 1.0), (100, 4.0)]) == pytest.approx(10**1.5)
    assert proof.crossover([(1, 1.0), (10, 1.5)]) == float("inf")
