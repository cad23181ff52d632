"""The tutorial's chain rule, out = mean(3 (x + 2)²): autograd's gradient and the hand derivation agree."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim


def autograd_gradient(x: torch.Tensor) -> torch.Tensor:
    """d out / d x as autograd computes it, for out = mean(3 (x + 2)²)."""
    leaf = x.detach().clone().requires_grad_(True)
    y = leaf + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    assert leaf.grad is not None
    return leaf.grad


def hand_gradient(x: torch.Tensor) -> torch.Tensor:
    """The same derivative by the chain rule, written out link by link, with no autograd at all.

    out = (1/n) Σ z_i, z_i = 3 y_i², y_i = x_i + 2, so
    d out/d z_i = 1/n, d z_i/d y_i = 6 y_i, d y_i/d x_i = 1, and the product is 6 y_i / n.
    """
    with torch.no_grad():
        n = x.numel()
        y = x + 2
        d_out_d_z = torch.full_like(x, 1 / n)
        d_z_d_y = 6 * y
        d_y_d_x = torch.ones_like(x)
        return d_out_d_z * d_z_d_y * d_y_d_x


def main() -> None:
    x = torch.ones(2, 2)
    by_autograd = autograd_gradient(x)
    by_hand = hand_gradient(x)
    assert torch.equal(by_autograd, by_hand), (by_autograd, by_hand)
    n = x.numel()
    print("x = ones(2, 2); y = x + 2; z = 3 y²; out = mean(z)")
    print(f"y = {(x + 2)[0, 0].item():g} everywhere, z = {(3 * (x + 2) ** 2)[0, 0].item():g}, n = {n} elements")
    print()
    print("chain rule, one link at a time (for every element):")
    print(f"  d out / d z = 1/n        = {1 / n:g}")
    print(f"  d z / d y   = 6 y        = {6 * (x + 2)[0, 0].item():g}")
    print("  d y / d x   = 1")
    print(f"  d out / d x = 6 y / n    = {by_hand[0, 0].item():g} ({6 / n:g} y)")
    print()
    print("x.grad from out.backward():")
    print(by_autograd)
    print("hand derivation:")
    print(by_hand)
    print("torch.equal(autograd, hand):", torch.equal(by_autograd, by_hand))
    claim(
        "autograd's gradient equals the hand derivation, 6 y / n = 4.5",
        held=torch.equal(by_autograd, by_hand) and torch.equal(by_autograd, torch.full((2, 2), 4.5)),
    )

    torch.manual_seed(0)
    x_random = torch.randn(3, 5)
    gap = (autograd_gradient(x_random) - hand_gradient(x_random)).abs().max().item()
    assert gap < 1e-6, gap
    print()
    print(f"not a coincidence of ones: for a random 3 x 5 x, largest difference {gap:.1e}")
    claim("it holds for a random x too", held=gap < 1e-6, detail=f"largest difference {gap:.1e}")


if __name__ == "__main__":
    main()
