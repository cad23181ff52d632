"""Graph breaks on purpose: a print and a data-dependent branch split one function into three graphs."""

from __future__ import annotations

import contextlib
import io
import logging

import torch
import torch._dynamo

from pytorch_floors.claims import claim


def step(x: torch.Tensor) -> torch.Tensor:
    """Tensor work around two things Dynamo cannot put in a graph: a print, and a branch on a tensor's value."""
    y = torch.sin(x)
    # One space of indent: the break's report quotes this line, and two spaces there would make it a table row
    # that does not wrap on a phone.
    print(" (the print runs as plain Python, between two graphs)")
    z = y * 2
    # .item() turns a tensor into a Python number, which the `if` needs now: the graph must end to get it.
    if z.sum().item() > 0:
        z = z + 1
    return torch.relu(z)


PRINT_LINE = 'print(" (the print'
BRANCH_LINE = "if z.sum().item() > 0"


def graph_ops(graph: torch.fx.GraphModule) -> list[str]:
    """What a graph Dynamo built runs, in order: its function calls and its method calls (`z.sum()` is one)."""
    nodes = graph.graph.nodes
    return [getattr(n.target, "__name__", str(n.target)) for n in nodes if n.op in ("call_function", "call_method")]


def main() -> None:
    torch._dynamo.reset()
    # Dynamo also logs each break as a warning; the explanation below says the same.
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    x = torch.linspace(0.1, 1.0, 8)  # positive: the branch is taken, so z + 1 is traced too
    print("torch._dynamo.explain(step)(x) runs step once under Dynamo:")
    explained = torch._dynamo.explain(step)(x)
    print(f"graphs: {explained.graph_count}, graph breaks: {explained.graph_break_count}, ops: {explained.op_count}")
    lines = []
    for number, reason in enumerate(explained.break_reasons, 1):
        frame = reason.user_stack[-1] if reason.user_stack else None
        where = (frame.line or "").strip() if frame is not None else "?"
        lines.append(where)
        print(f"break {number}: {str(reason.reason).splitlines()[0].strip()}\n         at: {where}")
    for number, graph in enumerate(explained.graphs, 1):
        inputs = [str(n.target) for n in graph.graph.nodes if n.op == "placeholder"]
        print(f"graph {number}: takes {inputs}, runs {graph_ops(graph)}")
    claim(
        "a print and a branch on a tensor's value make two graph breaks, so Dynamo builds three graphs",
        held=explained.graph_break_count == 2 and explained.graph_count == 3,
        detail=f"{explained.graph_break_count} breaks, {explained.graph_count} graphs",
    )
    claim(
        "each break is reported at the line that caused it",
        held=len(lines) == 2 and lines[0].startswith(PRINT_LINE) and lines[1].startswith(BRANCH_LINE),
        detail=" | ".join(lines),
    )
    before_branch = graph_ops(explained.graphs[1]) if explained.graph_count == 3 else []
    claim(
        "the sum the branch needs is computed in the graph that the branch's break ends; only .item() leaves it",
        held="sum" in before_branch and not any("item" in graph_ops(graph) for graph in explained.graphs),
        detail=f"graph 2 runs {before_branch}",
    )
    torch._dynamo.reset()
    compiled = torch.compile(step, backend="eager")
    with contextlib.redirect_stdout(io.StringIO()):  # the print again, four times
        same = torch.equal(compiled(x), step(x)) and torch.equal(compiled(-x), step(-x))
    claim("with its breaks, the compiled function still returns what the eager one returns, either branch", held=same)
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
