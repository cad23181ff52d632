"""Dynamo at floor 2: the FX graph it captures from a small function, and the guarded cache on its code object."""

from __future__ import annotations

import re

import torch
import torch._dynamo
import torch.fx

from pytorch_floors.claims import claim, not_applicable


def chain(x: torch.Tensor) -> torch.Tensor:
    """Four elementwise operations: the function every proof of this page compiles."""
    return torch.relu(torch.sin(x) * 2 + 1)


class Recorder:
    """A Dynamo backend that keeps every graph it is handed and runs it as it is (no compiler at all)."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
        self.graphs.append(gm)
        return gm.forward


def operations(gm: torch.fx.GraphModule) -> list[str]:
    """The graph's calls, in order, by the name of the Python callable each node calls."""
    return [getattr(node.target, "__name__", str(node.target)) for node in gm.graph.nodes if node.op == "call_function"]


def cache_entries(fn: object) -> list[object] | None:
    """What Dynamo stored on the function's code object (one entry per compiled variant), or None if not exposed."""
    entries = getattr(torch._dynamo.eval_frame, "_debug_get_cache_entry_list", None)
    return None if entries is None else list(entries(fn.__code__))  # type: ignore[attr-defined]


def main() -> None:
    torch._dynamo.reset()
    recorder = Recorder()
    compiled = torch.compile(chain, backend=recorder)
    x = torch.linspace(-2, 2, 8)
    first = compiled(x)
    compiled(torch.linspace(-1, 1, 8))  # same dtype, shape and strides: the guards pass, nothing is traced
    after_two = len(recorder.graphs)
    compiled(x.double())  # float64: a guard fails, so Dynamo traces the frame again
    print("The graph Dynamo captured from chain(x), as Python code (GraphModule.code):")
    print(recorder.graphs[0].code.strip())
    print("\nThe same graph, node by node (GraphModule.graph):")
    print(recorder.graphs[0].graph)
    print(f"backend calls: {after_two} after two float32 calls, {len(recorder.graphs)} after a float64 call")
    ops = operations(recorder.graphs[0])
    claim(
        "Dynamo's graph holds the function's four tensor operations, in order, and nothing else",
        held=ops == ["sin", "mul", "add", "relu"],
        detail=f"calls {ops}",
    )
    claim(
        "the compiled function returns what the eager one returns",
        held=torch.equal(first, chain(x)),
    )
    claim(
        "a second call with the same kind of tensor reuses the graph; a new dtype traces a new one",
        held=after_two == 1 and len(recorder.graphs) == 2,
        detail=f"{after_two} graph after two float32 calls, {len(recorder.graphs)} after float64",
    )
    entries = cache_entries(chain)
    if entries is None:
        not_applicable(
            "the compiled variants live on the function's code object", why="this torch does not expose its cache"
        )
    else:
        names = [name for entry in entries for name in entry.code.co_names]  # type: ignore[attr-defined]
        calls = sorted({found[1] for name in names if (found := re.match(r"__compiled_fn_(\d+)", name))})
        called = ", ".join(f"__compiled_fn_{number}" for number in calls)
        print(f"cache entries on chain.__code__: {len(entries)}; their rewritten bytecode calls {called}")
        claim(
            "the compiled variants live on the function's code object, each rewritten to call its graph",
            held=len(entries) == 2 and len(calls) == 2,
            detail=f"{len(entries)} cache entries, calling compiled graphs {calls}",
        )
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
