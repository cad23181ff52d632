"""Every call the one-page program makes, seen above the dispatcher and below autograd."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim


class FunctionLog(TorchFunctionMode):
    """Records each torch API call made from Python, by its public name (`__torch_function__`)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __torch_function__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        name = resolve_name(func) or f"{getattr(func, '__module__', '?')}.{getattr(func, '__name__', func)}"
        self.calls.append(name)
        return func(*args, **(kwargs or {}))


class DispatchLog(TorchDispatchMode):
    """Records each operator that reaches the dispatcher's Python key, as `namespace.op.overload`."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


FORWARD = "forward: loss = cross_entropy(model(x), y)"
BACKWARD = "backward: loss.backward()"
UPDATE = "update: optimizer.step()"


def run_program() -> dict[str, tuple[list[str], list[str]]]:
    """Run the one-page program once with both modes on; returns `phase -> (torch calls, operators)`."""
    torch.manual_seed(0)
    x = torch.randn(64, 784)
    y = torch.randint(0, 10, (64,))
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    log = {}
    with FunctionLog() as above, DispatchLog() as below:
        loss = torch.nn.functional.cross_entropy(model(x), y)
    log[FORWARD] = (above.calls, below.ops)
    with FunctionLog() as above, DispatchLog() as below:
        loss.backward()
    log[BACKWARD] = (above.calls, below.ops)
    with FunctionLog() as above, DispatchLog() as below:
        optimizer.step()
    log[UPDATE] = (above.calls, below.ops)
    return log


def compress(names: list[str]) -> str:
    """Join names, writing a run of repeats once with a count."""
    runs: list[list[Any]] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in runs)


def main() -> None:
    log = run_program()
    for phase, (above, below) in log.items():
        print(phase)
        for mode, names in (("TorchFunctionMode", above), ("TorchDispatchMode", below)):
            # Printed for a phone's 46 columns: one space of indent a level, the longest name fits.
            print(f" {mode} sees {len(names)}:")
            names_shown = compress(names)
            print(
                textwrap.fill(
                    names_shown, width=46, initial_indent="  ", subsequent_indent="  ", break_long_words=False
                )
            )
        print()
    above_total = sum(len(above) for above, _ in log.values())
    below_total = sum(len(below) for _, below in log.values())
    aten = sum(op.startswith("aten.") for _, below in log.values() for op in below)
    print(f"In all: {above_total} torch calls seen from Python;")
    print(f"{below_total} operator calls at the dispatcher,")
    print(f"{aten} of them in the aten namespace.")
    (f_above, f_below), (b_above, b_below), (_, u_below) = (log[p] for p in (FORWARD, BACKWARD, UPDATE))
    claim(
        "Python sees linear and cross_entropy; the dispatcher sees what they decompose into",
        held=f_above == ["torch.nn.functional.linear", "torch.nn.functional.cross_entropy"]
        and "aten.addmm.default" in f_below
        and not any("linear" in op or "cross_entropy" in op for op in f_below),
    )
    claim(
        "backward is one call from Python and many operators below",
        held=b_above == ["torch.Tensor.backward"] and "aten.mm.default" in b_below,
    )
    claim("the update is one in-place add_ per parameter", held=u_below.count("aten.add_.Tensor") == 2)


if __name__ == "__main__":
    main()
