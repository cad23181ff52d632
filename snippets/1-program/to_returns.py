"""`.to()` leaves the original alone and returns a new tensor, or the same object when nothing would change."""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from pytorch_floors.claims import claim


def to_cases(x: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    """The results of the `.to()` calls the page discusses, on a float32 CPU tensor `x`."""
    return [
        ("x.to(torch.float64)", x.to(torch.float64)),
        ("x.to(torch.float32)", x.to(torch.float32)),
        ('x.to("cpu")', x.to("cpu")),
        ("x.cpu()", x.cpu()),
        ("x.to(torch.float32, copy=True)", x.to(torch.float32, copy=True)),
    ]


def describe(x: torch.Tensor, y: torch.Tensor) -> str:
    """Whether `y` is `x` itself, a new tensor sharing its memory, or a new tensor with memory of its own."""
    if y is x:
        return "the same object (no-op)"
    if y.device == x.device and y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return "a new tensor over the same memory"
    return "a new tensor, new memory"


def module_to_in_place(device: str = "cpu") -> dict[str, object]:
    """What `model.to(device)` does to a model already there: which tensors it asks, which it replaces.

    `Module.to` has no shortcut for "nothing to change": it walks every parameter and buffer and calls
    each one's `.to()` (`Module._apply`). A torch function mode counts those calls.
    """

    class CountTo(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.calls += func is torch.Tensor.to
            return func(*args, **(kwargs or {}))

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).to(device)
    tensors = [*model.parameters(), *model.buffers()]
    addresses = [t.data_ptr() for t in tensors]
    with CountTo() as counter:
        returned = model.to(device)
    after = [*model.parameters(), *model.buffers()]
    kept = all(a is b and b.data_ptr() == address for a, b, address in zip(tensors, after, addresses, strict=True))
    return {"same module": returned is model, "tensors": len(tensors), "asked": counter.calls, "kept": kept}


def main() -> None:
    x = torch.arange(4, dtype=torch.float32)
    before = x.clone()
    print(f"x = torch.arange(4, dtype=torch.float32) on {x.device}")
    # Printed for a phone's 46 columns: what each call returned on the line under it.
    for text, y in to_cases(x):
        print(text)
        print(f"  -> {describe(x, y)}, dtype {str(y.dtype).removeprefix('torch.')} on {y.device}")
    print(f"x afterwards: dtype {str(x.dtype).removeprefix('torch.')}, unchanged: {torch.equal(x, before)}")
    results = dict(to_cases(x))
    claim(
        ".to() with nothing to change returns the same object",
        held=results["x.to(torch.float32)"] is x and results['x.to("cpu")'] is x and results["x.cpu()"] is x,
    )
    changed = results["x.to(torch.float64)"]
    claim(
        ".to(another dtype) returns a new tensor in new memory",
        held=changed is not x and changed.dtype == torch.float64 and describe(x, changed) == "a new tensor, new memory",
    )
    claim(
        "copy=True always copies",
        held=describe(x, results["x.to(torch.float32, copy=True)"]) == "a new tensor, new memory",
    )
    claim("the original is left as it was", held=torch.equal(x, before) and x.dtype == torch.float32)
    walk = module_to_in_place()
    print(f"model.to('cpu') on a Linear + BatchNorm1d already on the CPU: the same module: {walk['same module']}")
    asked = f"{walk['asked']} of its {walk['tensors']}"
    print(f"  .to() asked of {asked} parameters and buffers; none copied: {walk['kept']}")
    claim(
        "Module.to with nothing to change still asks every parameter and buffer, and copies none",
        held=walk["same module"] is True and walk["asked"] == walk["tensors"] and walk["kept"] is True,
        detail=f"{walk['asked']} of {walk['tensors']} tensors asked",
    )
    if torch.cuda.is_available():
        print()
        print(f"CUDA device 0: {torch.cuda.get_device_name(0)}")
        on_gpu = x.to("cuda")
        back = on_gpu.cpu()
        there, home = "x.to('cuda')", "x.to('cuda').cpu()"
        print(there)
        print(f"  -> {describe(x, on_gpu)}, on {on_gpu.device}")
        print(home)
        print(f"  -> {describe(x, back)}, on {back.device}, equal to x: {torch.equal(back, x)}")
    else:
        print()
        print("no CUDA device in this build: x.to('cuda') would raise (floor 8 shows the message);")
        print("on a GPU machine this proof also prints torch.cuda.get_device_name(0) and the round trip")


if __name__ == "__main__":
    main()
