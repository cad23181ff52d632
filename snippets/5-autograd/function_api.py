"""The rest of autograd.Function (vmap, needs_input_grad, mark_dirty, double backward) and CreationMeta errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.autograd.function import once_differentiable

from pytorch_floors.claims import claim

BACKWARD_WORK: list[str] = []
"""What the last backward of `Product` computed (one entry per input gradient)."""

INDEX_GRADIENTS: list[torch.Tensor] = []
"""The gradient `Sort.backward` received for the indices output."""


def refusal(fn: Callable[[], object]) -> str | None:
    """Run `fn()`; return the first line of the RuntimeError it raises, or None if it raises none."""
    try:
        fn()
    except RuntimeError as error:
        return str(error).strip().splitlines()[0]
    return None


def short(message: str | None, width: int = 80) -> str:
    """An error's first line cut to `width` characters, or `runs` when there was no error."""
    if message is None:
        return "runs"
    return message if len(message) <= width else message[: width - 3] + "..."


def apply(function: type[torch.autograd.Function], *args: Any) -> Any:
    """`function.apply(*args)`, typed: torch leaves `apply` unannotated."""
    run: Callable[..., Any] = function.apply
    return run(*args)


def backward(t: torch.Tensor) -> None:
    """`t.backward()`, typed: torch leaves `Tensor.backward` unannotated."""
    torch.autograd.backward(t)


def rounded(t: torch.Tensor) -> list[float]:
    """A tensor's values, rounded to 4 places, for printing."""
    return [round(v, 4) for v in t.tolist()]


class SavesInput(torch.autograd.Function):
    """A Function in the setup_context style whose backward needs only its input."""

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(inputs[0])


class Sine(SavesInput):
    """`sin x` in the setup_context style: forward without ctx, so functorch can transform it."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        return x.sin()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x: torch.Tensor = ctx.saved_tensors[0]
        return grad * x.cos()


class SineNoRule(Sine):
    """The same Function without `generate_vmap_rule` and without a `vmap` staticmethod."""

    generate_vmap_rule = False


class SineOldStyle(torch.autograd.Function):
    """The same Function in the old style: `forward(ctx, x)` saves for backward itself."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x: torch.Tensor = ctx.saved_tensors[0]
        return grad * x.cos()


class Product(torch.autograd.Function):
    """`a * b`, whose backward computes only the input gradients that `ctx.needs_input_grad` asks for."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            BACKWARD_WORK.append("grad a")
            grad_a = grad * b
        if ctx.needs_input_grad[1]:
            BACKWARD_WORK.append("grad b")
            grad_b = grad * a
        return grad_a, grad_b


class DoubleInPlace(torch.autograd.Function):
    """`x.mul_(2)`: modifies its input, returns it, and says so with `ctx.mark_dirty`."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


class DoubleInPlaceUnmarked(DoubleInPlace):
    """The same in-place Function that does not call `ctx.mark_dirty`."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x


class Sort(torch.autograd.Function):
    """`x.sort()` returning (values, indices); the indices in `dtype`, marked non-differentiable if `mark`."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, mark: bool, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = x.sort()
        ctx.save_for_backward(indices)
        indices = indices.to(dtype)
        if mark:
            ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Any, grad_values: torch.Tensor, grad_indices: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        indices: torch.Tensor = ctx.saved_tensors[0]
        INDEX_GRADIENTS.append(grad_indices)
        return torch.zeros_like(grad_values).scatter(0, indices, grad_values), None, None


class Cube(SavesInput):
    """`x³`, its backward `3x²·g` written with differentiable torch ops."""

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        return x**3

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x: torch.Tensor = ctx.saved_tensors[0]
        return grad * 3 * x**2


class CubeOnce(Cube):
    """The same backward under `@once_differentiable`: it runs without recording."""

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x: torch.Tensor = ctx.saved_tensors[0]
        return grad * 3 * x**2


