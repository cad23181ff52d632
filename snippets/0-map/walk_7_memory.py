"""Floor 7 in one number: the bytes behind the program's input, and what a view of it costs (nothing)."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, same_storage, tensor_bytes


def main() -> None:
    x = torch.randn(64, 784)
    image = x.view(64, 1, 28, 28)  # the same numbers seen as 64 images of 28 x 28 pixels
    copy = x.clone()
    print(f"x: {x.numel():,} elements x {x.element_size()} bytes = {human_bytes(tensor_bytes(x))}")
    print(f"x.view(64, 1, 28, 28) shares x's storage: {same_storage(x, image)}; new bytes: 0")
    print(f"x.clone() shares x's storage: {same_storage(x, copy)}; new bytes: {human_bytes(tensor_bytes(copy))}")
    claim("a view shares its tensor's storage", held=same_storage(x, image))
    claim("a clone has storage of its own", held=not same_storage(x, copy))


if __name__ == "__main__":
    main()
