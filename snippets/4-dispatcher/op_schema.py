"""An operator is a name plus a typed schema: `aten::add` and its overloads, as the running torch registers them."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim


def overload_schemas(packet: str = "add") -> list[tuple[str, str, bool]]:
    """`(overload, schema, is_dispatcher_op)` for every overload `torch.ops.aten.<packet>` knows.

    `is_dispatcher_op` says whether the overload is registered with the dispatcher
    (the others are TorchScript built-ins on plain numbers, lists and strings).
    """
    registered = set(torch._C._dispatch_get_all_op_names())
    packet_op = getattr(torch.ops.aten, packet)
    rows = []
    for overload in packet_op.overloads():
        schema = getattr(packet_op, overload)._schema
        full = f"aten::{packet}" + ("" if overload == "default" else f".{overload}")
        rows.append((overload, str(schema), full in registered))
    return rows


def fold(text: str, first: str, rest: str, width: int = 46) -> str:
    """`text` broken after its commas into lines of `width` columns at most where it can (a phone's 46)."""
    parts = text.split(", ")
    lines = [first + parts[0]]
    for index, part in enumerate(parts[1:], 2):
        comma = 1 if index < len(parts) else 0
        if len(lines[-1]) + 2 + len(part) + comma <= width:
            lines[-1] += ", " + part
        else:
            lines[-1] += ","
            lines.append(rest + part)
    return "\n".join(lines)


def main() -> None:
    op = torch.ops.aten.add.Tensor
    schema = op._schema
    print(f"torch.ops.aten.add.Tensor is an {type(op).__name__};")
    print("its schema:")
    print(fold(str(schema), "  ", "    "))
    for argument in schema.arguments:
        default = "" if argument.default_value is None else f" = {argument.default_value}"
        kind = "keyword-only" if argument.kwarg_only else "positional"
        print(f"    {argument.name:<6} {argument.type!s:<7} {kind}{default}")
    print(f"  tags: {', '.join(tag.name for tag in op.tags)}")
    a = torch.ones(2)
    print("  called directly:")
    print(
        fold(f"torch.ops.aten.add.Tensor(ones(2), ones(2), alpha=3) = {op(a, a, alpha=3).tolist()}", "    ", "      ")
    )
    print()
    rows = overload_schemas("add")
    on_dispatcher = [row for row in rows if row[2]]
    print(f"torch.ops.aten.add has {len(rows)} overloads;")
    print(f"{len(on_dispatcher)} are dispatcher operators:")
    for overload, text, _ in on_dispatcher:
        print(fold(text, f"  {overload:<10} ", " " * 15))
    print(f"the other {len(rows) - len(on_dispatcher)} are TorchScript built-ins")
    print("on plain Python values, e.g.:")
    for overload, text, _ in [row for row in rows if not row[2]][:4]:
        print(fold(text, f"  {overload:<10} ", " " * 15))
    print()
    table = {overload: (text, registered) for overload, text, registered in rows}
    claim(
        "add.Tensor's schema takes alpha as a keyword-only Scalar",
        held=table["Tensor"][0] == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    )
    claim(
        "Tensor, Scalar and out overloads are dispatcher operators; int and str are not",
        held={"Tensor", "Scalar", "out", "Scalar_out"} <= {o for o, (_, r) in table.items() if r}
        and not table["int"][1]
        and not table["str"][1],
    )
    print("What model(x) lands on (see the op log below):")
    print(fold(str(torch.ops.aten.addmm.default._schema), "  ", "    "))


if __name__ == "__main__":
    main()
