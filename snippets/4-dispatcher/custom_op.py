"""A custom operator: a schema, a CPU kernel, a fake kernel and a derivative, then meta, backward and torch.compile."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from pytorch_floors.claims import claim

CALLS: Counter[str] = Counter()
"""How many times each of the operator's Python functions ran: `kernel`, `fake`, `backward`."""

NAME = "floors::soft_clip"
_DEFINED: dict[str, Any] = {}


def soft_clip_reference(x: torch.Tensor, limit: float) -> torch.Tensor:
    """The same function made of ordinary operators, so autograd derives it by itself."""
    return limit * torch.tanh(x / limit)


def define() -> Any:
    """Register `floors::soft_clip(Tensor x, float limit) -> Tensor` (once per process) and return it."""
    if "op" in _DEFINED:
        return _DEFINED["op"]

    @torch.library.custom_op(NAME, mutates_args=(), device_types="cpu")
    def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
        CALLS["kernel"] += 1
        return soft_clip_reference(x, limit)

    @soft_clip.register_fake
    def _(x: torch.Tensor, limit: float) -> torch.Tensor:
        CALLS["fake"] += 1
        return torch.empty_like(x)  # only the shape, dtype and device of the result

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        ctx.save_for_backward(output)
        ctx.limit = inputs[1]

    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        CALLS["backward"] += 1
        (out,) = ctx.saved_tensors
        return grad * (1 - (out / ctx.limit) ** 2), None  # d/dx of L·tanh(x/L) is 1 − tanh², no gradient for L

    soft_clip.register_autograd(backward, setup_context=setup_context)
    _DEFINED["op"] = soft_clip
    return soft_clip


