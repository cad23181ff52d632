"""torch.from_numpy shares the array's memory; torch.tensor copies it: watch a write cross over, and time both."""

from __future__ import annotations

import numpy as np
import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds, time_call


def write_through(maker: str) -> bool:
    """Make a tensor from a NumPy array with `maker`, write into the array, and report whether the tensor saw it."""
    array = np.zeros(4, dtype=np.float32)
    tensor = {"from_numpy": torch.from_numpy, "as_tensor": torch.as_tensor, "tensor": torch.tensor}[maker](array)
    array[0] = 42.0
    return bool(tensor[0].item() == 42.0)


def back_to_numpy_shares() -> bool:
    """Whether `tensor.numpy()` hands back a view of the tensor's memory (a write to the tensor shows in the array)."""
    tensor = torch.zeros(4)
    array = tensor.numpy()
    tensor[1] = 7.0
    return bool(array[1] == 7.0)


def reversed_array_error() -> tuple[tuple[int, ...], str]:
    """`torch.from_numpy(a[::-1])`: the reversed view's strides (in bytes) and the error torch raises."""
    reversed_view = np.arange(4, dtype=np.float32)[::-1]
    try:
        torch.from_numpy(reversed_view)
    except ValueError as error:
        return reversed_view.strides, str(error).strip()
    raise AssertionError("torch.from_numpy accepted a negative stride")


def creation_time(maker: str, numel: int) -> float:
    """Median seconds to make a tensor from a float32 NumPy array of `numel` elements."""
    array = np.ones(numel, dtype=np.float32)
    fn = {"from_numpy": torch.from_numpy, "tensor": torch.tensor}[maker]
    return time_call(lambda: fn(array), samples=9, min_sample_seconds=0.005).median


def main() -> None:
    for maker in ("from_numpy", "as_tensor", "tensor"):
        print(f"torch.{maker}(array), then array[0] = 42 -> tensor[0] is 42: {write_through(maker)}")
    print(f"array = tensor.numpy(), then tensor[1] = 7 -> array[1] is 7: {back_to_numpy_shares()}")
    claim(
        "from_numpy and as_tensor share the array's memory; torch.tensor copies it",
        held=write_through("from_numpy") and write_through("as_tensor") and not write_through("tensor"),
    )
    claim(".numpy() shares the tensor's memory", held=back_to_numpy_shares())
    strides, message = reversed_array_error()
    claim(
        "from_numpy refuses a negative-stride array",
        held=strides[0] < 0 and "negative" in message,
        detail=f"strides {strides}",
    )
    print(f"torch.from_numpy(a[::-1]), a view with strides {strides} bytes, raises:")
    print(f"  ValueError: {message}")
    print()
    sizes = (1_000, 1_000_000)
    print(f"{'time to make the tensor':24} {sizes[0]:>12,} {sizes[1]:>12,}  growth")
    growth = {}
    for maker in ("from_numpy", "tensor"):
        small, large = (creation_time(maker, n) for n in sizes)
        growth[maker] = large / small
        label = f"torch.{maker}(array)"
        print(f"{label:24} {human_seconds(small):>12} {human_seconds(large):>12}  x{large / small:,.1f}")
    print(f"(columns: elements in the array; growth: for {sizes[1] // sizes[0]:,} times the elements)")
    claim(
        "wrapping an array costs the same at any size",
        held=growth["from_numpy"] < 5,
        detail=f"x{growth['from_numpy']:.1f}",
    )
    claim(
        "copying grows with the size, far more than wrapping",
        held=growth["tensor"] > 5 and growth["tensor"] > 2 * growth["from_numpy"],
        detail=f"x{growth['tensor']:,.1f}",
    )


if __name__ == "__main__":
    main()
