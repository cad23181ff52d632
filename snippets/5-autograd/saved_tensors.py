"""What a small MLP's forward pass saves for backward, counted with saved_tensors_hooks, and how it grows with batch."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes
from pytorch_floors.plot import Series, line_chart, show

BATCHES = [16, 64, 256, 1024]


@dataclass(frozen=True)
class Saved:
    """One tensor handed to the pack hook while the forward pass ran."""

    node: str  # the backward node that will use it
    shape: tuple[int, ...]
    dtype: torch.dtype
    nbytes: int
    storage: int  # address of the storage, to count shared storages once
    owner: str  # "parameter <name>", "input x", "target y" or "intermediate"


def make_mlp() -> torch.nn.Module:
    """784 → 256 → ReLU → 10: a small multilayer perceptron for the one-page program's data."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def graph_nodes(loss: torch.Tensor) -> list[object]:
    """Every backward node behind `loss`, each once, depth first from `loss.grad_fn`.

    Each node is held, not only its id: torch may make a node's Python object afresh each time it is
    reached, and give a freed one's id to another node's object.
    """
    seen: dict[int, object] = {}
    stack = [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        stack.extend(next_fn for next_fn, _ in reversed(fn.next_functions))
    return list(seen.values())


def record_forward(model: torch.nn.Module, batch: int) -> list[Saved]:
    """Run forward + loss once under a pack hook; return every tensor autograd saved, named by its node.

    The pack hook sees each tensor as it is saved; walking the finished graph afterwards
    tells which backward node holds it and under which `_saved_*` attribute.
    """
    x = torch.randn(batch, 784)
    y = torch.randint(0, 10, (batch,))
    params = {p.untyped_storage().data_ptr(): name for name, p in model.named_parameters()}
    packed: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        packed.append(tensor)
        return tensor

    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = F.cross_entropy(model(x), y)

    def owner(address: int) -> str:
        if address in params:
            return f"parameter {params[address]}"
        if address == x.untyped_storage().data_ptr():
            return "input x"
        if address == y.untyped_storage().data_ptr():
            return "target y"
        return "intermediate"

    saved: list[Saved] = []
    for fn in graph_nodes(loss):
        for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
            value = getattr(fn, attr)
            if isinstance(value, torch.Tensor):
                address = value.untyped_storage().data_ptr()
                saved.append(
                    Saved(
                        f"{type(fn).__name__}.{attr.removeprefix('_saved_')}",
                        tuple(value.shape),
                        value.dtype,
                        value.untyped_storage().nbytes(),
                        address,
                        owner(address),
                    )
                )
    assert len(saved) == len(packed), (len(saved), len(packed))  # the hook and the graph agree
    return saved


def distinct_bytes(saved: list[Saved], *, parameters: bool) -> int:
    """Bytes of distinct storages among the saved tensors, either parameters only or everything else."""
    seen: dict[int, int] = {}
    for item in saved:
        if item.owner.startswith("parameter") == parameters:
            seen[item.storage] = item.nbytes
    return sum(seen.values())


def growth(batches: list[int] | None = None) -> list[tuple[int, int, int, int]]:
    """`(batch, saved references, parameter bytes, batch-dependent bytes)` for each batch size."""
    model = make_mlp()
    rows = []
    for batch in batches or BATCHES:
        saved = record_forward(model, batch)
        rows.append(
            (batch, len(saved), distinct_bytes(saved, parameters=True), distinct_bytes(saved, parameters=False))
        )
    return rows


def main() -> None:
    model = make_mlp()
    saved = record_forward(model, 64)
    lines = ["Linear(784, 256) -> ReLU -> Linear(256, 10) -> cross_entropy; batch 64", ""]
    # Printed for a phone's 46 columns: each saved tensor's node on a line of its own, its shape, dtype, bytes
    # and owner under it; the growth table's headers on two lines, its columns narrowed.
    lines += ["saved by", f"  {'shape':<9} {'dtype':<7} {'bytes':>7} what it is"]
    first_seen: set[int] = set()
    for item in saved:
        again = " (again)" if item.storage in first_seen else ""
        first_seen.add(item.storage)
        dtype = str(item.dtype).removeprefix("torch.")
        lines.append(f"{item.node}{again}")
        lines.append(f"  {item.shape!s:<9} {dtype:<7} {item.nbytes:>7,} {item.owner}")
    lines.append("")
    lines.append(f"{len(saved)} saved references, {len(first_seen)} distinct storages:")
    lines.append(f"  {human_bytes(distinct_bytes(saved, parameters=False), binary=True)} that depend on the batch")
    lines.append(
        f"  {human_bytes(distinct_bytes(saved, parameters=True), binary=True)} of parameters (held by the model anyway)"
    )
    lines.append("")
    rows = growth()
    lines.append(f"{'':>5}  {'':>4}  {'':>9}  {'batch-':>10}  {'per':>9}")
    lines.append(f"{'batch':>5}  {'refs':>4}  {'params':>9}  {'dependent':>10}  {'sample':>9}")
    for batch, refs, param_bytes, act_bytes in rows:
        lines.append(
            f"{batch:>5}  {refs:>4}  {human_bytes(param_bytes, binary=True):>9}  "
            f"{human_bytes(act_bytes, binary=True):>10}  {act_bytes / batch:>7,.0f} B"
        )
    (b0, _, _, a0), (b1, _, _, a1) = rows[0], rows[-1]
    lines.append("")
    lines.append(f"batch {b0} -> {b1} ({b1 // b0}x): batch-dependent saved bytes grow {a1 / a0:.2f}x,")
    lines.append("the parameter part stays the same")
    chart = line_chart(
        [
            Series("batch-dependent (inputs, activations)", [r[0] for r in rows], [r[3] / 2**20 for r in rows]),
            Series("parameters", [r[0] for r in rows], [r[2] / 2**20 for r in rows], dashed=True),
        ],
        title="Bytes saved for backward by the MLP's forward pass (float32)",
        x_label="batch size (samples)",
        y_label="saved bytes (MiB)",
        description="The inputs and activations autograd saves grow in proportion to the batch size; "
        "the saved parameter (a view of a weight) does not.",
    )
    show(chart, text="\n".join(lines), name="saved_tensors")
    claim("the same tensors are saved whatever the batch", held=len({r[1] for r in rows}) == 1)
    claim(
        "the saved parameter part does not grow with the batch", held=len({r[2] for r in rows}) == 1 and rows[0][2] > 0
    )
    claim(
        "the batch-dependent part grows in proportion to the batch",
        held=abs((a1 / a0) / (b1 / b0) - 1) < 0.01,
        detail=f"{a1 / a0:.2f}x for {b1 // b0}x the batch",
    )


if __name__ == "__main__":
    main()