def define_wrong_fake() -> Any:
    """A second operator whose fake kernel gives the result a wrong shape, for opcheck to catch."""
    if "wrong" in _DEFINED:
        return _DEFINED["wrong"]

    @torch.library.custom_op("floors::wrong_fake", mutates_args=(), device_types="cpu")
    def wrong_fake(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @wrong_fake.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(x.shape[:-1])  # one dimension short

    _DEFINED["wrong"] = wrong_fake
    return wrong_fake


def registrations() -> list[tuple[str, str, str]]:
    """`(key, file, calling conventions)` for each kernel registered for the operator."""
    rows = []
    for line in torch._C._dispatch_dump(NAME).splitlines():
        if " registered at " in line and "::" in line.split(" registered at ", 1)[1]:
            key, rest = line.split(": registered at ", 1)
            path, kinds = rest.split(" :: ", 1)
            rows.append((key, path.rsplit(":", 1)[0].rsplit("/", 1)[-1], kinds.split("[", 1)[1].strip(" ]")))
    return rows


def ran(fn: Callable[[], object]) -> tuple[object, dict[str, int]]:
    """Run `fn()`; return its result and which of the operator's functions ran, how often."""
    CALLS.clear()
    result = fn()
    return result, dict(CALLS)


def compile_and_record(op: Any) -> tuple[Callable[..., Any], list[list[str]]]:
    """`torch.compile` of a small function using the op, with a backend that needs no C++ compiler.

    The backend is AOTAutograd with two compilers that only record the graphs they are given (one
    for the forward, one for the backward) and run them as they are, like `backend="aot_eager"`.
    """
    graphs: list[list[str]] = []

    def record(graph: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        graphs.append([str(node.target) for node in graph.graph.nodes if node.op == "call_function"])
        return make_boxed_func(graph.forward)

    def step(x: torch.Tensor) -> torch.Tensor:
        return op(x * 3, 2.0).sum()

    backend = aot_autograd(fw_compiler=record, bw_compiler=record)
    return torch.compile(step, backend=backend, fullgraph=True), graphs


def main() -> None:
    op = define()
    print(f"schema: {torch.ops.floors.soft_clip.default._schema}")
    rows = registrations()
    # Printed for a phone's 46 columns: the columns as wide as the longest key and calling convention.
    key_width, kinds_width = (max(len(row[i]) for row in rows) for i in (0, 2))
    for key, path, kinds in rows:
        print(f"  {key:<{key_width}}  {kinds:<{kinds_width}}  {path}")

    x = torch.linspace(-4, 4, 9, dtype=torch.float64)
    out, cpu_calls = ran(lambda: op(x, 2.0))
    # Printed for a phone's 46 columns: which functions ran on the line of each call, what it gave under it.
    print(f"\non the CPU, functions run: {cpu_calls}")
    print(f"  {[round(v, 3) for v in out.tolist()]}")
    meta, meta_calls = ran(lambda: op(torch.empty(1024, 4096, device="meta"), 2.0))
    print(f"on meta, functions run: {meta_calls}")
    print(f"  shape {tuple(meta.shape)} on {meta.device}")

    leaf = x.clone().requires_grad_()
    (grad,), grad_calls = ran(lambda: torch.autograd.grad(op(leaf, 2.0).sum(), leaf))
    y = op(leaf, 2.0)
    (reference,) = torch.autograd.grad(soft_clip_reference(leaf, 2.0).sum(), leaf)
    print(f"backward, functions run: {grad_calls}")
    print(f"  grad_fn {type(y.grad_fn).__name__}")
    print("  gradient:")
    print(f"    {[round(v, 4) for v in grad.tolist()]}")
    print("  reference (autograd through tanh):")
    print(f"    {[round(v, 4) for v in reference.tolist()]}")

    checks = ("test_schema", "test_autograd_registration", "test_faketensor")
    good = torch.library.opcheck(op, (x.clone().requires_grad_(), 2.0), test_utils=checks, raise_exception=False)
    wrong = torch.library.opcheck(
        define_wrong_fake(), (torch.ones(3, 4),), test_utils=("test_faketensor",), raise_exception=False
    )
    print(f"\nopcheck soft_clip: {good}")
    print(f"opcheck wrong_fake: {{'test_faketensor': {type(wrong['test_faketensor']).__name__}}}")

    compiled, graphs = compile_and_record(op)
    inputs = torch.randn(6, dtype=torch.float64, requires_grad=True)
    first, first_calls = ran(lambda: compiled(inputs))
    second, second_calls = ran(lambda: compiled(inputs))
    (compiled_grad,) = torch.autograd.grad(compiled(inputs), inputs)
    eager = op(inputs * 3, 2.0).sum()
    (eager_grad,) = torch.autograd.grad(eager, inputs)
    print("\ntorch.compile (AOTAutograd, graphs recorded and run as they are; no C++ compiler needed)")
    print(f"  first call, functions run: {first_calls}")
    print(f"  second call, functions run: {second_calls}")
    for name, targets in zip(("forward graph", "backward graph"), graphs, strict=False):
        print(f"  {name}: {', '.join(targets)}")
    compiler = next((name for name in ("c++", "g++", "clang++", "cc") if shutil.which(name)), None)
    print(f"  a C++ compiler for Inductor, the default backend: {compiler or 'none on this machine'} (not used here)")

    claim(
        "the operator's kernels are registered for CPU, Meta and Autograd, each boxed only",
        held={key for key, _, _ in rows} >= {"CPU", "Meta", "Autograd[alias]"}
        and all(kinds == "boxed" and path == "custom_ops.py" for _, path, kinds in rows),
    )
    claim("a CPU tensor runs the CPU kernel, not the fake", held=cpu_calls == {"kernel": 1})
    claim(
        "a meta tensor runs only the fake kernel and gets the right shape",
        held=meta_calls == {"fake": 1} and meta.shape == (1024, 4096) and meta.is_meta,
    )
    claim(
        "backward runs the registered formula, and its gradient matches autograd's own",
        held=grad_calls.get("backward") == 1 and torch.allclose(grad, reference, rtol=1e-12, atol=1e-12),
        detail=f"largest difference {(grad - reference).abs().max().item():.1e}",
    )
    claim("opcheck passes the operator", held=all(result == "SUCCESS" for result in good.values()))
    claim("opcheck catches a fake kernel that gives the wrong shape", held=wrong["test_faketensor"] != "SUCCESS")
    claim(
        "torch.compile keeps the operator as one node of its forward graph",
        held=bool(graphs) and graphs[0].count("floors.soft_clip.default") == 1,
    )
    claim(
        "tracing runs the fake kernel; a second call runs only the kernel",
        held=first_calls.get("fake", 0) >= 1 and first_calls.get("kernel") == 1 and second_calls == {"kernel": 1},
    )
    claim(
        "the compiled function gives the eager result and gradient",
        held=torch.allclose(first, eager)
        and torch.allclose(second, eager)
        and torch.allclose(compiled_grad, eager_grad),
    )


if __name__ == "__main__":
    main()
