"""Elementwise add as a memory benchmark: GB/s of torch.add(a, b, out=c), counting 3 × n × element size bytes."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import (
    CoreShare,
    detect_device,
    human_bytes,
    human_seconds,
    seconds_per_call,
    share_changed,
)
from pytorch_floors.plot import Series, line_chart, show

CPU_SIZES = [4**k for k in range(5, 13)]  # 1,024 ... 16,777,216 elements
GPU_SIZES = [4**k for k in range(7, 15)]  # 16,384 ... 268,435,456 elements


def add_rate(n: int, device: torch.device | None = None, dtype: torch.dtype = torch.float32) -> tuple[float, float]:
    """`(seconds per call, bytes/s)` of c = a + b on n elements: it reads a and b and writes c."""
    device = device or detect_device()
    a = torch.rand(n, device=device, dtype=dtype)
    b = torch.rand(n, device=device, dtype=dtype)
    c = torch.empty(n, device=device, dtype=dtype)

    def add() -> object:
        return torch.add(a, b, out=c)

    seconds = seconds_per_call(add, device, samples=9)
    return seconds, 3 * n * a.element_size() / seconds


def sweep(
    sizes: list[int], device: torch.device | None = None
) -> tuple[list[tuple[int, float, float]], list[float | None]]:
    """`(n, seconds, bytes/s)` for each size, and the share of a core each size's timing got (`CoreShare`;
    `None` where Linux does not say): the claim compares sizes timed one after the other, and a program
    that starts or ends between two of them changes their rates for that alone."""
    rows, shares = [], []
    for n in sizes:
        with CoreShare() as got:
            rows.append((n, *add_rate(n, device)))
        shares.append(got.share)
    return rows, shares


def main() -> None:
    torch.set_num_threads(1)  # one core: steady numbers on a shared machine (the GPU does not care)
    device = detect_device()
    sizes = GPU_SIZES if device.type == "cuda" else CPU_SIZES
    rows, shares = sweep(sizes, device)
    threads = f", {torch.get_num_threads()} thread" if device.type == "cpu" else ""
    # Printed for a phone's 46 columns: narrower columns, a sentence broken where it reads on.
    lines = ["torch.add(a, b, out=c), float32,", f"on {device.type}{threads}; bytes moved = 3 x n x 4", ""]
    lines.append(f"{'n':>10} {'bytes moved':>11} {'time per call':>13} {'GB/s':>6}")
    for n, seconds, rate in rows:
        lines.append(f"{n:>10,} {human_bytes(3 * n * 4):>11} {human_seconds(seconds):>13} {rate / 1e9:>6.1f}")
    best = max(rows, key=lambda row: row[2])
    last = rows[-1]
    lines.append("")
    lines.append(f"best: {best[2] / 1e9:.1f} GB/s at n = {best[0]:,}")
    lines.append(f"  ({human_bytes(3 * best[0] * 4)} per call)")
    lines.append("arithmetic intensity at every size:")
    lines.append(f"  1 FLOP per 12 bytes = {1 / 12:.3f} FLOP/byte")
    lines.append(f"largest: {last[2] / 1e9:.1f} GB/s at n = {last[0]:,}")
    lines.append(f"  ({human_bytes(3 * last[0] * 4)} per call)")
    if device.type == "cpu":
        lines.append("this build has no GPU; on a CUDA machine")
        lines.append("this proof measures device-memory bandwidth")
        lines.append("up to 2^28 elements, timed with CUDA events")
    chart = line_chart(
        [Series(f"torch.add(a, b, out=c), float32 ({device.type})", [r[0] for r in rows], [r[2] / 1e9 for r in rows])],
        title=f"Elementwise add bandwidth on {device.type} (float32)",
        x_label="elements per tensor n",
        y_label="GB/s (3 n x 4 bytes / time)",
        description="Bandwidth of an elementwise add against tensor size: small working sets run from cache, "
        "large ones from main memory.",
        log_x=True,
    )
    show(chart, text="\n".join(lines), name="add_bandwidth")
    capability = torch.backends.cpu.get_cpu_capability() if device.type == "cpu" else ""
    state_claim(rows, shares, device.type, capability)


def state_claim(
    rows: list[tuple[int, float, float]], shares: list[float | None], device_type: str, capability: str
) -> None:
    """The page's pattern, judged on the sweep's `(n, seconds, bytes/s)` rows: the fastest size against the last.

    The DEFAULT kernels (ATEN_CPU_CAPABILITY=default) are compiled without AVX2 or AVX-512: at most the
    baseline's four-float SSE vectors. The loop, not the cache, sets the pace of a small add, and main
    memory keeps up with it. The two sizes are timed one after the other, so the claim also stands aside
    where the share of a core their timings got (`shares`, one per row; `None`: not measured) changed.
    """
    best_at = max(range(len(rows)), key=lambda i: rows[i][2])
    best, last = rows[best_at], rows[-1]
    scalar = device_type == "cpu" and capability == "DEFAULT"
    # In sweep order: the fastest size was timed before the last one (or is the last one).
    changed = share_changed(shares[best_at], shares[-1])
    if device_type != "cpu":
        why_not = f"this claim is about a CPU's caches, and the proof ran on {device_type}"
    elif scalar:
        why_not = (
            "kernels compiled without AVX2 or AVX-512 (CPU capability DEFAULT): the loop, not the cache, "
            "limits a small add"
        )
    else:
        why_not = changed
    claim(
        "an add from cache runs faster than one from main memory",
        held=best[2] > 1.5 * last[2],
        detail=f"{best[2] / last[2]:.1f}x",
        applies=device_type == "cpu" and not scalar and not changed,
        why_not=why_not,
    )


if __name__ == "__main__":
    main()
