"""Pattern tests for Floor 6, kernels: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

import math
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
import torch
from core_hogs import hogs_on, one_core
from floor_proofs import stated_claims

from conftest import ROOT, section_words
from pytorch_floors.claims import CHANNEL, Claim, parse_claims
from pytorch_floors.measure import stub_name
from pytorch_floors.tiers import tier_named

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


def test_under_a_tier_that_forces_a_capability_this_builds_row_keeps_it(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The avx2 tier stands for an AVX2-only CPU: stripping the variable for the "(not set)" row ran this
    # processor's widest kernels instead, which that CPU does not have.
    proof = load_proof("6-kernels/capability.py")
    seen: list[str | None] = []

    class Done:
        stdout = "AVX2 1 1 1"

    def run(command: list[str], *, env: dict[str, str], **_: object) -> Done:
        seen.append(env.get("ATEN_CPU_CAPABILITY"))
        return Done()

    monkeypatch.setattr(proof.subprocess, "run", run)
    monkeypatch.setattr(proof, "FORCED", "avx2")
    proof.run_with("")
    proof.run_with("default")
    monkeypatch.setattr(proof, "FORCED", "")
    proof.run_with("")
    assert seen == ["avx2", "default", None]


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


SKINNY = "its skinny product (N = 10) runs well below the large layer's GEMM rate"


def test_the_skinny_product_is_compared_with_the_large_one_in_the_same_round(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: under load the skinny product once reached 68% of the large layer's rate, timed in other moments."""
    proof = load_proof("6-kernels/linear_cost.py")
    shapes = proof.shapes()
    busy = [1.0, 3.0, 1.0, 3.0, 1.0]  # each round's load, shared by its four calls
    seconds = {"fixed": 1e-5, "program": 5e-5, "square": 3e-5, "large": 4.3e-3}

    def rounds(slow: dict[str, float]) -> dict[str, list[object]]:
        return {
            key: [proof.Call(*shapes[key], seconds=load * seconds[key] * slow.get(key, 1.0)) for load in busy]
            for key in shapes
        }

    steady = rounds({})
    best = proof.best(steady)
    rate = {key: proof.gemm_rate(best[key], best["fixed"]) for key in ("program", "large")}
    # The scene: the best large rate of a busy round beside the program's best of a quiet one.
    assert (
        proof.gemm_rate(steady["program"][0], steady["fixed"][0])
        / proof.gemm_rate(steady["large"][1], steady["fixed"][1])
        > 0.6
        > rate["program"] / rate["large"]
    )
    stated = stated_claims(proof, monkeypatch)
    proof.check(proof.ratios(steady))
    assert stated and all(stated.values()), stated
    # A product as fast as the large one, per FLOP, misses the claim (and the square one's with it).
    stated.clear()
    proof.check(proof.ratios(rounds({"program": 0.3})))
    assert stated[SKINNY] is False
    # A call no longer than the fixed cost has no GEMM rate: it pairs with nothing.
    assert isinstance(proof.gemm_rate(steady["fixed"][0], steady["fixed"][0]), str)


def test_the_float64_matmul_is_compared_with_float32_in_the_same_round(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch
) -> None:
    proof = load_proof("6-kernels/dtypes.py")
    half = "float64 matmul runs at about half the float32 rate: a vector register holds half as many float64 values"
    busy = [1.0, 3.0, 1.0, 3.0, 1.0][: proof.ROUNDS]
    rounds = {"float32": [100.0 / load for load in busy], "float64": [50.0 / load for load in busy]}
    assert max(rounds["float32"]) / min(rounds["float64"]) > 2 * math.sqrt(2), "the scene: separate rounds miss"
    rates = {"matmul float32": 100.0, "matmul float64": 50.0}
    add = dict.fromkeys(("float32", "float64", "bfloat16", "float16"), 1.0)
    stated = stated_claims(proof, monkeypatch)
    proof.check(rates, add, [], proof.paired_ratios(rounds, against="float64"))
    if proof.detect_device().type != "cpu":
        assert half not in stated
        return
    assert stated[half] is True
    # As fast in float64 as in float32 (or four times slower): the claim misses.
    for factor in (1.0, 4.0):
        stated.clear()
        same = {"float32": rounds["float32"], "float64": [rate * 2 / factor for rate in rounds["float64"]]}
        proof.check(rates, add, [], proof.paired_ratios(same, against="float64"))
        assert stated[half] is False, factor


