"""AOTAutograd at floor 5: the backward traced at the first forward, in aten operators, with the tensors it saves."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
import torch._dynamo
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from pytorch_floors.claims import claim


def loss_of(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A one-line loss: autograd needs sin(x) to give w its gradient, and nothing for x, which needs none."""
    return (torch.sin(x) * w).sum()


class Graphs:
    """A backend that keeps the forward and backward graphs AOTAutograd hands on, and when each arrived."""

    def __init__(self) -> None:
        self.forward: torch.fx.GraphModule | None = None
        self.backward: torch.fx.GraphModule | None = None
        self.events: list[str] = []

    def keeper(self, which: str) -> Callable[[torch.fx.GraphModule, list[torch.Tensor]], object]:
        def keep(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
            setattr(self, which, gm)
            self.events.append(f"{which} graph compiled")
            return make_boxed_func(gm.forward)

        return keep


def calls(gm: torch.fx.GraphModule) -> list[object]:
    """The targets of the graph's call nodes."""
    return [node.target for node in gm.graph.nodes if node.op == "call_function"]


def names(gm: torch.fx.GraphModule, op: str) -> list[str]:
    """The names of the graph's inputs (`placeholder`) or of what it returns (`output`)."""
    if op == "placeholder":
        return [node.name for node in gm.graph.nodes if node.op == op]
    (output,) = [node for node in gm.graph.nodes if node.op == "output"]
    return [str(value) for value in torch.fx.node.map_arg(output.args[0], lambda n: n.name)]


def main() -> None:
    torch._dynamo.reset()
    graphs = Graphs()
    backend = aot_autograd(fw_compiler=graphs.keeper("forward"), bw_compiler=graphs.keeper("backward"))
    compiled = torch.compile(loss_of, backend=backend)
    x = torch.linspace(-2, 2, 8)
    w = torch.linspace(0.5, 1.5, 8).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = compiled(x, w)
        graphs.events.append("forward ran")
        loss.backward()
        graphs.events.append("backward ran")
    forward, backward = graphs.forward, graphs.backward
    assert forward is not None and backward is not None
    print("The forward graph (aten operators), as AOTAutograd hands it to the compiler:")
    print(forward.code.strip())
    print("\nThe backward graph, traced with it:")
    print(backward.code.strip())
    print(f"\norder of events: {', '.join(graphs.events)}")
    eager_w = w.detach().clone().requires_grad_()
    eager = loss_of(x, eager_w)
    node = eager.grad_fn.next_functions[0][0]  # type: ignore[union-attr]
    saved_self, saved_other = node._saved_self is not None, node._saved_other is not None
    eager.backward()
    print(f"eager autograd's {node.name()} saved self, sin(x): {saved_self}; other, w: {saved_other}")
    every = calls(forward) + calls(backward)
    claim(
        "the graphs AOTAutograd produces are made of aten operators, the dispatcher's",
        held=bool(every) and all(isinstance(target, torch._ops.OpOverload) for target in every),
        detail=", ".join(sorted({str(target) for target in every})),
    )
    returned, needed = names(forward, "output"), names(backward, "placeholder")
    extra = returned[1:]
    claim(
        "the forward returns, besides the loss, exactly the tensors the backward graph takes in",
        held=bool(extra) and extra == [name for name in needed if not name.startswith("tangents")],
        detail=f"forward returns {returned}; backward takes {needed}",
    )
    claim(
        "it saves what eager autograd saves here: sin(x), and not w",
        held=extra == ["sin"] and saved_self and not saved_other,
        detail=f"compiled saves {extra}",
    )
    claim(
        "the backward graph reaches the compiler only when backward first runs, after a forward that saved its inputs",
        held=graphs.events == ["forward graph compiled", "forward ran", "backward graph compiled", "backward ran"],
        detail=", ".join(graphs.events),
    )
    claim(
        "the compiled backward gives w the gradient eager autograd gives it",
        held=w.grad is not None and eager_w.grad is not None and torch.allclose(w.grad, eager_w.grad),
    )
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
