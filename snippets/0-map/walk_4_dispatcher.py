"""Floor 4 in one number: how many aten operators one training step of the program is routed through."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim


class OpLog(TorchDispatchMode):
    """Record the name of every operator the dispatcher hands to a kernel."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        self.names.append(str(func.name()) if hasattr(func, "name") else str(func))  # e.g. "aten::addmm"
        return func(*args, **(kwargs or {}))


def ops_of_one_step(batch: int = 64, features: int = 784, classes: int = 10) -> list[str]:
    """The operators called by the forward pass, the backward pass and the optimizer step, in order."""
    torch.manual_seed(0)
    x, y = torch.randn(batch, features), torch.randint(0, classes, (batch,))
    model = torch.nn.Linear(features, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with OpLog() as log:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return [name for name in log.names if name.startswith("aten::")]


def main() -> None:
    names = ops_of_one_step()
    print(f"{len(names)} aten operator calls ({len(set(names))} different operators) in one training step:")
    print(textwrap.fill(", ".join(dict.fromkeys(names)), width=72))
    claim(
        "the step runs through addmm (forward), mm (a gradient) and add_ (the update)",
        held={"aten::addmm", "aten::mm", "aten::add_.Tensor"} <= set(names),
    )
    claim(
        "forward comes before backward",
        held="aten::addmm" in names and "aten::mm" in names and names.index("aten::addmm") < names.index("aten::mm"),
    )


if __name__ == "__main__":
    main()
