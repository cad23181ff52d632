"""Walking grad_fn → next_functions from the result down to the AccumulateGrad leaves, drawn as a graph."""

from dataclasses import dataclass, field
from html import escape

import torch

from pytorch_floors.claims import claim
from pytorch_floors.plot import Key, chart_figure, show, text_width, wrap

NAME_SIZE = 13.0
"""Node names and titles, in SVG units (one a pixel: the graphs are drawn at their own size)."""
DETAIL_SIZE = 12.0
"""What a node saves, in SVG units."""
MONO_WIDTH = 0.62
"""A monospace character's advance, in ems, with room for a wider face."""


@dataclass
class Node:
    """One box of the drawing: a backward node, or an empty `None` slot of next_functions."""

    key: int
    name: str
    detail: str
    kind: str  # "op", "leaf" (AccumulateGrad) or "none"
    sequence_nr: int = -1  # creation order; backward runs the highest ready number first
    depth: int = 0
    x: float = 0.0
    width: float = 0.0
    parents: list[int] = field(default_factory=list)


@dataclass
class Graph:
    """The nodes and edges reachable from one tensor's grad_fn."""

    title: str
    nodes: dict[int, Node]
    edges: list[tuple[int, int, int]]  # (from node, to node, input_nr)


def _saved_tensor_names(fn: object) -> list[str]:
    names = []
    for attr in dir(fn):
        if attr.startswith("_saved_") and isinstance(getattr(fn, attr, None), torch.Tensor):
            names.append(attr.removeprefix("_saved_"))
    return names


def walk(root: torch.Tensor, title: str, leaf_names: dict[int, str]) -> Graph:
    """Follow `root.grad_fn` and every `next_functions` entry, breadth first, each node once.

    `leaf_names` maps `id(tensor)` of the leaves to a readable name for the drawing.
    """
    nodes: dict[int, Node] = {}
    # Every node object is held while the walk runs: torch may make a node's Python object afresh each
    # time it is reached, and give a freed one's id to another, so an id is a node's name only while held.
    held: list[object] = []
    edges: list[tuple[int, int, int]] = []
    empty_slots = 0
    queue = [root.grad_fn]
    while queue:
        fn = queue.pop(0)
        key = id(fn)
        if key in nodes:
            continue
        held.append(fn)
        if hasattr(fn, "variable"):  # AccumulateGrad holds the leaf tensor it writes .grad into
            tensor = fn.variable
            detail = f"{leaf_names.get(id(tensor), 'leaf')} {tuple(tensor.shape)}"
            nodes[key] = Node(key, "AccumulateGrad", detail, "leaf", fn._sequence_nr())
        else:
            saved = _saved_tensor_names(fn)
            detail = "saves " + ", ".join(saved) if saved else "saves no tensor"
            nodes[key] = Node(key, type(fn).__name__, detail, "op", fn._sequence_nr())
        for next_fn, input_nr in fn.next_functions:
            if next_fn is None:
                empty_slots += 1
                slot = -empty_slots
                nodes[slot] = Node(slot, "None", "no gradient needed", "none")
                edges.append((key, slot, input_nr))
            else:
                edges.append((key, id(next_fn), input_nr))
                queue.append(next_fn)
                held.append(next_fn)
    _layout(nodes, edges)
    return Graph(title, nodes, edges)


def _set_depths(nodes: dict[int, Node], edges: list[tuple[int, int, int]]) -> None:
    """Depth = the longest path from the root, so every arrow points downwards."""
    for _ in range(len(nodes)):  # a longest path has fewer edges than there are nodes
        changed = False
        for src, dst, _ in edges:
            if nodes[dst].depth < nodes[src].depth + 1:
                nodes[dst].depth = nodes[src].depth + 1
                changed = True
        if not changed:
            return
    raise ValueError("the edges make a cycle, which an autograd graph never has")


