"""Floor 3 in one number: the fixed cost every eager op pays to cross from Python into C++."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds, time_call


def add_cost(numel: int) -> float:
    """Median seconds of one `a + b` on tensors of `numel` elements."""
    a, b = torch.ones(numel), torch.ones(numel)
    return time_call(lambda: a + b, samples=9, min_sample_seconds=0.01).median


def main() -> None:
    one, thousand = add_cost(1), add_cost(1000)
    print(f"a + b on 1 element:      {human_seconds(one)} per call")
    print(f"a + b on 1,000 elements: {human_seconds(thousand)} per call")
    print(f"time for 1,000 elements / time for 1 element: {thousand / one:.1f}")
    claim(
        "a thousand times the elements costs nowhere near a thousand times the time",
        held=thousand < 20 * one,
        detail=f"{thousand / one:.1f}x the time for 1,000x the elements",
    )


if __name__ == "__main__":
    main()
