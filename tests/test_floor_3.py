"""Pattern tests for Floor 3, the boundary: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


def test_the_parser_lists_as_many_signatures_as_the_library_stores(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/parser_error.py")
    library = load_proof("3-boundary/binding_in_library.py")
    listed = proof.listed_signatures(proof.parser_message(proof.CALLS['torch.randn(64, 784, dtype="float32")']))
    assert all(s.startswith("(tuple of ints size") for s in listed)
    assert len(listed) == len(library.signature_strings(library.python_library().read_bytes(), "randn"))
    assert len(proof.listed_signatures(proof.parser_message(proof.CALLS["torch.max(torch.ones(3), 1.5)"]))) >= 3


def test_crossover_interpolates_on_log_axes(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/crossing_cost.py")
    assert proof.crossover([(1, 1.0), (10, 1.0), (100, 4.0)]) == pytest.approx(10**1.5)
    assert proof.crossover([(1, 1.0), (10, 1.5)]) == float("inf")
