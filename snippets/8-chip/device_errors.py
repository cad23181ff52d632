"""Which devices this build can see, and the real errors of reaching a missing device or mixing devices in one op."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device


def detection() -> list[tuple[str, object]]:
    """What torch reports about accelerators, expression by expression."""
    accelerator = getattr(torch, "accelerator", None)
    rows: list[tuple[str, object]] = [
        ("torch.cuda.is_available()", torch.cuda.is_available()),
        ("torch.version.cuda", torch.version.cuda),
        ("torch.cuda.device_count()", torch.cuda.device_count()),
        ("torch.backends.mps.is_built()", torch.backends.mps.is_built()),
        ("torch.backends.mps.is_available()", torch.backends.mps.is_available()),
    ]
    if accelerator is not None:
        rows.append(("torch.accelerator.current_accelerator()", accelerator.current_accelerator()))
    rows.append(("detect_device()", detect_device()))
    return rows


def attempts(device: torch.device) -> dict[str, Callable[[], object]]:
    """Operations that must fail on this build: each CUDA/MPS branch is real code for that device."""
    if device.type in {"cuda", "mps"}:
        kind = device.type
        return {
            f"torch.ones(3, device='{kind}') + torch.ones(3)": lambda: torch.ones(3, device=kind) + torch.ones(3),
            f"torch.nn.Linear(3, 2).to('{kind}')(torch.ones(1, 3))": lambda: torch.nn.Linear(3, 2).to(kind)(
                torch.ones(1, 3)
            ),
        }
    return {
        "torch.empty(3, device='cuda')": lambda: torch.empty(3, device="cuda"),
        "torch.ones(3).to('cuda')": lambda: torch.ones(3).to("cuda"),
        "torch.ones(3, device='meta') + torch.ones(3)": lambda: torch.ones(3, device="meta") + torch.ones(3),
    }


def errors(device: torch.device | None = None) -> list[tuple[str, str, str]]:
    """(expression, exception type, message) for each attempt; an attempt that succeeds is an error here."""
    device = device or detect_device()
    found = []
    for expression, attempt in attempts(device).items():
        try:
            attempt()
        except (RuntimeError, AssertionError) as error:
            found.append((expression, type(error).__name__, str(error).splitlines()[0]))
        else:
            raise AssertionError(f"{expression} did not raise")
    return found


def scalar_exception(device: torch.device | None = None) -> str:
    """A 0-d CPU tensor may join an op on another device: it is read as a plain number."""
    device = device or detect_device()
    other = device if device.type != "cpu" else torch.device("meta")
    result = torch.ones(3, device=other) + torch.tensor(2.0)
    return f"torch.ones(3, device='{other.type}') + torch.tensor(2.0) works: result on {result.device}"


def main() -> None:
    for expression, value in detection():
        print(f"{expression:<42} {value}")
    device = detect_device()
    print()
    if device.type == "cpu":
        print("CPU-only build. Reaching for CUDA, and mixing two devices (cpu and meta) in one op:")
    else:
        print(f"{device.type} build. Mixing the {device.type} device and the CPU in one op:")
    found = errors(device)
    for expression, kind, message in found:
        print(f"  {expression}")
        print(f"    -> {kind}: {message}")
    print(scalar_exception(device))
    mixing = [(kind, message) for expression, kind, message in found if "+" in expression]
    claim(
        "an op on tensors of two devices raises a RuntimeError that names the devices",
        held=bool(mixing) and all(kind == "RuntimeError" and "device" in message for kind, message in mixing),
    )
    claim("a 0-dim CPU tensor may join an op on another device", held="works" in scalar_exception(device))
    creating = [(kind, message) for expression, kind, message in found if "cuda" in expression]
    claim(
        "a CPU-only build refuses CUDA: Torch not compiled with CUDA",
        held=bool(creating)
        and all(kind == "AssertionError" and "not compiled with CUDA" in message for kind, message in creating),
        applies=device.type == "cpu",
        why_not=f"this machine runs torch on {device.type}, so there is no CPU-only refusal to see",
    )


if __name__ == "__main__":
    main()
