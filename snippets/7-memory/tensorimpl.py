"""Inside a tensor: TensorImpls over a counted StorageImpl, AutogradMeta on demand, its PyObject, symbolic sizes."""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from pytorch_floors.claims import claim, not_applicable


def use_count(tensor: torch.Tensor) -> int | None:
    """The C++ reference count of the tensor's StorageImpl, or None where this torch does not expose it.

    `torch._C._storage_Use_Count` is private: it reads `StorageImpl`'s intrusive count, which every
    `TensorImpl` over the storage holds one of (and so does the storage's Python object while it lives).
    """
    count = getattr(torch._C, "_storage_Use_Count", None)
    return None if count is None else int(count(tensor.untyped_storage()._cdata))


def storage_sharing() -> dict[str, list[int | None]]:
    """Three views of one tensor, each one's record printed, and the storage's use count as tensors come and go.

    Returns:
        `views`: the StorageImpl's use count with the base alone, with three views, and after the
        views are deleted. `base`: the count with one view, and after `del` of the base, whose
        TensorImpl the view keeps alive as its `_base`. `python`: `sys.getrefcount` of the storage's
        Python object before and after the views.
    """
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).clone()  # a clone: no `_base` of its own
    wrapper = x.untyped_storage()  # the storage's Python object, held here so its reference count can be read
    python, views = [sys.getrefcount(wrapper)], [use_count(x)]
    made = {"x.t()": x.t(), "x[1:]": x[1:], "x.view(12)": x.view(12)}
    # Printed for a phone's 46 columns: the record's fields as a table's columns, the last one's meaning above it.
    print("  (same: the tensor's storage is x's StorageImpl)")
    print(f"  {'tensor':<11} {'shape':<7} {'stride':<7} {'offset':>6}  same")
    for name, tensor in {"x": x, **made}.items():
        same = tensor.untyped_storage()._cdata == wrapper._cdata
        print(
            f"  {name:<11} {tuple(tensor.shape)!s:<7} {tuple(tensor.stride())!s:<7}"
            f" {tensor.storage_offset():>6}  {same}"
        )
    del tensor
    views.append(use_count(x))
    python.append(sys.getrefcount(wrapper))
    del made
    views.append(use_count(x))
    tail = x[1:]
    base = [use_count(x)]
    del x
    base.append(use_count(tail))
    print(f"  after del x, x[1:]._base still has shape {tuple(tail._base.shape) if tail._base is not None else None}")
    return {"views": views, "base": base, "python": python}


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def heap_bytes() -> Callable[[], int] | None:
    """A reader of the bytes the C library's allocator has handed out, or None (glibc's `mallinfo2` only)."""
    try:
        libc = ctypes.CDLL(None)
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _MallInfo2
    return lambda: int(mallinfo2().uordblks)


def bytes_per_tensor(
    tensors: list[torch.Tensor], action: Callable[[torch.Tensor], object], used: Callable[[], int]
) -> float:
    """C heap bytes that `action` leaves allocated, per tensor, applied once to each of `tensors`."""
    gc.collect()
    before = used()
    for tensor in tensors:
        action(tensor)
    gc.collect()
    return (used() - before) / len(tensors)


def autograd_meta(count: int = 20_000) -> dict[str, float] | None:
    """Heap bytes per tensor for reading autograd's fields, then switching `requires_grad` on and off again."""
    used = heap_bytes()
    if used is None:
        return None
    tensors = [torch.zeros(4) for _ in range(count)]
    return {
        "read .grad and .requires_grad": bytes_per_tensor(tensors, lambda t: (t.grad, t.requires_grad), used),
        "requires_grad_(False) on a fresh tensor": bytes_per_tensor(tensors, lambda t: t.requires_grad_(False), used),
        "requires_grad_(True)": bytes_per_tensor(tensors, lambda t: t.requires_grad_(True), used),
        "requires_grad_(False) again": bytes_per_tensor(tensors, lambda t: t.requires_grad_(False), used),
    }


NOT_EXPOSED = "not exposed by this torch"


def view_record() -> dict[str, object]:
    """Where `_base` lives: an int64 view made under no_grad still carries autograd's view record."""
    base = torch.arange(6)
    with torch.no_grad():
        view = base[2:]
    creation = getattr(torch._C._autograd, "_get_creation_meta", None)

    def record(t: torch.Tensor) -> str:
        if creation is None:
            return NOT_EXPOSED
        try:
            return str(creation(t))
        except RuntimeError:
            return "none"

    return {"base": view._base is base, "view record": record(view), "base record": record(base)}


def python_object_kept() -> dict[str, bool]:
    """Drop every Python name of a leaf that the autograd graph still holds, then reach it through the graph.

    Returns:
        `same object`: the tensor that comes back is the very Python object (same `id`); `attribute
        kept`: an attribute set on it before survives.
    """
    leaf = torch.ones(2, requires_grad=True)
    leaf.note = "set before del"  # type: ignore[attr-defined]  # a tensor takes attributes like any object
    address = id(leaf)
    out = leaf * 2
    del leaf  # only C++ holds the TensorImpl now: the graph's AccumulateGrad node
    assert out.grad_fn is not None
    again = out.grad_fn.next_functions[0][0].variable
    return {"same object": id(again) == address, "attribute kept": getattr(again, "note", None) == "set before del"}


