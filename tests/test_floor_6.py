"""Pattern tests for Floor 6, kernels: orders and ratios the page states, never absolute speeds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
import torch

Loader = Callable[[str], ModuleType]


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Time on one core, as the proofs do: steadier on a shared machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_build_config_names_blas_and_capability_without_paths(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/build_config.py")
    settings = proof.build_settings()
    assert settings.get("TORCH_VERSION") == torch.__version__.split("+")[0]
    assert "BLAS_INFO" in settings and "USE_CUDA" in settings
    lines = proof.library_lines() + proof.parallel_lines()
    assert any("CPU capability" in line for line in lines)
    assert any("parallel backend" in line for line in lines)
    assert all("/" not in line for line in lines)


def test_capability_setting_changes_the_add_kernel(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/capability.py")
    lowest = proof.run_with("default")
    native = proof.run_with("")
    assert lowest[0] == "DEFAULT"
    assert native[0] == torch.backends.cpu.get_cpu_capability()
    if native[0] in {"AVX2", "AVX512"}:  # vector kernels against the scalar build of the same loop
        assert native[1] > 1.5 * lowest[1]


def test_profiler_shows_addmm_under_linear_and_mm_under_matmul(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/profiler_view.py")
    device = torch.device("cpu")
    calls = proof.calls(device)
    names = {
        label.split()[0]: [name for _, name in proof.op_tree(proof.profile_call(fn, device))]
        for label, fn in calls.items()
    }
    assert "aten::addmm" in names["model(x)"]
    assert "aten::linear" in names["model(x)"]
    assert "aten::mm" in names["torch.matmul(x,"]
    backward = names["cross_entropy(model(x),"]
    assert "AddmmBackward0" in backward and "aten::mm" in backward
    assert backward.index("NllLossBackward0") < backward.index("AddmmBackward0")


def test_matmul_rate_grows_with_size(load_proof: Loader, one_thread: None) -> None:
    proof = load_proof("6-kernels/matmul_rate.py")
    device = torch.device("cpu")
    _, tiny = proof.matmul_rate(8, device)
    _, large = proof.matmul_rate(256, device)
    assert large > 4 * tiny


def test_add_from_main_memory_is_slower_than_from_cache(load_proof: Loader, one_thread: None) -> None:
    proof = load_proof("6-kernels/add_bandwidth.py")
    device = torch.device("cpu")
    rows = proof.sweep([1 << 14, 1 << 16, 1 << 24], device)
    best_cached = max(rate for n, _, rate in rows if n <= 1 << 16)
    main_memory = rows[-1][2]
    assert best_cached > 1.5 * main_memory


def test_add_intensity_far_below_matmul_and_add_far_below_the_ceiling(load_proof: Loader, one_thread: None) -> None:
    proof = load_proof("6-kernels/roofline.py")
    device = torch.device("cpu")
    add = proof.add_point(1 << 16, device)
    matmul = proof.matmul_point(256, device)
    assert add.intensity == pytest.approx(1 / 12)
    assert matmul.intensity == pytest.approx(256 / 6)
    assert matmul.intensity > 100 * add.intensity
    assert add.rate < matmul.rate / 4  # bandwidth-bound: few FLOP per byte, far from the compute ceiling
    compute, best_bw, memory_bw = proof.ceilings([add, matmul, proof.add_point(1 << 22, device)])
    assert compute == matmul.rate
    assert best_bw >= memory_bw


def test_float64_matmul_is_slower_than_float32(load_proof: Loader, one_thread: None) -> None:
    proof = load_proof("6-kernels/dtypes.py")
    device = torch.device("cpu")
    f32 = [proof.matmul_rate(torch.float32, 256, device) for _ in range(2)]
    f64 = [proof.matmul_rate(torch.float64, 256, device) for _ in range(2)]
    assert all(isinstance(rate, float) for rate in f32 + f64)
    assert max(f32) > 1.2 * min(f64)  # twice the bytes per number, half the numbers per vector
    for dtype in proof.DTYPES:  # every float dtype runs an add on this CPU build
        assert isinstance(proof.add_rate(dtype, 1 << 12, device), float)


def test_matmul_library_detection(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/dtypes.py")
    libraries = proof.cpu_matmul_libraries()
    assert set(libraries) == {"float32", "float64", "bfloat16", "float16"}
    if load_proof("6-kernels/build_config.py").build_settings().get("BLAS_INFO") == "mkl":
        assert libraries["float32"] == "MKL SGEMM"
        assert libraries["float64"] == "MKL DGEMM"


def test_program_linear_is_gemm_bound_not_overhead_bound(load_proof: Loader, one_thread: None) -> None:
    """Linear(784, 10) on 64 rows: the fixed cost is the smaller part; the skinny product runs below the BLAS rate."""
    proof = load_proof("6-kernels/linear_cost.py")
    calls = proof.measure(torch.device("cpu"))
    fixed, program, square, large = calls["fixed"], calls["program"], calls["square"], calls["large"]
    assert fixed.seconds < 0.5 * program.seconds  # most of the call is the product, not the toll
    assert proof.gemm_rate(program, fixed) < 0.5 * proof.gemm_rate(large, fixed)
    assert proof.gemm_rate(square, fixed) > proof.gemm_rate(program, fixed)  # same work, N = 10 is the slow shape
    assert abs(square.flops - program.flops) < 0.05 * program.flops


def test_roofline_legend_names_each_size(load_proof: Loader) -> None:
    proof = load_proof("6-kernels/roofline.py")
    points = [proof.Point("matmul", f"a @ b, n = {n}", 2 * n**3, 12 * n * n, 1.0) for n in (64, 16)]
    assert proof.legend("matmul", sorted(points, key=lambda p: p.intensity)) == (
        "matmul: n = 16, n = 64 (left to right)"
    )
