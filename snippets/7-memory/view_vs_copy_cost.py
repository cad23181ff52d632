"""A view costs the same at every size; a copy costs time in proportion to the bytes it moves."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, human_seconds, time_call
from pytorch_floors.plot import Series, line_chart, show

# Square float32 matrices from 4 KiB to 16 MiB of data, ×4 per step.
SIDES = (32, 64, 128, 256, 512, 1024, 2048)


def measure(sides: tuple[int, ...] = SIDES, samples: int = 9) -> list[dict[str, float]]:
    """Median seconds per call of a view (x.t()) and two copies (x.clone(), x.t().contiguous()).

    Timed on one intra-op thread so the line is not blurred by other work on a shared machine.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = []
        for side in sides:
            x = torch.randn(side, side)
            rows.append(
                {
                    "bytes": float(x.nbytes),
                    "view": time_call(lambda x=x: x.t(), samples=samples).median,
                    "clone": time_call(lambda x=x: x.clone(), samples=samples).median,
                    "transpose_copy": time_call(lambda x=x: x.t().contiguous(), samples=samples).median,
                }
            )
        return rows
    finally:
        torch.set_num_threads(threads)


def main() -> None:
    rows = measure()
    lines = [f"{'tensor size':>12} {'x.t() (view)':>14} {'x.clone()':>12} {'x.t().contiguous()':>20}"]
    for r in rows:
        lines.append(
            f"{human_bytes(r['bytes'], binary=True):>12} {human_seconds(r['view']):>14} "
            f"{human_seconds(r['clone']):>12} {human_seconds(r['transpose_copy']):>20}"
        )
    first, last = rows[0], rows[-1]
    growth = last["bytes"] / first["bytes"]
    lines.append("")
    lines.append(
        f"From {human_bytes(first['bytes'], binary=True)} to {human_bytes(last['bytes'], binary=True)} "
        f"(×{growth:.0f} the bytes): the view's time changed ×{last['view'] / first['view']:.2f}, "
        f"clone's ×{last['clone'] / first['clone']:.0f}, the transposing copy's "
        f"×{last['transpose_copy'] / first['transpose_copy']:.0f}."
    )
    xs = [r["bytes"] for r in rows]
    chart = line_chart(
        [
            Series("x.t(): a view", xs, [r["view"] * 1e6 for r in rows]),
            Series("x.clone(): a copy", xs, [r["clone"] * 1e6 for r in rows]),
            Series("x.t().contiguous(): a transposing copy", xs, [r["transpose_copy"] * 1e6 for r in rows]),
        ],
        title="Cost of a view versus a copy as the tensor grows",
        x_label="tensor size (bytes, log scale)",
        y_label="time per call (µs, log scale)",
        description="Log-log plot: the view's time is flat; both copies grow in proportion to the bytes.",
        log_x=True,
        log_y=True,
    )
    show(chart, text="\n".join(lines), name="view_vs_copy_cost")
    claim(
        "a view costs the same at any size",
        held=last["view"] / first["view"] < 3,
        detail=f"×{last['view'] / first['view']:.2f}",
    )
    claim(
        "both copies grow with the bytes",
        held=last["clone"] / first["clone"] > growth / 16
        and last["transpose_copy"] / first["transpose_copy"] > growth / 16,
        detail=f"clone ×{last['clone'] / first['clone']:.0f} for ×{growth:.0f} the bytes",
    )
    claim("at the largest size the view is far cheaper than a copy", held=last["view"] < last["clone"] / 10)


if __name__ == "__main__":
    main()
