"""Pattern tests for Floor 6, kernels: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch

Loader = Callable[[str], ModuleType]


def test_build_config_prints_no_paths(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/build_config.py")
    assert proof.build_settings().get("TORCH_VERSION") == torch.__version__.split("+")[0]
    assert all("/" not in line for line in proof.library_lines() + proof.parallel_lines())


def test_every_float_dtype_runs_an_add(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/dtypes.py")
    for dtype in proof.DTYPES:
        assert isinstance(proof.add_rate(dtype, 1 << 12, torch.device("cpu")), float)


def test_matmul_library_detection(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/dtypes.py")
    libraries = proof.cpu_matmul_libraries()
    assert set(libraries) == {"float32", "float64", "bfloat16", "float16"}
    if load_proof("6-kernels/build_config.py").build_settings().get("BLAS_INFO") == "mkl":
        assert libraries["float32"] == "MKL SGEMM"
        assert libraries["float64"] == "MKL DGEMM"


def test_roofline_legend_names_each_size(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/roofline.py")
    points = [proof.Point("matmul", f"a @ b, n = {n}", 2 * n**3, 12 * n * n, 1.0) for n in (64, 16)]
    assert proof.legend("matmul", sorted(points, key=lambda p: p.intensity)) == (
        "matmul: n = 16, n = 64 (left to right)"
    )


def test_which_code_ran_a_reduced_precision_product_is_said_from_the_measurement(load_proof: Loader) -> None:
    """The page's sentence about bfloat16 and float16 comes from the library log, whichever way it went."""
    proof = load_proof("6-kernels/dtypes.py")
    rates = {"matmul float32": 100.0, "matmul bfloat16": 0.9, "matmul float16": 20.0}
    libraries = {"bfloat16": "neither: ATen's own loop", "float16": "oneDNN matmul (gemm:jit:f16)"}
    sentences, fell_back = proof.reduced_precision(libraries, rates)
    assert sentences == [
        "bfloat16: no library logged it, so ATen's own fallback gemm ran, at 0.009x the float32 rate",
        "float16: oneDNN has a kernel for this processor, and it ran at 0.2x the float32 rate",
    ]
    assert fell_back == ["bfloat16"]


def test_the_capability_settings_and_the_distance_from_one(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/capability.py")
    assert proof.settings()[0] == "default" and proof.settings()[-1] == ""
    assert proof.log_distance(2.0) == pytest.approx(proof.log_distance(0.5))
    # The matmul claim: a factor nearer 1 than the add's square root.
    assert proof.log_distance(1.65) < proof.log_distance(2.8) / 2 < proof.log_distance(1.7)


def test_the_add_claim_compares_dtypes_within_a_round_so_a_busy_moment_cancels(load_proof: Loader) -> None:
    """Memory-bound adds on a shared machine: one quiet round for float16, every other round busy."""
    proof = load_proof("6-kernels/dtypes.py")
    quiet, busy = 20e9, 9e9
    rounds = {
        name: [quiet if (name == "float16" and r == 0) else busy for r in range(proof.ROUNDS)]
        for name in ("float32", "float64", "bfloat16", "float16")
    }
    best = [max(rates) for rates in rounds.values()]
    assert max(best) / min(best) > 2, "the scene: best rates of separate rounds spread past 2x"
    ratios = proof.paired_ratios(rounds, against="float32")
    assert ratios == {"float32": 1.0, "float64": 1.0, "bfloat16": 1.0, "float16": 1.0}
    # A dtype that failed to run pairs with nothing.
    assert "bfloat16" not in proof.paired_ratios({**rounds, "bfloat16": ["not supported"] * proof.ROUNDS}, "float32")
