"""The program's Linear(784, 10) on 64 rows: how much of its time is the fixed per-call cost, how much the GEMM."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import (
    detect_device,
    human_seconds,
    interleaved_rounds,
    paired_ratio,
    paired_ratios,
    time_call,
)

BATCH, IN, OUT = 64, 784, 10


@dataclass(frozen=True)
class Call:
    """One Linear forward, timed on the host clock (launch, work and synchronisation)."""

    label: str
    rows: int
    inputs: int
    outputs: int
    seconds: float

    @property
    def flops(self) -> int:
        """Multiply-adds of the product, counted as two FLOPs each (the bias add is ignored)."""
        return 2 * self.rows * self.inputs * self.outputs


def time_linear(label: str, rows: int, inputs: int, outputs: int, device: torch.device) -> Call:
    """Best seconds of `Linear(inputs, outputs)` on a `rows x inputs` batch, without recording a graph.

    The best sample, not the median: the page compares what each shape *can* reach. On a CPU the
    clock is the calling thread's CPU time (one torch thread runs the op on the caller's), so the
    moments another program holds the core are not counted; on a GPU it is the host clock around
    synchronised calls.
    """
    torch.manual_seed(0)
    layer = torch.nn.Linear(inputs, outputs).to(device)
    x = torch.randn(rows, inputs, device=device)
    clock = time.thread_time if device.type == "cpu" else time.perf_counter
    with torch.no_grad():
        seconds = time_call(lambda: layer(x), device=device, samples=9, min_sample_seconds=5e-3, clock=clock).best
    return Call(label, rows, inputs, outputs, seconds)


LARGE = 512  # large enough to reach the GEMM plateau, short enough (a few ms) to fit between interruptions
ROUNDS = 5


def shapes() -> dict[str, tuple[str, int, int, int]]:
    """The four calls the page compares: fixed cost, the program's layer, a square one of equal work, a big one."""
    side = round((BATCH * IN * OUT) ** (1 / 3))  # a square product with about the same FLOPs
    return {
        "fixed": ("Linear(1, 1) on 1 row: the fixed cost", 1, 1, 1),
        "program": (f"Linear({IN}, {OUT}) on {BATCH} rows", BATCH, IN, OUT),
        "square": (f"Linear({side}, {side}) on {side} rows", side, side, side),
        "large": (f"Linear({LARGE}, {LARGE}) on {LARGE} rows", LARGE, LARGE, LARGE),
    }


def measure(device: torch.device, rounds: int = ROUNDS) -> dict[str, list[Call]]:
    """Each of the four calls in each of `rounds` interleaved rounds, so the claims compare calls of one round."""
    return interleaved_rounds({key: partial(time_linear, *shape, device) for key, shape in shapes().items()}, rounds)


def gemm_rate(call: Call, fixed: Call) -> float | str:
    """FLOP/s of the product alone: the call's time minus the fixed per-call cost (why not, if it is not longer)."""
    if call.seconds <= fixed.seconds:
        return "no longer than the fixed cost"
    return call.flops / (call.seconds - fixed.seconds)


def ratios(rounds: dict[str, list[Call]]) -> dict[str, float]:
    """What the claims compare, each within one round and then the median of the rounds.

    `"fixed share"`: the fixed cost over the program's layer's time; `"program"` and `"square"`: the
    product's GEMM rate over the large layer's.
    """
    fixed = rounds["fixed"]
    rates = {key: [gemm_rate(call, f) for call, f in zip(rounds[key], fixed, strict=True)] for key in rounds}
    found = paired_ratios({key: rates[key] for key in ("program", "square", "large")}, against="large")
    share = paired_ratio([call.seconds for call in fixed], [call.seconds for call in rounds["program"]])
    if share is not None:
        found["fixed share"] = share
    return found


def best(rounds: dict[str, list[Call]]) -> dict[str, Call]:
    """Each call's fastest round (what the table prints)."""
    return {key: min(calls, key=lambda call: call.seconds) for key, calls in rounds.items()}


def check(found: dict[str, float]) -> None:
    """The page's claims, on the same-round ratios of `ratios`."""
    program, square = found.get("program", math.inf), found.get("square", 0.0)
    claim(
        "Linear(784, 10) on 64 rows is not overhead-bound: the fixed cost is the smaller part",
        held=found["fixed share"] < 0.5,
        detail=f"fixed share {found['fixed share']:.0%}, the median of {ROUNDS} rounds",
    )
    claim(
        "its skinny product (N = 10) runs well below the large layer's GEMM rate",
        held=program < 0.6,
        detail=f"{program:.0%} of it in the same round, the median of {ROUNDS} rounds",
    )
    flops = {key: Call(*shape, seconds=0.0).flops for key, shape in shapes().items()}
    claim(
        "the same work in a square shape runs faster",
        held=square > program and abs(flops["square"] - flops["program"]) < 0.05 * flops["program"],
        detail=f"square {square:.0%}, skinny {program:.0%} of the large layer's rate, in the same round",
    )


def main() -> None:
    torch.set_num_threads(1)  # one core, as in the roofline above
    device = detect_device()
    rounds = measure(device)
    calls = best(rounds)
    fixed = calls["fixed"]
    where = f"{device.type}, 1 thread" if device.type == "cpu" else device.type
    clock = "the thread's CPU time" if device.type == "cpu" else "host clock"
    print(f"float32 on {where}; {clock}, best of {ROUNDS} interleaved rounds of 9 samples, no autograd")
    # Printed for a phone's 46 columns: each call on a line of its own, its numbers on the line under it.
    print("call")
    print(f"  {'MFLOP':>7}  {'time':>7}  {'fixed share':>11}  {'GEMM GFLOP/s':>12}")
    for key, call in calls.items():
        share = fixed.seconds / call.seconds
        rate = gemm_rate(call, fixed)
        text = "" if key == "fixed" or isinstance(rate, str) else f"  {rate / 1e9:>12.1f}"
        print(call.label)
        print(f"  {call.flops / 1e6:>7.3f}  {human_seconds(call.seconds):>7}  {share:>11.0%}{text}")
    found = ratios(rounds)
    program = calls["program"]
    print()
    print(
        f"the program's layer: {human_seconds(program.seconds - fixed.seconds)} of product after "
        f"{human_seconds(fixed.seconds)} of fixed cost; in the same round the product runs at "
        f"{found.get('program', math.nan):.0%} of the large layer's rate (the median of {ROUNDS} rounds)"
    )
    check(found)


if __name__ == "__main__":
    main()