def _layout(nodes: dict[int, Node], edges: list[tuple[int, int, int]]) -> None:
    _set_depths(nodes, edges)
    for src, dst, _ in edges:
        if src not in nodes[dst].parents:
            nodes[dst].parents.append(src)
    for node in nodes.values():
        detail = text_width(node.detail, DETAIL_SIZE) if node.kind != "none" else 0.0
        node.width = max(MONO_WIDTH * NAME_SIZE * len(node.name), detail) + 12
    slot: dict[int, int] = {}
    for index, (_, dst, _) in enumerate(edges):
        slot.setdefault(dst, index)  # order siblings as their parent lists them
    gap = 8.0
    for depth in range(max(n.depth for n in nodes.values()) + 1):
        row = [n for n in nodes.values() if n.depth == depth]
        wanted = {n.key: sum(nodes[p].x for p in n.parents) / len(n.parents) if n.parents else 0.0 for n in row}
        row.sort(key=lambda n: (wanted[n.key], slot.get(n.key, 0)))
        for index, n in enumerate(row):  # start at the parents' centre, push right to avoid overlap
            n.x = wanted[n.key]
            if index:
                before = row[index - 1]
                n.x = max(n.x, before.x + (before.width + n.width) / 2 + gap)
        shift = sum(wanted[n.key] for n in row) / len(row) - sum(n.x for n in row) / len(row)
        for n in row:
            n.x += shift


def program_graph() -> Graph:
    """The graph the one-page program records: Linear(784, 10) then cross_entropy."""
    torch.manual_seed(0)
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))
    model = torch.nn.Linear(784, 10)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    names = {id(model.weight): "weight", id(model.bias): "bias"}
    return walk(loss, "one-page program: loss = cross_entropy(model(x), y)", names)


def tutorial_graph() -> Graph:
    """The graph of the tutorial example out = mean(3 (x + 2)²)."""
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return walk(out, "tutorial: out = mean(3 (x + 2)²)", {id(x): "x"})


def as_text(graph: Graph) -> str:
    """The walk as an indented tree (a node met twice is marked, not expanded again)."""
    lines = [graph.title]
    children: dict[int, list[tuple[int, int]]] = {}
    for src, dst, nr in graph.edges:
        children.setdefault(src, []).append((dst, nr))
    root = next(n for n in graph.nodes.values() if n.depth == 0)
    shown: set[int] = set()

    def visit(key: int, indent: str, via: str) -> None:
        node = graph.nodes[key]
        again = key in shown and node.kind != "none"
        if node.kind == "none":
            label = "None"
        else:
            order = "max" if node.sequence_nr == 2**64 - 1 else str(node.sequence_nr)
            label = f"{node.name} [{node.detail}] seq {order}"
        # One space before the mark: the line is a sentence that wraps on a phone, not a table's row.
        lines.append(f"{indent}{via}{label}{' (same node)' if again else ''}")
        if again:
            return
        shown.add(key)
        for index, (child, _) in enumerate(children.get(key, [])):
            visit(child, indent + "  ", f"next_functions[{index}] -> ")

    visit(root.key, "  ", "grad_fn = ")
    return "\n".join(lines)


def _title_lines(title: str, width: float) -> list[str]:
    """The graph's title in lines no wider than `width`, broken after its "label:" first."""
    head, colon, rest = title.partition(": ")
    if not colon or text_width(title, NAME_SIZE, bold=True) <= width:
        return wrap(title, width, NAME_SIZE, bold=True)
    return [*wrap(head + ":", width, NAME_SIZE, bold=True), *wrap(rest, width, NAME_SIZE, bold=True)]


