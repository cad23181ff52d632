"""Account for a large matrix, and a model larger than this machine's memory, on the meta device, using no memory."""

from __future__ import annotations

import os
import resource
import sys

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, storage_bytes, tensor_bytes

# One feed-forward block of a GPT-3-sized transformer: d_model = 12288, hidden = 4 × d_model.
D_MODEL = 12288
HIDDEN = 4 * D_MODEL


def resident_bytes() -> int:
    """Resident set size of this process now (Linux), or its peak elsewhere (a coarser signal)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def machine_memory() -> int | None:
    """Bytes of physical memory this machine has (POSIX `sysconf`), or None where it cannot tell."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or no such name
        return None
    return pages * size if pages > 0 and size > 0 else None


def blocks_for(memory: int | None, d_model: int = D_MODEL, hidden: int = HIDDEN) -> int:
    """Feed-forward blocks whose float32 parameters take more than twice `memory` (4 when it is unknown)."""
    if memory is None:
        return 4
    return max(1, 2 * memory // (4 * formula_parameters(1, d_model, hidden)) + 1)


def big_matrix(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The first weight of one feed-forward block, 12288 × 49152, on the meta device."""
    return torch.empty(D_MODEL, HIDDEN, dtype=dtype, device="meta")


def build_model(blocks: int, d_model: int = D_MODEL, hidden: int = HIDDEN) -> torch.nn.Sequential:
    """A stack of feed-forward blocks (Linear, GELU, Linear) whose parameters live on the meta device."""
    layers: list[torch.nn.Module] = []
    for _ in range(blocks):
        layers += [
            torch.nn.Linear(d_model, hidden, device="meta"),
            torch.nn.GELU(),
            torch.nn.Linear(hidden, d_model, device="meta"),
        ]
    return torch.nn.Sequential(*layers)


def formula_parameters(blocks: int, d_model: int = D_MODEL, hidden: int = HIDDEN) -> int:
    """Parameters of `build_model` by hand: two weight matrices and two bias vectors per block."""
    return blocks * (2 * d_model * hidden + hidden + d_model)


def account(blocks: int, d_model: int = D_MODEL, hidden: int = HIDDEN) -> dict[str, int]:
    """Build the model on meta and return its counted parameters, bytes, and the process's RSS change."""
    before = resident_bytes()
    model = build_model(blocks, d_model, hidden)
    after = resident_bytes()
    params = sum(p.numel() for p in model.parameters())
    return {
        "parameters": params,
        "formula": formula_parameters(blocks, d_model, hidden),
        "bytes": sum(tensor_bytes(p) for p in model.parameters()),
        "rss_growth": after - before,
        "devices": len({p.device.type for p in model.parameters()}),
    }


def main() -> None:
    w = big_matrix()
    print(f"w = torch.empty({D_MODEL}, {HIDDEN}, device='meta')")
    # Printed for a phone's 46 columns: a value or an aside on its own line where the line would run on.
    print("  numel × element_size")
    print(f"  = {w.numel()} × {w.element_size()} = {tensor_bytes(w)} bytes")
    print(f"  = {human_bytes(tensor_bytes(w))} = {human_bytes(tensor_bytes(w), binary=True)}")
    print(f"  storage nbytes {storage_bytes(w)}, data_ptr {w.data_ptr()}")
    print("  (no address: nothing was allocated)")
    half = big_matrix(torch.bfloat16)
    print(f"  the same matrix in bfloat16: {human_bytes(tensor_bytes(half))}")
    print()
    memory = machine_memory()
    blocks = blocks_for(memory)
    result = account(blocks)
    if memory is not None:
        print(f"This machine's memory (os.sysconf): {human_bytes(memory)};")
        print("a model over twice that size:")
    print(f"A stack of {blocks} feed-forward blocks,")
    print(f"  Linear({D_MODEL}, {HIDDEN}) + GELU")
    print(f"  + Linear({HIDDEN}, {D_MODEL}):")
    print(f"  parameters counted on meta: {result['parameters']}")
    print(f"  (formula: {result['formula']})")
    print(f"  float32 bytes accounted:    {result['bytes']}")
    print(f"  = {human_bytes(result['bytes'])}")
    print(f"  process RSS growth while building it: {human_bytes(result['rss_growth'])}")
    print("  GPT-3 has 96 such blocks:")
    print(f"  {human_bytes(96 * result['bytes'] / blocks)} of float32 feed-forward weights")
    claim("a meta tensor has a size but no memory", held=w.device.type == "meta" and w.data_ptr() == 0)
    claim(
        "counting parameters on meta gives the formula's count, 4 bytes each",
        held=result["parameters"] == result["formula"] and result["bytes"] == 4 * result["parameters"],
    )
    claim(
        "building it on meta allocates almost nothing",
        held=result["rss_growth"] < result["bytes"] / 100,
        detail=f"{human_bytes(result['rss_growth'])} for {human_bytes(result['bytes'])}",
    )
    claim(
        "a model larger than this machine's memory is built and counted on meta",
        held=memory is not None and result["bytes"] > memory and result["devices"] == 1,
        detail=f"{human_bytes(result['bytes'])} against {human_bytes(memory)} of memory" if memory else "",
        applies=memory is not None,
        why_not="this system does not report its physical memory through os.sysconf",
    )


if __name__ == "__main__":
    main()
