"""A reduction walked like the add: torch.sum's cascade of float32 partial sums, on one thread and on two."""

from __future__ import annotations

import numpy as np
import torch

from pytorch_floors.claims import claim

N = 1 << 24  # 16,777,216 float32 values: 64 MiB, far past the point where a running total loses digits
GAIN = 1000  # "orders of magnitude": the sum's error must be at least this many times smaller


def inputs() -> dict[str, torch.Tensor]:
    """Two float32 vectors whose exact totals are far larger than any one element."""
    generator = torch.Generator().manual_seed(0)
    return {
        "0.1 each": torch.full((N,), 0.1),
        "|randn|": torch.randn(N, generator=generator).abs(),
    }


def relative_error(value: float, exact: float) -> float:
    """How far `value` is from `exact`, as a fraction of `exact`."""
    return abs(value - exact) / abs(exact)


def sums(values: torch.Tensor) -> dict[str, float]:
    """The float64 total, torch.sum's float32 total on one and on two threads, and a running float32 total."""
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = values.sum().item()
        torch.set_num_threads(2)  # two threads split the range whether or not the machine has two free cores
        two = values.sum().item()
    finally:
        torch.set_num_threads(threads)
    return {
        "exact": values.double().sum().item(),  # float64 holds every partial sum of these to far more digits
        "1 thread": one,
        "2 threads": two,
        "running": float(np.add.accumulate(values.numpy())[-1]),  # one float32 add after another, in order
    }


def main() -> None:
    # Printed for a phone's 46 columns: each set of values heads its rows, a sentence broken where it reads on.
    print(f"sum of {N:,} float32 values;")
    print("errors relative to their float64 total")
    print(f"  {'how':<21} {'total':>10}  rel. error")
    results = {}
    for name, values in inputs().items():
        found = results[name] = sums(values)
        exact = found["exact"]
        print(f"values: {name}")
        print(f"  {'float64 (reference)':<21} {exact:>10.1f}")
        for key, how in (
            ("1 thread", "torch.sum, 1 thread"),
            ("2 threads", "torch.sum, 2 threads"),
            ("running", "running float32 total"),
        ):
            print(f"  {how:<21} {found[key]:>10.1f}  {relative_error(found[key], exact):>10.1e}")
    same = {name: found["1 thread"] == found["2 threads"] for name, found in results.items()}
    print("\none and two threads bit-identical:")
    print("  " + ", ".join(f"{k} {v}" for k, v in same.items()))

    gains = {
        name: relative_error(found["running"], found["exact"])
        / max(relative_error(found[key], found["exact"]) for key in ("1 thread", "2 threads"))
        for name, found in results.items()
    }
    claim(
        f"torch.sum's float32 total is orders of magnitude closer than a running float32 total (≥ {GAIN}×)",
        held=all(gain >= GAIN for gain in gains.values()),
        detail=", ".join(f"{name}: {gain:,.0f}× smaller error" for name, gain in gains.items()),
    )
    worst = max(
        relative_error(found[key], found["exact"]) for found in results.values() for key in ("1 thread", "2 threads")
    )
    claim(
        "one thread or two, the total stays within a few float32 roundings of the exact one",
        held=worst < 1e-5,
        detail=f"largest relative error of torch.sum {worst:.1e}",
    )


if __name__ == "__main__":
    main()
