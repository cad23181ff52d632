"""A reduction walked like the add: torch.sum's cascade of float32 partial sums, on one thread and on two."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import torch

from pytorch_floors.claims import claim, not_applicable

N = 1 << 24  # 16,777,216 float32 values: 64 MiB, far past the point where a running total loses digits
GAIN = 1000  # "orders of magnitude": the sum's error must be at least this many times smaller


SMALL = 1 << 16  # 65,536 values: the size the cascade's error growth is measured from, up to N


def inputs(n: int = N) -> dict[str, torch.Tensor]:
    """Two float32 vectors whose exact totals are far larger than any one element.

    The random values come from numpy's generator, not `torch.randn`: torch's normal sampler is a
    vector kernel too, and under `ATEN_CPU_CAPABILITY=default` it draws values that differ from the
    AVX2 build's in their last bits, so the totals would differ for the data alone.
    """
    normal = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    return {
        "0.1 each": torch.full((n,), 0.1),
        "|normal|": torch.from_numpy(np.abs(normal)),
    }


TOTALS = """
import sys
import numpy as np
import torch
torch.set_num_threads(1)
normal = np.random.default_rng(0).standard_normal({n}, dtype=np.float32)
for values in (torch.full(({n},), 0.1), torch.from_numpy(np.abs(normal))):
    print(torch.backends.cpu.get_cpu_capability(), values.sum().item().hex())
"""


def totals_under(capability: str, n: int = N) -> list[str]:
    """The one-thread torch.sum totals of `inputs(n)`, as exact hex floats, in a process run with
    `ATEN_CPU_CAPABILITY=capability` (each line: the capability it ran, the total)."""
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    done = subprocess.run(
        [sys.executable, "-c", TOTALS.format(n=n)], env=env, capture_output=True, text=True, check=True, timeout=300
    )
    return done.stdout.split("\n")[:-1]


def error_growth(small: int = SMALL, large: int = N) -> dict[str, float]:
    """How much the relative error of torch.sum (one thread) and of a running float32 total grows from
    `small` to `large` values of 0.1, whose rounding errors do not cancel."""
    errors: dict[str, list[float]] = {"torch.sum": [], "running": []}
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        for n in (small, large):
            values = torch.full((n,), 0.1)
            exact = values.double().sum().item()
            errors["torch.sum"].append(relative_error(values.sum().item(), exact))
            errors["running"].append(relative_error(float(np.add.accumulate(values.numpy())[-1]), exact))
    finally:
        torch.set_num_threads(threads)
    return {how: found[1] / max(found[0], 1e-12) for how, found in errors.items()}


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

    growth = error_growth()
    times = N // SMALL
    print(
        f"from {SMALL:,} to {N:,} values of 0.1 ({times}x as many), the relative error grew"
        f" {growth['torch.sum']:.1f}x for torch.sum, {growth['running']:.0f}x for the running total"
    )
    # multi_row_sum (SumKernel.cpp) keeps four levels of accumulators, each run about n^(1/4) values
    # long: the error grows about as n^(1/4) (4x over 256x). A running total's grows with n itself.
    claim(
        "the cascade's error grows far slower than the count, no faster than its square root;"
        " a running total's grows about in proportion",
        held=growth["torch.sum"] <= times**0.5 and growth["running"] >= times / 4,
        detail=f"{times}x the values: torch.sum {growth['torch.sum']:.1f}x, running {growth['running']:.0f}x",
    )

    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in {"AVX2", "AVX512"}:
        not_applicable(
            "on the same values the DEFAULT and AVX2 builds give bit-identical totals",
            why=f"this process runs {capability} kernels: no AVX2 build it may run beside DEFAULT",
        )
        return
    builds = {name: totals_under(name) for name in ("default", "avx2")}
    ran = {name: {line.split()[0] for line in lines} for name, lines in builds.items()}
    same = [line.split()[1] for line in builds["default"]] == [line.split()[1] for line in builds["avx2"]]
    print(f"one-thread totals of the same values under ATEN_CPU_CAPABILITY=default and avx2 bit-identical: {same}")
    claim(
        "on the same values the DEFAULT and AVX2 builds give bit-identical totals",
        held=same and ran == {"default": {"DEFAULT"}, "avx2": {"AVX2"}},
        detail="; ".join(f"{name}: {', '.join(lines)}" for name, lines in builds.items()),
    )


if __name__ == "__main__":
    main()
