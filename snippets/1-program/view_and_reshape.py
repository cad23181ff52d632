"""view and reshape with -1: which results share memory with the original, and when view refuses."""

from __future__ import annotations

import textwrap

import torch

from pytorch_floors.claims import claim
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
    # Printed for a phone's 46 columns: the last column's header a word, its meaning on the line above.
    print("shared: whether the result shares x's memory")
    print(f"{'expression':{width}}  {'shape':10} shared")
    for text, shape, shared in rows:
        print(f"{text:{width}}  {shape!s:10} {shared}")
    print()
    for text, message in refusals():
        print(textwrap.fill(f"{text}: RuntimeError: {message}", width=72, subsequent_indent="    "))
    table = {text: (shape, shared) for text, shape, shared in rows}
    claim(
        "view, reshape of a contiguous tensor, indexing and .t() share x's memory",
        held=all(table[t][1] for t in ("x.view(-1, 8)", "x.view(2, -1, 2)", "x.reshape(-1)", "x[0]", "x.t()")),
    )
    claim("-1 is inferred from the other sizes", held=table["x.view(2, -1, 2)"][0] == (2, 4, 2))
    claim(
        "fancy indexing and reshaping a transposed tensor copy",
        held=not table["x[[0, 2]]"][1] and not table["x.t().reshape(-1)"][1],
    )
    refused = dict(refusals())
    claim(
        "view refuses a non-contiguous tensor, two sizes of -1 and sizes that do not divide",
        held=refused["x.t().view(-1)"] != "no error"
        and "only one dimension can be inferred" in refused["x.view(-1, -1)"]
        and refused["x.view(3, -1)"] != "no error",
    )


if __name__ == "__main__":
    main()
