"""Intra-op threads: the same matmul and the same big sum with torch.set_num_threads(1 … all cores)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import (
    CoreShare,
    cache_sizes,
    human_seconds,
    past_the_thread_count,
    share_changed,
    time_call,
)


def thread_counts() -> list[int]:
    """1 up to the number of CPUs this process may run on."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return list(range(1, max(available, 1) + 1))


def timed(
    fn: Callable[[], object], samples: int = 5, min_sample_seconds: float = 0.02
) -> tuple[float, float, float | None]:
    """`(fastest seconds per call, cores' worth of CPU time, share of a core)` of the fastest sample.

    The second figure is the process's CPU time (all its threads) over the sample's wall time:
    about n for n threads that each had a core to themselves, less when other work on the
    machine took part of the cores while the sample ran. A thread spinning at OpenMP's barrier for
    a descheduled one counts as busy, so the third figure says what the threads got while ready to
    run: the smallest share of a core any of them got (`CoreShare`; `None` where Linux does not say).
    """
    fn()
    number = 1
    while True:  # calls per sample: enough for the sample to last `min_sample_seconds`
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= min_sample_seconds or number >= 1 << 16:
            break
        number *= 2
    best, cores, share = float("inf"), 0.0, None
    for _ in range(samples):
        with CoreShare() as got:
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(number):
                fn()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if wall / number < best:
            best, cores, share = wall / number, cpu / wall, got.share
    return best, cores, share


def scaling(
    counts: list[int] | None = None, side: int = 512, elements: int = 1 << 24, rounds: int = 3
) -> list[dict[str, float]]:
    """For each thread count: seconds of an fp32 matmul (side³) and of summing `elements` floats.

    The thread counts are visited in `rounds` interleaved rounds and the best sample of all rounds
    is kept, so a burst of other work on the machine does not land on one thread count only. For
    the matmul, the cores' worth of CPU time its threads got during that best sample is kept too, and
    the share of a core its slowest thread got (`share`, -1 where it cannot be measured).
    The original setting is restored.
    """
    counts = counts or thread_counts()
    a, b = torch.randn(side, side), torch.randn(side, side)
    big = torch.ones(elements)
    original = torch.get_num_threads()
    inf = float("inf")
    # A share of -1: Linux did not say (no schedstats), and the runs are judged on their CPU time alone.
    best: dict[int, dict[str, float]] = {n: {"matmul": inf, "sum": inf, "cores": 0.0, "share": -1.0} for n in counts}
    try:
        for _ in range(rounds):
            for n in counts:
                torch.set_num_threads(n)
                seconds, cores, share = timed(lambda: a @ b)
                row = best[n]
                if seconds < row["matmul"]:
                    row["matmul"], row["cores"] = seconds, cores
                    row["share"] = -1.0 if share is None else share
                row["sum"] = min(row["sum"], time_call(big.sum, samples=5).best)
    finally:
        torch.set_num_threads(original)
    return [{"threads": float(n), **best[n]} for n in counts]


def gain_sentence(threads: int, matmul_gain: float, sum_gain: float) -> str:
    """What the extra threads did to each operation, in words that match the speed-ups (below 1: slower)."""

    def change(gain: float) -> str:
        return f"ran {gain:.2f}× as fast" if gain >= 1 else f"ran {1 / gain:.2f}× slower"

    said = f"Here, on {threads} threads against one, the matmul {change(matmul_gain)} and the sum {change(sum_gain)}"
    if matmul_gain > 1 and sum_gain > 1:
        return said + f": the {'sum' if sum_gain > matmul_gain else 'matmul'} gained more."
    return said + "."


def main() -> None:
    counts = thread_counts()
    print(f"CPUs this process may use: {len(counts)}; torch.get_num_threads() by default: {torch.get_num_threads()}")
    print(torch.__config__.parallel_info().strip().splitlines()[-1].strip())
    side, elements = 512, 1 << 24
    rows = scaling(counts, side, elements)
    flops = 2 * side**3
    # Printed for a phone's 46 columns: a table for the matmul and one for the sum, over the same thread counts,
    # each header on two lines (the one table of both was 86 columns).
    base = rows[0]
    print(f"\n{'':7} {'matmul ' + str(side) + '³':>18} {'':9} {'cores':>8}")
    print(f"{'threads':>7} {'time':>8} {'GFLOP/s':>9} {'speed-up':>9} {'got':>8}")
    for r in rows:
        print(
            f"{int(r['threads']):>7} {human_seconds(r['matmul']):>8} {flops / r['matmul'] / 1e9:>9.1f}"
            f" {base['matmul'] / r['matmul']:>8.2f}× {r['cores']:>8.2f}"
        )
    print(f"\n{'':7} {'sum of 64 MiB':>18}")
    print(f"{'threads':>7} {'time':>8} {'GB/s':>9} {'speed-up':>9}")
    for r in rows:
        print(
            f"{int(r['threads']):>7} {human_seconds(r['sum']):>8} {4 * elements / r['sum'] / 1e9:>9.1f}"
            f" {base['sum'] / r['sum']:>8.2f}×"
        )
    most = rows[-1]
    matmul_gain, sum_gain = base["matmul"] / most["matmul"], base["sum"] / most["sum"]
    threads = int(most["threads"])
    if threads > 1:
        print(f"With {threads} threads: matmul ×{matmul_gain:.2f}, sum ×{sum_gain:.2f} (the ideal is ×{threads}).")
        print(gain_sentence(threads, matmul_gain, sum_gain))
        caches = cache_sizes()
        # The bytes each reads and writes: a, b and the product; the summed buffer.
        for name, gain, total in (("matmul", matmul_gain, 3 * 4 * side**2), ("sum", sum_gain, 4 * elements)):
            for line in past_the_thread_count(gain, threads, total, caches):
                print(f"{name} {line}" if line.startswith("×") else f"  {line}")
    print(f"torch.get_num_threads() after the sweep: {torch.get_num_threads()} (restored)")
    scaling_claim(base, most)


def scaling_claim(base: dict[str, float], most: dict[str, float]) -> bool:
    """State the thread-scaling claim on the one-thread row and the row with the most threads.

    Not applicable on one CPU, where other work held the cores (the threads got under 1.5× the CPU
    time one thread got), and where the share of a core the threads got changed between the two
    runs: a run beside a program that started after the other run is slower for that alone.
    """
    threads = int(most["threads"])
    matmul_gain = base["matmul"] / most["matmul"]
    # The model: compute-bound work divides across the cores it gets, so the matmul's speed-up should be
    # nearer the cores its threads got, over what one thread got, than 1, on a log scale: above its square root.
    one = min(1.0, base["cores"]) or 1.0
    got = min(float(threads), most["cores"]) / one
    shares = [None if row.get("share", -1.0) < 0 else row["share"] for row in (base, most)]
    changed = share_changed(shares[0], shares[1])
    if threads == 1:
        why = "this process may run on one CPU only: there is no second thread to add"
    elif changed:
        why = changed
    else:
        why = (
            f"other work held the cores: {threads} threads got {most['cores']:.2f} cores' worth of CPU time,"
            f" one thread {base['cores']:.2f}"
        )
    return claim(
        "a matmul gains nearly in proportion to the cores its threads get",
        held=matmul_gain > math.sqrt(got),
        detail=f"×{matmul_gain:.2f} on {got:.2f}× the cores one thread got"
        + (f"; {shares[0]:.0%} of a core per thread, then {shares[1]:.0%}" if None not in shares else ""),
        applies=threads > 1 and got >= 1.5 and not changed,
        why_not=why,
    )


if __name__ == "__main__":
    main()
