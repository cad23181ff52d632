"""One add kernel, compiled once per CPU capability: torch.add under ATEN_CPU_CAPABILITY=default and unset."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device

# Run in a fresh process per capability: torch reads ATEN_CPU_CAPABILITY once, at the first kernel it dispatches.
CHILD = """
import torch
from pytorch_floors.measure import time_call
n = 1 << 16  # three 256 kB arrays stay in cache: the loop, not memory, sets the rate
a, b, c = torch.rand(n), torch.rand(n), torch.empty(n)
m = torch.rand(256, 256)
add = time_call(lambda: torch.add(a, b, out=c), device="cpu", samples=15).median
mm = time_call(lambda: m @ m, device="cpu", samples=9).median
print(torch.backends.cpu.get_cpu_capability(), 3 * n * 4 / add, 2 * 256**3 / mm)
"""

CHOICES = ("default", "")  # "" = let torch pick the best the CPU supports


def run_with(capability: str) -> tuple[str, float, float]:
    """`(capability torch reports, add bytes/s, 256 x 256 matmul FLOP/s)` in a child process, one thread."""
    env = {key: value for key, value in os.environ.items() if key != "ATEN_CPU_CAPABILITY"}
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    env["OMP_NUM_THREADS"] = "1"  # one thread: the comparison is about vector width, not cores
    env.pop("FLOORS_OUTPUT", None)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    name, add, mm = done.stdout.split()
    return name, float(add), float(mm)


def main() -> None:
    print(f"this process: get_cpu_capability() = {torch.backends.cpu.get_cpu_capability()}")
    print()
    print("each row: a fresh process, 1 thread; add on 2^16 float32 elements (out= given),")
    print("matmul 256 x 256 float32")
    print(f"{'ATEN_CPU_CAPABILITY':<20} {'kernel used':<12} {'add GB/s':>9} {'matmul GFLOP/s':>15}")
    rows = [(choice or "(not set)", *run_with(choice)) for choice in CHOICES]
    for setting, name, add, mm in rows:
        print(f"{setting:<20} {name:<12} {add / 1e9:>9.1f} {mm / 1e9:>15.1f}")
    best, lowest = rows[-1], rows[0]
    print()
    print(f"add with {best[1]} kernels: {best[2] / lowest[2]:.1f}x the rate of the DEFAULT build of the loop")
    print(f"matmul: {best[3] / lowest[3]:.2f}x (ATEN_CPU_CAPABILITY does not reach the BLAS library)")
    claim(
        "ATEN_CPU_CAPABILITY=default selects the DEFAULT (scalar) kernels; unset, the CPU's own",
        held=lowest[1] == "DEFAULT" and best[1] == torch.backends.cpu.get_cpu_capability(),
    )
    if best[1] in {"AVX2", "AVX512"}:
        claim(
            "the vector kernels add well over 1.5x as fast as the scalar build of the same loop",
            held=best[2] > 1.5 * lowest[2],
            detail=f"{best[2] / lowest[2]:.1f}x",
        )
    if detect_device().type == "cuda":
        print("(CPU capability is a CPU matter; this build's CUDA kernels were compiled for")
        print(f"{' '.join(torch.cuda.get_arch_list())})")


if __name__ == "__main__":
    main()
