"""Who hands out tensor memory: the CUDA caching allocator's counters, and what a CPU-only build shows instead."""

from __future__ import annotations

import os
import resource
import sys

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_bytes

MIB = 1 << 20


def resident_bytes() -> int:
    """Resident set size of this process now (Linux), or its peak elsewhere (a coarser signal)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def cuda_story(mib: int = 256) -> list[tuple[str, int, int]]:
    """(step, memory_allocated, memory_reserved) through allocate, free, reuse and empty_cache on CUDA."""
    n = mib * MIB // 4
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    rows = [("start", torch.cuda.memory_allocated(), torch.cuda.memory_reserved())]
    t = torch.empty(n, device="cuda")
    rows.append((f"t = torch.empty({mib} MiB)", torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    del t
    rows.append(("del t", torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    u = torch.empty(n, device="cuda")
    rows.append(("u = torch.empty(same size)", torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    del u
    torch.cuda.empty_cache()
    rows.append(("del u; torch.cuda.empty_cache()", torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    return rows


def mps_story(mib: int = 256) -> list[tuple[str, int, int]]:
    """(step, current_allocated_memory, driver_allocated_memory) on Apple's MPS."""
    n = mib * MIB // 4

    def counters() -> tuple[int, int]:
        return torch.mps.current_allocated_memory(), torch.mps.driver_allocated_memory()

    torch.mps.synchronize()
    torch.mps.empty_cache()
    rows = [("start", *counters())]
    t = torch.empty(n, device="mps")
    rows.append((f"t = torch.empty({mib} MiB)", *counters()))
    del t
    rows.append(("del t", *counters()))
    torch.mps.empty_cache()
    rows.append(("torch.mps.empty_cache()", *counters()))
    return rows


def cpu_story(mib: int = 128) -> list[tuple[str, int]]:
    """(step, growth of the process's resident memory) through empty, first write and del of a CPU tensor."""
    n = mib * MIB // 4
    start = resident_bytes()
    rows = [("start", 0)]
    t = torch.empty(n)
    rows.append((f"t = torch.empty({mib} MiB)", resident_bytes() - start))
    t.fill_(1.0)
    rows.append(("t.fill_(1.0)  (first write)", resident_bytes() - start))
    del t
    rows.append(("del t", resident_bytes() - start))
    return rows


def alignment_of_cpu_tensors(count: int = 64) -> int:
    """The largest power of two (up to 4096) dividing the address of every one of `count` fresh CPU tensors."""
    tensors = [torch.empty(1 + 7 * i) for i in range(count)]
    align = 4096
    while any(t.data_ptr() % align for t in tensors):
        align //= 2
    return align


def main() -> None:
    device = detect_device()
    print(f"detect_device() -> {device}")
    if device.type == "cuda":
        print(f"{'step':<34} {'memory_allocated':>18} {'memory_reserved':>18}")
        story = {step: (allocated, reserved) for step, allocated, reserved in cuda_story()}
        for step, (allocated, reserved) in story.items():
            print(f"{step:<34} {human_bytes(allocated, binary=True):>18} {human_bytes(reserved, binary=True):>18}")
        start, after_del = story["start"], story["del t"]
        claim(
            "after del the bytes leave 'allocated' but stay 'reserved'",
            held=after_del[0] == start[0] and after_del[1] > start[1],
        )
        print("After del, the bytes leave 'allocated' but stay 'reserved': the caching allocator keeps the block")
        print("for the next request of that size; empty_cache() returns unused blocks to the driver.")
    elif device.type == "mps":
        print(f"{'step':<34} {'current_allocated':>18} {'driver_allocated':>18}")
        for step, allocated, driver in mps_story():
            print(f"{step:<34} {human_bytes(allocated, binary=True):>18} {human_bytes(driver, binary=True):>18}")
    else:
        print("No GPU on this build: there is no caching allocator to watch. Its counters answer anyway:")
        print(f"  torch.cuda.is_available()   = {torch.cuda.is_available()}")
        big = torch.ones(32 * MIB // 4)
        print(
            f"  with a {human_bytes(big.nbytes, binary=True)} CPU tensor alive, "
            f"torch.cuda.memory_allocated() = {torch.cuda.memory_allocated()}, "
            f"torch.cuda.memory_reserved() = {torch.cuda.memory_reserved()}"
        )
        del big
        print("  (they count CUDA memory only; CPU tensors never appear in them)")
    print()
    print("CPU tensors come from c10's CPU allocator; the operating system decides when pages become resident:")
    # Printed for a phone's 46 columns: the columns as wide as the longest step and the header "resident growth".
    print(f"{'step':<28} {'resident growth':>15}")
    story = cpu_story()
    for step, growth in story:
        print(f"{step:<28} {human_bytes(growth, binary=True):>15}")
    print(f"Fresh CPU tensors start at addresses aligned to {alignment_of_cpu_tensors()} bytes (or more).")
    steps, size = dict(story), 128 * MIB
    claim(
        "torch.empty reserves addresses; the first write makes the pages resident; del gives them back",
        held=steps["t = torch.empty(128 MiB)"] < size // 4
        and steps["t.fill_(1.0)  (first write)"] > size * 3 // 4
        and steps["del t"] < size // 4,
    )
    claim("CPU tensors are aligned to at least 64 bytes", held=alignment_of_cpu_tensors() >= 64)


if __name__ == "__main__":
    main()
