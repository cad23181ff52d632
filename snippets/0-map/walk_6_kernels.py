"""Floor 6 in one number: a matrix multiply's rate in a BLAS kernel, against the same product in Python loops."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, time_call


def matmul_flops(n: int, device: torch.device | None = None) -> float:
    """Floating-point operations per second of an n x n float32 matrix product (2 n^3 operations)."""
    device = device or detect_device()
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    seconds = time_call(lambda: a @ b, device=device, samples=5, min_sample_seconds=0.02).median
    return 2 * n**3 / seconds


def python_loop_flops(n: int) -> float:
    """The same product written as three nested Python loops over lists of floats."""
    a = torch.randn(n, n).tolist()
    b = torch.randn(n, n).tolist()

    def product() -> list[list[float]]:
        columns = list(zip(*b, strict=True))
        return [[sum(x * y for x, y in zip(row, column, strict=True)) for column in columns] for row in a]

    seconds = time_call(product, device="cpu", warmup=1, samples=3, number=1).median
    return 2 * n**3 / seconds


def main() -> None:
    device = detect_device()
    n, small = 1024, 64
    rate = matmul_flops(n, device)
    loop = python_loop_flops(small)
    # Printed for a phone's 46 columns: each product on a line, its rate under it.
    print(f"({n} x {n}) @ ({n} x {n}) in float32 on {device.type}:\n  {rate / 1e9:,.1f} GFLOP/s")
    print(f"({small} x {small}) @ ({small} x {small}) as Python loops:\n  {loop / 1e9:,.3f} GFLOP/s")
    print(f"the kernel is {rate / loop:,.0f} times faster")
    claim("no Python loop comes near the kernel's rate", held=rate > 30 * loop, detail=f"{rate / loop:,.0f}x")
    tiny = matmul_flops(8, device)
    claim(
        "a tiny product runs far below the rate of a large one (overhead, not arithmetic)",
        held=rate > 2 * tiny,
        detail=f"8 x 8 at {tiny / 1e9:,.3f} GFLOP/s",
    )


if __name__ == "__main__":
    main()
