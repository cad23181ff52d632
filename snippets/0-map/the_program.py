"""The one-page program the whole site explains, run for real on random data."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from pytorch_floors.claims import claim


class ProgramRun(NamedTuple):
    """What the five lines made."""

    x: torch.Tensor
    model: torch.nn.Linear
    loss: torch.Tensor
    grads: dict[str, torch.Tensor]
    weight_change: float


def run_program(batch: int = 64, features: int = 784, classes: int = 10, seed: int = 0) -> ProgramRun:
    """Run the five lines once (plus the two a real script needs: labels and an optimizer)."""
    torch.manual_seed(seed)
    x = torch.randn(batch, features)
    y = torch.randint(0, classes, (batch,))  # labels: one class index per row
    model = torch.nn.Linear(features, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()

    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()

    grads = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    change = (model.weight.detach() - before).abs().max().item()
    return ProgramRun(x, model, loss, grads, change)


def main() -> None:
    run = run_program()
    n_params = sum(p.numel() for p in run.model.parameters())
    grads = ", ".join(f"{name} {tuple(g.shape)}" for name, g in run.grads.items())
    grad_fn = type(run.loss.grad_fn).__name__
    # Printed for a phone's 46 columns: each line of the program, and what it gave under it.
    for line, gave in (
        ("x = torch.randn(64, 784)", f"{tuple(run.x.shape)} tensor of {run.x.dtype}"),
        ("model = Linear(784, 10)", f"{n_params:,} parameters"),
        ("loss = cross_entropy(...)", f"{run.loss.item():.4f}, grad_fn {grad_fn}"),
        ("loss.backward()", f"grads: {grads}"),
        ("optimizer.step()", f"largest weight change {run.weight_change:.2e}"),
    ):
        print(f"{line}\n  -> {gave}")
    params = dict(run.model.named_parameters())
    claim(
        "backward gives every parameter a gradient of its own shape",
        held=set(run.grads) == set(params) and all(g.shape == params[n].shape for n, g in run.grads.items()),
    )
    claim("the step changes the weights", held=run.weight_change > 0)
    claim(
        "the loss is a number that remembers how it was made (a grad_fn)",
        held=math.isfinite(run.loss.item()) and run.loss.grad_fn is not None,
    )


if __name__ == "__main__":
    main()
