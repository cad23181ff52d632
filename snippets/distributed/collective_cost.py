"""A collective's cost on gloo: all_reduce time against size, fitted latency and bandwidth, bytes each rank sends.

Run on its own it starts its own ranks (two, then three processes on this machine).
"""

from __future__ import annotations

import threading
import time

import torch
import torch.distributed as dist

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, human_seconds, share_changed, thread_schedstats
from pytorch_floors.ranks import run_ranks

SIZES = [3 * 2**k for k in range(8, 21, 2)]  # float32 elements: 3 KiB to 12 MiB, divisible by 2 and 3 ranks
REPEATS = 7
PROBE = 0.02
"""CPU seconds of the busy loop whose share of a core stands for what a size's timing could get (`available`)."""


def sent() -> int:
    """Bytes this process has written so far, sockets included (Linux: /proc/self/io's wchar), or -1."""
    try:
        with open("/proc/self/io") as io:
            return next(int(line.split()[1]) for line in io if line.startswith("wchar:"))
    except OSError:
        return -1


def available() -> float | None:
    """The share of a core a busy loop gets in this rank for `PROBE` CPU seconds: the time it ran over the
    time it was ready to run (`thread_schedstats`); `None` where Linux does not say.

    The collective's own threads are a poor gauge of the other work beside them (`CoreShare` over the
    rank's threads): a small message's call is mostly wake-ups, each waiting a moment for a core however
    idle the machine is, a large one's mostly copies, so their shares differ by size alone; and while the
    loop runs, gloo's threads wait behind it. So the share is the loop's thread's alone, which changes
    only with the work beside it.
    """
    me = str(threading.get_native_id())
    before = (thread_schedstats() or {}).get(me)
    end = time.thread_time() + PROBE
    while time.thread_time() < end:
        pass
    after = (thread_schedstats() or {}).get(me)
    if before is None or after is None:
        return None
    ran, waited = after[0] - before[0], after[1] - before[1]
    return ran / (ran + waited) if ran > 0 else None


def timed(operation) -> tuple[float, float, float | None]:  # type: ignore[no-untyped-def]
    """Best seconds of one call (all ranks start together), the bytes this rank sent per call, and the share
    of a core this rank could get around the calls (`available`, the smaller of just before and just after
    them; `None` where Linux does not say).

    The best, not the median: a small message's call sometimes waits milliseconds on the other rank's
    scheduling, and on a shared two-core machine half of five calls can be such waits. The share is taken
    here, in the rank, because the time is spent here: the process that started the ranks only sleeps
    until they return, and its share says nothing of theirs.
    """
    operation()  # the first call sets up gloo's buffers
    seconds = []
    first = available()
    before = sent()
    for _ in range(REPEATS):
        dist.barrier()
        start = time.perf_counter()
        operation()
        seconds.append(time.perf_counter() - start)
    after = sent()
    last = available()
    share = None if first is None or last is None else min(first, last)
    # The barriers send a few bytes too: tiny beside these messages.
    return min(seconds), (after - before) / REPEATS if before >= 0 else -1.0, share


def measure(rank: int, world_size: int) -> dict[str, tuple[float, float, float | None]]:
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
        seconds, sent_bytes, _ = two[f"all_reduce {n}"]
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
        (seconds_, first, _), (_, second, _) = by_world[2][0][key], by_world[2][1][key]
        print(f"{name:<15} {human_seconds(seconds_):>8} {first / (4 * n):>7.2f} {second / (4 * n):>7.2f}")

    # A collective goes at the pace of its slowest rank: each size's share is the smallest its ranks got.
    shares = [slowest_share([rank[f"all_reduce {n}"][2] for rank in by_world[2]]) for n in SIZES]
    growth_claim(SIZES, seconds, shares)
    measurable = all(f > 0 for f in factors.values())
    claim(
        "each rank sends 2(p-1)/p of the message per all_reduce, as a ring does",
        held=measurable and all(abs(f - 2 * (p - 1) / p) < 0.1 * 2 * (p - 1) / p for p, f in factors.items()),
        detail=", ".join(f"p={p}: {f:.3f}" for p, f in factors.items()),
        applies=measurable,
        why_not="no /proc/self/io here to count the bytes a process writes",
    )


def slowest_share(shares: list[float | None]) -> float | None:
    """The smallest share of a core the ranks got for one size, or `None` where a rank could not say."""
    return None if None in shares else min(share for share in shares if share is not None)


def growth_claim(sizes: list[int], seconds: list[float], shares: list[float | None]) -> None:
    """The page's pattern, judged on all_reduce's best seconds per size (`sizes` in the order they were timed).

    The claim compares two pairs of sizes timed one after the other, 16 times the bytes apart: the three
    smallest's first and last, the three largest's first and last. Where the share of a core the ranks
    got (`shares`, one per size; `None`: not measured) changed within a pair, that pair's growth is the
    other work's as much as the message's, and the claim stands aside. The two pairs are compared as
    growths, each a ratio within its own pair, so a share that differs between the pairs, steady
    within each, does not stand the claim aside.
    """
    big, small = sizes[-3:], sizes[:3]
    growth_big = seconds[-1] / seconds[-3]  # 16 times the bytes
    growth_small = seconds[2] / seconds[0]  # 16 times the bytes
    changed = share_changed(shares[0], shares[2]) or share_changed(shares[-3], shares[-1])
    claim(
        "beyond a few hundred KiB, all_reduce time grows about in proportion to size; below, it barely grows",
        held=growth_big > 6 and growth_small < growth_big / 2,
        detail=f"x16 bytes: {human_bytes(4 * big[0])}->{human_bytes(4 * big[-1])} took x{growth_big:.1f}, "
        f"{human_bytes(4 * small[0])}->{human_bytes(4 * small[-1])} x{growth_small:.1f}",
        applies=not changed,
        why_not=changed,
    )


if __name__ == "__main__":
    main()
