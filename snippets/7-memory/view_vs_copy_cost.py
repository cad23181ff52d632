"""A view costs the same at every size; a copy costs time in proportion to the bytes it moves."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, human_seconds, interleaved_rounds, paired_ratio, time_call
from pytorch_floors.plot import Series, line_chart, show

# Square float32 matrices from 4 KiB to 16 MiB of data, ×4 per step.
SIDES = (32, 64, 128, 256, 512, 1024, 2048)
OPS = ("view", "clone", "transpose_copy")
ROUNDS = 5


def measure(sides: tuple[int, ...] = SIDES, rounds: int = ROUNDS, samples: int = 3) -> dict[str, list[float]]:
    """CPU seconds per call of a view (x.t()) and two copies (x.clone(), x.t().contiguous()), by round.

    Keyed `"<op> <side>"`. Each round times every op at every size, an op's sizes back to back, so the
    smallest and the largest share the round's load; the claims compare them within each round. Timed on
    one intra-op thread by that thread's CPU time (`time.thread_time`): the moments another program holds
    the core are not counted, and the copies' memory stalls are.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tensors = {side: torch.randn(side, side) for side in sides}
        calls: dict[str, Callable[[torch.Tensor], object]] = {
            "view": lambda x: x.t(),
            "clone": lambda x: x.clone(),
            "transpose_copy": lambda x: x.t().contiguous(),
        }

        def timed(op: str, side: int) -> Callable[[], float]:
            x, call = tensors[side], calls[op]
            return lambda: time_call(lambda: call(x), samples=samples, clock=time.thread_time).median

        return interleaved_rounds({f"{op} {side}": timed(op, side) for op in OPS for side in sides}, rounds)
    finally:
        torch.set_num_threads(threads)


def table(rounds: dict[str, list[float]], sides: tuple[int, ...] = SIDES) -> list[dict[str, float]]:
    """One row per size: its bytes and each op's median seconds over the rounds (what the chart draws)."""
    return [
        {"bytes": float(4 * side * side), **{op: statistics.median(rounds[f"{op} {side}"]) for op in OPS}}
        for side in sides
    ]


def growths(rounds: dict[str, list[float]], sides: tuple[int, ...] = SIDES) -> dict[str, float]:
    """Each op's time at the largest size over its time at the smallest, in the same round (median of the rounds).

    Also `"view/clone"`: the view's time over the clone's at the largest size, in the same round.
    """
    small, large = sides[0], sides[-1]
    found = {op: paired_ratio(rounds[f"{op} {large}"], rounds[f"{op} {small}"]) for op in OPS}
    found["view/clone"] = paired_ratio(rounds[f"view {large}"], rounds[f"clone {large}"])
    return {name: ratio for name, ratio in found.items() if ratio is not None}


def check(growth: dict[str, float], byte_growth: float) -> None:
    """The page's claims, on the same-round ratios of `growths` and the factor between the sizes' bytes."""
    claim(
        "a view costs the same at any size",
        held=growth["view"] < 3,
        detail=f"×{growth['view']:.2f} for ×{byte_growth:.0f} the bytes, the median of {ROUNDS} same-round ratios",
    )
    claim(
        "both copies grow with the bytes",
        held=growth["clone"] > byte_growth / 16 and growth["transpose_copy"] > byte_growth / 16,
        detail=f"clone ×{growth['clone']:.0f}, transposing copy ×{growth['transpose_copy']:.0f} "
        f"for ×{byte_growth:.0f} the bytes",
    )
    claim(
        "at the largest size the view is far cheaper than a copy",
        held=growth["view/clone"] < 1 / 10,
        detail=f"the view takes {growth['view/clone']:.2g} of the clone's time",
    )


def main() -> None:
    rounds = measure()
    rows = table(rounds)
    growth = growths(rounds)
    lines = [
        f"CPU time of the calling thread per call, 1 thread; the median of {ROUNDS} interleaved rounds",
        "",
        # Printed for a phone's 46 columns: the headers on two lines, each column as wide as its numbers.
        f"{'tensor':>10} {'x.t()':>8} {'x':>9} {'x.t()':>13}",
        f"{'size':>10} {'(view)':>8} {'.clone()':>9} {'.contiguous()':>13}",
    ]
    for r in rows:
        lines.append(
            f"{human_bytes(r['bytes'], binary=True):>10} {human_seconds(r['view']):>8} "
            f"{human_seconds(r['clone']):>9} {human_seconds(r['transpose_copy']):>13}"
        )
    first, last = rows[0], rows[-1]
    byte_growth = last["bytes"] / first["bytes"]
    lines.append("")
    lines.append(
        f"From {human_bytes(first['bytes'], binary=True)} to {human_bytes(last['bytes'], binary=True)} "
        f"(×{byte_growth:.0f} the bytes), in the same round: the view's time changed ×{growth['view']:.2f}, "
        f"clone's ×{growth['clone']:.0f}, the transposing copy's ×{growth['transpose_copy']:.0f}."
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
        y_label="CPU time per call (µs, log scale)",
        description="Log-log plot: the view's time is flat; both copies grow in proportion to the bytes.",
        log_x=True,
        log_y=True,
    )
    show(chart, text="\n".join(lines), name="view_vs_copy_cost")
    check(growth, byte_growth)


if __name__ == "__main__":
    main()