def test_the_kernel_slots_are_read_from_the_library_and_only_from_an_elf_file(
    load_proof: Loader, tmp_path: Path
) -> None:
    """The slots come from torch's own symbol table: every capability of both stubs is found, and the
    DEFAULT and AVX2 builds of add are there (an empty DEFAULT slot would mean the reader is wrong)."""
    proof = load_proof("6-kernels/capability.py")
    library = proof.torch_cpu_library()
    if library is None or platform.machine().lower() not in {"x86_64", "amd64"}:
        pytest.skip("not an x86-64 Linux build of torch: there are no AVX slots to read")
    slots = proof.kernel_slots(library)
    assert sorted(slots) == sorted(proof.SLOT_STUBS)
    for filled in slots.values():
        assert sorted(filled) == sorted(proof.CAPABILITIES) and filled["DEFAULT"] and filled["AVX2"]
    text = tmp_path / "libnot.so"
    text.write_text("not a library", encoding="utf-8")
    with pytest.raises(ValueError, match="not a little-endian 64-bit ELF"):
        proof.kernel_slots(text)


def test_the_grain_size_caps_the_pieces_not_their_length(load_proof: Loader) -> None:
    """invoke_parallel (ParallelOpenMP.h): tasks = min(threads, ceil(n / grain)), piece = ceil(n / tasks)."""
    proof = load_proof("6-kernels/grain_size.py")
    grain = proof.GRAIN_SIZE
    assert (proof.tasks(grain), proof.piece(grain)) == (1, grain)
    assert proof.tasks(3 * grain // 2) == 2 and proof.piece(3 * grain // 2) < grain, "a piece shorter than the grain"
    assert any(n % grain for n in proof.AROUND), "the table shows a size that is no multiple of the grain"
    assert proof.tasks(64 * grain, threads=4) == 4 and proof.piece(64 * grain, threads=4) == 16 * grain


def test_a_stub_is_told_from_one_whose_name_ends_the_same() -> None:
    """frexp_stub's symbols hold 'exp_stub_DECLARE_DISPATCH_type' too: matched by substring, its empty AVX512
    slot was read as exp's in PyPI's CUDA build and failed the claim on three tiers."""
    exp = b"_ZN2at6native12DispatchStubIPFvRNS_18TensorIteratorBaseEENS0_30exp_stub_DECLARE_DISPATCH_typeEE6AVX512E"
    frexp = exp.replace(b"30exp_stub", b"32frexp_stub")
    assert stub_name(exp) == "exp_stub" and stub_name(frexp) == "frexp_stub"
    cpublas = b"_ZN2at6native12DispatchStubIPFvvENS0_7cpublas31copy_stub_DECLARE_DISPATCH_typeEE6AVX512E"
    assert stub_name(cpublas) == "copy_stub" and stub_name(b"_ZN2at6native12DispatchStub3fooE") is None


@pytest.mark.waits
def test_the_reduction_draws_the_same_values_under_every_cpu_capability(load_proof: Loader) -> None:
    """Issue 60: the scalar tab's total differed because torch.randn drew other values under
    ATEN_CPU_CAPABILITY=default (its normal sampler is a vector kernel); on the same values DEFAULT and
    AVX2 sums are bit-identical. The proof's inputs must not depend on the capability."""
    proof = load_proof("6-kernels/reduction.py")
    here = [values.numpy().tobytes().hex() for values in proof.inputs(4096).values()]
    path = str(ROOT / "snippets/6-kernels/reduction.py")
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('reduction', {path!r})\n"
        "proof = importlib.util.module_from_spec(spec); spec.loader.exec_module(proof)\n"
        "print(' '.join(v.numpy().tobytes().hex() for v in proof.inputs(4096).values()))\n"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == here
    for page in ("docs/floors/6-kernels.md", "docs/zh/floors/6-kernels.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        for wrong in (
            "groups them differently again",
            "grows only with the number of levels",
            "另一种分组",
            "只随级数增长",
        ):
            assert wrong not in text, (page, wrong)


def test_the_idea_names_the_variable_that_overrides_the_widest_capability() -> None:
    """Issue 60 (K1): #the-idea called the capability torch chose "the widest the processor supports"; the
    one-core-scalar tier sets `ATEN_CPU_CAPABILITY=default` on an AVX-512 processor and its tab prints DEFAULT
    (`compute_cpu_capability` returns the variable's choice before it asks the processor), so the page says so."""
    scalar = tier_named("one-core-scalar")
    assert scalar is not None and scalar.env.get("ATEN_CPU_CAPABILITY") == "default"
    for page, widest, variable in (
        ("docs/floors/6-kernels.md", "the widest the processor supports", "ATEN_CPU_CAPABILITY"),
        ("docs/zh/floors/6-kernels.md", "处理器所支持的最宽指令集", "ATEN_CPU_CAPABILITY"),
    ):
        idea = (ROOT / page).read_text(encoding="utf-8").split("{ #the-idea }", 1)[1].split("\n## ", 1)[0]
        assert widest in idea, page
        parenthesis = re.split(r"[)）]", idea[idea.index(widest) :], maxsplit=1)[0]
        assert variable in parenthesis, f"{page}: the parenthesis names no override"


def _add_bandwidth_verdicts(
    proof: ModuleType,
    rows: list[tuple[int, float, float]],
    shares: list[float | None],
    channel: Path,
    capability: str = "AVX512",
) -> list[Claim]:
    channel.write_text("", encoding="utf-8")
    proof.state_claim(rows, shares, "cpu", capability)
    return parse_claims(channel.read_text("utf-8"))


def test_the_add_bandwidth_claim_stands_aside_when_the_share_of_a_core_changed_between_the_sizes(
    load_proof: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 60: the add-bandwidth claim compares the fastest size against the last, timed one after the
    other; a program that left after the small sizes (or came before the large ones) made the cache look
    faster than memory, or no faster. Where the share of a core changed between the two, it stands aside."""
    proof = load_proof("6-kernels/add_bandwidth.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    sizes = [4**k for k in range(5, 13)]
    # From cache at 40 GB/s, from memory at 10: the pattern holds, whatever the shares.
    rates = [20e9, 40e9, 38e9, 30e9, 15e9, 11e9, 10e9, 10e9]
    rows = [(n, 12 * n / rate, rate) for n, rate in zip(sizes, rates, strict=True)]
    left: list[float | None] = [0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0]  # a program left after the small sizes
    came: list[float | None] = [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5]  # one came before the large sizes
    for shares in (left, came):
        (stood,) = _add_bandwidth_verdicts(proof, rows, shares, channel)
        assert not stood.applies and "changed between the two runs" in stood.why_not, stood
    # A burst beside sizes the claim does not compare does not count: only the fastest and the last.
    burst: list[float | None] = [0.3, 0.97, 0.97, 0.3, 0.97, 0.97, 0.97, 0.97]
    (judged,) = _add_bandwidth_verdicts(proof, rows, burst, channel)
    assert (judged.applies, judged.held) == (True, True), judged
    flat = [(n, 12 * n / 10e9, 10e9) for n in sizes]
    for steady in ([0.97] * len(sizes), [None] * len(sizes)):
        (judged,) = _add_bandwidth_verdicts(proof, flat, list(steady), channel)
        assert (judged.applies, judged.held) == (True, False), "on steady or unmeasured shares, judged as before"
    (scalar,) = _add_bandwidth_verdicts(proof, rows, left, channel, capability="DEFAULT")
    assert not scalar.applies and "CPU capability DEFAULT" in scalar.why_not, scalar


@pytest.mark.waits
@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "sched_setaffinity"), reason="Linux")
def test_a_hog_that_starts_between_two_sizes_of_the_add_sweep_makes_the_add_bandwidth_claim_stand_aside(
    load_proof: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A real hog, started between the add sweep's small size and its large one on the same core: the claim
    that compares them says "not applicable", naming the shares, instead of judging two different machines."""
    proof = load_proof("6-kernels/add_bandwidth.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    threads, cpu = torch.get_num_threads(), torch.device("cpu")
    torch.set_num_threads(1)  # as the proof runs: one thread, so the share is one thread's
    try:
        with one_core() as core:
            small, small_shares = proof.sweep([4**7], cpu)
            with hogs_on(core):
                large, large_shares = proof.sweep([4**11], cpu)
    finally:
        torch.set_num_threads(threads)
    assert None not in small_shares + large_shares, (small_shares, large_shares)
    (stated,) = _add_bandwidth_verdicts(proof, small + large, small_shares + large_shares, channel)
    assert not stated.applies and "changed between the two runs" in stated.why_not, stated


def test_the_add_bandwidth_section_says_its_claim_stands_aside_when_the_share_changed() -> None:
    """The add-bandwidth claim now stands aside when the share of a core changed between the sizes it
    compares; the page says so in both languages."""
    for page, said in (
        ("docs/floors/6-kernels.md", "where that share changed between the two"),
        ("docs/zh/floors/6-kernels.md", "如果这两个大小之间这个份额变了"),
    ):
        assert said in section_words(page, "add-bandwidth"), page
