"""Floor 6 in one number: the arithmetic rate a matrix multiply reaches once a BLAS kernel does the work."""

from __future__ import annotations

import torch

from pytorch_floors.measure import detect_device, time_call


def matmul_flops(n: int, device: torch.device | None = None) -> float:
    """Floating-point operations per second of an n x n float32 matrix product (2 n^3 operations)."""
    device = device or detect_device()
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    seconds = time_call(lambda: a @ b, device=device, samples=5, min_sample_seconds=0.02).median
    return 2 * n**3 / seconds


def main() -> None:
    device = detect_device()
    n = 1024
    rate = matmul_flops(n, device)
    print(f"({n} x {n}) @ ({n} x {n}) in float32 on {device.type}: {rate / 1e9:,.1f} GFLOP/s")


if __name__ == "__main__":
    main()
