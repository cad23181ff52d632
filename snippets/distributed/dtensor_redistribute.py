"""DTensor: Shard, Replicate, Partial; the collective each redistribute implies; what a sharded matmul sends."""

from __future__ import annotations

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.debug import CommDebugMode

from pytorch_floors.claims import claim
from pytorch_floors.ranks import run_ranks


def counted(action) -> tuple[object, dict[str, int]]:  # type: ignore[no-untyped-def]
    """What `action()` returned and the collectives it issued, by operator name (CommDebugMode)."""
    with CommDebugMode() as comm:
        result = action()
    return result, {str(op).split(".")[-1]: n for op, n in comm.get_comm_counts().items()}


def explore(rank: int, world_size: int) -> dict[str, object]:
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)
    a, b = torch.randn(8, 6), torch.randn(6, 4)
    rows = distribute_tensor(a, mesh, [Shard(0)])
    seen: dict[str, object] = {
        "local": f"{tuple(rows.to_local().shape)} of {tuple(rows.shape)}",
        "placements": str(rows.placements),
    }
    # Partial: each rank holds a summand; the tensor is their sum, until something needs it whole.
    partial = DTensor.from_local(torch.full((2, 2), float(rank + 1)), mesh, [Partial()])
    # distribute_tensor itself sends rank 0's data to the others (a broadcast), so every rank starts alike.
    replicated, seen["distribute_tensor(Replicate)"] = counted(lambda: distribute_tensor(a, mesh, [Replicate()]))
    whole_b = distribute_tensor(b, mesh, [Replicate()])
    cases = {
        "Shard(0) -> Replicate": lambda: rows.redistribute(mesh, [Replicate()]),
        "Replicate -> Shard(0)": lambda: replicated.redistribute(mesh, [Shard(0)]),
        "Partial -> Replicate": lambda: partial.redistribute(mesh, [Replicate()]),
        "Partial -> Shard(0)": lambda: partial.redistribute(mesh, [Shard(0)]),
    }
    for name, action in cases.items():
        seen[name] = counted(action)[1]
    seen["partial sum"] = partial.full_tensor()[0, 0].item()
    # Matmuls: rows of A times a replicated B; A's columns times B's rows (the inner dimension split).
    by_rows, comms = counted(lambda: rows @ whole_b)
    seen["A Shard(0) @ B Replicate"] = (str(by_rows.placements), comms)
    cols, inner = distribute_tensor(a, mesh, [Shard(1)]), distribute_tensor(b, mesh, [Shard(0)])
    by_inner, comms = counted(lambda: cols @ inner)
    seen["A Shard(1) @ B Shard(0)"] = (str(by_inner.placements), comms)
    whole, comms = counted(by_inner.full_tensor)
    seen["its full_tensor()"] = ("plain tensor", comms)
    seen["right"] = torch.allclose(whole, a @ b, atol=1e-5)
    return seen


def main() -> None:
    seen = run_ranks(explore, 2)[0]
    print(f"A (8x6) distributed with {seen['placements']}: rank 0 holds {seen['local']}")
    print(f"a Partial tensor, rank 0 holding 1s and rank 1 2s, reads as their sum: {seen['partial sum']}")
    print(f"distribute_tensor(A, Replicate) on rank 0: {seen['distribute_tensor(Replicate)']}")
    print("redistribute, and the collectives CommDebugMode counted on rank 0:")
    for name in ("Shard(0) -> Replicate", "Replicate -> Shard(0)", "Partial -> Replicate", "Partial -> Shard(0)"):
        # Printed for a phone's 46 columns: what each step counted on the line under it.
        print(f"  {name}")
        print(f"    {seen[name] or 'none'}")
    print("matmuls on sharded operands:")
    for name in ("A Shard(1) @ B Shard(0)", "its full_tensor()", "A Shard(0) @ B Replicate"):
        placements, comms = seen[name]
        print(f"  {name}")
        print(f"    -> {placements}, {comms or 'no collective'}")
    claim(
        "Shard to Replicate is an all-gather, Partial to Replicate an all-reduce, Partial to Shard a reduce-scatter",
        held=set(seen["Shard(0) -> Replicate"]) == {"all_gather_into_tensor"}
        and set(seen["Partial -> Replicate"]) == {"all_reduce"}
        and set(seen["Partial -> Shard(0)"]) == {"reduce_scatter_tensor"},
    )
    claim(
        "Replicate to Shard sends nothing: each rank keeps its own slice",
        held=not seen["Replicate -> Shard(0)"],
    )
    claim(
        "distribute_tensor broadcasts rank 0's data; row-sharded A times a replicated B sends nothing",
        held=set(seen["distribute_tensor(Replicate)"]) == {"broadcast_"} and not seen["A Shard(0) @ B Replicate"][1],
    )
    claim(
        "splitting the inner dimension gives a Partial result with no collective, and reading it whole all-reduces",
        held="Partial" in seen["A Shard(1) @ B Shard(0)"][0]
        and not seen["A Shard(1) @ B Shard(0)"][1]
        and set(seen["its full_tensor()"][1]) == {"all_reduce"}
        and seen["right"],
    )


if __name__ == "__main__":
    main()
