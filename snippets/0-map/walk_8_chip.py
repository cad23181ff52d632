"""Floor 8 in one number: how many bytes per second the memory moves when a tensor is copied on this machine."""

from __future__ import annotations

import math

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_bytes, time_call


def copy_bandwidth(numel: int, device: torch.device | None = None) -> float:
    """Bytes moved per second (read + write) by `dst.copy_(src)` for float32 tensors of `numel` elements.

    The fastest of the samples is kept: a rate of the memory is a capability, and the fastest
    sample is the one least disturbed by other work on the machine.
    """
    device = device or detect_device()
    src = torch.randn(numel, device=device)
    dst = torch.empty_like(src)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one CPU thread: a thread that loses its core to other work would stall the rest
    try:
        seconds = time_call(lambda: dst.copy_(src), device=device, samples=7, min_sample_seconds=0.02).best
    finally:
        torch.set_num_threads(threads)
    return 2 * src.nbytes / seconds


def main() -> None:
    device = detect_device()
    numel = 16 * 2**20
    rates: dict[int, float] = {numel: 0.0, 2 * numel: 0.0}
    for _ in range(2):  # the two sizes interleaved, the best of each kept
        for size, best in rates.items():
            rates[size] = max(best, copy_bandwidth(size, device))
    rate, double = rates[numel], rates[2 * numel]
    where = f"{device.type}, one thread" if device.type == "cpu" else device.type
    print(f"copying {human_bytes(numel * 4)} on {where}: {human_bytes(rate)}/s of memory traffic (read + write)")
    ratio = rate / double * 2  # time for twice the bytes over time for the bytes
    print(f"copying twice as much, {human_bytes(2 * numel * 4)}: {human_bytes(double)}/s, {ratio:.2f}x the time")
    # Time set by the bytes predicts 2x; time set by a fixed cost predicts 1x. Nearer 2 on a log scale: above √2.
    claim(
        "a copy's price is its bytes: twice the bytes take at least √2 times as long",
        held=ratio > math.sqrt(2),
        detail=f"{ratio:.2f}x",
    )


if __name__ == "__main__":
    main()
