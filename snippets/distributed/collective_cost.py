"""A collective's cost on gloo: all_reduce time against size, fitted latency and bandwidth, bytes each rank sends.

Run on its own it starts its own ranks (two, then three processes on this machine).
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, human_seconds
from pytorch_floors.ranks import run_ranks

SIZES = [3 * 2**k for k in range(8, 21, 2)]  # float32 elements: 3 KiB to 12 MiB, divisible by 2 and 3 ranks
REPEATS = 7


def sent() -> int:
    """Bytes this process has written so far, sockets included (Linux: /proc/self/io's wchar), or -1."""
    try:
        with open("/proc/self/io") as io:
            return next(int(line.split()[1]) for line in io if line.startswith("wchar:"))
    except OSError:
        return -1


def timed(operation) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Best seconds of one call (all ranks start together) and the bytes this rank sent per call.

    The best, not the median: a small message's call sometimes waits milliseconds on the other rank's
    scheduling, and on a shared two-core machine half of five calls can be such waits.
    """
    operation()  # the first call sets up gloo's buffers
    seconds = []
    before = sent()
    for _ in range(REPEATS):
        dist.barrier()
        start = time.perf_counter()
        operation()
        seconds.append(time.perf_counter() - start)
    after = sent()
    # The barriers send a few bytes too: tiny beside these messages.
    return min(seconds), (after - before) / REPEATS if before >= 0 else -1.0


def measure(rank: int, world_size: int) -> dict[str, tuple[float, float]]:
    results = {}
    for n in SIZES:
        x = torch.ones(n)
        results[f"all_reduce {n}"] = timed(lambda x=x: dist.all_reduce(x))
    n = SIZES[-2]
    x = torch.ones(n)
    gathered, scattered = torch.empty(n * world_size), torch.empty(n // world_size)
    results["all_gather"] = timed(lambda: dist.all_gather_single(gathered, x))
    results["reduce_scatter"] = timed(lambda: dist.reduce_scatter_single(scattered, x))
    results["broadcast"] = timed(lambda: dist.broadcast(x, 0))
    return results


def fit(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """Least squares t = latency + bytes / bandwidth, each point weighted by 1/t: the sizes span 4,000x.

    Returns:
        The latency in seconds and the bandwidth in bytes per second.
    """
    xs, weights = [4.0 * n for n in sizes], [1.0 / t**2 for t in seconds]
    sw = sum(weights)
    sx = sum(w * x for w, x in zip(weights, xs, strict=True))
    st = sum(w * t for w, t in zip(weights, seconds, strict=True))
    sxx = sum(w * x * x for w, x in zip(weights, xs, strict=True))
    sxt = sum(w * x * t for w, x, t in zip(weights, xs, seconds, strict=True))
    slope = (sw * sxt - sx * st) / (sw * sxx - sx * sx)
    return (st - slope * sx) / sw, 1.0 / slope


def main() -> None:
    by_world = {p: run_ranks(measure, p) for p in (2, 3)}
    two = by_world[2][0]
    print(f"all_reduce on 2 ranks (gloo, rank 0's best of {REPEATS}):")
    print(f"{'message':>10} {'time':>10} {'sent/message':>13}")
    for n in SIZES:
        seconds, sent_bytes = two[f"all_reduce {n}"]
        print(f"{human_bytes(4 * n):>10} {human_seconds(seconds):>10} {sent_bytes / (4 * n):>13.2f}")
    seconds = [two[f"all_reduce {n}"][0] for n in SIZES]
    latency, bandwidth = fit(SIZES, seconds)
    print(f"least-squares fit t = a + bytes/B: a = {human_seconds(max(latency, 0.0))}, B = {bandwidth / 1e9:.2f} GB/s")

    print("bytes each rank sent per all_reduce, over the message, against the ring's 2(p-1)/p:")
    factors = {}
    for p, ranks in by_world.items():
        biggest = SIZES[-1]
        measured = sum(r[f"all_reduce {biggest}"][1] for r in ranks) / len(ranks) / (4 * biggest)
        factors[p] = measured
        print(f"  p = {p}: measured {measured:.3f}, ring {2 * (p - 1) / p:.3f}")

    n = SIZES[-2]
    print(f"beside it, on 2 ranks, a message of {human_bytes(4 * n)} per rank:")
    # Printed for a phone's 46 columns: what the rank columns hold on a line above the table, the columns narrowed.
    print("each rank's bytes sent, over the message:")
    print(f"{'collective':<15} {'time':>8} {'rank 0':>7} {'rank 1':>7}")
    for name in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        key = f"all_reduce {n}" if name == "all_reduce" else name
        (seconds_, first), (_, second) = by_world[2][0][key], by_world[2][1][key]
        print(f"{name:<15} {human_seconds(seconds_):>8} {first / (4 * n):>7.2f} {second / (4 * n):>7.2f}")

    big, small = SIZES[-3:], SIZES[:3]
    growth_big = seconds[-1] / seconds[-3]  # 16 times the bytes
    growth_small = seconds[2] / seconds[0]  # 16 times the bytes
    claim(
        "beyond a few hundred KiB, all_reduce time grows about in proportion to size; below, it barely grows",
        held=growth_big > 6 and growth_small < growth_big / 2,
        detail=f"x16 bytes: {human_bytes(4 * big[0])}->{human_bytes(4 * big[-1])} took x{growth_big:.1f}, "
        f"{human_bytes(4 * small[0])}->{human_bytes(4 * small[-1])} x{growth_small:.1f}",
    )
    measurable = all(f > 0 for f in factors.values())
    claim(
        "each rank sends 2(p-1)/p of the message per all_reduce, as a ring does",
        held=measurable and all(abs(f - 2 * (p - 1) / p) < 0.1 * 2 * (p - 1) / p for p, f in factors.items()),
        detail=", ".join(f"p={p}: {f:.3f}" for p, f in factors.items()),
        applies=measurable,
        why_not="no /proc/self/io here to count the bytes a process writes",
    )


if __name__ == "__main__":
    main()
