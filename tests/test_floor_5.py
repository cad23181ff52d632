"""Pattern tests for Floor 5, the graph: each asserts what the page states, never a measured number."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch

Loader = Callable[[str], ModuleType]


def test_autograd_gradient_equals_the_hand_derivation(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/chain_rule.py")
    ones = torch.ones(2, 2)
    assert torch.equal(proof.autograd_gradient(ones), proof.hand_gradient(ones))
    assert torch.equal(proof.autograd_gradient(ones), 1.5 * (ones + 2))
    torch.manual_seed(1)
    x = torch.randn(4, 6)
    assert torch.allclose(proof.autograd_gradient(x), proof.hand_gradient(x), rtol=1e-6, atol=1e-6)
    assert torch.allclose(proof.hand_gradient(x), 6 * (x + 2) / x.numel())


def test_graph_walk_ends_at_accumulate_grad_leaves(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/graph_walk.py")
    program = proof.program_graph()
    kinds = {node.name: node.kind for node in program.nodes.values()}
    leaves = sorted(node.detail.split()[0] for node in program.nodes.values() if node.kind == "leaf")
    assert leaves == ["bias", "weight"]
    assert {"NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0", "TBackward0"} <= set(kinds)
    # every path ends in an AccumulateGrad leaf or an empty slot: nothing else is a sink
    sources = {src for src, _, _ in program.edges}
    sinks = [node for key, node in program.nodes.items() if key not in sources]
    assert {node.kind for node in sinks} == {"leaf", "none"}


def test_tutorial_graph_reuses_one_node_for_y_times_y(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/graph_walk.py")
    graph = proof.tutorial_graph()
    mul_to_add = [
        (src, dst)
        for src, dst, _ in graph.edges
        if graph.nodes[src].name == "MulBackward0" and graph.nodes[dst].name == "AddBackward0"
    ]
    assert len(mul_to_add) == 2
    assert len(set(mul_to_add)) == 1  # both inputs of y * y point at the same AddBackward0 node
    assert sum(1 for node in graph.nodes.values() if node.name == "AddBackward0") == 1


def test_graph_figure_is_self_contained_svg(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/graph_walk.py")
    svg = proof.figure([proof.tutorial_graph(), proof.program_graph()])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<title" in svg and "<desc" in svg and "currentColor" in svg
    assert "<script" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert svg.count(">AccumulateGrad</text>") == 3  # x, weight, bias


def test_saved_bytes_grow_linearly_with_batch(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/saved_tensors.py")
    rows = proof.growth([8, 32, 128])
    batches = [row[0] for row in rows]
    references = {row[1] for row in rows}
    params = {row[2] for row in rows}
    activations = [row[3] for row in rows]
    assert len(references) == 1  # the same tensors are saved, whatever the batch
    assert len(params) == 1 and params.pop() > 0  # a weight view is saved and does not grow
    for index in range(1, len(rows)):
        growth = activations[index] / activations[index - 1]
        assert growth == pytest.approx(batches[index] / batches[index - 1], rel=0.01)


def test_saved_tensors_name_their_nodes(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/saved_tensors.py")
    saved = proof.record_forward(proof.make_mlp(), 16)
    owners = {item.owner for item in saved}
    assert "input x" in owners and "target y" in owners
    assert [item.owner for item in saved if item.owner.startswith("parameter")] == ["parameter 2.weight"]
    nodes = {item.node.split(".")[0] for item in saved}
    assert {"AddmmBackward0", "ReluBackward0", "LogSoftmaxBackward0", "NllLossBackward0"} <= nodes
    assert len({item.storage for item in saved}) < len(saved)  # some saved tensors share a storage


def test_second_backward_raises_graph_freed(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_rules.py")
    message = proof.second_backward_error()
    assert "backward through the graph a second time" in message
    assert "retain_graph=True" in message


def test_retained_graph_gradients_add_up(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_rules.py")
    once, twice = proof.retained_twice()
    assert torch.allclose(twice, 2 * once)
    full, summed = proof.accumulated(chunks=4)
    assert torch.allclose(full, summed, atol=1e-6)
    assert full.abs().max() > 0


def test_zero_grad_sets_grads_to_none_by_default(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_rules.py")
    default, largest = proof.after_zero_grad()
    assert default is None
    assert largest == 0.0


def test_no_grad_and_inference_mode_save_nothing(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/recording_off.py")
    recorded, _ = proof.forward_under("grad mode (default)", batch=8)
    no_grad, _ = proof.forward_under("torch.no_grad()", batch=8)
    inference, _ = proof.forward_under("torch.inference_mode()", batch=8)
    assert recorded.saved_count > 0 and recorded.saved_bytes > 0 and recorded.requires_grad
    for row in (no_grad, inference):
        assert row.saved_count == 0 and row.saved_bytes == 0
        assert not row.requires_grad and not row.has_grad_fn
    assert inference.is_inference and not no_grad.is_inference and not recorded.is_inference


def test_inference_tensors_cannot_join_autograd_later(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/recording_off.py")
    assert proof.reuse_in_autograd("torch.inference_mode()").startswith("RuntimeError")
    assert proof.reuse_in_autograd("torch.no_grad()").startswith("fine")


def test_backward_releases_each_node_right_after_it_runs(load_proof: Loader) -> None:
    """The engine frees a node's saved tensors once that node has run, not when the pass ends."""
    proof = load_proof("5-autograd/release_during_backward.py")
    rows = proof.trace_backward(retain_graph=False)
    held = [bytes_held for _, bytes_held, _ in rows]
    assert held[0] > 0
    assert held == sorted(held, reverse=True)  # never grows during the pass
    assert held[-1] == 0  # gone before the last node (AccumulateGrad) runs, not after the pass
    assert 0 < held[len(held) // 2] < held[0]  # and already partly gone half-way through
    names = [name for name, _, _ in rows]
    for position, (_, _, released) in enumerate(rows):
        # everything that ran before a node, except the saving-free sum at the top, has released
        assert released == [n for n in names[1:position]]


def test_retain_graph_keeps_every_saved_tensor_through_the_pass(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/release_during_backward.py")
    rows = proof.trace_backward(retain_graph=True)
    assert len({bytes_held for _, bytes_held, _ in rows}) == 1
    assert all(released == [] for _, _, released in rows)


def test_scalar_backward_is_backward_with_a_seed_of_one(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_edges.py")
    implicit, explicit = proof.implicit_versus_explicit_seed()
    assert torch.equal(implicit, explicit)
    assert "scalar outputs" in proof.non_scalar_error()


def test_retained_second_backward_doubles_the_tutorial_gradient(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_edges.py")
    once, twice = proof.retained_twice()
    assert torch.equal(once, torch.full((2, 2), 4.5))
    assert torch.equal(twice, torch.full((2, 2), 9.0))


def test_only_floating_and_complex_tensors_require_grad(load_proof: Loader) -> None:
    proof = load_proof("5-autograd/backward_edges.py")
    outcomes = {text: proof.requires_grad_outcome(make) for text, make in proof.REQUIRES_GRAD.items()}
    accepted = [text for text, outcome in outcomes.items() if outcome == "accepted"]
    assert accepted == [text for text in outcomes if "float32" in text or "complex64" in text]
    refused = [outcome for outcome in outcomes.values() if outcome != "accepted"]
    assert len(refused) == 2 and all("floating point" in message for message in refused)
