"""During one backward pass, each node drops its saved tensors as soon as it has run, not at the end."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim

SIZE = 1 << 20  # a million float32 elements: 4 MB per saved tensor


def saved_tensors(node: object) -> dict[str, torch.Tensor | None]:
    """Every `_saved_*` tensor attribute of a node; None for one already released."""
    found: dict[str, torch.Tensor | None] = {}
    for name in dir(node):
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(node, name)
        except RuntimeError as error:  # what autograd raises for a freed saved tensor
            if "freed" not in str(error):
                raise
            found[name] = None
            continue
        if isinstance(value, torch.Tensor):
            found[name] = value
    return found


def chain_nodes(root: object) -> list[object]:
    """The chain's nodes from the loss down, one input each (the forward order reversed)."""
    nodes = []
    node = root
    while node is not None:
        nodes.append(node)
        node = next((n for n, _ in getattr(node, "next_functions", ()) if n is not None), None)
    return nodes


def held_bytes(nodes: list[object]) -> int:
    """Bytes of the distinct storages the graph's saved tensors still keep alive.

    One tensor can be saved by two nodes (exp's result is sin's input), so storages are
    counted once.
    """
    storages = {
        t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
        for node in nodes
        for t in saved_tensors(node).values()
        if t is not None
    }
    return sum(storages.values())


def trace_backward(*, retain_graph: bool) -> list[tuple[str, int, list[str]]]:
    """Run exp -> sin -> tanh -> sigmoid -> sum backward; before each node runs, note what is still held.

    Returns one row per node, in the order the engine ran them: its name, the saved bytes
    still reachable through the graph, and which of the nodes that already ran have released.
    """
    x = torch.randn(SIZE, requires_grad=True)
    loss = x.exp().sin().tanh().sigmoid().sum()  # exp, tanh, sigmoid save their result; sin its input
    nodes = chain_nodes(loss.grad_fn)
    rows: list[tuple[str, int, list[str]]] = []
    ran: list[object] = []

    def before(node: object) -> object:
        def hook(grad_outputs: tuple[torch.Tensor, ...]) -> None:
            released = [type(n).__name__ for n in ran if any(t is None for t in saved_tensors(n).values())]
            rows.append((type(node).__name__, held_bytes(nodes), released))
            ran.append(node)

        return hook

    for node in nodes:
        node.register_prehook(before(node))  # type: ignore[attr-defined]
    loss.backward(retain_graph=retain_graph)
    return rows


def main() -> None:
    traces = {}
    for retain in (False, True):
        print(f"loss.backward(retain_graph={retain}):")
        # Printed for a phone's 46 columns: saved bytes in MB, and each row names only the nodes released since
        # the row above (the ones released before are in the rows above).
        print(f"  {'node about to run':<17} {'MB held':>8}  newly released")
        traces[retain] = trace_backward(retain_graph=retain)
        before: list[str] = []
        for name, held, released in traces[retain]:
            newly = [node for node in released if node not in before]
            before = released
            print(f"  {name:<17} {held / 1e6:>8.1f}  {', '.join(newly) or '-'}")
        print()
    held = [bytes_held for _, bytes_held, _ in traces[False]]
    names = [name for name, _, _ in traces[False]]
    claim(
        "each node releases its saved tensors right after it runs, not when the pass ends",
        held=held[0] > 0
        and held == sorted(held, reverse=True)
        and held[-1] == 0
        and 0 < held[len(held) // 2] < held[0]
        and all(released == names[1:position] for position, (_, _, released) in enumerate(traces[False])),
    )
    claim(
        "with retain_graph=True every saved tensor is held through the pass",
        held=len({b for _, b, _ in traces[True]}) == 1 and all(r == [] for _, _, r in traces[True]),
    )


if __name__ == "__main__":
    main()
