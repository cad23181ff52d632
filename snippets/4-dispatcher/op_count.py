"""How many operators the dispatcher holds after `import torch`, by namespace, and how many have each kind of kernel."""

from __future__ import annotations

from collections import Counter

import torch

from pytorch_floors.claims import claim
from pytorch_floors.plot import bar_chart, show

KERNEL_KEYS = {
    "CPU": "a CPU kernel",
    "Meta": "a Meta kernel (shapes only)",
    "Autograd": "an autograd kernel",
    "CompositeImplicitAutograd": "a decomposition into other ops",
    "CompositeExplicitAutograd": "one kernel for every backend",
}


def operator_names() -> list[str]:
    """Every registered operator overload, such as `aten::add.Tensor`."""
    return sorted(torch._C._dispatch_get_all_op_names())


def by_namespace(names: list[str]) -> Counter[str]:
    """Overload count per namespace (`aten`, `quantized`, `prims`, ...)."""
    return Counter(name.split("::", 1)[0] for name in names)


def base_names(names: list[str]) -> set[str]:
    """Operator names without their overload: `aten::add.Tensor` and `aten::add.out` count once."""
    return {name.split(".", 1)[0] for name in names}


def with_kernel(names: list[str], key: str) -> int:
    """How many of `names` have a kernel registered directly at dispatch key `key`."""
    return sum(torch._C._dispatch_has_kernel_for_dispatch_key(name, key) for name in names)


def main() -> None:
    names = operator_names()
    spaces = by_namespace(names)
    aten = [name for name in names if name.startswith("aten::")]
    lines = [
        f"torch {torch.__version__}, right after import torch:",
        f"  {len(names):,} operator overloads in {len(spaces)} namespaces",
        f"  {len(base_names(names)):,} operator names, overloads merged",
        f"  aten: {len(aten):,} overloads of {len(base_names(aten)):,} operators",
        "",
        "aten overloads that have ...",
    ]
    for key, meaning in KERNEL_KEYS.items():
        # The meaning, then the key and the count under it: a phone's 46 columns.
        lines += [f"  {meaning}", f"    {key:<26} {with_kernel(aten, key):>5,}"]
    lines += ["", "Overloads per namespace:"]
    top = spaces.most_common(8)
    rest = sum(spaces.values()) - sum(count for _, count in top)
    bars = [*top, (f"{len(spaces) - len(top)} other namespaces", rest)]
    lines += [f"  {label:<24} {count:>6,}" for label, count in bars]
    chart = bar_chart(
        bars,
        title="Operator overloads registered with the dispatcher, by namespace",
        value_label="operator overloads (count)",
        description="Bar chart: the aten namespace holds almost all operators; the others are small.",
        highlight=["aten"],
    )
    show(chart, text="\n".join(lines), name="op_count")
    claim(
        "aten holds most of the operators",
        held=spaces.most_common(1)[0][0] == "aten" and spaces["aten"] > sum(spaces.values()) / 2,
        detail=f"{spaces['aten'] / sum(spaces.values()):.0%}",
    )
    claim(
        "more aten overloads have a Meta kernel than a CPU kernel",
        held=with_kernel(aten, "Meta") > with_kernel(aten, "CPU") > 0,
    )


if __name__ == "__main__":
    main()