def setup_context_and_vmap() -> None:
    """Part 1: vmap over a setup_context Function against a loop; the two ways vmap refuses one."""
    print("1. setup_context and generate_vmap_rule: torch.vmap over a Function")
    batch = torch.randn(4, 5, dtype=torch.float64)
    vmapped = torch.vmap(Sine.apply)(batch)  # one call over the whole batch, no Python loop
    looped = torch.stack([apply(Sine, row) for row in batch])
    old_style = refusal(lambda: torch.vmap(SineOldStyle.apply)(batch))
    no_rule = refusal(lambda: torch.vmap(SineNoRule.apply)(batch))
    vmap_gap = (vmapped - looped).abs().max().item()
    print(f"  vmap(Sine.apply) over a {tuple(batch.shape)} batch against a loop over its rows: ", end="")
    print("agree to 1e-12" if vmap_gap < 1e-12 else f"differ by {vmap_gap:.1e}")
    print("  vmap(SineOldStyle.apply), forward(ctx, x) and no setup_context:")
    print(f"    {short(old_style)}")
    print("  vmap(SineNoRule.apply), setup_context but no generate_vmap_rule:")
    print(f"    {short(no_rule)}")

    claim(
        "vmap over a setup_context Function with generate_vmap_rule equals a loop",
        held=vmap_gap < 1e-12,
        detail=f"largest gap {vmap_gap:.1e}",
    )
    claim(
        "vmap refuses a Function whose forward takes ctx, asking for setup_context",
        held=old_style is not None and "must override the setup_context" in old_style,
        detail="message names setup_context" if old_style and "setup_context" in old_style else short(old_style),
    )
    claim(
        "vmap refuses a setup_context Function with no vmap rule, naming generate_vmap_rule",
        held=no_rule is not None and "generate_vmap_rule=True" in no_rule,
        detail="message names generate_vmap_rule" if no_rule and "generate_vmap_rule" in no_rule else short(no_rule),
    )


def needs_input_grad() -> None:
    """Part 2: backward reads `ctx.needs_input_grad` and computes only what is needed."""
    print("\n2. ctx.needs_input_grad: backward computes only the gradients that are needed")
    work = {}
    for label, b_requires in (("a requires grad, b does not", False), ("both require grad", True)):
        a = torch.randn(3, dtype=torch.float64, requires_grad=True)
        b = torch.randn(3, dtype=torch.float64, requires_grad=b_requires)
        out = apply(Product, a, b)
        BACKWARD_WORK.clear()
        backward(out.sum())
        flags = out.grad_fn.needs_input_grad
        work[label] = (flags, list(BACKWARD_WORK), a.grad is not None and torch.equal(a.grad, b.detach()))
        # Printed for a phone's 46 columns: each case on a line, what backward saw and did under it.
        print(f"  {label}:")
        print(f"    needs_input_grad {flags}, backward computed {BACKWARD_WORK}")

    (flags_one, work_one, right_one), (flags_two, work_two, _) = work.values()
    claim(
        "backward sees which inputs need a gradient and skips the other",
        held=flags_one == (True, False) and work_one == ["grad a"] and right_one,
        detail=f"{len(work_one)} of 2 gradients computed",
    )
    claim(
        "with both inputs requiring grad, both gradients are computed",
        held=flags_two == (True, True) and work_two == ["grad a", "grad b"],
        detail=f"{len(work_two)} of 2 gradients computed",
    )


