"""Host time versus device time: how long a matmul call takes to return, and how long until its work is done."""

from __future__ import annotations

import statistics
import time
from typing import Any

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_seconds, synchronize


def matrix_side(device: torch.device) -> int:
    """A matmul size that takes milliseconds on the device at hand."""
    return {"cuda": 8192, "mps": 4096}.get(device.type, 512)


def device_event(device: torch.device) -> Any:
    """A timing event on the device's own clock, or None where the device has none (the CPU)."""
    if device.type == "cuda":
        return torch.cuda.Event(enable_timing=True)
    if device.type == "mps":
        return torch.mps.Event(enable_timing=True)
    return None


def measure(device: torch.device | None = None, side: int | None = None, repeats: int = 7) -> dict[str, float]:
    """Median seconds of one `a @ b`: until the call returns, until the device is done, and by device events."""
    device = device or detect_device()
    side = side or matrix_side(device)
    a = torch.randn(side, side, device=device)
    b = torch.randn(side, side, device=device)
    for _ in range(2):  # warm up: library handles, kernel selection, allocator
        a @ b
    synchronize(device)
    returned, finished, events = [], [], []
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        c = a @ b
        after_call = time.perf_counter()
        synchronize(device)
        after_sync = time.perf_counter()
        returned.append(after_call - start)
        finished.append(after_sync - start)
        del c
        begin, end = device_event(device), device_event(device)
        if begin is not None and end is not None:
            begin.record()
            a @ b
            end.record()
            end.synchronize()
            events.append(begin.elapsed_time(end) / 1e3)
    return {
        "side": float(side),
        "returned": statistics.median(returned),
        "finished": statistics.median(finished),
        "events": statistics.median(events) if events else float("nan"),
    }


def main() -> None:
    device = detect_device()
    result = measure(device)
    side = int(result["side"])
    # Printed for a phone's 46 columns: labels of 34, values of 10, a sentence broken at its commas.
    print(f"device: {device};")
    print(f"c = a @ b with a, b of {side} × {side} float32")
    print(f"  {'time until the call returned':<34}{human_seconds(result['returned']):>10}")
    print(f"  {'time until synchronize() returned':<34}{human_seconds(result['finished']):>10}")
    if device.type == "cpu":
        print(f"  {'device events':<34}{'(none)':>10}")
        print("  (the CPU has no separate device clock)")
        print(f"  {'ratio finished / returned':<34}{result['finished'] / result['returned']:>10.3f}")
        print("On the CPU the kernel runs inside the call,")
        print("on the calling thread (and its helper threads),")
        print("so the call returns only when the work is done,")
        print("and synchronize() has nothing to wait for.")
        print("On a CUDA or MPS build the same code prints")
        print("a short 'returned' and a long 'finished':")
        print("the call only enqueues the kernel on a stream")
        print("and returns at once.")
        ratio = result["finished"] / result["returned"]
        claim(
            "on the CPU the work ends inside the call: synchronize() adds almost nothing",
            held=result["finished"] >= result["returned"] > 0 and ratio < 1.5,
            detail=f"ratio {ratio:.3f}",
        )
    else:
        print(f"  {'time between two device events':<34}{human_seconds(result['events']):>10}")
        share = 100 * result["returned"] / result["finished"]
        print(f"  the call returned after {share:.1f} % of the time the work took:")
        print("  the host enqueued the kernel and went on; synchronize() waited for the device to finish.")
        claim(
            "on the device the call returns long before the work ends",
            held=result["returned"] < result["finished"] / 2 and result["events"] > 0,
            detail=f"returned after {share:.1f} %",
        )


if __name__ == "__main__":
    main()
