"""Backward frees the graph: the second backward() error, retain_graph=True, gradients that add up, zero_grad."""

from __future__ import annotations

import textwrap

import torch
import torch.nn.functional as F

from pytorch_floors.claims import claim


def program() -> tuple[torch.nn.Linear, torch.Tensor, torch.Tensor]:
    """The one-page program's model and data (seeded)."""
    torch.manual_seed(0)
    return torch.nn.Linear(784, 10), torch.randn(64, 784), torch.randint(0, 10, (64,))


def second_backward_error() -> str:
    """Call backward twice on one graph and return the message of the error the second call raises."""
    model, x, y = program()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as error:
        return str(error)
    return ""


def retained_twice() -> tuple[torch.Tensor, torch.Tensor]:
    """With retain_graph=True the second backward works; return weight.grad after one and after two calls."""
    model, x, y = program()
    loss = F.cross_entropy(model(x), y)
    loss.backward(retain_graph=True)
    assert model.weight.grad is not None
    once = model.weight.grad.clone()
    loss.backward()
    return once, model.weight.grad.clone()


def accumulated(chunks: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradient of the full batch vs the sum of `chunks` micro-batch backwards (each loss scaled by 1/chunks)."""
    model, x, y = program()
    F.cross_entropy(model(x), y).backward()
    assert model.weight.grad is not None
    full = model.weight.grad.clone()
    model.zero_grad()
    for xs, ys in zip(x.chunk(chunks), y.chunk(chunks), strict=True):
        (F.cross_entropy(model(xs), ys) / chunks).backward()  # each call adds into .grad
    assert model.weight.grad is not None
    return full, model.weight.grad.clone()


def after_zero_grad() -> tuple[object, object]:
    """What `.grad` holds after optimizer.zero_grad() (the default) and zero_grad(set_to_none=False)."""
    model, x, y = program()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    F.cross_entropy(model(x), y).backward()
    optimizer.zero_grad()
    default = model.weight.grad
    F.cross_entropy(model(x), y).backward()
    optimizer.zero_grad(set_to_none=False)
    assert model.weight.grad is not None
    return default, model.weight.grad.abs().max().item()


def main() -> None:
    message = second_backward_error()
    # Printed for a phone's 46 columns: each zero_grad's result under its call.
    print("1. loss.backward(); loss.backward() raises, word for word (wrapped):")
    print(textwrap.fill(f"RuntimeError: {message}", width=78, initial_indent="   ", subsequent_indent="   "))
    claim(
        "a second backward through a freed graph raises and names retain_graph=True",
        held="backward through the graph a second time" in message and "retain_graph=True" in message,
    )
    print()
    once, twice = retained_twice()
    ratio = (twice / once)[once != 0]
    print("2. loss.backward(retain_graph=True); loss.backward() works; grads add up:")
    print(f"   weight.grad after call 2 / after call 1: min {ratio.min():.6f}, max {ratio.max():.6f}")
    claim("with retain_graph the gradients add up: twice the first", held=torch.allclose(twice, 2 * once))
    print()
    full, summed = accumulated()
    gap = (full - summed).abs().max().item()
    print("3. gradient accumulation: 4 micro-batches of 16, each loss / 4, one backward")
    print("   each, no zeroing in between, against one backward of the full batch of 64:")
    print(f"   largest |full-batch grad - accumulated grad| = {gap:.1e}")
    print(f"   (for scale: largest |grad| = {full.abs().max():.3f})")
    claim(
        "accumulating four quarter-losses gives the full batch's gradient",
        held=torch.allclose(full, summed, atol=1e-6) and full.abs().max() > 0,
        detail=f"largest gap {gap:.1e}",
    )
    print()
    default, zeroed = after_zero_grad()
    print("4. optimizer.zero_grad()")
    print(f"   -> weight.grad is {default!r}")
    print("   optimizer.zero_grad(set_to_none=False)")
    print(f"   -> zeros (largest |value| {zeroed})")
    claim("zero_grad() sets gradients to None by default", held=default is None and zeroed == 0.0)


if __name__ == "__main__":
    main()
