"""Pattern tests for Floor 5, the graph: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

Loader = Callable[[str], ModuleType]


def test_the_program_graph_has_the_nodes_the_page_names(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/graph_walk.py")
    kinds = {node.name for node in proof.program_graph().nodes.values()}
    assert {"NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0", "TBackward0"} <= kinds


def test_graph_figure_is_self_contained_svg(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/graph_walk.py")
    svg = proof.figure([proof.tutorial_graph(), proof.program_graph()])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<title" in svg and "<desc" in svg and "currentColor" in svg
    assert "<script" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert svg.count(">AccumulateGrad</text>") == 3  # x, weight, bias


def test_saved_tensors_name_their_nodes(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/saved_tensors.py")
    saved = proof.record_forward(proof.make_mlp(), 16)
    owners = {item.owner for item in saved}
    assert "input x" in owners and "target y" in owners
    assert [item.owner for item in saved if item.owner.startswith("parameter")] == ["parameter 2.weight"]
    nodes = {item.node.split(".")[0] for item in saved}
    assert {"AddmmBackward0", "ReluBackward0", "LogSoftmaxBackward0", "NllLossBackward0"} <= nodes
    assert len({item.storage for item in saved}) < len(saved)  # some saved tensors share a storage
