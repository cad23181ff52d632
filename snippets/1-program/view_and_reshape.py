"""view and reshape with -1: which results share memory with the original, and when view refuses."""

from __future__ import annotations

import textwrap

import torch

from pytorch_floors.measure import same_storage


def shapes_and_sharing() -> list[tuple[str, tuple[int, ...], bool]]:
    """Apply each reshaping or indexing expression to a 4 x 4 tensor: result shape and whether memory is shared."""
    x = torch.arange(16.0).reshape(4, 4)
    results = {
        "x.view(16)": x.view(16),
        "x.view(-1, 8)": x.view(-1, 8),
        "x.view(2, -1, 2)": x.view(2, -1, 2),
        "x.reshape(-1)": x.reshape(-1),
        "x[0]": x[0],
        "x[:, 1]": x[:, 1],
        "x[[0, 2]]": x[[0, 2]],
        "x.t()": x.t(),
        "x.t().reshape(-1)": x.t().reshape(-1),
        "x.t().contiguous().view(-1)": x.t().contiguous().view(-1),
    }
    return [(text, tuple(t.shape), same_storage(x, t)) for text, t in results.items()]


def refusals() -> list[tuple[str, str]]:
    """Calls that raise, with the first sentence of PyTorch's message."""
    x = torch.arange(16.0).reshape(4, 4)
    attempts = {
        "x.t().view(-1)": lambda: x.t().view(-1),
        "x.view(-1, -1)": lambda: x.view(-1, -1),
        "x.view(3, -1)": lambda: x.view(3, -1),
    }
    out = []
    for text, attempt in attempts.items():
        try:
            attempt()
            out.append((text, "no error"))
        except RuntimeError as error:
            out.append((text, str(error).split(". ")[0]))
    return out


def main() -> None:
    print("x = torch.arange(16.0).reshape(4, 4)")
    print()
    rows = shapes_and_sharing()
    width = max(len(text) for text, _, _ in rows)
    print(f"{'expression':{width}}  {'shape':10} shares x's memory")
    for text, shape, shared in rows:
        print(f"{text:{width}}  {shape!s:10} {shared}")
    print()
    for text, message in refusals():
        print(textwrap.fill(f"{text}: RuntimeError: {message}", width=72, subsequent_indent="    "))


if __name__ == "__main__":
    main()
