"""torch.from_numpy shares the array's memory; torch.tensor copies it: watch a write cross over, and time both."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds, interleaved_rounds, paired_ratio, time_call


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


SIZES = (1_000, 1_000_000)
MAKERS = ("from_numpy", "tensor")
ROUNDS = 5


def creation_rounds(sizes: tuple[int, ...] = SIZES, rounds: int = ROUNDS) -> dict[str, list[float]]:
    """CPU seconds to make a tensor from a float32 NumPy array, keyed `"<maker> <numel>"`, one per round.

    Each round times both makers at both sizes back to back, so the small and the large array share
    the round's load; the claims compare them within each round. Timed on one torch thread by that
    thread's CPU time (`time.thread_time`), so the moments another program holds the core are not counted.
    """
    arrays = {n: np.ones(n, dtype=np.float32) for n in sizes}
    makers = {"from_numpy": torch.from_numpy, "tensor": torch.tensor}

    def timed(maker: str, numel: int) -> Callable[[], float]:
        fn, array = makers[maker], arrays[numel]
        return lambda: time_call(lambda: fn(array), samples=3, clock=time.thread_time).median

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a copy split over threads would do work this thread's clock does not see
    try:
        return interleaved_rounds({f"{m} {n}": timed(m, n) for m in MAKERS for n in sizes}, rounds)
    finally:
        torch.set_num_threads(threads)


def growths(rounds: dict[str, list[float]], sizes: tuple[int, ...] = SIZES) -> dict[str, float]:
    """Each maker's time at the largest size over the smallest, in the same round (median of the rounds)."""
    found = {m: paired_ratio(rounds[f"{m} {sizes[-1]}"], rounds[f"{m} {sizes[0]}"]) for m in MAKERS}
    return {maker: ratio for maker, ratio in found.items() if ratio is not None}


def check_costs(growth: dict[str, float]) -> None:
    """The page's claims on the cost of wrapping and of copying, from the same-round growths."""
    claim(
        "wrapping an array costs the same at any size",
        held=growth["from_numpy"] < 5,
        detail=f"x{growth['from_numpy']:.1f}, the median of {ROUNDS} same-round ratios",
    )
    claim(
        "copying grows with the size, far more than wrapping",
        held=growth["tensor"] > 5 and growth["tensor"] > 2 * growth["from_numpy"],
        detail=f"x{growth['tensor']:,.1f}",
    )


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
    # One space where the message has two ("array  with"): two spaces would make it a table row that never
    # wraps on a phone, and the words are the same.
    print(f"  ValueError: {' '.join(message.split())}")
    print()
    rounds = creation_rounds()
    growth = growths(rounds)
    print(f"CPU time to make the tensor (1 thread), the median of {ROUNDS} interleaved rounds")
    # Printed for a phone's 46 columns: the makers without "(array)", the columns as wide as their numbers.
    print(f"{'elements':16} {SIZES[0]:>8,} {SIZES[-1]:>10,}  growth")
    for maker in MAKERS:
        small, large = (statistics.median(rounds[f"{maker} {n}"]) for n in (SIZES[0], SIZES[-1]))
        label = f"torch.{maker}"
        print(f"{label:16} {human_seconds(small):>8} {human_seconds(large):>10}  x{growth[maker]:,.1f}")
    print(f"(growth: for {SIZES[-1] // SIZES[0]:,} times the elements, the large over the small in the same round)")
    check_costs(growth)


if __name__ == "__main__":
    main()
