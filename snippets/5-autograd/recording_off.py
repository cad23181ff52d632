"""Turning recording off: what torch.no_grad() and torch.inference_mode() save, and what their outputs can do."""

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes

MODES: dict[str, Callable[[], contextlib.AbstractContextManager[object]]] = {
    "grad mode (default)": contextlib.nullcontext,
    "torch.no_grad()": torch.no_grad,
    "torch.inference_mode()": torch.inference_mode,
}


@dataclass(frozen=True)
class Forward:
    """What one forward pass left behind under a given mode."""

    mode: str
    saved_count: int
    saved_bytes: int  # distinct storages
    requires_grad: bool
    has_grad_fn: bool
    is_inference: bool


def make_mlp() -> torch.nn.Module:
    """784 → 256 → ReLU → 10, as in the saved-tensors proof."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def forward_under(mode: str, batch: int = 64) -> tuple[Forward, torch.Tensor]:
    """Run the MLP forward + loss inside `mode`, counting saved tensors with a pack hook."""
    model = make_mlp()
    x, y = torch.randn(batch, 784), torch.randint(0, 10, (batch,))
    storages: dict[int, int] = {}
    count = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal count
        count += 1
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack), MODES[mode]():
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    result = Forward(
        mode, count, sum(storages.values()), loss.requires_grad, loss.grad_fn is not None, loss.is_inference()
    )
    return result, logits


def reuse_in_autograd(mode: str) -> str:
    """Feed the logits made under `mode` into a recorded computation and backward; return what happened."""
    _, logits = forward_under(mode)
    weight = torch.ones(10, requires_grad=True)
    try:
        (logits * weight).sum().backward()
    except RuntimeError as error:
        return f"RuntimeError: {str(error).split('. ')[0]}."
    return "fine: a plain tensor with no history (its producers get no gradient)"


def main() -> None:
    rows = [forward_under(mode)[0] for mode in MODES]
    print("MLP 784 -> 256 -> 10 + cross_entropy, batch 64, float32")
    print()
    # Printed for a phone's 46 columns: the table turned, a mode a column and a property a row; each mode's
    # dispatch keys under its name.
    print(f"each mode's forward: {', '.join(MODES)}")
    print(f"{'':<13} {'grad mode':>10}  {'no_grad':>7}  {'inference':>9}")
    recorded, no_grad, inference = rows
    columns = {
        "saved": [str(row.saved_count) for row in rows],
        "bytes": [human_bytes(row.saved_bytes, binary=True) for row in rows],
        "requires_grad": [str(row.requires_grad) for row in rows],
        "grad_fn": ["yes" if row.has_grad_fn else "None" for row in rows],
        "is_inference": [str(row.is_inference) for row in rows],
    }
    for label, (a, b, c) in columns.items():
        print(f"{label:<13} {a:>10}  {b:>7}  {c:>9}")
    claim(
        "grad mode saves tensors for backward; no_grad and inference_mode save none",
        held=recorded.saved_count > 0
        and recorded.saved_bytes > 0
        and all(r.saved_count == 0 and r.saved_bytes == 0 and not r.has_grad_fn for r in (no_grad, inference)),
        detail=f"{recorded.saved_count} saved in grad mode",
    )
    claim("only inference_mode makes inference tensors", held=inference.is_inference and not no_grad.is_inference)
    print()
    print("dispatch keys of a tensor created under each mode (floor 4):")
    for mode, manager in MODES.items():
        with manager():
            made = torch.ones(3)
        keys = str(torch._C._dispatch_keys(made)).removeprefix("DispatchKeySet")
        print(f"  {mode}")
        print(f"    {keys}")
    print()
    with torch.inference_mode():
        made_inside = torch.ones(3) * 2
    try:
        version: object = made_inside._version
    except RuntimeError as error:
        version = f"RuntimeError: {error}"
    print("version counter of a tensor made in inference mode:")
    print(f"  {version}")
    print()
    print("using the logits later, inside a recorded computation:")
    reuse = {}
    for mode in ("torch.no_grad()", "torch.inference_mode()"):
        reuse[mode] = reuse_in_autograd(mode)
        print(f"  made under {mode}:")
        print(f"    {reuse[mode]}")
    claim(
        "a no_grad tensor can join autograd later; an inference tensor cannot",
        held=reuse["torch.no_grad()"].startswith("fine") and reuse["torch.inference_mode()"].startswith("RuntimeError"),
    )


if __name__ == "__main__":
    main()
