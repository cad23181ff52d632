"""Pattern tests for Part 0, the map: each walk-down proof's claims hold on this machine.

The patterns are stated once, as claims in the proofs (the build checks them too); these tests
run each proof and require every claim to hold, and check what is not a claim of the page.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from pytorch_floors.claims import Claim

Load = Callable[[str], ModuleType]
Claims = Callable[[str], list[Claim]]


@pytest.mark.parametrize(
    "proof",
    [
        "the_program.py",
        "walk_2_library.py",
        "walk_3_boundary.py",
        "walk_4_dispatcher.py",
        "walk_5_graph.py",
        "walk_6_kernels.py",
        "walk_7_memory.py",
        "walk_8_chip.py",
        "territory.py",
    ],
)
def test_the_walk_down_claims_hold(proof_claims: Claims, proof: str) -> None:
    proof_claims(f"0-map/{proof}")


def test_every_operator_of_the_step_is_an_aten_operator(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_4_dispatcher.py")
    names = proof.ops_of_one_step(batch=4, features=6, classes=3)
    assert names and all(name.startswith("aten::") for name in names)


def test_territory_names_a_blas(load_proof: Load) -> None:
    proof = load_proof("0-map/territory.py")
    assert proof.blas() != "unknown"