def mark_dirty() -> torch.Tensor:
    """Part 3: an in-place Function with and without `ctx.mark_dirty`.

    Returns the unmarked Function's output, which part 6 modifies in place.
    """
    print("\n3. ctx.mark_dirty: a Function that doubles its input b = a * 1 in place, a = [1, 2, 3]")
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = a * 1
    before, pointer, history = b._version, b.data_ptr(), type(b.grad_fn).__name__
    out = apply(DoubleInPlace, b)
    is_input, after, new_history = out is b, b._version, type(b.grad_fn).__name__
    backward(b.sum())
    marked_grad = a.grad.clone() if a.grad is not None else torch.zeros(3, dtype=torch.float64)
    print(f"  marked: out is b {is_input}, same data_ptr {out.data_ptr() == pointer}, b._version {before} -> {after}")
    print(f"            b.grad_fn {history} -> {new_history}; a.grad through b {rounded(marked_grad)}")

    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    c = a * 1
    saver = c.sin()  # SinBackward0 saves c at version 0
    unmarked_before = c._version
    unmarked: torch.Tensor = apply(DoubleInPlaceUnmarked, c)
    same_storage = unmarked.data_ptr() == c.data_ptr()
    print(f"  unmarked: out is b {unmarked is c}, out._base is b {unmarked._base is c}, ", end="")
    print(f"same data_ptr {same_storage}, b._version {unmarked_before} -> {c._version}")
    (through_out,) = torch.autograd.grad(unmarked.sum(), a, retain_graph=True)
    (through_b,) = torch.autograd.grad(c.sum(), a)
    stale = refusal(lambda: backward(saver.sum()))
    print(
        f"            b.grad_fn stays {type(c.grad_fn).__name__}; a.grad through out {rounded(through_out)}, ", end=""
    )
    print(f"through b {rounded(through_b)}")
    print(f"            b.sin(), taken before, then backward: {short(stale, 52)}")
    leaf_refused = refusal(lambda: apply(DoubleInPlace, torch.ones(3, requires_grad=True)))
    print(f"  marked, on a leaf that requires grad: {short(leaf_refused, 66)}")

    twos = torch.full((3,), 2.0, dtype=torch.float64)
    claim(
        "with mark_dirty the output is the input: same tensor, same storage, version bumped, new grad_fn",
        held=is_input and out.data_ptr() == pointer and after > before and new_history == "DoubleInPlaceBackward",
        detail=f"version {before} -> {after}",
    )
    claim(
        "with mark_dirty the gradient through the modified tensor is right",
        held=torch.equal(marked_grad, twos),
        detail=f"a.grad {marked_grad[0].item():.1f}, 2.0 is right",
    )
    claim(
        "without mark_dirty nothing is refused, and the gradient through the input misses the change",
        held=unmarked is not c and same_storage and torch.equal(through_out, twos) and torch.equal(through_b, twos / 2),
        detail=f"through b {through_b[0].item():.1f} where 2.0 is right",
    )
    claim(
        "without mark_dirty the version counter still catches a node that saved the input",
        held=stale is not None and "modified by an inplace operation" in stale,
    )
    claim(
        "mark_dirty on a leaf that requires grad is refused",
        held=leaf_refused is not None and "leaf Variable that requires grad" in leaf_refused,
    )
    return unmarked


def non_differentiable() -> None:
    """Part 4: a Function returning (values, indices), with and without `ctx.mark_non_differentiable`."""
    print("\n4. ctx.mark_non_differentiable: a sort returning (values, indices)")
    x = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    table = {}
    for dtype in (torch.int64, torch.float64):
        for mark in (True, False):
            values, indices = apply(Sort, x, mark, dtype)
            table[(str(dtype).removeprefix("torch."), mark)] = (values.requires_grad, indices.requires_grad)
    for (dtype_name, mark), (values_rg, indices_rg) in table.items():
        print(f"  indices {dtype_name}, {'marked' if mark else 'unmarked'}:")
        print(f"    values.requires_grad {values_rg}, indices.requires_grad {indices_rg}")

    weights = torch.tensor([10.0, 20.0, 30.0], dtype=torch.float64)
    INDEX_GRADIENTS.clear()
    values, _ = apply(Sort, x, True, torch.int64)
    (by_hand,) = torch.autograd.grad((values * weights).sum(), x)
    (by_sort,) = torch.autograd.grad((x.sort().values * weights).sum(), x)
    received = INDEX_GRADIENTS[0]
    print(
        f"  gradient of sum(values * w), w = {rounded(weights)}: Sort {rounded(by_hand)}, torch.sort {rounded(by_sort)}"
    )
    print(f"  backward received for the indices: {received.tolist()} ({received.dtype})")

    claim(
        "marked indices do not require grad; the values do",
        held=table[("int64", True)] == (True, False) and table[("float64", True)] == (True, False),
    )
    claim(
        "integer indices never require grad; float ones do unless marked",
        held=table[("int64", False)] == (True, False) and table[("float64", False)] == (True, True),
        detail=f"float64 unmarked indices.requires_grad {table[('float64', False)][1]}",
    )
    claim("the values' gradient equals torch.sort's own", held=torch.equal(by_hand, by_sort))
    claim(
        "backward still gets a slot for the marked output, filled with zeros",
        held=not bool(received.any()),
        detail=f"{received.tolist()}",
    )


