"""What the names in the one-page program really are: compiled built-ins, or Python with a file and a line."""

from __future__ import annotations

import inspect
import os
from typing import Any

import torch

from pytorch_floors.claims import claim

TORCH_DIR = os.path.dirname(torch.__file__)

NAMES: dict[str, Any] = {
    "torch.randn": torch.randn,
    "torch.nn.Linear": torch.nn.Linear,
    "torch.nn.Linear.forward": torch.nn.Linear.forward,
    "torch.nn.functional.linear": torch.nn.functional.linear,
    "torch.nn.functional.cross_entropy": torch.nn.functional.cross_entropy,
    "torch.Tensor.backward": torch.Tensor.backward,
    "torch.optim.SGD.step": torch.optim.SGD.step,
    "torch.Tensor.add_": torch.Tensor.add_,
}


def where(obj: Any) -> str:
    """'compiled' for objects with no Python source, else 'file.py:line' relative to the torch package."""
    target = inspect.unwrap(obj) if callable(obj) else obj
    try:
        path = inspect.getsourcefile(target)
        _, line = inspect.getsourcelines(target)
    except TypeError:
        return "compiled: no Python source"
    if path is None:
        return "compiled: no Python source"
    return f"{os.path.relpath(path, TORCH_DIR)}:{line}"


def kinds(names: dict[str, Any] = NAMES) -> list[tuple[str, str, str]]:
    """For each name: the Python type of the object and where its code lives."""
    return [(name, type(obj).__name__, where(obj)) for name, obj in names.items()]


def tensor_methods() -> tuple[int, int]:
    """Public attributes of torch.Tensor found first on the C base class, and those defined in Python."""
    public = [name for name in dir(torch.Tensor) if not name.startswith("_")]
    in_python = sum(1 for name in public if name in vars(torch.Tensor))
    return len(public) - in_python, in_python


def main() -> None:
    for name, kind, location in kinds():
        print(name)
        print(f"    {kind}; {location}")
    print()
    print("torch.randn is torch._C._VariableFunctions.randn:", torch.randn is torch._C._VariableFunctions.randn)
    print("torch.nn.functional.linear is torch._C._nn.linear:", torch.nn.functional.linear is torch._C._nn.linear)
    print()
    print("torch.Tensor.__mro__:")
    print("    " + " -> ".join(f"{c.__module__}.{c.__qualname__}" for c in torch.Tensor.__mro__))
    print(f"type(torch.Tensor): {type(torch.Tensor).__module__}.{type(torch.Tensor).__qualname__}")
    from_c, from_python = tensor_methods()
    print("public attributes of torch.Tensor:")
    print(f"    {from_c} from the C base class, {from_python} written in Python (torch/_tensor.py)")
    rows = {name: (kind, where) for name, kind, where in kinds()}
    claim(
        "torch.randn is compiled: no Python source",
        held=rows["torch.randn"] == ("builtin_function_or_method", "compiled: no Python source"),
    )
    claim(
        "the wrappers above it are Python: cross_entropy, backward, SGD.step",
        held=rows["torch.nn.functional.cross_entropy"][1].startswith("nn/functional.py:")
        and rows["torch.Tensor.backward"][1].startswith("_tensor.py:")
        and rows["torch.optim.SGD.step"][1].startswith("optim/sgd.py:"),
    )
    claim(
        "most of Tensor's methods come from the C base class",
        held=torch.Tensor.__mro__[1] is torch._C.TensorBase and from_c > 10 * from_python > 0,
        detail=f"{from_c} against {from_python}",
    )


if __name__ == "__main__":
    main()
