"""Walk the dispatcher's own table for an op, key by key in priority order, and see which kernel each key holds."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim

_ENTRY = re.compile(r"^(\w+): (fallthrough )?registered at (.+?):\d+ \[(.+)\]$")


def _short(path: str) -> str:
    """A registration's file name, without the directory of the machine that compiled it."""
    return path.rsplit("/", 1)[-1]


def dispatch_table(op: str) -> dict[str, tuple[str, str]]:
    """`key -> (what is registered, file)` from the dispatcher's computed table for `op`."""
    table = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        match = _ENTRY.match(line.strip())
        if match:
            key, fallthrough, path, kind = match.groups()
            table[key] = ("fallthrough" if fallthrough else kind, _short(path))
    return table


def visited_keys(tensor: torch.Tensor) -> list[str]:
    """Keys the dispatcher considers for a call on `tensor` here and now, highest priority first.

    That is the tensor's own keys, plus this thread's included keys, minus its excluded keys.
    """
    keys = (torch._C._dispatch_keys(tensor) | torch._C._dispatch_tls_local_include_set()) - (
        torch._C._dispatch_tls_local_exclude_set()
    )
    order = []
    while True:
        key = keys.highestPriorityTypeId()
        name = torch._C._dispatch_key_name(key)
        if name == "Undefined":
            return order
        order.append(name)
        keys = keys.remove(key)


def walk(op: str, tensor: torch.Tensor) -> list[tuple[str, str, str]]:
    """`(key, what the table holds there, file)` in the order the dispatcher visits the keys."""
    table = dispatch_table(op)
    return [(key, *table.get(key, ("nothing registered", "-"))) for key in visited_keys(tensor)]


def first_kernel(rows: list[tuple[str, str, str]]) -> str:
    """The key whose kernel runs first: the highest one that is not a fallthrough."""
    return next(key for key, kind, _ in rows if kind != "fallthrough")


class _PassThrough(TorchDispatchMode):
    """A dispatch mode that only passes each call on (its presence is what changes the keys)."""

    def __torch_dispatch__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        return func(*args, **(kwargs or {}))


CASES: list[tuple[str, str, Callable[[], AbstractContextManager[object]]]] = [
    ("a + b (a.requires_grad)", "aten::add.Tensor", nullcontext),
    ("model(x): F.linear", "aten::linear", nullcontext),
    ("model(x) under torch.autocast('cpu')", "aten::addmm", lambda: torch.autocast("cpu")),
    ("a + b inside torch.inference_mode()", "aten::add.Tensor", torch.inference_mode),
    ("a + b inside a TorchDispatchMode", "aten::add.Tensor", _PassThrough),
]


def main() -> None:
    a = torch.ones(3, requires_grad=True)
    walks = {}
    for label, op, context in CASES:
        with context():
            rows = walk(op, a)
        walks[label] = rows
        # Printed for a phone's 46 columns: the operator under the call, each kernel's file under its row.
        print(label)
        print(f"  -> {op}")
        for key, kind, path in rows:
            print(f"  {key:<18} {kind}")
            print(f"      {path}")
        print(f"  first kernel to run: {first_kernel(rows)}")
        print()
    add, linear, autocast, inference, moded = walks.values()
    claim(
        "a + b visits AutogradCPU, then two fallthroughs, then the CPU kernel",
        held=[key for key, _, _ in add] == ["AutogradCPU", "ADInplaceOrView", "BackendSelect", "CPU"]
        and [kind for _, kind, _ in add][1:] == ["fallthrough", "fallthrough", "kernel"],
    )
    claim(
        "linear is a decomposition run at the autograd key",
        held={key: kind for key, kind, _ in linear}.get("AutogradCPU") == "math kernel",
    )
    claim("under autocast, AutocastCPU runs first", held=first_kernel(autocast) == "AutocastCPU")
    claim(
        "under inference_mode the autograd key is skipped",
        held="AutogradCPU" not in [key for key, _, _ in inference] and first_kernel(inference) == "CPU",
    )
    order = [key for key, _, _ in moded]
    claim(
        "a TorchDispatchMode is entered after autograd, before the backend",
        held=order[0] == "PythonTLSSnapshot"
        and order.index("AutogradCPU") < order.index("Python") < order.index("CPU"),
    )


if __name__ == "__main__":
    main()
