"""The program's Linear(784, 10) on 64 rows: how much of its time is the fixed per-call cost, how much the GEMM."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_seconds, time_call

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

    The best sample, not the median: the page compares what each shape *can* reach, and on a busy
    machine the long calls are the likeliest to be interrupted.
    """
    torch.manual_seed(0)
    layer = torch.nn.Linear(inputs, outputs).to(device)
    x = torch.randn(rows, inputs, device=device)
    with torch.no_grad():
        seconds = time_call(lambda: layer(x), device=device, samples=9, min_sample_seconds=5e-3).best
    return Call(label, rows, inputs, outputs, seconds)


LARGE = 512  # large enough to reach the GEMM plateau, short enough (a few ms) to fit between interruptions
ROUNDS = 3


def measure(device: torch.device, rounds: int = ROUNDS) -> dict[str, Call]:
    """The four calls the page compares: fixed cost, the program's layer, a square one of equal work, a big one.

    The four are timed in `rounds` interleaved rounds and the best of each is kept, so a burst of
    other work on the machine does not land on one of them only.
    """
    side = round((BATCH * IN * OUT) ** (1 / 3))  # a square product with about the same FLOPs
    shapes = {
        "fixed": ("Linear(1, 1) on 1 row: the fixed cost", 1, 1, 1),
        "program": (f"Linear({IN}, {OUT}) on {BATCH} rows", BATCH, IN, OUT),
        "square": (f"Linear({side}, {side}) on {side} rows", side, side, side),
        "large": (f"Linear({LARGE}, {LARGE}) on {LARGE} rows", LARGE, LARGE, LARGE),
    }
    best: dict[str, Call] = {}
    for _ in range(rounds):
        for key, shape in shapes.items():
            call = time_linear(*shape, device)
            if key not in best or call.seconds < best[key].seconds:
                best[key] = call
    return best


def gemm_rate(call: Call, fixed: Call) -> float:
    """FLOP/s of the product alone: the call's time minus the fixed per-call cost."""
    return call.flops / (call.seconds - fixed.seconds)


def main() -> None:
    torch.set_num_threads(1)  # one core, as in the roofline above
    device = detect_device()
    calls = measure(device)
    fixed = calls["fixed"]
    where = f"{device.type}, 1 thread" if device.type == "cpu" else device.type
    print(f"float32 on {where}; host clock, best of {ROUNDS} interleaved rounds of 9 samples, no autograd")
    print(f"{'call':<40} {'MFLOP':>7} {'time':>10} {'fixed share':>11} {'GEMM GFLOP/s':>13}")
    for key, call in calls.items():
        share = fixed.seconds / call.seconds
        rate = "" if key == "fixed" else f"{gemm_rate(call, fixed) / 1e9:13.1f}"
        print(f"{call.label:<40} {call.flops / 1e6:>7.3f} {human_seconds(call.seconds):>10} {share:>11.0%} {rate}")
    program, large = calls["program"], calls["large"]
    print()
    print(
        f"the program's layer: {human_seconds(program.seconds - fixed.seconds)} of product after "
        f"{human_seconds(fixed.seconds)} of fixed cost; the product runs at "
        f"{gemm_rate(program, fixed) / gemm_rate(large, fixed):.0%} of the large layer's rate"
    )
    square = calls["square"]
    claim(
        "Linear(784, 10) on 64 rows is not overhead-bound: the fixed cost is the smaller part",
        held=fixed.seconds < 0.5 * program.seconds,
        detail=f"fixed share {fixed.seconds / program.seconds:.0%}",
    )
    claim(
        "its skinny product (N = 10) runs well below the large layer's GEMM rate",
        held=gemm_rate(program, fixed) < 0.6 * gemm_rate(large, fixed),
        detail=f"{gemm_rate(program, fixed) / gemm_rate(large, fixed):.0%}",
    )
    claim(
        "the same work in a square shape runs faster",
        held=gemm_rate(square, fixed) > gemm_rate(program, fixed)
        and abs(square.flops - program.flops) < 0.05 * program.flops,
    )


if __name__ == "__main__":
    main()