def symbolic_sizes() -> dict[str, object]:
    """What a tensor's sizes and strides are while `make_fx` traces with symbolic shapes.

    Returns:
        The size and stride types, whether the row stride is the column count's symbol, and the
        TensorImpl's own flag for symbolic sizes, for the traced tensor and an ordinary one.
    """
    seen: dict[str, object] = {}

    def traced(x: torch.Tensor) -> torch.Tensor:
        seen["sizes"] = tuple(type(size).__name__ for size in x.shape)
        seen["strides"] = tuple(type(stride).__name__ for stride in x.stride())
        seen["row stride is the column count"] = str(x.stride()[0]) == str(x.shape[1])
        seen["flag"] = x._has_symbolic_sizes_strides
        return x * 2

    make_fx(traced, tracing_mode="symbolic")(torch.ones(4, 3))
    seen["flag, ordinary tensor"] = torch.ones(4, 3)._has_symbolic_sizes_strides
    return seen


def main() -> None:
    print("x = arange(12.).reshape(3, 4).clone() and three views of it:")
    counts = storage_sharing()
    views, base, python = counts["views"], counts["base"], counts["python"]
    print(f"StorageImpl use count: {views[0]} with x alone, {views[1]} with three views, {views[2]} once they are gone")
    print(f"with one view x[1:]: {base[0]}; after del x: {base[1]} (the view's _base holds x's TensorImpl)")
    print(f"sys.getrefcount of the storage's Python object: {python[0]} before the views, {python[1]} with them")
    if None in views + base:
        why = "this torch has no torch._C._storage_Use_Count"
        not_applicable("each view adds one to its storage's use count, and deleting it takes the one away", why=why)
        not_applicable("a view keeps its base's TensorImpl alive: del x leaves the count as it was", why=why)
    else:
        claim(
            "each view adds one to its storage's use count, and deleting it takes the one away",
            held=views[1] == views[0] + 3 and views[2] == views[0],
            detail=f"counts {views[0]}, {views[1]}, {views[2]}",
        )
        claim(
            "a view keeps its base's TensorImpl alive: del x leaves the count as it was",
            held=base[0] == base[1],
            detail=f"{base[0]} before del x, {base[1]} after",
        )
    claim(
        "Python's reference count of the storage object does not see the views",
        held=python[0] == python[1],
        detail=f"{python[0]} before, {python[1]} with three views",
    )

    print("\nC heap bytes each step adds, per tensor, over 20,000 four-element tensors (each row: the change")
    print("that step left, not a total; the tensors themselves were allocated before the first row):")
    meta = autograd_meta()
    if meta is None:
        not_applicable(
            "an AutogradMeta is allocated only when requires_grad is first set, and then it stays",
            why="the C library here has no mallinfo2 (glibc's allocator counters)",
        )
    else:
        for action, per_tensor in meta.items():
            # Printed for a phone's 46 columns: the bytes first (the line above names the unit), then the step.
            print(f"{per_tensor:>5.1f}  {action}")
        reads, off, on, again = meta.values()
        claim(
            "an AutogradMeta is allocated only when requires_grad is first set, and then it stays",
            held=abs(reads) < 8 and abs(off) < 8 and on >= 64 and abs(again) < 8,
            detail=", ".join(f"{b:.1f}" for b in meta.values()) + " bytes per tensor",
        )

    record = view_record()
    print(
        f"\nint64 view made under no_grad: _base is the base: {record['base']};"
        f" autograd's view record: {record['view record']}; on the base: {record['base record']}"
    )
    exposed = record["view record"] != NOT_EXPOSED
    claim(
        "a view carries autograd's view record (its _base) even for int64 data under no_grad",
        held=record["base"] is True
        and (not exposed or (record["view record"] != "none" and record["base record"] == "none")),
        detail=f"view: {record['view record']}, base: {record['base record']}",
    )

    kept = python_object_kept()
    print("\na leaf whose every Python name was deleted, reached again through the graph:")
    print(f"  the same Python object: {kept['same object']}; the attribute set before, kept: {kept['attribute kept']}")
    claim(
        "a TensorImpl keeps its Python object: reached again after del, it is the same object, attributes and all",
        held=all(kept.values()),
        detail=", ".join(f"{name} {value}" for name, value in kept.items()),
    )
    sym = symbolic_sizes()
    print(f"traced with symbolic shapes: sizes {sym['sizes']}, strides {sym['strides']}")
    print(f"  the row stride is the column count's symbol: {sym['row stride is the column count']}")
    print(f"  symbolic-sizes flag {sym['flag']} (an ordinary tensor: {sym['flag, ordinary tensor']})")
    claim(
        "while tracing with symbolic shapes a tensor's sizes and strides are SymInts, and the TensorImpl says so",
        held=set(sym["sizes"]) == {"SymInt"}  # type: ignore[arg-type]
        and sym["row stride is the column count"] is True
        and sym["flag"] is True
        and sym["flag, ordinary tensor"] is False,
        detail=f"sizes {sym['sizes']}, strides {sym['strides']}",
    )


if __name__ == "__main__":
    main()
