"""Version counters, the in-place error, views and CopySlices, and why `x.data` is dangerous."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable

import torch

from pytorch_floors.claims import claim


def backward_error(fn: Callable[[], object]) -> str | None:
    """Run `fn()`; return the first line of the RuntimeError it raises, or None if it raises none."""
    try:
        fn()
    except RuntimeError as error:
        return str(error).splitlines()[0]
    return None


def names(node: torch.autograd.graph.Node) -> list[str | None]:
    """The class names of a node's `next_functions` (None for an input that needs no gradient)."""
    return [type(child).__name__ if child is not None else None for child, _ in node.next_functions]


def version_counter() -> None:
    """Part 1: the counter before and after an in-place op, the error, and a change nothing saved."""
    print("1. A version counter, and the error it raises")
    x = torch.ones(3, requires_grad=True)
    a = x * 2
    before = a._version
    y = a.sin()  # SinBackward0 saves a, at version 0
    a.mul_(3)
    after = a._version
    error = backward_error(lambda: y.sum().backward())
    print(f"  a = x * 2; y = a.sin()     a._version = {before}")
    print(f"  a.mul_(3)                  a._version = {after}")
    print("  y.sum().backward() raises:")
    print(textwrap.fill(error or "nothing", width=92, initial_indent="    ", subsequent_indent="    "))

    z = x * 2
    w = z + 1  # add saves nothing: its derivative needs no input values
    z.mul_(3)
    quiet = backward_error(lambda: w.sum().backward())
    print(f"  the same change under w = z + 1, which saves nothing: backward {'raises' if quiet else 'runs'},", end="")
    print(f" x.grad = {x.grad.tolist() if x.grad is not None else None}")

    claim("an in-place op increments the tensor's version", held=(before, after) == (0, 1))
    claim(
        "backward refuses a saved tensor whose version changed, naming both versions",
        held=error is not None
        and "modified by an inplace operation" in error
        and "is at version 1; expected version 0" in error,
    )
    claim(
        "an in-place change of a tensor that no node saved is fine",
        held=quiet is None and x.grad is not None and torch.equal(x.grad, torch.full((3,), 2.0)),
    )


def views() -> None:
    """Part 2: `_base`, the shared counter, CopySlices, and a view of a leaf."""
    print("\n2. A view shares its base's storage and version counter")
    leaf = torch.ones(4, requires_grad=True)
    b = leaf * 1
    v = b[1:3]
    # Printed for a phone's 46 columns: what each step left on the line under it; sentences one space apart.
    print("  b = leaf * 1; v = b[1:3]")
    print(f"    v._base is b: {v._base is b}, versions v {v._version}, b {b._version}")
    old_history = b.grad_fn
    v.mul_(5)
    print("  v.mul_(5)")
    print(f"    versions v {v._version}, b {b._version}")
    print(f"  b.grad_fn: {type(old_history).__name__} -> {type(b.grad_fn).__name__}, next_functions", names(b.grad_fn))
    print(f"    (the first is b's old {type(old_history).__name__}: {b.grad_fn.next_functions[0][0] is old_history})")
    print(f"  v.grad_fn: {type(v.grad_fn).__name__}, next_functions", names(v.grad_fn))
    b.sum().backward()
    expected = torch.tensor([1.0, 5.0, 5.0, 1.0])
    print(f"  leaf.grad = {leaf.grad.tolist() if leaf.grad is not None else None}", end="")
    print(f" (the out-of-place answer: {expected.tolist()})")
    leaf_view_error = backward_error(lambda: torch.ones(4, requires_grad=True)[1:3].mul_(5))
    print(f"  the same on a view of a leaf that requires grad: {leaf_view_error}")

    claim("a view knows its base and shares its version counter", held=v._base is b and v._version == b._version == 1)
    claim(
        "an in-place op on a view makes CopySlices the base's grad_fn",
        held=type(old_history).__name__ == "MulBackward0" and type(b.grad_fn).__name__ == "CopySlices",
    )
    claim(
        "CopySlices leads on to the base's old history, and the view's new grad_fn leads to CopySlices",
        held=b.grad_fn.next_functions[0][0] is old_history and names(v.grad_fn) == ["CopySlices"],
    )
    claim(
        "the gradient through CopySlices is the out-of-place one",
        held=leaf.grad is not None and torch.equal(leaf.grad, expected),
    )
    claim(
        "an in-place op on a view of a leaf that requires grad is refused",
        held=leaf_view_error is not None and "view of a leaf Variable" in leaf_view_error,
    )


def saved_then_modified(modify: str) -> tuple[int, str | None, torch.Tensor | None]:
    """`y = sin(a)` saves `a = 2x`; then `a` is tripled in place through `a`, `a.detach()` or `a.data`.

    Returns the version of `a` after the change, the backward's error (or None), and `x.grad`.
    """
    x = torch.ones(3, requires_grad=True)
    a = x * 2
    y = a.sin()
    target = {"a": a, "a.detach()": a.detach(), "a.data": a.data}[modify]
    target.mul_(3)
    error = backward_error(lambda: y.sum().backward())
    return a._version, error, x.grad


def data_versus_detach() -> None:
    """Part 3: the same in-place change made through `a`, `a.detach()` and `a.data`."""
    print("\n3. Three ways to change a saved tensor: a, a.detach(), a.data")
    results = {modify: saved_then_modified(modify) for modify in ("a", "a.detach()", "a.data")}
    for modify, (version, raised, grad) in results.items():
        outcome = "raises" if raised or grad is None else f"runs, x.grad = {[round(g, 4) for g in grad.tolist()]}"
        print(f"  {modify}.mul_(3): a._version = {version}, backward {outcome}")
    right, silent = 2 * math.cos(2.0), 2 * math.cos(6.0)
    print(f"  the gradient of sin(2x) at x = 1 is 2 cos(2) = {right:.4f}; 2 cos(6) = {silent:.4f}")

    (v_a, e_a, _), (v_d, e_d, _), (v_data, e_data, g_data) = results.values()
    claim(
        "a.detach() shares the version counter, so backward still refuses",
        held=(v_a, v_d) == (1, 1) and e_a is not None and e_d is not None,
    )
    claim(
        "a.data bypasses the counter: no error, and a wrong gradient",
        held=v_data == 0
        and e_data is None
        and g_data is not None
        and torch.allclose(g_data, torch.full((3,), silent))
        and not torch.allclose(g_data, torch.full((3,), right)),
        detail=f"x.grad {g_data[0].item():.4f} where {right:.4f} is right" if g_data is not None else "no gradient",
    )


def main() -> None:
    version_counter()
    views()
    data_versus_detach()


if __name__ == "__main__":
    main()
