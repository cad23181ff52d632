"""How tensors are made, and the dtype each way of making one picks when you do not say."""

from __future__ import annotations

import numpy as np
import torch

from pytorch_floors.claims import claim

EXPRESSIONS = (
    "torch.tensor([[1, 2], [3, 4]])",
    "torch.tensor([1.0, -1.0])",
    "torch.tensor([1, 2.5])",
    "torch.tensor(3.0)",
    "torch.tensor([True, False])",
    "torch.tensor(1 + 2j)",
    "torch.zeros(2, 3)",
    "torch.ones(2, 3, dtype=torch.float16)",
    "torch.rand(2, 3)",
    "torch.randn(2, 3)",
    "torch.arange(5)",
    "torch.arange(0, 1, 0.25)",
    "torch.full((2,), 7)",
    "torch.randint(0, 10, (3,))",
    "torch.ones_like(torch.arange(3))",
    "torch.rand_like(torch.ones(2), dtype=torch.float64)",
    "torch.tensor(np.array([1.0, 2.0]))",
    "torch.tensor(np.array([1.0, 2.0], dtype=np.float32))",
)


def created(expressions: tuple[str, ...] = EXPRESSIONS) -> list[tuple[str, torch.Tensor]]:
    """Evaluate each constructor expression and keep the tensor it makes."""
    namespace = {"torch": torch, "np": np}
    return [(text, eval(text, namespace)) for text in expressions]


def main() -> None:
    torch.manual_seed(0)
    rows = created()
    print(f"torch.get_default_dtype(): {torch.get_default_dtype()}")
    print(f"devices of the tensors below: {sorted({t.device.type for _, t in rows})}")
    print()
    # Printed for a phone's 46 columns: each expression on a line of its own (the longest is 52 columns, and
    # wraps), the dtype and shape it made under it.
    print("each expression, and the dtype and shape it made:")
    for text, t in rows:
        dtype = str(t.dtype).removeprefix("torch.")
        print(text)
        print(f"  dtype {dtype}, shape {tuple(t.shape)}")
    dtypes = {text: t.dtype for text, t in rows}
    claim(
        "integers default to int64, floats to float32 (the default dtype)",
        held=dtypes["torch.tensor([[1, 2], [3, 4]])"] == dtypes["torch.arange(5)"] == torch.int64
        and dtypes["torch.tensor([1.0, -1.0])"] == torch.get_default_dtype() == torch.float32
        and dtypes["torch.randn(2, 3)"] == torch.float32,
    )
    claim("one float among integers makes the tensor float32", held=dtypes["torch.tensor([1, 2.5])"] == torch.float32)
    claim("booleans stay bool", held=dtypes["torch.tensor([True, False])"] == torch.bool)
    claim("torch.full infers int64 from an integer fill", held=dtypes["torch.full((2,), 7)"] == torch.int64)
    claim(
        "a NumPy array keeps NumPy's float64",
        held=dtypes["torch.tensor(np.array([1.0, 2.0]))"] == torch.float64,
    )


if __name__ == "__main__":
    main()
