"""Matrix multiply throughput, n x n @ n x n in float32, from tiny to large: GFLOP/s against n."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_seconds, seconds_per_call
from pytorch_floors.plot import Series, line_chart, show

CPU_SIZES = [16, 32, 64, 128, 256, 512, 1024]
GPU_SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192]


def matmul_rate(n: int, device: torch.device | None = None, dtype: torch.dtype = torch.float32) -> tuple[float, float]:
    """`(seconds per call, FLOP/s)` of an n x n matrix product, counting 2 n³ floating-point operations."""
    device = device or detect_device()
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    seconds = seconds_per_call(lambda: a @ b, device)
    return seconds, 2 * n**3 / seconds


def sweep(sizes: list[int], device: torch.device | None = None) -> list[tuple[int, float, float]]:
    """`(n, seconds, FLOP/s)` for each size."""
    return [(n, *matmul_rate(n, device)) for n in sizes]


def main() -> None:
    torch.set_num_threads(1)  # one core: steady numbers on a shared machine (the GPU does not care)
    device = detect_device()
    sizes = GPU_SIZES if device.type == "cuda" else CPU_SIZES
    rows = sweep(sizes, device)
    threads = f", {torch.get_num_threads()} thread" if device.type == "cpu" else ""
    lines = [f"a @ b, float32, on {device.type}{threads}", ""]
    # Printed for a phone's 46 columns: n and GFLOP/s as wide as their numbers.
    lines.append(f"{'n':>5}  {'FLOP per call':>14}  {'time per call':>13}  {'GFLOP/s':>8}")
    for n, seconds, rate in rows:
        lines.append(f"{n:>5}  {2 * n**3:>14,}  {human_seconds(seconds):>13}  {rate / 1e9:>8.1f}")
    best = max(rows, key=lambda row: row[2])
    lines.append("")
    # Printed for a phone's 46 columns: a sentence broken where it reads on.
    lines.append(f"best: {best[2] / 1e9:.1f} GFLOP/s at n = {best[0]},")
    lines.append(f"{best[2] / rows[0][2]:.0f}x the rate at n = {rows[0][0]}")
    if device.type == "cpu":
        lines.append("this build has no GPU; on a CUDA machine")
        lines.append("this proof times n up to 8192")
        lines.append("with CUDA events")
    chart = line_chart(
        [Series(f"a @ b, float32 ({device.type})", [r[0] for r in rows], [r[2] / 1e9 for r in rows])],
        title=f"Matrix multiply throughput on {device.type} (float32)",
        x_label="matrix size n (n x n @ n x n)",
        y_label="GFLOP/s (2 n³ per call / time)",
        description="Throughput climbs with matrix size: tiny products are dominated by fixed per-call cost, "
        "large ones keep the arithmetic units busy.",
        log_x=True,
        log_y=True,
    )
    show(chart, text="\n".join(lines), name="matmul_rate")
    claim(
        "the rate climbs with size: tiny products are overhead, large ones keep the units busy",
        held=best[2] > 4 * rows[0][2],
        detail=f"{best[2] / rows[0][2]:.0f}x from n = {rows[0][0]} to n = {best[0]}",
    )


if __name__ == "__main__":
    main()
