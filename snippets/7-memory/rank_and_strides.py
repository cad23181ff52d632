"""Rank, the row-major stride rule checked on zeros(2, 3, 4), and a 4-D attention tensor's bytes in GB and GiB."""

from __future__ import annotations

import math

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, tensor_bytes

# Each of the query, key and value tensors of one attention layer, as attention kernels take them:
# 32 sequences of 4096 tokens, 32 heads of 128 dimensions (a 4096-wide model).
ATTENTION = {"batch": 32, "heads": 32, "seq": 4096, "head_dim": 128}


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a contiguous tensor: the last is 1, each other is the product of the sizes after it."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def ranks() -> list[tuple[str, int, tuple[int, ...]]]:
    """(expression, rank, shape) for a scalar up to a 4-D tensor."""
    made = {
        "torch.tensor(3.0)": torch.tensor(3.0),
        "torch.zeros(4)": torch.zeros(4),
        "torch.zeros(3, 4)": torch.zeros(3, 4),
        "torch.zeros(2, 3, 4)": torch.zeros(2, 3, 4),
        "torch.zeros(2, 2, 3, 4)": torch.zeros(2, 2, 3, 4),
    }
    return [(text, t.dim(), tuple(t.shape)) for text, t in made.items()]


def attention_tensor(dtype: torch.dtype) -> torch.Tensor:
    """One (batch, heads, seq, head_dim) tensor on the meta device: shape and dtype, nothing allocated."""
    return torch.empty(tuple(ATTENTION.values()), dtype=dtype, device="meta")


def unit_gaps() -> list[tuple[str, str, float]]:
    """(decimal unit, binary unit, how much larger the binary one is) at each step of 1000 versus 1024."""
    return [(d, b, 1024**k / 1000**k - 1) for k, (d, b) in enumerate((("kB", "KiB"), ("MB", "MiB"), ("GB", "GiB")), 1)]


def main() -> None:
    print(f"{'expression':<26} {'rank':>4}  shape")
    for text, rank, shape in ranks():
        print(f"{text:<26} {rank:>4}  {shape}")
    print()
    shape = (2, 3, 4)
    rule = row_major_strides(shape)
    actual = torch.zeros(shape).stride()
    print(f"zeros{shape}: by the rule, strides")
    print(f"  = ({shape[1]}*{shape[2]}, {shape[2]}, 1) = {rule}")
    print(f"zeros{shape}.stride()")
    print(f"  = {actual}   same: {rule == actual}")
    claim("zeros(2, 3, 4) has strides (12, 4, 1), as the row-major rule says", held=rule == actual == (12, 4, 1))
    claim(
        "the rule gives torch's strides for other shapes too",
        held=all(row_major_strides(s) == torch.empty(s).stride() for s in [(5,), (3, 7), (2, 1, 6, 4)]),
    )
    claim("rank is the number of dimensions, 0 to 4 here", held=[rank for _, rank, _ in ranks()] == [0, 1, 2, 3, 4])
    print()
    dims = ", ".join(f"{k}={v}" for k, v in ATTENTION.items())
    elements = math.prod(ATTENTION.values())
    # Printed for a phone's 46 columns: a value on its own line where the line would run on.
    print("attention Q (or K, or V):")
    print(f"  ({dims})")
    print(f"  rank {attention_tensor(torch.float32).dim()}, {elements:,} elements,")
    print(f"  strides {attention_tensor(torch.float32).stride()}")
    for dtype in (torch.float32, torch.bfloat16):
        count = tensor_bytes(attention_tensor(dtype))
        name = str(dtype).removeprefix("torch.")
        print(f"  {name:<9} {count:>13,} bytes")
        print(f"  {'':<9} = {human_bytes(count)} = {human_bytes(count, binary=True)}")
    print()
    gaps = unit_gaps()
    for decimal, binary, gap in gaps:
        print(f"1 {binary} is {gap:5.2%} more bytes than 1 {decimal}")
    q32, q16 = attention_tensor(torch.float32), attention_tensor(torch.bfloat16)
    claim(
        "the attention tensor is 4-D and bfloat16 halves its bytes",
        held=q32.dim() == 4 and q32.numel() * 4 == tensor_bytes(q32) == 2 * tensor_bytes(q16),
    )
    claim(
        "the binary unit's lead grows at each step, to about 7 % at GB",
        held=[g for _, _, g in gaps] == sorted(g for _, _, g in gaps) and 0.07 < gaps[-1][2] < 0.08,
        detail=f"{gaps[-1][2]:.2%}",
    )


if __name__ == "__main__":
    main()
