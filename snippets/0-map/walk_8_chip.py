"""Floor 8 in one number: how many bytes per second the memory moves when a tensor is copied on this machine."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_bytes, time_call


def copy_bandwidth(numel: int, device: torch.device | None = None) -> float:
    """Bytes moved per second (read + write) by `dst.copy_(src)` for float32 tensors of `numel` elements."""
    device = device or detect_device()
    src = torch.randn(numel, device=device)
    dst = torch.empty_like(src)
    seconds = time_call(lambda: dst.copy_(src), device=device, samples=7, min_sample_seconds=0.02).median
    return 2 * src.nbytes / seconds


def main() -> None:
    device = detect_device()
    numel = 16 * 2**20
    rate = copy_bandwidth(numel, device)
    print(f"copying {human_bytes(numel * 4)} on {device.type}: {human_bytes(rate)}/s of memory traffic (read + write)")
    claim(
        "a copy moves bytes at a rate of memory, between 0.1 GB/s and 10 TB/s",
        held=1e8 < rate < 1e13,
        detail=f"{human_bytes(rate)}/s",
    )


if __name__ == "__main__":
    main()
