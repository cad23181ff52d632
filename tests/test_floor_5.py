"""Pattern tests for Floor 5, the graph: the proofs' claims hold on this machine, and what is not a claim."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from pytorch_floors.claims import Claim

Loader = Callable[[str], ModuleType]


@pytest.mark.parametrize(
    "proof",
    [
        "chain_rule.py",
        "graph_walk.py",
        "saved_tensors.py",
        "backward_rules.py",
        "recording_off.py",
        "release_during_backward.py",
        "backward_edges.py",
    ],
)
def test_floor_5_claims_hold(proof_claims: Callable[[str], list[Claim]], proof: str) -> None:
    proof_claims(f"5-autograd/{proof}")


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
