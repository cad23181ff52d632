"""A custom autograd Function: forward, backward, save_for_backward; gradcheck; forward mode against reverse mode."""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD

from pytorch_floors.claims import claim


class Normalize(torch.autograd.Function):
    """`y = x / |x|`, with its derivative written by hand in both directions.

    The Jacobian is `(I − y yᵀ) / |x|`: backward multiplies a gradient by it from the left
    (vector-Jacobian product), jvp multiplies a tangent by it from the right (Jacobian-vector
    product). Both need only `y` and `|x|`, which forward saves.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        norm = x.norm()
        y = x / norm
        ctx.save_for_backward(y, norm)  # for reverse mode
        ctx.save_for_forward(y, norm)  # for forward mode
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        y, norm = ctx.saved_tensors
        return (grad - y * (y * grad).sum()) / norm

    @staticmethod
    def jvp(ctx: Any, tangent: torch.Tensor) -> torch.Tensor:
        y, norm = ctx.saved_tensors
        return (tangent - y * (y * tangent).sum()) / norm


class WrongNormalize(Normalize):
    """The same forward with a backward that forgets the `− y (y · g)` term."""

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        _, norm = ctx.saved_tensors
        return grad / norm


def gradcheck(fn: Any, x: torch.Tensor, **options: Any) -> bool:
    """`torch.autograd.gradcheck` without raising, its precision warning silenced (the proof shows its effect)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bool(torch.autograd.gradcheck(fn, (x,), raise_exception=False, **options))


def recorded_nodes(out: torch.Tensor) -> list[str]:
    """The class names of the nodes behind `out`, leaves (`AccumulateGrad`) left out."""
    found, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ != "AccumulateGrad":
            found.append(type(node).__name__)
        stack.extend(child for child, _ in node.next_functions)
    return found


def jvp(x: torch.Tensor, tangent: torch.Tensor) -> torch.Tensor:
    """Forward mode: push a dual number `x + ε·tangent` through the Function and read the ε part."""
    with fwAD.dual_level():
        out = Normalize.apply(fwAD.make_dual(x, tangent))
        return fwAD.unpack_dual(out).tangent


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(6, dtype=torch.float64)
    leaf = x.clone().requires_grad_()
    y = Normalize.apply(leaf)
    saved = y.grad_fn.saved_tensors
    print(f"y = Normalize.apply(x): grad_fn {type(y.grad_fn).__name__}, next_functions", end=" ")
    print([type(node).__name__ for node, _ in y.grad_fn.next_functions])
    print(f"  saved for backward: {[tuple(t.shape) for t in saved]} (y and |x|)")
    by_itself = recorded_nodes(leaf / leaf.norm())
    print(f"  nodes recorded: Normalize {recorded_nodes(y)}; x / x.norm() by autograd alone {by_itself}")
    (by_hand,) = torch.autograd.grad(y, leaf, torch.arange(6.0, dtype=torch.float64))
    (by_autograd,) = torch.autograd.grad(leaf / leaf.norm(), leaf, torch.arange(6.0, dtype=torch.float64))
    print(f"  a vector-Jacobian product: by hand {[round(v, 4) for v in by_hand.tolist()]}")
    print(f"                         by autograd {[round(v, 4) for v in by_autograd.tolist()]}")

    out = Normalize.apply(leaf)
    doubled = out.mul_(2)  # changes the y that forward saved
    refused = None
    try:
        doubled.sum().backward()
    except RuntimeError as error:
        refused = str(error).splitlines()[0]
    print(f"  y.mul_(2), then backward: {'refused, ' + refused[:60] + '...' if refused else 'ran'}")

    checks = {
        "Normalize, float64, reverse and forward mode": gradcheck(Normalize.apply, leaf, check_forward_ad=True),
        "WrongNormalize, float64": gradcheck(WrongNormalize.apply, leaf),
        "Normalize, float32": gradcheck(Normalize.apply, x.float().requires_grad_()),
    }
    print("\ntorch.autograd.gradcheck (finite differences against the formulas)")
    for label, passed in checks.items():
        print(f"  {label}: {'passes' if passed else 'fails'}")

    tangent = torch.randn(6, dtype=torch.float64)
    forward_mode = jvp(x, tangent)
    jacobian = torch.autograd.functional.jacobian(Normalize.apply, x)  # row by row, one backward per output
    reverse_mode = jacobian @ tangent
    u = torch.randn(6, dtype=torch.float64)
    (vjp,) = torch.autograd.grad(Normalize.apply(leaf), leaf, u)
    print("\nforward mode (a dual number) against reverse mode (backward)")
    # Printed for a phone's 46 columns: each vector under its name, the two one above the other.
    print("  jvp, one forward pass:")
    print(f"    {[round(v, 4) for v in forward_mode.tolist()]}")
    print("  Jacobian @ tangent:")
    print(f"    {[round(v, 4) for v in reverse_mode.tolist()]}")
    print(f"  Jacobian, {tuple(jacobian.shape)}, from {jacobian.shape[0]} backward passes")
    print(f"  u · (J t) = {u.dot(forward_mode).item():.6f}   (Jᵀ u) · t = {vjp.dot(tangent).item():.6f}")

    claim("the hand-written backward gives autograd's own gradient", held=torch.allclose(by_hand, by_autograd))
    claim("save_for_backward kept exactly the two tensors backward needs", held=len(saved) == 2)
    claim(
        "a tensor kept by save_for_backward gets the version check too",
        held=refused is not None and "modified by an inplace operation" in refused,
    )
    claim(
        "the Function records one node where autograd alone records more",
        held=recorded_nodes(y) == ["NormalizeBackward"] and len(by_itself) > 1,
        detail=f"{len(by_itself)} nodes",
    )
    claim("gradcheck passes the Function in double precision, both modes", held=checks[next(iter(checks))])
    claim("gradcheck catches a wrong backward", held=not checks["WrongNormalize, float64"])
    claim(
        "in float32 finite differences are too coarse: gradcheck fails a right Function",
        held=not checks["Normalize, float32"],
    )
    claim(
        "the jvp equals the Jacobian times the tangent",
        held=torch.allclose(forward_mode, reverse_mode, rtol=1e-10, atol=1e-12),
        detail=f"largest difference {(forward_mode - reverse_mode).abs().max().item():.1e}",
    )
    claim(
        "forward and reverse mode are two products with one Jacobian: u · (J t) = (Jᵀ u) · t",
        held=abs(u.dot(forward_mode).item() - vjp.dot(tangent).item()) < 1e-12,
    )


if __name__ == "__main__":
    main()
