"""Intra-op threads: the same matmul and the same big sum with torch.set_num_threads(1 … all cores)."""

from __future__ import annotations

import os

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds, time_call


def thread_counts() -> list[int]:
    """1 up to the number of CPUs this process may run on."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return list(range(1, max(available, 1) + 1))


def scaling(
    counts: list[int] | None = None, side: int = 512, elements: int = 1 << 24, rounds: int = 3
) -> list[dict[str, float]]:
    """For each thread count: seconds of an fp32 matmul (side³) and of summing `elements` floats.

    The thread counts are visited in `rounds` interleaved rounds and the best sample of all rounds
    is kept, so a burst of other work on the machine does not land on one thread count only. The
    thread count in effect during each measurement is recorded; the original setting is restored.
    """
    counts = counts or thread_counts()
    a, b = torch.randn(side, side), torch.randn(side, side)
    big = torch.ones(elements)
    original = torch.get_num_threads()
    best: dict[int, dict[str, float]] = {n: {"matmul": float("inf"), "sum": float("inf")} for n in counts}
    in_effect: dict[int, int] = {}
    try:
        for _ in range(rounds):
            for n in counts:
                torch.set_num_threads(n)
                in_effect[n] = torch.get_num_threads()
                best[n]["matmul"] = min(best[n]["matmul"], time_call(lambda: a @ b, samples=5).best)
                best[n]["sum"] = min(best[n]["sum"], time_call(big.sum, samples=5).best)
    finally:
        torch.set_num_threads(original)
    return [{"threads": float(n), "in_effect": float(in_effect[n]), **best[n]} for n in counts]


def main() -> None:
    counts = thread_counts()
    before = torch.get_num_threads()
    print(f"CPUs this process may use: {len(counts)}; torch.get_num_threads() by default: {torch.get_num_threads()}")
    print(torch.__config__.parallel_info().strip().splitlines()[-1].strip())
    side, elements = 512, 1 << 24
    rows = scaling(counts, side, elements)
    flops = 2 * side**3
    print(
        f"{'threads':>7} {'matmul ' + str(side) + '³':>14} {'GFLOP/s':>9} {'speed-up':>9}"
        f" {'sum of 64 MiB':>14} {'GB/s':>7} {'speed-up':>9}"
    )
    base = rows[0]
    for r in rows:
        print(
            f"{int(r['threads']):>7} {human_seconds(r['matmul']):>14} {flops / r['matmul'] / 1e9:>9.1f}"
            f" {base['matmul'] / r['matmul']:>8.2f}× {human_seconds(r['sum']):>14}"
            f" {4 * elements / r['sum'] / 1e9:>7.1f} {base['sum'] / r['sum']:>8.2f}×"
        )
    most = rows[-1]
    print(
        f"With {int(most['threads'])} threads: matmul ×{base['matmul'] / most['matmul']:.2f}, "
        f"sum ×{base['sum'] / most['sum']:.2f} (the ideal is ×{int(most['threads'])})."
    )
    print(f"torch.get_num_threads() after the sweep: {torch.get_num_threads()} (restored)")
    claim(
        "each thread count took effect, and the setting is restored",
        held=all(r["in_effect"] == r["threads"] for r in rows) and torch.get_num_threads() == before,
    )


if __name__ == "__main__":
    main()
