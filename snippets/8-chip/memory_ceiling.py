"""One core's main-memory ceiling and the ridge it sets against the matmul ceiling: floor 6's roofline, from below."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, seconds_per_call

MAIN_MEMORY = 1 << 24  # float32 elements per tensor: 64 MiB, far beyond any cache


def stream_rates(device: torch.device, numel: int = MAIN_MEMORY) -> dict[str, float]:
    """Bytes per second of three streaming kernels on tensors too large for the caches."""
    a, b, c = (torch.rand(numel, device=device) for _ in range(3))
    seconds = {
        "copy   c.copy_(a)      reads a, writes c": (seconds_per_call(lambda: c.copy_(a), device), 2),
        "add    add(a, b, out=c) reads a, b, writes c": (seconds_per_call(lambda: torch.add(a, b, out=c), device), 3),
        "sum    a.sum()         reads a": (seconds_per_call(a.sum, device), 1),
    }
    return {name: tensors * 4 * numel / s for name, (s, tensors) in seconds.items()}


def matmul_rate(device: torch.device, n: int = 1024) -> float:
    """FLOP/s of an n x n float32 matrix product: the compute ceiling, as on floor 6."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    return 2 * n**3 / seconds_per_call(lambda: a @ b, device)


def main() -> None:
    torch.set_num_threads(1)  # one core, like floor 6's roofline
    device = detect_device()
    rates = stream_rates(device)
    compute = matmul_rate(device)
    print(f"{device.type}, one thread, float32 tensors of {MAIN_MEMORY * 4 >> 20} MiB (from main memory):")
    for name, rate in rates.items():
        print(f"  {name:<46} {rate / 1e9:6.1f} GB/s")
    ceiling = max(rates.values())
    print(f"  memory ceiling (the best of the three)          {ceiling / 1e9:6.1f} GB/s")
    print(f"compute ceiling: 1024 x 1024 matmul                {compute / 1e9:6.1f} GFLOP/s")
    print(f"ridge: an op needs at least {compute / ceiling:.1f} FLOP per byte from main memory to be compute-bound")
    print(f"the add does {1 / 12:.3f} FLOP per byte: at most {ceiling / 12 / compute:.1%} of the compute ceiling")
    claim(
        "the three streams land close together: one memory ceiling",
        held=ceiling < 4 * min(rates.values()),
        detail=f"best/worst ×{ceiling / min(rates.values()):.1f}",
    )
    claim("the add (1/12 FLOP per byte) sits left of the ridge: memory-bound", held=compute / ceiling > 1 / 12)


if __name__ == "__main__":
    main()