def _draw(graph: Graph, index: int) -> str:
    """One graph as an SVG at its own size (one unit a pixel): narrow enough for a phone's column."""
    margin, row_h, box_h = 8.0, 64.0, 38.0
    low = min(n.x - n.width / 2 for n in graph.nodes.values())
    high = max(n.x + n.width / 2 for n in graph.nodes.values())
    lines = _title_lines(graph.title, max(high - low, 240.0))
    width = max(high - low, *(text_width(line, NAME_SIZE, bold=True) for line in lines)) + 2 * margin
    dx = margin - low + (width - 2 * margin - (high - low)) / 2
    top = margin + 1.3 * NAME_SIZE * len(lines) + 12
    height = top + max(n.depth for n in graph.nodes.values()) * row_h + box_h + margin
    ident = f"graph-walk-{index}"
    parts = [
        f'<svg class="floors-plot floors-plot--natural" role="img" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" aria-labelledby="{ident}-title {ident}-desc" '
        'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">Autograd graph of {escape(graph.title)}</title>'
        f'<desc id="{ident}-desc">Each box is a backward node found by following next_functions from the '
        "result's grad_fn; arrows point the way backward runs; tinted boxes are AccumulateGrad leaves that "
        "write .grad; dashed boxes are empty slots for inputs that need no gradient.</desc>"
    ]
    for k, line in enumerate(lines):
        parts.append(
            f'<text x="{width / 2:.1f}" y="{margin + 1.3 * NAME_SIZE * k:.1f}" text-anchor="middle" '
            f'dominant-baseline="hanging" class="floors-plot__title">{escape(line)}</text>'
        )
    pair_count: dict[tuple[int, int], int] = {}
    for src, dst, _ in graph.edges:
        pair_count[(src, dst)] = pair_count.get((src, dst), 0) + 1
    pair_seen: dict[tuple[int, int], int] = {}
    for src, dst, _ in graph.edges:
        a, b = graph.nodes[src], graph.nodes[dst]
        k = pair_seen.get((src, dst), 0)
        pair_seen[(src, dst)] = k + 1
        shift = (k - (pair_count[(src, dst)] - 1) / 2) * 16
        x1, y1 = dx + a.x + shift, top + a.depth * row_h + box_h
        x2, y2 = dx + b.x + shift, top + b.depth * row_h - 2
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2 - 7:.1f}" stroke="currentColor"/>')
        parts.append(
            f'<polygon points="{x2:.1f},{y2:.1f} {x2 - 4:.1f},{y2 - 8:.1f} {x2 + 4:.1f},{y2 - 8:.1f}" '
            'fill="currentColor"/>'
        )
    for node in graph.nodes.values():
        x, y = dx + node.x - node.width / 2, top + node.depth * row_h
        if node.kind == "leaf":
            box = 'class="floors-plot__series--1" fill-opacity="0.18"'
        elif node.kind == "none":
            box = 'fill="none" stroke="currentColor" stroke-dasharray="4 3" opacity="0.6"'
        else:
            box = 'fill="none" stroke="currentColor"'
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{node.width:.1f}" height="{box_h}" rx="5" {box}/>')
        if node.kind == "none":  # the legend says what an empty slot means
            parts.append(
                f'<text x="{dx + node.x:.1f}" y="{y + box_h / 2:.1f}" text-anchor="middle" dominant-baseline="central" '
                f'font-family="monospace">{escape(node.name)}</text>'
            )
            continue
        parts.append(
            f'<text x="{dx + node.x:.1f}" y="{y + 15:.1f}" text-anchor="middle" font-family="monospace">'
            f"{escape(node.name)}</text>"
            f'<text class="floors-graph__detail" x="{dx + node.x:.1f}" y="{y + 31:.1f}" text-anchor="middle" '
            f'font-size="{DETAIL_SIZE:g}" opacity="0.8">{escape(node.detail)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def figure(graphs: list[Graph]) -> str:
    """Draw each graph as an inline SVG of its own (text and lines in currentColor), in order.

    Each is at its own size, narrow enough for a phone; a wide screen sets them side by side.
    """
    return "".join(_draw(graph, index) for index, graph in enumerate(graphs))


KEYS = (
    Key("AccumulateGrad: writes a leaf's .grad", colour=1, mark="box", opacity=0.18),
    Key("None: an input that needs no gradient", colour=None, mark="outline", dash="4 3"),
)


def main() -> None:
    graphs = [tutorial_graph(), program_graph()]
    lines = []
    for graph in graphs:
        lines.append(as_text(graph))
        ops = sum(1 for n in graph.nodes.values() if n.kind == "op")
        leaves = sum(1 for n in graph.nodes.values() if n.kind == "leaf")
        lines.append(
            f"  {ops} backward nodes, {leaves} AccumulateGrad {'leaf' if leaves == 1 else 'leaves'}, "
            f"{len(graph.edges)} next_functions entries"
        )
        lines.append("")
    drawing = f'<div class="floors-graphs">{figure(graphs)}</div>'
    title = "Autograd graphs, from grad_fn down to AccumulateGrad"
    show(chart_figure(drawing, title=title, keys=KEYS, kind="graphs"), text="\n".join(lines), name="graph_walk")
    program = graphs[1]
    leaves = sorted(node.detail.split()[0] for node in program.nodes.values() if node.kind == "leaf")
    claim("the program's graph ends at two AccumulateGrad leaves: weight and bias", held=leaves == ["bias", "weight"])
    sources = {src for src, _, _ in program.edges}
    sinks = {node.kind for key, node in program.nodes.items() if key not in sources}
    claim("every path ends in an AccumulateGrad leaf or an empty slot", held=sinks == {"leaf", "none"})
    tutorial = graphs[0]
    mul_to_add = [
        (src, dst)
        for src, dst, _ in tutorial.edges
        if tutorial.nodes[src].name == "MulBackward0" and tutorial.nodes[dst].name == "AddBackward0"
    ]
    claim(
        "y * y points both its inputs at one AddBackward0 node", held=len(mul_to_add) == 2 and len(set(mul_to_add)) == 1
    )


if __name__ == "__main__":
    main()
