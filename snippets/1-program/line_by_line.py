"""The one-page program, one line at a time: what each line hands back and what it changes."""

from __future__ import annotations

from typing import NamedTuple

import torch

from pytorch_floors.claims import claim


class Step(NamedTuple):
    """One line of the program and what it produced, in words."""

    line: str
    produced: list[str]


class Walk(NamedTuple):
    """The steps, plus the facts a reader (or a test) can check."""

    steps: list[Step]
    checks: dict[str, bool]


def describe(t: torch.Tensor) -> str:
    """Class, shape and dtype of a tensor, and on a second line its autograd status (and grad_fn, if it has one)."""
    dtype = str(t.dtype).removeprefix("torch.")
    text = f"{type(t).__name__} {tuple(t.shape)} {dtype}\n  requires_grad={t.requires_grad}"
    if t.grad_fn is not None:
        text += f", grad_fn={type(t.grad_fn).__name__}"
    return text


def entry(name: str, t: torch.Tensor) -> str:
    """Two lines naming a tensor and describing it.

    Printed for a phone's 46 columns: a name and what it is, then its autograd status under it, not a table.
    """
    return f"{name}: {describe(t)}"


def walk_program(batch: int = 64, features: int = 784, classes: int = 10, lr: float = 0.1) -> Walk:
    """Run the program line by line and describe the objects each line makes or changes."""
    torch.manual_seed(0)
    steps: list[Step] = []

    x = torch.randn(batch, features)
    y = torch.randint(0, classes, (batch,))  # the labels; not one of the five lines, but the loss needs them
    steps.append(
        Step(
            f"x = torch.randn({batch}, {features})",
            [f"{entry('x', x)}, device={x.device.type}", entry("y (labels)", y)],
        )
    )

    model = torch.nn.Linear(features, classes)
    params = [entry(f"model.{name}", p) for name, p in model.named_parameters()]
    steps.append(Step(f"model = torch.nn.Linear({features}, {classes})", [f"model: {type(model).__name__}", *params]))

    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    steps.append(
        Step(
            "loss = torch.nn.functional.cross_entropy(model(x), y)",
            [entry("model(x)", logits), entry("loss", loss), f"loss.item(): {loss.item():.4f}"],
        )
    )

    params_list = list(model.parameters())
    grads_none_before = all(p.grad is None for p in params_list)
    returned = loss.backward()
    grads = [entry(f"model.{name}.grad", p.grad) for name, p in model.named_parameters() if p.grad is not None]
    grad_shapes_match = all(p.grad is not None and p.grad.shape == p.shape for p in params_list)
    steps.append(
        Step(
            "loss.backward()",
            [f"returned: {returned}", f"before, .grad was None for every parameter: {grads_none_before}", *grads],
        )
    )

    optimizer = torch.optim.SGD(params_list, lr=lr)
    grad = model.weight.grad
    assert grad is not None
    expected = model.weight.detach() - lr * grad
    returned = optimizer.step()
    step_matches = torch.allclose(model.weight.detach(), expected)
    steps.append(
        Step(
            f"optimizer.step()  # SGD with lr={lr}",
            [f"returned: {returned}", f"model.weight == old weight - lr * weight.grad: {step_matches}"],
        )
    )
    checks = {
        "loss_is_finite": bool(torch.isfinite(loss).item()),
        "grads_none_before": grads_none_before,
        "grad_shapes_match": grad_shapes_match,
        "step_matches_sgd": step_matches,
    }
    return Walk(steps, checks)


def main() -> None:
    walk = walk_program()
    for step in walk.steps:
        print(step.line)
        for item in step.produced:
            for line in item.split("\n"):
                print(f"  {line}")
    claim("the loss is a finite number", held=walk.checks["loss_is_finite"])
    claim("the gradients are None until backward runs", held=walk.checks["grads_none_before"])
    claim("each gradient has its parameter's shape", held=walk.checks["grad_shapes_match"])
    claim("the step is old weight - lr * grad, exactly", held=walk.checks["step_matches_sgd"])


if __name__ == "__main__":
    main()
