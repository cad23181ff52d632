"""Memory bandwidth against working-set size: the steps where the buffer stops fitting in each cache."""

from __future__ import annotations

import statistics

import torch

from pytorch_floors.claims import claim, not_applicable
from pytorch_floors.measure import CoreShare, cache_sizes, fits, human_bytes, share_changed, time_call
from pytorch_floors.plot import Series, line_chart, show

KIB = 1 << 10
# Working sets from 4 KiB to 256 MiB, ×2 per step; `sizes` goes further when the last-level cache is larger.
SIZES = tuple(4 * KIB << k for k in range(17))
TRAFFIC = 64 << 20  # bytes read per timed call, whatever the buffer size
LARGEST = 4 << 30  # never a buffer beyond 4 GiB, however large the caches say they are


def read_bandwidth(nbytes: int, traffic: int = TRAFFIC, samples: int = 7) -> float:
    """GB/s of summing a float32 buffer of `nbytes`, re-read until `traffic` bytes have been read.

    The buffer is expanded to (repeats, n) with stride 0 along the repeats, so one `sum` call reads
    the same bytes over and over: the working set is the buffer, and the fixed cost of the call is
    spread over `traffic` bytes. Timed on one thread so that one core's caches are measured; the
    fastest of `samples` samples is kept, the one least disturbed by other work on the machine.
    """
    n = nbytes // 4
    buffer = torch.ones(n)
    repeats = max(1, traffic // nbytes)
    view = buffer.expand(repeats, n)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        seconds = time_call(view.sum, samples=samples, warmup=1).best
    finally:
        torch.set_num_threads(threads)
    return repeats * nbytes / seconds / 1e9


def sweep(sizes: tuple[int, ...] = SIZES, samples: int = 7) -> tuple[list[tuple[int, float]], list[float | None]]:
    """(buffer bytes, GB/s) for each size, and the share of a core each size's measurement got (`CoreShare`;
    `None` where Linux does not say): the claims compare sizes measured one after the other, and a program
    that starts or ends between two of them changes their rates for that alone."""
    rows, shares = [], []
    for size in sizes:
        with CoreShare() as got:
            rows.append((size, read_bandwidth(size, samples=samples)))
        shares.append(got.share)
    return rows, shares


def sizes(caches: list[tuple[str, int]]) -> tuple[int, ...]:
    """The sweep: `SIZES`, extended by doublings until the last buffer is at least twice the largest cache."""
    found = list(SIZES)
    largest_cache = max((size for _, size in caches), default=0)
    while found[-1] < 2 * largest_cache and found[-1] < LARGEST:
        found.append(found[-1] * 2)
    return tuple(found)


def main() -> None:
    caches = cache_sizes()
    rows, shares = sweep(sizes(caches))
    lines = [f"{'buffer':>12} {'read GB/s':>10}"]
    lines += [f"{human_bytes(size, binary=True):>12} {rate:>10.1f}" for size, rate in rows]
    if caches:
        # Printed for a phone's 46 columns: a cache a line, a sentence broken at its commas.
        lines.append("Caches of CPU 0 (from the operating system):")
        lines += [f"  {name} {human_bytes(size, binary=True)}" for name, size in caches]
    else:
        lines.append("(this operating system does not report cache sizes through /sys)")
    best = max(rows, key=lambda r: r[1])
    last = rows[-1]
    fastest = f"Fastest: {best[1]:.1f} GB/s with a {human_bytes(best[0], binary=True)} buffer"
    lines += [f"{fastest},", f"which fits in {fits(best[0], caches)};"] if caches else [f"{fastest};"]
    beyond = f" ({fits(last[0], caches)})" if caches else ""
    lines += [
        f"{last[1]:.1f} GB/s with {human_bytes(last[0], binary=True)}{beyond},",
        f"×{best[1] / last[1]:.1f} slower.",
    ]
    found = plateaus(rows, caches)
    if found:
        lines.append("Median GB/s on each plateau:")
        lines.append(", ".join(f"{name} {rate:.1f}" for name, rate in found.items()))
    xs = [float(size) for size, _ in rows]
    series = [Series("sum over the buffer, one thread", xs, [rate for _, rate in rows])]
    # A log scale for the rate too: a linear one squashed every step past L2 against the axis.
    top, bottom = max(rate for _, rate in rows), min(rate for _, rate in rows)
    for name, size in caches[:3]:
        series.append(
            Series(f"{name} cache size", [float(size), float(size)], [bottom, top], points=False, dashed=True)
        )
    chart = line_chart(
        series,
        title="Read bandwidth against buffer size (one CPU thread)",
        x_label="buffer size (bytes, log scale)",
        y_label="read bandwidth (GB/s, log scale)",
        description="Read bandwidth against buffer size, with the cache sizes the operating system reports; "
        "the largest buffers come from main memory.",
        log_x=True,
        log_y=True,
    )
    show(chart, text="\n".join(lines), name="bandwidth_vs_size")
    state_claims(rows, caches, torch.backends.cpu.get_cpu_capability(), shares)


def state_claims(
    rows: list[tuple[int, float]],
    caches: list[tuple[str, int]],
    capability: str,
    shares: list[float | None] | None = None,
) -> None:
    """The page's patterns, judged on the sweep's (bytes, GB/s) rows and the caches the OS reports.

    Kernels compiled without AVX2 or AVX-512 (`ATEN_CPU_CAPABILITY=default`, capability `DEFAULT`:
    at most the baseline's narrow SSE vectors) sum so slowly that the loop, not the cache, sets the
    pace, and main memory keeps up with it, so no pattern can show there. Each claim compares sizes
    measured one after the other, so it stands aside where the share of a core those measurements got
    (`shares`, one per row; `None`: not measured) changed between them.
    """
    got = dict(zip((size for size, _ in rows), shares or [None] * len(rows), strict=True))
    scalar = capability == "DEFAULT"
    loop_bound = (
        "kernels compiled without AVX2 or AVX-512 (CPU capability DEFAULT): the loop, not the cache,"
        " limits a sum, and main memory keeps up with it"
    )
    best = max(rows, key=lambda r: r[1])
    last = rows[-1]
    # In sweep order: the fastest size was measured before the last one.
    changed = share_changed(got[best[0]], got[last[0]])
    claim(
        "a buffer that fits in cache is read faster than one from main memory",
        held=best[1] > 1.5 * last[1] > 0 and (not caches or fits(last[0], caches) == "main memory"),
        detail=f"×{best[1] / last[1]:.1f}",
        applies=not scalar and not changed,
        why_not=loop_bound if scalar else changed,
    )
    private = [size for name, size in caches if name.startswith(("L1", "L2"))]
    # Which side of the private caches' edge the fastest buffer lies on: the buffers inside are measured
    # first, those beyond after them.
    edge = max(private, default=0)
    changed = share_changed(
        median_share([got[size] for size, _ in rows if size <= edge]),
        median_share([got[size] for size, _ in rows if size > edge]),
    )
    claim(
        "the fastest buffer fits in a core's private caches (L1 or L2)",
        held=bool(private) and best[0] <= max(private),
        detail=f"fastest at {human_bytes(best[0], binary=True)}"
        + (f", L2 {human_bytes(max(private), binary=True)}" if private else ""),
        applies=bool(private) and not scalar and not changed,
        why_not=loop_bound
        if scalar
        else changed or "this operating system does not report the cache sizes through /sys",
    )
    steps_claim(rows, caches, loop_bound if scalar else "", shares)


def median_share(shares: list[float | None]) -> float | None:
    """The median of the measured shares (a burst of other work during one size moves it little), or `None`."""
    measured = [share for share in shares if share is not None]
    return statistics.median(measured) if measured else None


STEP = 1.25
"""How much faster the private caches' plateau must be than the last-level cache's to count as a step."""


def on_plateaus(sizes: list[int], caches: list[tuple[str, int]]) -> dict[str, list[int]]:
    """The buffer sizes on each plateau: in the private caches (up to the largest L1/L2), in the
    last-level cache (past those, up to the largest cache), and from main memory (past it).
    A plateau with no buffer, or caches the OS does not report, leaves that key out."""
    private = [size for name, size in caches if name.startswith(("L1", "L2"))]
    if not private or not caches:
        return {}
    edge, last = max(private), max(size for _, size in caches)
    groups = {
        "private caches": [size for size in sizes if size <= edge],
        "last-level cache": [size for size in sizes if edge < size <= last],
        "main memory": [size for size in sizes if size > last],
    }
    return {name: found for name, found in groups.items() if found}


def plateaus(rows: list[tuple[int, float]], caches: list[tuple[str, int]]) -> dict[str, float]:
    """The median rate of the buffers on each plateau (`on_plateaus`)."""
    rate = dict(rows)
    found = on_plateaus([size for size, _ in rows], caches)
    return {name: statistics.median(rate[size] for size in sizes) for name, sizes in found.items()}


def steps_claim(
    rows: list[tuple[int, float]],
    caches: list[tuple[str, int]],
    loop_bound: str,
    shares: list[float | None] | None = None,
) -> None:
    """The steps the page tells the reader to look for: each plateau's median rate, judged against the next.

    Not applicable where the median share of a core (`shares`, one per row) changed from one plateau to
    the next: a plateau measured beside a program that started after the one before it is slower for that.
    """
    found = plateaus(rows, caches)
    share = dict(zip((size for size, _ in rows), shares or [None] * len(rows), strict=True))
    got = {
        name: median_share([share[size] for size in sizes])
        for name, sizes in on_plateaus([size for size, _ in rows], caches).items()
    }
    statement = (
        f"the bandwidth falls in steps: the private caches' buffers read at least {STEP}× as fast as the"
        " last-level cache's, which read no slower than main memory's"
    )
    changed = share_changed(got.get("private caches"), got.get("last-level cache")) or share_changed(
        got.get("last-level cache"), got.get("main memory")
    )
    if len(found) < 3 or loop_bound or changed:
        why = (
            loop_bound
            or changed
            or (
                "the operating system reports no private and last-level cache sizes through /sys, or the sweep"
                " has no buffer on one of the three plateaus"
            )
        )
        not_applicable(statement, why=why)
        return
    private, shared, memory = found["private caches"], found["last-level cache"], found["main memory"]
    claim(
        statement,
        # A tenth of slack on the last step: in a virtual machine the reported last-level cache is often
        # the host's, shared with other guests, and its buffers may come from memory at memory's rate.
        held=private >= STEP * shared and shared >= 0.9 * memory,
        detail=f"{private:.1f}, {shared:.1f} and {memory:.1f} GB/s",
    )


if __name__ == "__main__":
    main()
