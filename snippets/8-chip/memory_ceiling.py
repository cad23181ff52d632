"""One core's main-memory ceiling and the ridge it sets against the matmul ceiling, every tensor past the caches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import cuda_event_seconds, detect_device, time_call

MAIN_MEMORY = 1 << 24  # float32 elements per tensor at least: 64 MiB
SAMPLES = 7


def largest_cache() -> int | None:
    """Bytes of CPU 0's largest cache as the operating system reports it (Linux sysfs), if it does."""
    sizes = []
    for size in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = size.read_text().strip()
        except OSError:
            continue
        if text.endswith("K"):
            sizes.append(int(text[:-1]) << 10)
    return max(sizes, default=None)


def main_memory_numel(device: torch.device) -> int:
    """Elements per tensor: on the CPU enough for each tensor to be twice the largest cache, at least 64 MiB."""
    if device.type != "cpu":
        return 1 << 26  # 256 MiB, beyond a GPU's L2
    cache = largest_cache() or 0
    return max(MAIN_MEMORY, 2 * cache // 4)


def seconds_per_call(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds per call: CUDA events on a CUDA device, else the fastest of the samples, as floor 6's roofline."""
    if device.type == "cuda":
        return cuda_event_seconds(fn)
    return time_call(fn, device=device, samples=SAMPLES, min_sample_seconds=5e-3).best


def stream_rates(device: torch.device, numel: int = MAIN_MEMORY) -> dict[str, float]:
    """Bytes per second of three streaming kernels on tensors too large for the caches."""
    a, b, c = (torch.full((numel,), 0.5, device=device) for _ in range(3))
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
    torch.set_num_threads(1)  # one core, as floor 6's roofline
    device = detect_device()
    numel = main_memory_numel(device)
    rates = stream_rates(device, numel)
    compute = matmul_rate(device)
    cache = largest_cache() if device.type == "cpu" else None
    # Printed for a phone's 46 columns: what each stream reads and writes under its rate, a sentence a line.
    print(f"{device.type}, one thread, float32 tensors of {numel * 4 >> 20} MiB each" + ("," if cache else ":"))
    if cache:
        print(f"at least twice the largest cache ({cache >> 20} MiB):")
    for name, rate in rates.items():
        stream, _, traffic = name.partition("reads")
        print(f"  {stream.rstrip():<24} {rate / 1e9:6.1f} GB/s")
        print(f"      reads{traffic}")
    ceiling = max(rates.values())
    print(f"  {'memory ceiling':<24} {ceiling / 1e9:6.1f} GB/s")
    print("      (the best of the three)")
    print(f"  {'compute ceiling':<24} {compute / 1e9:6.1f} GFLOP/s")
    print("      (1024 x 1024 matmul)")
    print(f"(each rate: the fastest of {SAMPLES} samples,")
    print("measured in this proof's own run)")
    print(f"ridge: an op needs at least {compute / ceiling:.1f} FLOP per byte")
    print("from main memory to be compute-bound")
    print(f"the add does {1 / 12:.3f} FLOP per byte:")
    print(f"at most {ceiling / 12 / compute:.1%} of the compute ceiling")
    claim(
        "the three streams land close together: one memory ceiling",
        held=ceiling < 4 * min(rates.values()),
        detail=f"best/worst ×{ceiling / min(rates.values()):.1f}",
    )
    claim("the add (1/12 FLOP per byte) sits left of the ridge: memory-bound", held=compute / ceiling > 1 / 12)


if __name__ == "__main__":
    main()
