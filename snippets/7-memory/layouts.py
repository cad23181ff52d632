"""Other tensor records: channels_last strides over the same shape, and the sparse and nested TensorImpls."""

from __future__ import annotations

import warnings

import torch

from pytorch_floors.claims import claim


def backend_key(tensor: torch.Tensor) -> str:
    """The backend dispatch key that names the tensor's kind of TensorImpl (`CPU`, `SparseCPU`, `NestedTensorCPU`).

    A key set prints lowest priority first, and the backend keys are the lowest: the first name is it.
    """
    inside = str(torch._C._dispatch_keys(tensor)).removeprefix("DispatchKeySet(").removesuffix(")")
    return inside.split(", ")[0]


def refusal(action: object) -> str:
    """What calling `action()` says: its result, or the first line of the error it raises."""
    try:
        return repr(action())  # type: ignore[operator]
    except (RuntimeError, NotImplementedError) as error:
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"


def channels_last() -> dict[str, object]:
    """One NCHW tensor, rewritten channels-last: its shape, its strides, and what stays the same."""
    n, c, h, w = 2, 3, 4, 5
    x = torch.arange(n * c * h * w, dtype=torch.float32).reshape(n, c, h, w)
    y = x.contiguous(memory_format=torch.channels_last)
    # The rule: channels vary fastest, then width, then height, then the batch (NHWC order in memory).
    rule = (h * w * c, 1, w * c, c)
    # Printed for a phone's 46 columns: each tensor's shape and strides under its name, one tensor over the other.
    print("x (NCHW):")
    print(f"  shape {tuple(x.shape)}, stride {tuple(x.stride())}")
    print("y (channels_last):")
    print(f"  shape {tuple(y.shape)}, stride {tuple(y.stride())}")
    print(f"  (the rule: {rule})")
    print(
        f"y.is_contiguous(): {y.is_contiguous()}; y.is_contiguous(memory_format=torch.channels_last): "
        f"{y.is_contiguous(memory_format=torch.channels_last)}"
    )
    print(f"y.permute(0, 2, 3, 1) (NHWC) is row-major contiguous: {y.permute(0, 2, 3, 1).is_contiguous()}")
    print(f"(y + 1).stride(), torch.relu(y).stride(): {tuple((y + 1).stride())}, {tuple(torch.relu(y).stride())}")
    return {
        "same values and shape": torch.equal(x, y) and x.shape == y.shape,
        "rule": tuple(y.stride()) == rule,
        "flags": not y.is_contiguous() and y.is_contiguous(memory_format=torch.channels_last),
        "nhwc": y.permute(0, 2, 3, 1).is_contiguous(),
        "kept": (y + 1).stride() == y.stride() == torch.relu(y).stride(),
    }


def sparse() -> dict[str, object]:
    """A 100 × 100 identity as a sparse COO tensor: no storage of its own, its numbers in two dense tensors."""
    dense = torch.eye(100)
    s = dense.to_sparse()
    indices, values = s.indices(), s.values()
    stored = indices.nbytes + values.nbytes
    print(f"layout {s.layout}, dispatch key {backend_key(s)} (the dense one: {backend_key(dense)})")
    print(f"  untyped_storage(): {refusal(s.untyped_storage)}")
    print(f"  stride(): {refusal(s.stride)}")
    print(
        f"  indices(): {indices.layout}, shape {tuple(indices.shape)}, {indices.dtype}; "
        f"values(): {values.layout}, shape {tuple(values.shape)}"
    )
    print(f"  bytes: {stored:,} in indices and values, against {dense.nbytes:,} dense")
    try:
        s.untyped_storage()
        has_storage = True
    except (RuntimeError, NotImplementedError):
        has_storage = False
    strides = refusal(s.stride)
    return {
        "layout": s.layout == torch.sparse_coo and backend_key(s).startswith("Sparse"),
        "no storage": not has_storage,
        "no layout in strides": "Error" in strides or set(s.stride()) == {0},
        "dense parts": indices.layout == values.layout == torch.strided and torch.equal(s.to_dense(), dense),
        "bytes": stored < dense.nbytes,
    }


def nested() -> dict[str, object]:
    """Two matrices of different heights as one nested tensor: one buffer, per-component sizes, no single shape."""
    parts = [torch.randn(2, 3), torch.randn(4, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nested API warns that it is a prototype
        nt = torch.nested.nested_tensor(parts)
    print(f"layout {nt.layout}, is_nested {nt.is_nested}, dispatch key {backend_key(nt)}, dim() {nt.dim()}")
    print(f"  size(0) {nt.size(0)}, size(2) {nt.size(2)}; size(1): {refusal(lambda: nt.size(1))}")
    print(f"  stride(): {refusal(nt.stride)}")
    sizes = nt._nested_tensor_size()
    offsets = nt._nested_tensor_storage_offsets()
    buffer = nt.untyped_storage().nbytes()
    print(f"  per-component sizes {sizes.tolist()}, storage offsets {offsets.tolist()}")
    print(f"  one storage of {buffer} bytes for components of {[p.nbytes for p in parts]} bytes")
    return {
        "kind": nt.is_nested and backend_key(nt).startswith("Nested"),
        "no single shape": "Error" in refusal(lambda: nt.size(1)),
        "one buffer": buffer == sum(p.nbytes for p in parts),
        "offsets": offsets.tolist() == [0, parts[0].numel()],
        "same parts": all(torch.equal(a, b) for a, b in zip(nt.unbind(), parts, strict=True)),
    }


def main() -> None:
    print("channels_last: a memory format, not a new shape")
    layout = channels_last()
    claim(
        "channels_last keeps the shape and values and changes only the strides, channels fastest",
        held=layout["same values and shape"] and layout["rule"] and layout["flags"] and layout["nhwc"],
        detail=", ".join(f"{key}: {value}" for key, value in layout.items() if key != "kept"),
    )
    claim("an elementwise op on a channels_last tensor returns channels_last strides", held=layout["kept"])
    print("\nsparse COO: another kind of TensorImpl")
    coo = sparse()
    claim(
        "a sparse tensor has no storage and no strided layout: its numbers live in dense indices and values",
        held=all(coo.values()),
        detail=", ".join(f"{key}: {value}" for key, value in coo.items()),
    )
    print("\nnested: a third kind, for a batch of different shapes")
    jagged = nested()
    claim(
        "a nested tensor keeps its components in one buffer, with a size per component and no single shape",
        held=all(jagged.values()),
        detail=", ".join(f"{key}: {value}" for key, value in jagged.items()),
    )


if __name__ == "__main__":
    main()
