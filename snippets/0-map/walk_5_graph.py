"""Floor 5 in one number: the nodes of the graph autograd recorded while the program computed its loss."""

from __future__ import annotations

import textwrap

import torch

from pytorch_floors.claims import claim


def graph_nodes(loss: torch.Tensor) -> list[str]:
    """Names of every node reachable from `loss.grad_fn`, in the order backward meets them (depth first)."""
    names: list[str] = []
    # Each node is held, not only its id: a node's Python object can be made afresh each time it is
    # reached, and a freed one's id can be given to another node's object.
    seen: dict[int, object] = {}
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        names.append(type(node).__name__)
        stack.extend(next_node for next_node, _ in reversed(node.next_functions))
    return names


def program_loss() -> torch.Tensor:
    """The loss of the one-page program (forward pass only)."""
    torch.manual_seed(0)
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))
    model = torch.nn.Linear(784, 10)
    return torch.nn.functional.cross_entropy(model(x), y)


def main() -> None:
    names = graph_nodes(program_loss())
    print(f"the forward pass recorded {len(names)} graph nodes for backward to visit:")
    print(textwrap.fill(" -> ".join(names), width=72))
    claim("the graph starts at the loss", held=names[0] == "NllLossBackward0", detail=names[0])
    claim(
        "it ends at the parameters: one AccumulateGrad each",
        held=names.count("AccumulateGrad") == 2,
        detail=f"{names.count('AccumulateGrad')} AccumulateGrad nodes",
    )


if __name__ == "__main__":
    main()
