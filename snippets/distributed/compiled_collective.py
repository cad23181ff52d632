"""Compiled collectives: torch.compile captures dist.all_reduce into its graph as a functional collective and a wait."""

from __future__ import annotations

import warnings

import torch
import torch._dynamo
import torch.distributed as dist
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from pytorch_floors.claims import claim
from pytorch_floors.ranks import run_ranks


def step(x: torch.Tensor) -> torch.Tensor:
    """Eager code as a training step writes it: scale, all-reduce in place, use the sum."""
    y = x * 2
    dist.all_reduce(y)
    return y.relu() + 1


def capture(rank: int, world_size: int) -> dict[str, object]:
    warnings.simplefilter("ignore")
    graphs: dict[str, str] = {}
    targets: list[str] = []

    def dynamo(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
        graphs["dynamo"] = "\n".join(
            f"{node.op:<13} {getattr(node.target, '__name__', node.target)}"
            for node in gm.graph.nodes
            if node.op in ("call_function", "call_method")
        )
        return aot_autograd(fw_compiler=aten)(gm, example_inputs)

    def aten(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
        targets.extend(str(node.target) for node in gm.graph.nodes if node.op == "call_function")
        graphs["aten"] = gm.code.strip()
        return make_boxed_func(gm.forward)  # run the graph as it is: no Inductor, no C++ compiler

    torch._dynamo.reset()
    compiled = torch.compile(step, backend=dynamo, fullgraph=True)
    x = torch.full((4,), float(rank + 1))
    out = compiled(x)
    return {"graphs": graphs, "targets": targets, "same": torch.equal(out, step(x.clone())), "out": out.tolist()}


def main() -> None:
    ranks = run_ranks(capture, 2)
    seen = ranks[0]
    print("what Dynamo captured on rank 0 (fullgraph=True: no graph break at the collective):")
    print(seen["graphs"]["dynamo"])
    print("the aten graph AOTAutograd hands a backend:")
    print(seen["graphs"]["aten"])
    print(f"compiled and eager agree on every rank: {all(r['same'] for r in ranks)}, rank 0 got {seen['out']}")
    targets = seen["targets"]
    reduce_at = next((i for i, t in enumerate(targets) if "all_reduce" in t), -1)
    wait_at = next((i for i, t in enumerate(targets) if "wait_tensor" in t), -1)
    claim(
        "the compiled graph holds the all-reduce as _c10d_functional.all_reduce, "
        "then a wait_tensor before its result is used",
        held=0 <= reduce_at < wait_at and "_c10d_functional.all_reduce" in targets[reduce_at],
        detail=f"all_reduce at node {reduce_at}, wait_tensor at node {wait_at}",
    )
    claim("compiled and eager give the same result on every rank", held=all(r["same"] for r in ranks))


if __name__ == "__main__":
    main()
