"""FSDP2 (fully_shard): 1/p of parameters, gradients and optimizer state per rank; an all-gather before each forward."""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.distributed.fsdp import fully_shard
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes
from pytorch_floors.ranks import run_ranks

LAYERS = 4
WIDTH = 256


class Collectives(TorchDispatchMode):
    """The c10d operators the dispatcher runs, in order, between the events the proof notes itself."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if "c10d" in str(func):
            self.events.append(str(func))
        return func(*args, **(kwargs or {}))


def local_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes this rank holds of these tensors: a DTensor's local shard, a plain tensor whole."""
    total = 0
    for t in tensors:
        local = t.to_local() if hasattr(t, "to_local") else t
        total += local.numel() * local.element_size()
    return total


def train(rank: int, world_size: int) -> dict[str, object]:
    warnings.simplefilter("ignore")  # FSDP2's notes on hooks and views go to stderr; the page shows counts
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)])
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    events: list[str] = []
    for i, layer in enumerate(model):
        layer.register_forward_pre_hook(lambda module, args, i=i: events.append(f"Linear {i} forward"))
    optimizer = torch.optim.Adam(model.parameters())
    with Collectives(events):
        loss = model(torch.randn(16, WIDTH)).square().mean()
    forward = list(events)
    loss.backward()
    optimizer.step()
    params = list(model.parameters())
    state = [v for p in params for v in optimizer.state[p].values() if v.dim() > 0]  # Adam's two moments
    first = params[0]
    return {
        "params": local_bytes(params),
        "grads": local_bytes([p.grad for p in params if p.grad is not None]),
        "state": local_bytes(state),
        "placement": f"{type(first).__name__} {first.placements} local {tuple(first.to_local().shape)}",
        "forward": forward,
    }


def main() -> None:
    runs = {p: run_ranks(train, p) for p in (1, 2, 4)}
    full = WIDTH * WIDTH * 4 + WIDTH * 4
    print(f"{LAYERS} Linear layers of {WIDTH}x{WIDTH} ({human_bytes(LAYERS * full)} of float32 parameters), Adam:")
    # Printed for a phone's 46 columns: "per rank" on the line above the table, the columns as wide as a size.
    print("bytes each rank holds:")
    print(f"{'ranks':>5} {'parameters':>11} {'gradients':>11} {'Adam state':>11}")
    for p, ranks in runs.items():
        r = ranks[0]
        print(f"{p:>5} {human_bytes(r['params']):>11} {human_bytes(r['grads']):>11} {human_bytes(r['state']):>11}")
    print(f"rank 0's first weight on 2 ranks: {runs[2][0]['placement']}")
    print("rank 0's forward on 2 ranks, in order:")
    for event in runs[2][0]["forward"]:
        print(f"  {event}")
    one = runs[1][0]
    ratios = {
        p: [one[key] / ranks[0][key] for key in ("params", "grads", "state")] for p, ranks in runs.items() if p > 1
    }
    claim(
        "parameters, gradients and optimizer state per rank shrink as 1/p with p ranks",
        held=all(abs(r - p) < 0.05 * p for p, rs in ratios.items() for r in rs),
        detail="; ".join(f"p={p}: " + ", ".join(f"{r:.2f}x" for r in rs) for p, rs in ratios.items()),
    )
    forward = runs[2][0]["forward"]
    gathered_first = all(
        i > 0 and "allgather" in forward[i - 1] for i, event in enumerate(forward) if event.startswith("Linear")
    )
    claim(
        "each layer's forward is preceded by an all-gather of its parameters",
        held=gathered_first and sum("allgather" in e for e in forward) == LAYERS,
        detail=f"{sum('allgather' in e for e in forward)} all-gathers for {LAYERS} layers",
    )


if __name__ == "__main__":
    main()
