"""Process groups: ranks meet through a TCPStore, init_process_group builds a gloo group, collectives are operators."""

from __future__ import annotations

import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim
from pytorch_floors.ranks import run_ranks


class OpLog(TorchDispatchMode):
    """Every operator the dispatcher runs while the mode is on, by name (floor 4's op log)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def meet(rank: int, world_size: int) -> dict[str, object]:
    """One rank: meet the others through the store the launcher opened, build the group, all-reduce once."""
    # The rendezvous by hand, as init_process_group's env:// does it: a client of the store on MASTER_PORT.
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False)
    store.set(f"hello/{rank}", str(os.getpid()))
    arrived = store.add("arrived", 1)  # an atomic counter every rank bumps once
    store.wait([f"hello/{peer}" for peer in range(world_size)], timedelta(seconds=30))
    peers = [int(store.get(f"hello/{peer}")) for peer in range(world_size)]

    dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size)
    world = dist.group.WORLD
    built = {
        "group": type(world).__name__,
        "backend": type(world._get_backend(torch.device("cpu"))).__name__,
        "store": type(dist.distributed_c10d._get_default_store()).__name__,
    }
    x = torch.full((4,), float(rank + 1))
    with OpLog() as log:
        dist.all_reduce(x)  # in place: every rank ends with the sum
        y = funcol.all_reduce(torch.ones(4), "sum", world)  # functional: a new tensor, the input untouched
        y = y + 0  # first use: waits for the collective
    dist.destroy_process_group()
    return {
        "rank": rank,
        "pids": peers,
        "arrived": arrived,
        "built": built,
        "sum": x.tolist(),
        "functional": y.tolist(),
        "ops": log.ops,
    }


def main() -> None:
    world_size = 2
    ranks = run_ranks(meet, world_size, init=False)
    print(f"{world_size} ranks met through a TCPStore; each wrote its pid and read the others':")
    for seen in ranks:
        print(f"  rank {seen['rank']}: pids {seen['pids']}, arrival number {seen['arrived']}")
    built = ranks[0]["built"]
    print(f"init_process_group built: a {built['group']} over a {built['backend']}, its store a {built['store']}")
    print(f"after all_reduce every rank holds {ranks[0]['sum']} (1 + 2)")
    print("operators the dispatcher ran on rank 0:")
    for op in ranks[0]["ops"]:
        print(f"  {op}")
    schema = torch.ops.c10d.allreduce_.default._schema
    print(f"c10d::allreduce_ schema: {str(schema)[:110]}…")
    claim(
        "every rank sees the same pids and a different arrival number",
        held=all(seen["pids"] == ranks[0]["pids"] for seen in ranks)
        and sorted(seen["arrived"] for seen in ranks) == list(range(1, world_size + 1)),
        detail=f"arrivals {[seen['arrived'] for seen in ranks]}",
    )
    claim(
        "dist.all_reduce reaches the dispatcher as the operator c10d.allreduce_",
        held="c10d.allreduce_.default" in ranks[0]["ops"],
    )
    claim(
        "the functional all_reduce is another operator, _c10d_functional.all_reduce",
        held="_c10d_functional.all_reduce.default" in ranks[0]["ops"],
    )


if __name__ == "__main__":
    main()
