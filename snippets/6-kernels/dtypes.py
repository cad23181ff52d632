"""The same matmul and add in float32, float64, bfloat16 and float16: what runs, how fast, and which library does it."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import cuda_event_seconds, detect_device, interleaved_rounds, paired_ratios, time_call
from pytorch_floors.plot import bar_chart, show

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
ROUNDS = 5

# A child process with the BLAS libraries' own logging switched on: which library served each dtype's matmul?
CHILD = """
import sys, torch
for name in ("float32", "float64", "bfloat16", "float16"):
    a = torch.ones(64, 64, dtype=getattr(torch, name))
    print("MARK", name, flush=True)
    a @ a
    sys.stdout.flush()
print("MARK end", flush=True)
"""


def seconds_per_call(fn: Callable[[], object], device: torch.device) -> float:
    """Median seconds per call: CUDA events on a CUDA device, the synchronising timer elsewhere."""
    if device.type == "cuda":
        return cuda_event_seconds(fn, repeats=10)
    start = time.perf_counter()
    fn()  # warm-up call, also tells how slow this one is
    slow = time.perf_counter() - start > 0.02
    return time_call(
        fn, device=device, warmup=0 if slow else 3, samples=3 if slow else 7, min_sample_seconds=5e-3
    ).median


def matmul_rate(dtype: torch.dtype, n: int, device: torch.device) -> float | str:
    """FLOP/s of an n x n product in `dtype` (by CPU time on a CPU), or the error text if this build cannot run it."""
    try:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        call = lambda: a @ b  # noqa: E731  (timed two ways)
        seconds = cpu_seconds_per_call(call) if device.type == "cpu" else seconds_per_call(call, device)
        return 2 * n**3 / seconds
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return f"not supported: {str(error).splitlines()[0][:70]}"


def cpu_seconds_per_call(fn: Callable[[], object], samples: int = 7) -> float:
    """The fewest CPU seconds this thread spent in one call of `fn` (one torch thread runs ops on the caller's).

    Wall time counts the moments another program holds the core: beside two CPU hogs a 15 ms add was
    preempted in every call, a 4 ms one escaped, and the bytes/s of the dtypes spread by 2.3x. The
    thread's own CPU time, memory stalls included, counts only the add's work.
    """
    start = time.thread_time()
    fn()
    best = time.thread_time() - start
    for _ in range(samples if best < 0.02 else 1):  # a slow call (a fallback gemm) is its own long sample
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def add_rate(dtype: torch.dtype, n: int, device: torch.device) -> float | str:
    """Bytes/s of torch.add(a, b, out=c) on n elements of `dtype` (by CPU time on a CPU), or the error text."""
    try:
        a = torch.full((n,), 1.5, device=device, dtype=dtype)
        b = torch.full((n,), 0.25, device=device, dtype=dtype)
        c = torch.empty_like(a)
        call = lambda: torch.add(a, b, out=c)  # noqa: E731  (timed two ways)
        seconds = cpu_seconds_per_call(call) if device.type == "cpu" else seconds_per_call(call, device)
        return 3 * n * a.element_size() / seconds
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return f"not supported: {str(error).splitlines()[0][:70]}"


def rounds_of(
    rate: Callable[[torch.dtype, int, torch.device], float | str], n: int, device: torch.device, rounds: int = ROUNDS
) -> dict[torch.dtype, list[float | str]]:
    """Each dtype's `rate` in each of `rounds` interleaved rounds, so a busy moment slows every dtype alike."""
    names = {str(dtype).removeprefix("torch."): dtype for dtype in DTYPES}
    measured = interleaved_rounds({name: partial(rate, dtype, n, device) for name, dtype in names.items()}, rounds)
    return {names[name]: results for name, results in measured.items()}


def best_of(rounds: list[float | str]) -> float | str:
    """The fastest round, or the first error text when no round ran."""
    rates = [rate for rate in rounds if isinstance(rate, float)]
    return max(rates) if rates else rounds[0]


def cpu_matmul_libraries() -> dict[str, str]:
    """Which library logged each dtype's CPU matmul (MKL_VERBOSE / ONEDNN_VERBOSE in a child process)."""
    env = {**os.environ, "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1"}
    env.pop("FLOORS_OUTPUT", None)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    found: dict[str, str] = {}
    current = ""
    for line in done.stdout.splitlines():
        if line.startswith("MARK "):
            current = line.split()[1]
            found.setdefault(current, "")
        elif line.startswith("MKL_VERBOSE") and "GEMM(" in line and current:
            found[current] = "MKL " + line.split()[1].split("(")[0]
        elif line.startswith("onednn_verbose") and ",exec," in line and current:
            fields = line.split(",")
            at = fields.index("exec")
            found[current] = f"oneDNN {fields[at + 2]} ({fields[at + 3]})"
    found.pop("end", None)
    return {name: library or "neither: ATen's own loop" for name, library in found.items()}


def main() -> None:
    torch.set_num_threads(1)  # one core: steady numbers on a shared machine (the GPU does not care)
    device = detect_device()
    n_mm, n_add = (4096, 1 << 26) if device.type == "cuda" else (512, 1 << 23)
    if device.type == "cpu":
        libraries = cpu_matmul_libraries()
    else:
        libraries = {str(d).removeprefix("torch."): "vendor BLAS of the GPU" for d in DTYPES}
    where = f"{device.type}, 1 thread" if device.type == "cpu" else device.type
    lines = [
        f"on {where}: matmul {n_mm} x {n_mm} @ {n_mm} x {n_mm};",
        f"add on {n_add:,} elements (out= given); each rate the best of {ROUNDS} interleaved rounds"
        + (", timed by the thread's CPU time" if device.type == "cpu" else ""),
        "",
    ]
    # Printed for a phone's 46 columns: the headers on two lines, each column as wide as its numbers (a GPU's
    # included); each dtype's library after its name, one space apart, so that the line wraps.
    lines.append(f"{'':<8} {'':>5} {'matmul':>8} {'add':>7} {'add':>8}")
    lines.append(f"{'dtype':<8} {'bytes':>5} {'GFLOP/s':>8} {'GB/s':>7} {'Gelem/s':>8}")
    bars: list[tuple[str, float]] = []
    mm_rounds, add_rounds = rounds_of(matmul_rate, n_mm, device), rounds_of(add_rate, n_add, device)
    for dtype in DTYPES:
        name = str(dtype).removeprefix("torch.")
        size = torch.tensor([], dtype=dtype).element_size()
        mm, add = best_of(mm_rounds[dtype]), best_of(add_rounds[dtype])
        mm_text = f"{mm / 1e9:>8.1f}" if isinstance(mm, float) else f"{'-':>8}"
        add_text = f"{add / 1e9:>7.1f} {add / 1e9 / (3 * size):>8.2f}" if isinstance(add, float) else f"{'-':>16}"
        lines.append(f"{name:<8} {size:>5} {mm_text} {add_text}")
        for result in (mm, add):
            if isinstance(result, str):
                lines.append(f"          {result}")
        if isinstance(mm, float):
            bars.append((f"matmul {name}", mm / 1e9))
    rates = dict(bars)
    lines.append("")
    lines.append("which library served each matmul:")
    lines.extend(f"  {name}: {library}" for name, library in libraries.items())
    fell_back: list[str] = []
    if device.type == "cpu":
        sentences, fell_back = reduced_precision(libraries, rates)
        lines += ["", *sentences]
    if device.type == "cuda":
        lines.append("")
        matmul = torch.backends.cuda.matmul
        precision = getattr(matmul, "fp32_precision", None)
        lines.append(f"float32 matmul precision: {precision if precision is not None else matmul.allow_tf32}")
    else:
        lines.append("")
        lines.append("this build has no GPU; on a CUDA machine this proof measures the same table")
        lines.append("on the GPU with CUDA events (n = 4096), where bfloat16 and float16 run on")
        lines.append("tensor cores")
    chart = bar_chart(
        bars,
        title=f"Matrix multiply by dtype on {device.type} (n = {n_mm})",
        value_label="GFLOP/s (2 n³ per call / time)",
        description="Measured matrix-multiply throughput for each floating-point dtype on this machine.",
        value_format="{:,.1f}",
        highlight=[label for label, value in bars if value == max(v for _, v in bars)],
    )
    show(chart, text="\n".join(lines), name="dtypes")
    add_ratios = paired_ratios({str(d).removeprefix("torch."): add_rounds[d] for d in DTYPES}, against="float32")
    mm_ratios = paired_ratios({str(d).removeprefix("torch."): mm_rounds[d] for d in DTYPES}, against="float64")
    check(rates, add_ratios, fell_back, mm_ratios)


def reduced_precision(libraries: dict[str, str], rates: dict[str, float]) -> tuple[list[str], list[str]]:
    """A sentence per reduced-precision dtype on the CPU: which code ran its product, and how fast.

    Returns the sentences and the dtypes that fell back to ATen's own gemm.
    """
    sentences, fell_back = [], []
    for name in ("bfloat16", "float16"):
        library, rate = libraries.get(name, ""), rates.get(f"matmul {name}")
        if rate is None:
            continue
        share = f"{rate / rates['matmul float32']:.3g}x the float32 rate"
        if library.startswith("oneDNN"):
            sentences.append(f"{name}: oneDNN has a kernel for this processor, and it ran at {share}")
        else:
            fell_back.append(name)
            sentences.append(f"{name}: no library logged it, so ATen's own fallback gemm ran, at {share}")
    return sentences, fell_back


def check(
    rates: dict[str, float], add_ratios: dict[str, float], fell_back: list[str], mm_ratios: dict[str, float]
) -> None:
    """The page's claims: matmul GFLOP/s by dtype, and each dtype's rates over another's in the same round.

    `mm_ratios` holds each dtype's matmul rate over float64's in the same round (the median of the
    rounds), `add_ratios` each dtype's add bytes/s over float32's; `rates` the best matmul GFLOP/s.
    """
    vector_kernels = detect_device().type != "cpu" or torch.backends.cpu.get_cpu_capability() != "DEFAULT"
    ratio = mm_ratios["float32"]
    # The model: a product this size is compute-bound, and a vector register holds half as many float64
    # values, so float64 should run at about half the rate: nearer 2x slower than 1x (or 4x), on a log scale.
    cpu = detect_device().type == "cpu"
    claim(
        "float64 matmul runs at about half the float32 rate: a vector register holds half as many float64 values",
        held=math.sqrt(2) < ratio < 2 * math.sqrt(2),
        detail=f"float32 {ratio:.2f}x as fast, the median of {ROUNDS} same-round ratios",
        applies=cpu,
        why_not="a GPU runs float64 on units of its own, at a rate its design sets, not by vector width",
    )
    slowest = min(fell_back, key=lambda name: rates[f"matmul {name}"], default=None)
    claim(
        "a reduced-precision product left to ATen's fallback gemm runs slower than float32",
        held=slowest is not None and rates[f"matmul {slowest}"] < rates["matmul float32"],
        detail=f"{slowest} {rates[f'matmul {slowest}']:.1f}, float32 {rates['matmul float32']:.1f} GFLOP/s"
        if slowest
        else "",
        applies=bool(fell_back),
        why_not="oneDNN (or the GPU's library) served every reduced-precision product here",
    )
    # Bound by memory, every dtype moves bytes at one rate (ratio 1); bound by arithmetic, every dtype adds
    # elements at one rate, and bytes/s spread by 4x from the two-byte types to float64. 2x is the middle.
    per_byte = list(add_ratios.values())
    # A two-byte add does more elements per second than float32 when its bytes/s is over half float32's.
    two_bytes = [add_ratios[name] * 4 / 2 for name in ("bfloat16", "float16") if name in add_ratios]
    spread = ", ".join(f"{name} {ratio:.2f}" for name, ratio in add_ratios.items() if name != "float32")
    claim(
        "the add is memory-bound: every dtype moves bytes at a similar rate, so two-byte types add the most elements",
        held=max(per_byte) < 2 * min(per_byte) and min(two_bytes, default=0.0) > 1,
        detail=f"bytes/s over float32's in the same round, median of {ROUNDS}: {spread}",
        applies=vector_kernels,
        why_not="ATen's DEFAULT CPU kernels run here, compiled without AVX2 or AVX-512 (at most the baseline's "
        "narrow SSE vectors); the pattern is the AVX2 and AVX-512 kernels'",
    )


if __name__ == "__main__":
    main()
