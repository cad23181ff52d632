"""How tensors are made, and the dtype each way of making one picks when you do not say."""

from __future__ import annotations

import numpy as np
import torch

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
    width = max(len(text) for text in EXPRESSIONS)
    print(f"{'expression':{width}}  {'dtype':10} shape")
    for text, t in rows:
        dtype = str(t.dtype).removeprefix("torch.")
        print(f"{text:{width}}  {dtype:10} {tuple(t.shape)}")


if __name__ == "__main__":
    main()
