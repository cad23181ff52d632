"""The same matmul and add in float32, float64, bfloat16 and float16: what runs, how fast, and which library does it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import cuda_event_seconds, detect_device, time_call
from pytorch_floors.plot import bar_chart, show

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]

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
    """FLOP/s of an n x n product in `dtype`, or the error text if this build cannot run it."""
    try:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        return 2 * n**3 / seconds_per_call(lambda: a @ b, device)
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return f"not supported: {str(error).splitlines()[0][:70]}"


def add_rate(dtype: torch.dtype, n: int, device: torch.device) -> float | str:
    """Bytes/s of torch.add(a, b, out=c) on n elements of `dtype`, or the error text."""
    try:
        a = torch.full((n,), 1.5, device=device, dtype=dtype)
        b = torch.full((n,), 0.25, device=device, dtype=dtype)
        c = torch.empty_like(a)
        return 3 * n * a.element_size() / seconds_per_call(lambda: torch.add(a, b, out=c), device)
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return f"not supported: {str(error).splitlines()[0][:70]}"


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
    lines = [f"on {where}: matmul {n_mm} x {n_mm} @ {n_mm} x {n_mm};", f"add on {n_add:,} elements (out= given)", ""]
    lines.append(f"{'dtype':<9} {'bytes':>5} {'matmul GFLOP/s':>15} {'add GB/s':>9} {'add Gelem/s':>12}")
    bars: list[tuple[str, float]] = []
    for dtype in DTYPES:
        name = str(dtype).removeprefix("torch.")
        size = torch.tensor([], dtype=dtype).element_size()
        mm, add = matmul_rate(dtype, n_mm, device), add_rate(dtype, n_add, device)
        mm_text = f"{mm / 1e9:>15.1f}" if isinstance(mm, float) else f"{'-':>15}"
        add_text = f"{add / 1e9:>9.1f} {add / 1e9 / (3 * size):>12.2f}" if isinstance(add, float) else f"{'-':>22}"
        lines.append(f"{name:<9} {size:>5} {mm_text} {add_text}")
        for result in (mm, add):
            if isinstance(result, str):
                lines.append(f"          {result}")
        if isinstance(mm, float):
            bars.append((f"matmul {name}", mm / 1e9))
    rates = dict(bars)
    if device.type == "cpu":
        claim(
            "float64 matmul is slower than float32: twice the bytes per number",
            held=rates["matmul float32"] > 1.2 * rates["matmul float64"],
            detail=f"{rates['matmul float32'] / rates['matmul float64']:.1f}x",
        )
    lines.append("")
    lines.append("which library served each matmul:")
    lines.extend(f"  {name:<9} {library}" for name, library in libraries.items())
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
    svg = bar_chart(
        bars,
        title=f"Matrix multiply by dtype on {device.type} (n = {n_mm})",
        value_label="GFLOP/s (2 n³ per call / time)",
        description="Measured matrix-multiply throughput for each floating-point dtype on this machine.",
        value_format="{:,.1f}",
        highlight=[label for label, value in bars if value == max(v for _, v in bars)],
    )
    show(svg, text="\n".join(lines), name="dtypes")


if __name__ == "__main__":
    main()
