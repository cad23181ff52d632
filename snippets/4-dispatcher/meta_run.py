"""The meta device: run the one-page program, and a model twice the size of this machine's memory, with no data."""

from __future__ import annotations

import math
import os
import time

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, tensor_bytes


def program_shapes(device: str) -> dict[str, torch.Tensor]:
    """Run the one-page program's forward and backward on `device`; returns the tensors it produced."""
    torch.manual_seed(0)
    x = torch.randn(64, 784, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    model = torch.nn.Linear(784, 10, device=device)
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    loss.backward()
    assert model.weight.grad is not None
    return {"x": x, "logits": model(x), "loss": loss, "weight.grad": model.weight.grad}


WIDTH = 8192


def machine_memory() -> int | None:
    """Bytes of physical memory this machine has (POSIX `sysconf`), or None where it cannot tell."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or no such name
        return None
    return pages * size if pages > 0 and size > 0 else None


def depth_for(memory: int | None, width: int = WIDTH) -> int:
    """Layers of Linear(width, width) whose float32 parameters take twice `memory` (32 when it is unknown)."""
    if memory is None:
        return 32
    return max(1, math.ceil(2 * memory / (4 * (width * width + width))))


def big_model(width: int = WIDTH, depth: int = 32) -> torch.nn.Module:
    """A stack of `depth` square Linear layers, built on the meta device."""
    with torch.device("meta"):
        return torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(depth)])


def main() -> None:
    real, meta = program_shapes("cpu"), program_shapes("meta")
    # Printed for a phone's 46 columns: the shapes as a table, then each comparison in the table's order.
    print("The one-page program, on cpu and on meta:")
    print(f"  {'':<12} {'cpu':<10} meta")
    for name in real:
        print(f"  {name:<12} {tuple(real[name].shape)!s:<10} {tuple(meta[name].shape)}")
    print(f"  same shape: {', '.join(str(real[n].shape == meta[n].shape) for n in real)}")
    print(f"  meta data_ptr: {', '.join(str(meta[n].untyped_storage().data_ptr()) for n in real)}")
    try:
        meta["loss"].item()
    except RuntimeError as error:
        print("  meta loss.item() ->")
        print(f"  RuntimeError: {error}")
    print()

    memory = machine_memory()
    depth = depth_for(memory)
    start = time.perf_counter()
    model = big_model(WIDTH, depth)
    built = time.perf_counter() - start
    start = time.perf_counter()
    out = model(torch.empty(64, WIDTH, device="meta"))
    ran = time.perf_counter() - start
    params = list(model.parameters())
    count = sum(p.numel() for p in params)
    would_take = sum(tensor_bytes(p) for p in params)
    allocated = sum(1 for p in params if p.untyped_storage().data_ptr() != 0)
    if memory is not None:
        print(f"This machine's memory: {human_bytes(memory, binary=True)} (os.sysconf);")
        print("a model twice that size:")
    print(f"A {depth}-layer stack of Linear({WIDTH}, {WIDTH})")
    print(f"on the meta device: {count:,} parameters")
    print(f"  they would take {human_bytes(would_take, binary=True)} as float32;")
    print(f"  tensors with real memory: {allocated}")
    print(f"  built in {built * 1e3:.1f} ms, forward pass in {ran * 1e3:.1f} ms")
    print(f"  output {tuple(out.shape)} on {out.device}")
    claim(
        "on the meta device the program gives the same shapes and allocates nothing",
        held=all(meta[n].shape == real[n].shape and meta[n].untyped_storage().data_ptr() == 0 for n in real),
    )
    claim(
        "a model larger than this machine's memory builds and runs on meta without memory",
        held=memory is not None
        and would_take > memory
        and allocated == 0
        and out.device.type == "meta"
        and out.untyped_storage().data_ptr() == 0,
        detail=f"{human_bytes(would_take, binary=True)} never allocated, "
        + (f"against {human_bytes(memory, binary=True)} of memory" if memory is not None else "memory unknown"),
        applies=memory is not None,
        why_not="this system does not report its physical memory through os.sysconf",
    )


if __name__ == "__main__":
    main()
