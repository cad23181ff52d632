"""A tensor is storage + shape + stride + offset: element addresses computed by hand equal indexing."""

from __future__ import annotations

import itertools

import torch

from pytorch_floors.claims import claim


def layouts() -> dict[str, torch.Tensor]:
    """A few tensors that all look into the storage of one 4 × 6 matrix."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    return {
        "base": base,
        "base[2]": base[2],
        "base[:, 1]": base[:, 1],
        "base[1:, ::2]": base[1:, ::2],
        "base[1:, ::2].t()": base[1:, ::2].t(),
    }


def element_offset(t: torch.Tensor, index: tuple[int, ...]) -> int:
    """Position in the storage, in elements: offset + Σ index_k × stride_k."""
    return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride(), strict=True))


def check_addresses(t: torch.Tensor) -> int:
    """Check every element of `t` two ways; return how many elements were checked.

    1. The value found in the flat storage at the computed position equals `t[index]`.
    2. The byte address `storage start + position × element_size` equals the address of
       `t[index]` (indexing to a single element returns a 0-d view at that address).
    """
    flat = torch.tensor([], dtype=t.dtype).set_(t.untyped_storage())  # the whole storage, 1-D
    start = t.untyped_storage().data_ptr()
    checked = 0
    for index in itertools.product(*(range(n) for n in t.shape)):
        position = element_offset(t, index)
        assert flat[position].item() == t[index].item(), (index, position)
        assert start + position * t.element_size() == t[index].data_ptr(), index
        checked += 1
    return checked


def rebuild_with_as_strided(t: torch.Tensor, base: torch.Tensor) -> bool:
    """Whether `torch.as_strided` on the base, given only t's shape/stride/offset, reproduces t."""
    again = torch.as_strided(base, t.shape, t.stride(), t.storage_offset())
    return bool(torch.equal(again, t)) and again.data_ptr() == t.data_ptr()


def main() -> None:
    views = layouts()
    base = views["base"]
    # Printed for a phone's 46 columns: the table split in two, a sentence broken where it reads on.
    print(f"storage of base: {base.untyped_storage().nbytes()} bytes =")
    print("24 float32 elements, 0.0 ... 23.0")
    print()
    layout, checks = [], []
    for name, t in views.items():
        n = check_addresses(t)
        assert rebuild_with_as_strided(t, base)
        shape = "×".join(map(str, t.shape))
        layout.append(f"{name:<18} {shape:<5} {t.stride()!s:<7} {t.storage_offset():>6}")
        checks.append(f"{name:<18} {t.is_contiguous()!s:<10}  {n}")
    print(f"{'tensor':<18} {'shape':<5} {'stride':<7} {'offset':>6}", *layout, sep="\n")
    print()
    print(f"{'tensor':<18} contiguous  checked", *checks, sep="\n")
    v = views["base[1:, ::2]"]
    i, j = 2, 1
    position = element_offset(v, (i, j))
    print()
    print(f"v = base[1:, ::2]; v[{i}, {j}] lives at")
    print("  offset + i×stride[0] + j×stride[1]")
    print(f"  = {v.storage_offset()} + {i}×{v.stride(0)} + {j}×{v.stride(1)} = element {position} of the storage")
    print(f"  v[{i}, {j}] = {v[i, j].item()}, storage[{position}] = {base.flatten()[position].item()}")
    print(f"  byte address: v[{i}, {j}].data_ptr()")
    print(f"    - storage start = {v[i, j].data_ptr() - base.data_ptr()} = {position} × {v.element_size()}")
    print("Every element of every tensor above passed")
    print("both checks (value and byte address).")
    claim(
        "offset + Σ index × stride finds every element of every view",
        held=all(check_addresses(t) == t.numel() for t in views.values())
        and position == v.storage_offset() + i * v.stride(0) + j * v.stride(1),
    )


if __name__ == "__main__":
    main()
