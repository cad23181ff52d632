"""A tensor's bytes are numel × element_size: the size of one element for every dtype this torch has."""

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, storage_bytes, tensor_bytes

# Names looked up with getattr so that the table shows whatever this torch build defines.
DTYPE_NAMES = (
    "float64",
    "float32",
    "bfloat16",
    "float16",
    "float8_e5m2",
    "float8_e4m3fn",
    "float4_e2m1fn_x2",
    "complex128",
    "complex64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint64",
    "uint32",
    "uint16",
    "uint8",
    "bool",
)


def element_sizes(shape: tuple[int, ...] = (64, 784)) -> list[tuple[str, int, int]]:
    """Return (dtype name, bytes per element, bytes of a tensor of `shape`) for each known dtype.

    The tensors are made on the meta device: shape and dtype only, nothing allocated.
    """
    rows = []
    for name in DTYPE_NAMES:
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            continue
        t = torch.empty(shape, dtype=dtype, device="meta")
        rows.append((name, t.element_size(), tensor_bytes(t)))
    return rows


def slice_versus_storage() -> tuple[int, int]:
    """Bytes a slice can see versus bytes of the storage it shares with its parent."""
    x = torch.randn(64, 784)
    first_rows = x[:8]
    return tensor_bytes(first_rows), storage_bytes(first_rows)


def main() -> None:
    x = torch.randn(64, 784)
    # Printed for a phone's 46 columns: a value under its line, the table as bytes/element × elements.
    print("x = torch.randn(64, 784):")
    print(f"  {x.numel()} elements × {x.element_size()} bytes = {tensor_bytes(x)} bytes")
    print(f"  x.nbytes                     = {x.nbytes}")
    print(f"  x.untyped_storage().nbytes() = {storage_bytes(x)}")
    print(f"  {'':<31}({human_bytes(storage_bytes(x))})")
    print()
    print("a 64×784 tensor, by dtype:")
    print("  (bytes/element × elements = bytes)")
    for name, size, total in element_sizes():
        print(f"{'torch.' + name:<22} {size:>2} × {x.numel()} = {total:>6} bytes")
    print()
    seen, held = slice_versus_storage()
    print(f"x[:8] sees {seen} bytes but keeps alive")
    print(f"a storage of {held} bytes (the whole of x).")
    rows = element_sizes()
    sizes = {name: size for name, size, _ in rows}
    claim(
        "bytes = elements × bytes per element, for every dtype",
        held=all(size == getattr(torch, name).itemsize and total == x.numel() * size for name, size, total in rows),
    )
    claim(
        "float64 is twice float32, four times bfloat16; bool takes a whole byte",
        held=sizes["float64"] == 2 * sizes["float32"] == 4 * sizes["bfloat16"] and sizes["bool"] == 1,
    )
    claim("a slice keeps its whole storage alive", held=seen * 8 == held, detail=f"{held // seen}x what it sees")


if __name__ == "__main__":
    main()
