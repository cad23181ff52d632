"""Pattern tests for Floor 2, Python: the proofs' claims hold on this machine.

Compiled built-ins, a thin Python layer, import cost and `__torch_function__` are stated once, as
claims in the proofs (the build checks them too); these tests run each proof and require every claim to hold.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytorch_floors.claims import Claim

Claims = Callable[[str], list[Claim]]


@pytest.mark.parametrize("proof", ["what_randn_is.py", "package_on_disk.py", "import_cost.py", "torch_function.py"])
def test_floor_2_claims_hold(proof_claims: Claims, proof: str) -> None:
    proof_claims(f"2-python/{proof}")
