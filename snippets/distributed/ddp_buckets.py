"""DDP: gradient buckets, ready in reverse layer order during backward, their all-reduces overlapping it."""

# No `from __future__ import annotations`: DDP checks a comm hook's annotations as objects.
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pytorch_floors.claims import claim
from pytorch_floors.ranks import run_ranks

LAYERS = 8
WIDTH = 256  # one weight: 256 x 256 float32 = 256 KiB
INPUT = 16 * WIDTH  # the first layer's inputs: its weight gradient is backward's last and largest piece of work
BUCKET_MB = 0.3  # about one layer's weight and bias per bucket
WORLD_SIZE = 2


class Timeline:
    """A comm hook that all-reduces each bucket as DDP's default does, and notes when each one started and ended."""

    def __init__(self, layer_of: dict[int, int]) -> None:
        self.layer_of = layer_of
        self.events: list[tuple[float, str, int, tuple[int, ...]]] = []

    def hook(self, state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        layers = tuple(sorted({self.layer_of[id(p)] for p in bucket.parameters()}))
        self.events.append((time.perf_counter(), "ready", bucket.index(), layers))
        buffer = bucket.buffer().div_(dist.get_world_size())
        future = dist.all_reduce(buffer, async_op=True).get_future()

        def done(f: "torch.futures.Future[list[torch.Tensor]]") -> torch.Tensor:
            self.events.append((time.perf_counter(), "reduced", bucket.index(), layers))
            return f.value()[0]

        return future.then(done)


def layers() -> nn.Sequential:
    """The model: a wide first layer, whose gradient backward computes last, then narrow ones."""
    return nn.Sequential(nn.Linear(INPUT, WIDTH), *[nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS - 1)])


def train(rank: int, world_size: int) -> dict[str, object]:
    torch.manual_seed(0)
    model = layers()
    layer_of = {id(p): i for i, layer in enumerate(model) for p in layer.parameters()}
    ddp = DistributedDataParallel(model, bucket_cap_mb=BUCKET_MB)
    timeline = Timeline(layer_of)
    ddp.register_comm_hook(None, timeline.hook)
    x = torch.randn(512, INPUT)
    ddp(x).square().mean().backward()  # the first step: DDP rebuilds its buckets in the order gradients came
    timeline.events.clear()
    ddp(x + rank).square().mean().backward()
    # backward() returns once every bucket's reduction is done; its own timings come from a second, plain model.
    plain = layers()
    start = time.perf_counter()
    plain(x).square().mean().backward()
    alone = time.perf_counter() - start
    timeline.events.clear()
    dist.barrier()  # both ranks start the step together: a bucket's all-reduce waits for the slower rank
    start = time.perf_counter()
    ddp(x + rank).square().mean().backward()
    end = time.perf_counter()
    same = all(torch.allclose(p.grad, q) for p, q in zip(ddp.parameters(), _gathered(ddp), strict=True))
    return {
        "events": [(t - start, kind, index, layers) for t, kind, index, layers in timeline.events],
        "step": end - start,
        "alone": alone,
        "same": same,
    }


def _gathered(ddp: DistributedDataParallel) -> list[torch.Tensor]:
    """Rank 0's gradients, broadcast: after DDP's all-reduce every rank holds the same ones."""
    grads = [p.grad.clone() for p in ddp.parameters()]
    for g in grads:
        dist.broadcast(g, 0)
    return grads


def main() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ranks = run_ranks(train, WORLD_SIZE)
    run = ranks[0]
    events = run["events"]
    print(f"Linear layers {INPUT}x{WIDTH}, then {LAYERS - 1} of {WIDTH}x{WIDTH}, bucket_cap_mb={BUCKET_MB}:")
    print("rank 0's step, ms from its start")
    print(f"{'ms':>7}  {'event':<8} {'bucket':>6}  layers")
    for t, kind, index, layers in events:
        print(f"{1e3 * t:7.2f}  {kind:<8} {index:>6}  {', '.join(map(str, layers))}")
    # Printed for a phone's 46 columns: what the step's time covers on the line under it.
    print(f"{1e3 * run['step']:7.2f}  backward() returned")
    print(f"{'':9}(forward + backward + all-reduces)")
    print(f"the same step without DDP took {1e3 * run['alone']:.2f} ms")
    ready = [(index, layers) for _, kind, index, layers in events if kind == "ready"]
    order = [layers[-1] for _, layers in ready]
    claim(
        "DDP puts the gradients in several buckets",
        held=len(ready) > 2,
        detail=f"{len(ready)} buckets",
    )
    claim(
        "the buckets become ready in reverse layer order: the last layer's first",
        held=order == sorted(order, reverse=True) and order[0] == LAYERS - 1,
        detail=f"last layer of each bucket, in the order ready: {order}",
    )
    first_reduced = min(t for t, kind, _, _ in events if kind == "reduced")
    first_ready = min(t for t, kind, _, _ in events if kind == "ready")
    last_ready = max(t for t, kind, _, _ in events if kind == "ready")
    claim(
        "the first bucket's all-reduce starts while backward is still running, before the last bucket is ready",
        held=first_ready < last_ready,
        detail=f"first started at {1e3 * first_ready:.2f} ms, last bucket ready at {1e3 * last_ready:.2f} ms",
    )
    claim(
        "the first bucket's all-reduce is done before the last bucket is ready: communication overlaps backward",
        held=first_reduced < last_ready,
        detail=f"first reduced at {1e3 * first_reduced:.2f} ms, last ready at {1e3 * last_ready:.2f} ms",
        # Each rank's backward keeps a core busy: the all-reduce runs beside it only on a core left over.
        applies=cores > WORLD_SIZE,
        why_not=f"{cores} core(s) for {WORLD_SIZE} ranks: backward keeps every core busy, none is left for the "
        "all-reduce to run beside it",
    )
    claim(
        "after the step every rank holds the same gradients",
        held=all(r["same"] for r in ranks),
    )


if __name__ == "__main__":
    main()
