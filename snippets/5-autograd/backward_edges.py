"""Edges of backward(): a scalar's implicit seed of 1, retained graphs add up, only floats get gradients."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytorch_floors.claims import claim


def tutorial_out() -> tuple[torch.Tensor, torch.Tensor]:
    """The tutorial's `out = mean(3 (x + 2)²)` with x = ones(2, 2), as (x, out)."""
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    return x, (y * y * 3).mean()


def implicit_versus_explicit_seed() -> tuple[torch.Tensor, torch.Tensor]:
    """x.grad after `out.backward()` and after `out.backward(torch.tensor(1.0))`, each on a fresh graph."""
    grads = []
    for seed in (None, torch.tensor(1.0)):
        x, out = tutorial_out()
        out.backward(seed)
        assert x.grad is not None
        grads.append(x.grad.clone())
    return grads[0], grads[1]


def non_scalar_error() -> str:
    """What backward() without a seed says when the output is not a scalar."""
    x = torch.ones(2, 2, requires_grad=True)
    try:
        (x * 2).backward()
    except RuntimeError as error:
        return str(error)
    raise AssertionError("backward() on a 2 x 2 output was accepted")


def retained_twice() -> tuple[torch.Tensor, torch.Tensor]:
    """x.grad after one backward(retain_graph=True) and after a second backward on the same graph."""
    x, out = tutorial_out()
    out.backward(retain_graph=True)
    assert x.grad is not None
    once = x.grad.clone()
    out.backward()
    return once, x.grad.clone()


REQUIRES_GRAD: dict[str, Callable[[], torch.Tensor]] = {
    "torch.zeros(3, dtype=torch.float32, requires_grad=True)": lambda: torch.zeros(
        3, dtype=torch.float32, requires_grad=True
    ),
    "torch.zeros(3, dtype=torch.complex64, requires_grad=True)": lambda: torch.zeros(
        3, dtype=torch.complex64, requires_grad=True
    ),
    "torch.zeros(3, dtype=torch.int64, requires_grad=True)": lambda: torch.zeros(
        3, dtype=torch.int64, requires_grad=True
    ),
    "torch.zeros(3, dtype=torch.bool).requires_grad_()": lambda: torch.zeros(3, dtype=torch.bool).requires_grad_(),
}


def requires_grad_outcome(make: Callable[[], torch.Tensor]) -> str:
    """'accepted' if the tensor could be made to require grad, else the error message."""
    try:
        tensor = make()
    except RuntimeError as error:
        return f"RuntimeError: {error}"
    assert tensor.requires_grad
    return "accepted"


def main() -> None:
    implicit, explicit = implicit_versus_explicit_seed()
    print("1. out = mean(3 (x + 2)^2), x = ones(2, 2)")
    # Printed for a phone's 46 columns: each call's gradient on the line under it, as part 3 prints.
    print("   out.backward()")
    print(f"     -> x.grad = {implicit.flatten().tolist()}")
    print("   out.backward(torch.tensor(1.0))")
    print(f"     -> x.grad = {explicit.flatten().tolist()}")
    print(f"   identical: {torch.equal(implicit, explicit)}")
    print(f"   (x * 2).backward() on a 2 x 2 output: RuntimeError: {non_scalar_error()}")
    claim("backward() on a scalar is backward(torch.tensor(1.))", held=torch.equal(implicit, explicit))
    claim("a non-scalar output needs a gradient argument", held="scalar outputs" in non_scalar_error())
    print()
    once, twice = retained_twice()
    print("2. out.backward(retain_graph=True); out.backward()")
    print(f"   x.grad after the first call: {once.flatten().tolist()}")
    print(f"   x.grad after the second call: {twice.flatten().tolist()}")
    claim("x.grad is 4.5 everywhere after one backward", held=torch.equal(once, torch.full((2, 2), 4.5)))
    claim(
        "a second backward with retain_graph accumulates: 9.0",
        held=torch.equal(twice, torch.full((2, 2), 9.0)),
    )
    print()
    print("3. which dtypes can require a gradient")
    outcomes = {}
    for text, make in REQUIRES_GRAD.items():
        outcomes[text] = requires_grad_outcome(make)
        print(f"   {text}")
        print(f"     -> {outcomes[text]}")
    accepted = [text for text, outcome in outcomes.items() if outcome == "accepted"]
    refused = [outcome for outcome in outcomes.values() if outcome != "accepted"]
    claim(
        "only floating-point and complex tensors can require grad",
        held=accepted == [text for text in outcomes if "float32" in text or "complex64" in text]
        and bool(refused)
        and all("floating point" in message for message in refused),
    )


if __name__ == "__main__":
    main()
