"""Floor 5 in one number: the nodes of the graph autograd recorded while the program computed its loss."""

from __future__ import annotations

import textwrap

import torch


def graph_nodes(loss: torch.Tensor) -> list[str]:
    """Names of every node reachable from `loss.grad_fn`, in the order backward meets them (depth first)."""
    names: list[str] = []
    seen: set[int] = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
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


if __name__ == "__main__":
    main()
