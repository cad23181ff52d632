"""Which operations are views of one storage and which copy it, and the error of .view on a non-contiguous tensor."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import same_storage

OPERATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "x[1]": lambda x: x[1],
    "x[:, 1]": lambda x: x[:, 1],
    "x.t()": lambda x: x.t(),
    "x.view(4, 3)": lambda x: x.view(4, 3),
    "x.reshape(12)": lambda x: x.reshape(12),
    "x.t().reshape(12)": lambda x: x.t().reshape(12),
    "x.contiguous()": lambda x: x.contiguous(),
    "x.t().contiguous()": lambda x: x.t().contiguous(),
    "x.clone()": lambda x: x.clone(),
    "x * 1": lambda x: x * 1,
}


def classify() -> list[tuple[str, bool, bool, tuple[int, ...]]]:
    """For each operation on a 3 × 4 tensor: (expression, shares x's storage, contiguous, stride)."""
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    rows = []
    for name, op in OPERATIONS.items():
        y = op(x)
        rows.append((name, same_storage(x, y), y.is_contiguous(), tuple(y.stride())))
    return rows


def mutate_through_view() -> tuple[float, float]:
    """Write through a row view; return x[1, 0] before and after."""
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    before = x[1, 0].item()
    row = x[1]
    row[0] = 100.0
    return before, x[1, 0].item()


def view_error() -> str:
    """The exact message of `.view` on a transposed (non-contiguous) tensor."""
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    try:
        x.t().view(12)
    except RuntimeError as error:
        return str(error)
    raise AssertionError("x.t().view(12) did not raise")


def main() -> None:
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    print(f"x = torch.arange(12.).reshape(3, 4): stride {x.stride()}, contiguous {x.is_contiguous()}")
    print()
    # Printed for a phone's 46 columns: the storage column a word (view or copy), its meaning on the line above.
    print("storage: view (shares x's storage) or copy")
    print(f"{'expression':<18} {'storage':<7} {'contiguous':<10} stride")
    for name, shared, contiguous, stride in classify():
        kind = "view" if shared else "copy"
        print(f"{name:<18} {kind:<7} {contiguous!s:<10} {stride}")
    print()
    print(f"x.contiguous() is x: {x.contiguous() is x} (already contiguous: the same tensor object comes back)")
    before, after = mutate_through_view()
    print(f"row = x[1]; row[0] = 100.0 -> x[1, 0] was {before}, is now {after}")
    print()
    print("x.t().view(12) raises RuntimeError:")
    print(f"  {view_error()}")
    shared = {name: same for name, same, _, _ in classify()}
    claim(
        "indexing, transposing, view and reshape of a contiguous tensor share its storage",
        held=all(shared[n] for n in ("x[1]", "x[:, 1]", "x.t()", "x.view(4, 3)", "x.reshape(12)", "x.contiguous()")),
    )
    claim(
        "reshape of a transposed tensor, contiguous(), clone() and arithmetic copy",
        held=not any(shared[n] for n in ("x.t().reshape(12)", "x.t().contiguous()", "x.clone()", "x * 1")),
    )
    claim("writing through a view changes the original", held=before != after == 100.0)
    claim(
        "view refuses what it cannot express and points to reshape",
        held="view size is not compatible" in view_error() and ".reshape" in view_error(),
    )


if __name__ == "__main__":
    main()