def double_backward() -> None:
    """Part 5: a second derivative through a hand-written backward, and `@once_differentiable` refusing it."""
    print("\n5. Double backward: f(x) = x³")
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (first,) = torch.autograd.grad(apply(Cube, x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), x)
    analytic = 6 * x.detach()
    gradgrad = bool(torch.autograd.gradgradcheck(Cube.apply, (x,), raise_exception=False))
    print(f"  Cube, backward in torch ops: f' = {rounded(first)}, f'' = {rounded(second)}, 6x = {rounded(analytic)}")
    print(f"    gradgradcheck {'passes' if gradgrad else 'fails'}")

    print("  CubeOnce, @once_differentiable on backward:")
    (plain,) = torch.autograd.grad(apply(CubeOnce, x).sum(), x, create_graph=True)
    plain_second = refusal(lambda: torch.autograd.grad(plain.sum(), x))
    print(f"    grad of sum(f(x)), create_graph=True: f' = {rounded(plain)}, requires_grad {plain.requires_grad}")
    print(f"      second grad: {short(plain_second, 72)}")
    (chained,) = torch.autograd.grad(apply(CubeOnce, x).sin().sum(), x, create_graph=True)
    node = type(chained.grad_fn).__name__
    by_backward = refusal(lambda: backward(chained.sum()))
    by_grad = refusal(lambda: torch.autograd.grad(chained.sum(), x, retain_graph=True))
    unused = torch.autograd.grad(chained.sum(), x, allow_unused=True)[0]
    print(f"    grad of sum(sin f(x)), create_graph=True: the result has grad_fn {node}")
    print(f"      .backward() on it: {short(by_backward, 72)}")
    print(f"      torch.autograd.grad on it: {short(by_grad, 72)}")
    print(f"      the same, allow_unused=True: {unused}")

    gap = (second - analytic).abs().max().item()
    claim(
        "the second derivative through the hand-written backward is 6x",
        held=gap < 1e-12,
        detail=f"largest gap {gap:.1e}",
    )
    claim("gradgradcheck passes the Function", held=gradgrad)
    claim(
        "under @once_differentiable, backward through the first derivative raises, naming it",
        held=node == "Error" and by_backward is not None and "@once_differentiable" in by_backward,
    )
    claim(
        "when the incoming gradient needs no grad, the first derivative comes back detached",
        held=not plain.requires_grad and plain_second is not None and "does not require grad" in plain_second,
        detail=f"requires_grad {plain.requires_grad}",
    )
    claim(
        "torch.autograd.grad does not reach the once_differentiable error; allow_unused=True returns None",
        held=by_grad is not None and "not have been used in the graph" in by_grad and unused is None,
        detail=f"allow_unused=True gives {unused}",
    )


def creation_meta(unmarked: torch.Tensor) -> None:
    """Part 6: in-place on views autograd cannot rewrite, by how each view was created."""
    print("\n6. CreationMeta: in-place ops on views autograd refuses to rewrite")
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = x * 1
    with torch.no_grad():
        quiet_view = y[:2]
    no_grad = refusal(lambda: quiet_view.mul_(2))
    allowed = refusal(lambda: y[:2].mul_(2))
    unbind = refusal(lambda: (x * 1).unbind()[0].mul_(2))
    split = refusal(lambda: torch.split(x * 1, 2)[0].mul_(2))
    custom = refusal(lambda: unmarked.mul_(3))
    cases = {
        "view made under no_grad, mul_ with grad on": no_grad,
        "the same view made with grad on": allowed,
        "unbind()[0].mul_(2)": unbind,
        "split(2)[0].mul_(2)": split,
        "part 3's unmarked output, mul_(3)": custom,
    }
    for label, outcome in cases.items():
        print(f"  {label}:")
        print(f"    {short(outcome)}")

    def names(message: str | None, cause: str) -> bool:
        return message is not None and cause in message

    no_grad_cause, multi_cause = "created in no_grad mode", "returns multiple views"
    custom_cause = "created inside a custom Function"
    claim(
        "an in-place op on a view created under no_grad is refused, naming no_grad mode",
        held=names(no_grad, no_grad_cause),
        detail=f"message names '{no_grad_cause}'" if names(no_grad, no_grad_cause) else short(no_grad),
    )
    claim("the same view created with grad mode on is modified without complaint", held=allowed is None)
    claim(
        "an in-place op on an output of unbind or split is refused, naming multiple views",
        held=names(unbind, multi_cause) and names(split, multi_cause),
        detail=f"both messages name '{multi_cause}'" if names(unbind, multi_cause) else short(unbind),
    )
    claim(
        "an input returned as-is from a Function without mark_dirty is a view that refuses in-place ops",
        held=names(custom, custom_cause),
        detail=f"message names '{custom_cause}'" if names(custom, custom_cause) else short(custom),
    )


def main() -> None:
    torch.manual_seed(0)
    setup_context_and_vmap()
    needs_input_grad()
    unmarked = mark_dirty()
    non_differentiable()
    double_backward()
    creation_meta(unmarked)


if __name__ == "__main__":
    main()
