"""Copy bandwidth between host and device, pageable versus pinned host memory (and what a CPU-only build says)."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_bytes, time_call

MIB = 1 << 20


def cuda_copies(mib: int = 256) -> dict[str, float]:
    """GB/s of host→device and device→host copies from pageable and pinned memory, and device→device."""
    n = mib * MIB // 4
    pageable = torch.randn(n)
    pinned = torch.randn(n).pin_memory()
    on_device = torch.randn(n, device="cuda")
    back_pageable = torch.empty(n)
    back_pinned = torch.empty(n).pin_memory()
    other = torch.empty(n, device="cuda")
    nbytes = float(pageable.nbytes)
    jobs = {
        "host→device, pageable": lambda: on_device.copy_(pageable),
        "host→device, pinned": lambda: on_device.copy_(pinned, non_blocking=True),
        "device→host, pageable": lambda: back_pageable.copy_(on_device),
        "device→host, pinned": lambda: back_pinned.copy_(on_device, non_blocking=True),
        "device→device": lambda: other.copy_(on_device),
    }
    return {name: nbytes / time_call(job, device="cuda", samples=7).median / 1e9 for name, job in jobs.items()}


def mps_copies(mib: int = 256) -> dict[str, float]:
    """GB/s of copies between the CPU and Apple's GPU, which share one physical memory."""
    n = mib * MIB // 4
    host = torch.randn(n)
    on_device = torch.randn(n, device="mps")
    back = torch.empty(n)
    other = torch.empty(n, device="mps")
    nbytes = float(host.nbytes)
    jobs = {
        "host→device": lambda: on_device.copy_(host),
        "device→host": lambda: back.copy_(on_device),
        "device→device": lambda: other.copy_(on_device),
    }
    return {name: nbytes / time_call(job, device="mps", samples=7).median / 1e9 for name, job in jobs.items()}


def pinning_without_accelerator() -> list[tuple[str, str]]:
    """The real errors of asking for pinned (page-locked) host memory when no accelerator exists."""
    attempts = {
        "torch.empty(4).pin_memory()": lambda: torch.empty(4).pin_memory(),
        "torch.empty(4, pin_memory=True)": lambda: torch.empty(4, pin_memory=True),
    }
    errors = []
    for expression, attempt in attempts.items():
        try:
            attempt()
        except (RuntimeError, AssertionError) as error:
            errors.append((expression, f"{type(error).__name__}: {error}"))
        else:
            errors.append((expression, "no error: this build has a pinned-memory allocator"))
    return errors


def main() -> None:
    device = detect_device()
    print(f"detect_device() -> {device}")
    if device.type == "cuda":
        print(f"Copying {human_bytes(256 * MIB, binary=True)} each way (GB/s = 10^9 bytes per second):")
        rates = cuda_copies()
        for name, rate in rates.items():
            print(f"  {name:<24} {rate:8.1f} GB/s")
        claim("every copy direction moves data", held=all(rate > 0 for rate in rates.values()))
        print("Pinned host memory can be read by the GPU's copy engine directly; pageable memory is first")
        print("staged through a pinned buffer by the driver. Device→device stays in the GPU's own memory.")
    elif device.type == "mps":
        print(f"Copying {human_bytes(256 * MIB, binary=True)} each way (GB/s = 10^9 bytes per second):")
        for name, rate in mps_copies().items():
            print(f"  {name:<24} {rate:8.1f} GB/s")
        print("On Apple silicon CPU and GPU share one memory, so there is no pinned/pageable distinction.")
    else:
        print("No accelerator on this build: there is no host↔device link to measure, and no pinned memory:")
        pinning = pinning_without_accelerator()
        for expression, message in pinning:
            print(f"  {expression}")
            print(f"    -> {message}")
        claim(
            "without an accelerator, pinning memory raises",
            held=bool(pinning) and all(message.startswith("RuntimeError") for _, message in pinning),
        )
        print("The CPU's own memory bandwidth is measured in the next proof.")


if __name__ == "__main__":
    main()
