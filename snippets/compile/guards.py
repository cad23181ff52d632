"""Guards and recompiles: what a compiled graph checks before each call, and what makes Dynamo compile again."""

from __future__ import annotations

import torch
import torch._dynamo
from torch._dynamo.utils import counters, guard_failures

from pytorch_floors.claims import claim


def scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    """A tensor and a Python float: Dynamo treats the two kinds of argument differently."""
    return (x * scale + 1).relu()


CALLS = (
    ("8 float32 elements, scale 2.0 (the first call)", 8, torch.float32, 2.0),
    ("the same in float64", 8, torch.float64, 2.0),
    ("16 float32 elements", 16, torch.float32, 2.0),
    ("32 float32 elements", 32, torch.float32, 2.0),
    ("32 float32 elements, scale 3.0", 32, torch.float32, 3.0),
    ("32 float32 elements, scale 4.0", 32, torch.float32, 4.0),
)
"""Each call of the compiled function: what changes from the calls before it."""


def failures() -> list[str]:
    """Every guard failure Dynamo has recorded, oldest first: its first line, without the source comment."""
    lines = (str(reason).splitlines()[0] for reasons in guard_failures.values() for reason in reasons)
    return [" ".join(line.split("#", 1)[0].split()) for line in lines]


def run() -> list[tuple[str, int, list[str]]]:
    """Call the compiled function as `CALLS` says; for each call, the graphs it compiled and the guards that failed."""
    torch._dynamo.reset()
    compiled = torch.compile(scaled, backend="eager")  # Dynamo's part only: no code generation to wait for
    rows = []
    for label, n, dtype, scale in CALLS:
        graphs, seen = counters["stats"]["unique_graphs"], len(failures())
        compiled(torch.ones(n, dtype=dtype), scale)
        rows.append((label, counters["stats"]["unique_graphs"] - graphs, failures()[seen:]))
    torch._dynamo.reset()
    return rows


def main() -> None:
    explained = torch._dynamo.explain(scaled)(torch.ones(8), 2.0)
    kinds: dict[str, list[str]] = {}
    for guard in explained.out_guards:
        kinds.setdefault(guard.create_fn_name(), []).append(guard.name)
    print(f"the first graph is guarded by {len(explained.out_guards)} checks; by kind:")
    for kind, names in sorted(kinds.items()):
        shown = ", ".join(name for name in names if name)[:60]
        print(f"  {kind:<28} {shown}")
    print(f"\nrecompile limit per function: {torch._dynamo.config.recompile_limit} graphs")
    rows = run()
    print("\neach call, the graphs it compiled, and the guards that failed (graph number: the check), newest first:")
    for label, new, failed in rows:
        print(f"  {label}: {new} new graph{'s' if new != 1 else ''}")
        for reason in failed:
            print(f"      {reason}")
    kind_of = {guard.name: guard.create_fn_name() for guard in explained.out_guards}
    tensor, number = kind_of.get("L['x']"), kind_of.get("L['scale']")  # Dynamo's names for the frame's locals
    claim(
        "the tensor is guarded by its metadata and the Python float by its value",
        held=tensor == "TENSOR_MATCH" and number == "CONSTANT_MATCH",
        detail=f"x: {tensor}, scale: {number}",
    )
    (_, first, _), (_, dtype_new, dtype_failed), (_, size_new, size_failed), (_, third_new, _), *scales = rows
    claim(
        "a new dtype fails the tensor's guard and compiles a second graph",
        held=first == 1 and dtype_new == 1 and any("dtype" in reason for reason in dtype_failed),
        detail=f"{dtype_new} new graph, {dtype_failed[:1]}",
    )
    claim(
        "a new size compiles once more, a graph for any size: a third size compiles nothing",
        held=size_new == 1 and any("size mismatch" in reason for reason in size_failed) and third_new == 0,
        detail=f"{size_new} graph for the second size, {third_new} for the third",
    )
    (_, scale_new, scale_failed), (_, third_scale_new, _) = scales
    claim(
        "a float is compiled in as a constant at first: a new value compiles once more, then any value runs",
        held=scale_new == 1 and any("scale ==" in reason for reason in scale_failed) and third_scale_new == 0,
        detail=f"{scale_new} graph for the second value, failing "
        f"{next((reason for reason in scale_failed if 'scale' in reason), 'no guard on scale')!r}; "
        f"{third_scale_new} for the third",
    )


if __name__ == "__main__":
    main()
