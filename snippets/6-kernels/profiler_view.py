"""The profiler's view of matmul and nn.Linear: the aten ops underneath each call (and the GPU kernels, on CUDA)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """The profiler's native library logs start/stop lines on file descriptor 2; keep them off the page."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            os.dup2(sink.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def profile_call(fn: Callable[[], object], device: torch.device) -> Any:
    """Profile one call of `fn` (after a warm-up call) and return the profiler."""
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    fn()
    with _quiet_native_stderr(), profile(activities=activities) as prof:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
    return prof


def op_tree(prof: Any) -> list[tuple[int, str]]:
    """`(depth, name)` of every CPU-side event, parents before children, in the order they ran."""
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    rows: list[tuple[int, str]] = []

    def visit(event: Any, depth: int) -> None:
        rows.append((depth, event.name))
        for child in sorted(event.cpu_children, key=lambda e: e.time_range.start):
            visit(child, depth + 1)

    for event in events:
        if event.cpu_parent is None and event.device_type == torch.autograd.DeviceType.CPU:
            visit(event, 0)
    return rows


def gpu_kernels(prof: Any) -> list[str]:
    """Names of the kernels that ran on the GPU during the profiled call (empty on the CPU)."""
    names = []
    for event in prof.events():
        names.extend(kernel.name for kernel in getattr(event, "kernels", []))
    return names


def calls(device: torch.device) -> dict[str, Callable[[], object]]:
    """The calls to look at: a bare matmul, the one-page program's Linear, and its backward."""
    torch.manual_seed(0)
    x = torch.randn(64, 784, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    model = torch.nn.Linear(784, 10).to(device)
    w = torch.randn(784, 10, device=device)

    def backward() -> None:
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()

    # Printed for a phone's 46 columns: a call's comment on the line above it, as code puts a long one.
    return {
        "# x: 64 x 784, w: 784 x 10\ntorch.matmul(x, w)": lambda: torch.matmul(x, w),
        "# nn.Linear(784, 10)\nmodel(x)": lambda: model(x),
        "# a 3-d input\nmodel(x.view(8, 8, 784))": lambda: model(x.view(8, 8, 784)),
        "cross_entropy(model(x), y).backward()": backward,
    }


def main() -> None:
    device = detect_device()
    trees = {}
    for label, fn in calls(device).items():
        prof = profile_call(fn, device)
        print(label)
        trees[label.splitlines()[-1].split()[0]] = [name for _, name in op_tree(prof)]
        for depth, name in op_tree(prof):
            print("    " + "  " * depth + name)
        kernels = gpu_kernels(prof)
        if kernels:
            print("    GPU kernels: " + ", ".join(k[:60] for k in kernels))
        print()
    if device.type == "cpu":
        print("this build has no GPU; on a CUDA machine this proof also lists the GPU")
        print("kernels each aten op launched")
    claim(
        "model(x) runs aten::linear, which runs aten::addmm",
        held={"aten::linear", "aten::addmm"} <= set(trees["model(x)"]),
    )
    claim("torch.matmul lands on aten::mm", held="aten::mm" in trees["torch.matmul(x,"])
    backward = trees["cross_entropy(model(x),"]
    claim(
        "backward runs the loss's node first, then AddmmBackward0, which calls aten::mm",
        held="aten::mm" in backward
        and "AddmmBackward0" in backward
        and backward.index("NllLossBackward0") < backward.index("AddmmBackward0"),
    )


if __name__ == "__main__":
    main()
