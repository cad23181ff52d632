"""Pattern tests for every proof: each runs as the build runs it, alone on the machine, and every claim it states holds.

The patterns are stated once, as claims in the proofs (the build checks them too). A proof a page
shows runs as that page's block, the page's blocks in order, into the proof cache the later site
build reads (`site_proofs`), so `make test` executes each proof once. The proofs are
found on disk (`floor_proofs.proofs`: every `.py` under `snippets/`), never listed, so a new proof
or a new floor's folder is run here without a line added. What a proof's page says that is not a
claim is checked by `tests/test_floor_N.py`, which imports the proof with `load_proof`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from floor_proofs import proofs

from pytorch_floors.claims import Claim


@pytest.mark.parametrize("proof", proofs())
def test_the_proofs_claims_hold(proof_claims: Callable[[str], list[Claim]], proof: str) -> None:
    proof_claims(proof)
