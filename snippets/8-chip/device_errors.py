"""Which devices this build can see, and the real errors of reaching a missing device or mixing devices in one op."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device

# The three setups a reader may have, told apart by facts torch reports before anything fails.
NO_CUDA_BUILD = "a build without CUDA"
NO_USABLE_GPU = "a CUDA build with no usable NVIDIA driver or GPU"
USABLE_GPU = "a CUDA build with a GPU"

REACH = {
    "torch.empty(3, device='cuda')": lambda: torch.empty(3, device="cuda"),
    "torch.ones(3).to('cuda')": lambda: torch.ones(3).to("cuda"),
}
"""Two ways of reaching for CUDA: each refuses, or makes a tensor on the GPU."""


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


def setup(cuda_version: str | None, hip_version: str | None, available: bool) -> str:
    """Which of the three setups this is, from torch.version.cuda and .hip and torch.cuda.is_available().

    A build without CUDA has no CUDA version (a ROCm build drives AMD GPUs through `torch.cuda`, so its
    HIP version counts as one); a CUDA build is usable only where a driver and a GPU answer.
    """
    if cuda_version is None and hip_version is None:
        return NO_CUDA_BUILD
    return USABLE_GPU if available else NO_USABLE_GPU


def this_setup() -> str:
    """The setup of this process."""
    return setup(torch.version.cuda, getattr(torch.version, "hip", None), torch.cuda.is_available())


def reach_cuda() -> list[tuple[str, str, str]]:
    """(expression, outcome, message) for each way of reaching CUDA: the exception's type and first line, or `made`."""
    found = []
    for expression, attempt in REACH.items():
        try:
            tensor = attempt()
        except (RuntimeError, AssertionError) as error:
            found.append((expression, type(error).__name__, str(error).splitlines()[0]))
        else:
            found.append((expression, "made", f"a tensor on {tensor.device}"))
    return found


@dataclass(frozen=True)
class Outcome:
    """One of the page's claims about reaching CUDA, judged on what one setup's attempts did."""

    statement: str
    held: bool
    applies: bool
    why_not: str
    detail: str


def cuda_outcomes(kind: str, reached: list[tuple[str, str, str]]) -> list[Outcome]:
    """The three claims about reaching CUDA, one per setup: the one of `kind` applies, the others say why not.

    The messages: a build without CUDA stops in `torch.cuda._lazy_init` (torch/cuda/__init__.py), which
    raises `AssertionError("Torch not compiled with CUDA enabled")`; a CUDA build passes that check and
    stops where the driver is asked for a device (`torch._C._cuda_init()`), with a RuntimeError that says
    what is missing: "Found no NVIDIA driver on your system" where no driver is installed.
    """
    results = [(outcome, message) for _, outcome, message in reached]
    not_compiled = bool(results) and all(
        outcome == "AssertionError" and "not compiled with CUDA" in message for outcome, message in results
    )
    names_what_is_missing = bool(results) and all(
        outcome == "RuntimeError" and ("driver" in message or "GPU" in message) for outcome, message in results
    )
    made = bool(results) and all(outcome == "made" and "cuda" in message for outcome, message in results)
    detail = "; ".join(
        sorted({message if outcome == "made" else f"{outcome}: {message}" for outcome, message in results})
    )
    statements = {
        NO_CUDA_BUILD: "a build without CUDA refuses CUDA: Torch not compiled with CUDA",
        NO_USABLE_GPU: "a CUDA build with no usable NVIDIA driver or GPU refuses CUDA with a RuntimeError "
        "naming what is missing",
        USABLE_GPU: "a CUDA build with a GPU makes the same tensors on it",
    }
    held = {NO_CUDA_BUILD: not_compiled, NO_USABLE_GPU: names_what_is_missing, USABLE_GPU: made}
    return [
        Outcome(statement, held[case], kind == case, f"this is {kind}, not {case}", detail if kind == case else "")
        for case, statement in statements.items()
    ]


def mixing_attempts(device: torch.device) -> dict[str, Callable[[], object]]:
    """Ops mixing two devices, which must fail: the accelerator and the CPU, or the meta device and the CPU."""
    if device.type in {"cuda", "mps"}:
        kind = device.type
        return {
            f"torch.ones(3, device='{kind}') + torch.ones(3)": lambda: torch.ones(3, device=kind) + torch.ones(3),
            f"torch.nn.Linear(3, 2).to('{kind}')(torch.ones(1, 3))": lambda: torch.nn.Linear(3, 2).to(kind)(
                torch.ones(1, 3)
            ),
        }
    return {"torch.ones(3, device='meta') + torch.ones(3)": lambda: torch.ones(3, device="meta") + torch.ones(3)}


def errors(device: torch.device | None = None) -> list[tuple[str, str, str]]:
    """(expression, exception type, message) for each mixing attempt; an attempt that succeeds is an error here."""
    device = device or detect_device()
    found = []
    for expression, attempt in mixing_attempts(device).items():
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
    kind = this_setup()
    print()
    print(f"This is {kind}. Reaching for CUDA:")
    reached = reach_cuda()
    for expression, outcome, message in reached:
        print(f"  {expression}")
        print(f"    -> {message}" if outcome == "made" else f"    -> {outcome}: {message}")
    mixed = "the meta device and the CPU" if device.type == "cpu" else f"the {device.type} device and the CPU"
    print(f"Mixing {mixed} in one op:")
    found = errors(device)
    for expression, error, message in found:
        print(f"  {expression}")
        print(f"    -> {error}: {message}")
    print(scalar_exception(device))
    claim(
        "an op on tensors of two devices raises a RuntimeError that names the devices",
        held=bool(found) and all(error == "RuntimeError" and "device" in message for _, error, message in found),
    )
    claim("a 0-dim CPU tensor may join an op on another device", held="works" in scalar_exception(device))
    for outcome in cuda_outcomes(kind, reached):
        claim(outcome.statement, outcome.held, outcome.detail, applies=outcome.applies, why_not=outcome.why_not)


if __name__ == "__main__":
    main()
