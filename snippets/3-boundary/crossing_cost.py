"""The fixed cost of an eager op: per-call time of `a + b` from 1 element to 16M elements, log-log."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import (
    CoreShare,
    human_bytes,
    human_seconds,
    interleaved_rounds,
    share_changed,
    time_call,
)
from pytorch_floors.plot import Series, line_chart, show

try:  # page-fault counters exist on Linux and macOS, not on Windows
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

SIZES = [4**k for k in range(13)]  # 1, 4, 16, ... 16,777,216 elements


ROUNDS = 11
"""Samples per size, taken in rounds: one sample of every size per round, the fastest kept."""


def timed_add(numel: int, *, reuse_output: bool = False) -> Callable[[], tuple[float, float | None]]:
    """One sample of an add of two float32 tensors of `numel` elements: `(seconds per call, share of a core)`.

    With `reuse_output=False` it times `a + b`, which allocates its result every call; with `True`,
    `torch.add(a, b, out=c)`, which writes into one preallocated tensor. A sample repeats the call for
    at least 2 ms (thousands of calls on a few elements, one on millions), the count fixed here once.
    The share is the one this thread got while this size's samples ran, so far (`CoreShare`; `None`
    where Linux does not say).
    """
    a = torch.ones(numel)
    b = torch.ones(numel)
    c = torch.empty(numel)

    def plain() -> object:
        return a + b

    def into() -> object:
        return torch.add(a, b, out=c)

    call = into if reuse_output else plain
    for _ in range(1 if numel >= 1 << 20 else 20):
        call()
    number = time_call(call, samples=1, warmup=0, min_sample_seconds=2e-3).number
    got = CoreShare()  # entered once per sample: the share over all of this size's samples so far

    def sample() -> tuple[float, float | None]:
        call()  # the other sizes ran since this one's last sample: its tensors back in the caches first
        with got:
            start = time.perf_counter()
            for _ in range(number):
                call()
            seconds = (time.perf_counter() - start) / number
        return seconds, got.share

    return sample


def sweep(sizes: list[int] | None = None, *, reuse_output: bool = False) -> list[tuple[int, float]]:
    """Time the add at every size; returns `(numel, seconds per call)` pairs."""
    return [(n, seconds) for n, seconds, _ in shared_sweep(sizes, reuse_output=reuse_output)]


def shared_sweep(
    sizes: list[int] | None = None, *, reuse_output: bool = False
) -> list[tuple[int, float, float | None]]:
    """`(numel, seconds per call, share of a core)` at every size: its fastest sample, and the share of a core
    its samples got, all together.

    The sizes are sampled in rounds, every size once per round (`interleaved_rounds`), and each keeps
    its fastest sample. A machine's speed can change for a tenth of a second at a time (another
    program, or a virtual machine's host lending the core elsewhere, which no counter inside the
    machine shows): timed one after the other, a size caught in such a stretch looked up to twice as
    dear as its neighbours; sampled in rounds, every size has samples outside it. Where a program
    held part of the core while one size's samples ran and not while another's did (sizes swept
    apart), their shares differ, and the claims comparing them stand aside.
    """
    chosen = sizes or SIZES
    samples = interleaved_rounds({str(n): timed_add(n, reuse_output=reuse_output) for n in chosen}, ROUNDS)
    # The fastest sample's time, and the share over all of the size's samples (the last one's running total).
    return [(n, min(seconds for seconds, _ in samples[str(n)]), samples[str(n)][-1][1]) for n in chosen]


def crossover(points: list[tuple[int, float]]) -> float:
    """Element count at which the per-call time reaches twice the time at the smallest size.

    Time per call is roughly `overhead + work(n)`; at twice the floor the work done on
    the data costs as much as the fixed overhead. Interpolated on log-log axes between
    the two measured sizes around it; `inf` if the sweep never gets there.
    """
    floor = points[0][1]
    for (n0, t0), (n1, t1) in itertools.pairwise(points):
        if t1 >= 2 * floor:
            if t0 >= 2 * floor:
                return float(n0)
            share = (math.log(2 * floor) - math.log(t0)) / (math.log(t1) - math.log(t0))
            return math.exp(math.log(n0) + share * (math.log(n1) - math.log(n0)))
    return math.inf


def page_faults_per_call(numel: int, calls: int = 3) -> float | None:
    """Minor page faults per `a + b` call (fresh memory from the OS); `None` where not countable."""
    if resource is None:
        return None
    a, b = torch.ones(numel), torch.ones(numel)
    _ = a + b  # warm up the allocator
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        _ = a + b
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def main() -> None:
    torch.set_num_threads(1)  # one core: steadier numbers, and no thread hand-off in the way
    plain_shared = shared_sweep()
    into_shared = shared_sweep(reuse_output=True)
    plain = [(n, t) for n, t, _ in plain_shared]
    into = [(n, t) for n, t, _ in into_shared]
    floor = plain[0][1]
    cross = crossover(plain)
    # Printed for a phone's 46 columns: the table split in two (a + b against the floor, then add(out=c) and
    # its time per element), each note broken into lines where it reads on.
    lines = [f"torch {torch.__version__}, 1 CPU thread, float32,", "fastest of several samples per size", ""]
    lines.append(f"{'elements':>10} {'a + b':>8} {'x floor':>8}")
    lines += [f"{n:>10,} {human_seconds(t):>8} {t / floor:>8.1f}" for n, t in plain]
    lines += ["", f"{'elements':>10} {'add(out=c)':>10} {'per element':>11}"]
    lines += [f"{n:>10,} {human_seconds(t_out):>10} {human_seconds(t_out / n):>11}" for n, t_out in into]
    lines.append("")
    flat = max(t for n, t in plain if n <= 256) / floor
    lines += [
        f"Floor: one call on 1 element costs {human_seconds(floor)};",
        "up to 256 elements the time stays within",
        f"{(flat - 1) * 100:.0f} % of it.",
        "That is the fixed cost of crossing",
        "into torch and back.",
        "Crossover: the time reaches twice the floor",
        f"at about {cross:,.0f} elements. Below that a call",
        "is overhead-bound (the data hardly matters);",
        "above it the time grows with the data.",
    ]
    (n_a, t_a), (n_b, t_b) = into[-2], into[-1]
    lines += [
        f"Linear regime: from {n_a:,} to {n_b:,}",
        f"elements ({n_b // n_a}x the data) add(out=c) takes",
        f"{t_b / t_a:.1f}x the time.",
    ]
    faults = page_faults_per_call(SIZES[-1])
    if faults is not None:
        lines += [
            f"At {SIZES[-1]:,} elements a + b asks the OS",
            f"for a fresh {human_bytes(SIZES[-1] * 4)} result each call",
            f"({faults:,.0f} page faults per call),",
            f"so it costs {plain[-1][1] / into[-1][1]:.1f}x add(out=c) there.",
        ]
    text = "\n".join(lines)

    chart = line_chart(
        [
            Series("a + b (allocates its result)", [n for n, _ in plain], [t * 1e6 for _, t in plain]),
            Series("torch.add(a, b, out=c) (reuses one result)", [n for n, _ in into], [t * 1e6 for _, t in into]),
            Series(
                "fixed overhead (a + b at 1 element)",
                [1, SIZES[-1]],
                [floor * 1e6, floor * 1e6],
                points=False,
                dashed=True,
            ),
        ],
        title="Per-call time of an add on the CPU (float32, 1 thread)",
        x_label="elements per tensor",
        y_label="time per call (µs)",
        description=(
            "Log-log plot: the time per call stays flat at the fixed overhead for small tensors, "
            "then rises in proportion to the element count."
        ),
        log_x=True,
        log_y=True,
    )
    show(chart, text=text, name="crossing_cost")
    state_claims(plain_shared, into_shared)


def state_claims(plain: list[tuple[int, float, float | None]], into: list[tuple[int, float, float | None]]) -> None:
    """The three patterns, each judged on the sizes it compares, and not applicable where the share of a
    core those sizes' timings got changed between them (`share_changed`)."""
    floor, floor_share = plain[0][1], plain[0][2]
    small = [row for row in plain if row[0] <= 256]
    slowest = max(small, key=lambda row: row[1])
    flat = slowest[1] / floor
    changed = share_changed(floor_share, slowest[2])
    claim(
        "time per call is flat up to 256 elements",
        held=flat < 2.5,
        detail=f"within {flat:.2f}x of the floor",
        applies=not changed,
        why_not=changed,
    )
    cross = crossover([(n, t) for n, t, _ in plain])
    # The crossover compares the floor with the first size that took twice its time (none: the largest).
    crossed = next((row for row in plain if row[1] >= 2 * floor), plain[-1])
    changed = share_changed(floor_share, crossed[2])
    claim(
        "the crossover lies between 256 and a million elements",
        held=256 < cross < 1 << 20,
        detail=f"{cross:,.0f}",
        applies=not changed,
        why_not=changed,
    )
    (n_a, t_a, share_a), (n_b, t_b, share_b) = into[-2], into[-1]
    changed = share_changed(share_a, share_b)
    claim(
        "past the crossover the time grows with the element count",
        # 4x the data: the time must grow clearly. No upper bound: the last step can also leave the caches
        # (the page's "step up"), and a loaded machine steepens it further (17.5x was seen beside two CPU hogs).
        held=t_b > 100 * floor and t_b / t_a > 1.5,
        detail=f"{t_b / t_a:.1f}x the time for {n_b // n_a}x the data",
        applies=not changed,
        why_not=changed,
    )


if __name__ == "__main__":
    main()
