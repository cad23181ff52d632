"""Pattern tests for Floor 1, your program: the proofs' claims hold on this machine.

What each line makes, default dtypes, NumPy sharing, `.to()` and views are stated once, as claims
in the proofs (the build checks them too); these tests run each proof and require every claim to hold.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytorch_floors.claims import Claim

Claims = Callable[[str], list[Claim]]


@pytest.mark.parametrize(
    "proof",
    ["line_by_line.py", "creation_and_dtypes.py", "numpy_sharing.py", "to_returns.py", "view_and_reshape.py"],
)
def test_floor_1_claims_hold(proof_claims: Claims, proof: str) -> None:
    proof_claims(f"1-program/{proof}")
