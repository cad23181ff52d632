"""Pattern tests for Part 0, the map: each walk-down proof shows what its paragraph claims."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import torch

Load = Callable[[str], ModuleType]


def test_program_loss_is_finite_and_grads_have_parameter_shapes(load_proof: Load) -> None:
    proof = load_proof("0-map/the_program.py")
    run = proof.run_program(batch=8, features=12, classes=3)
    assert math.isfinite(run.loss.item())
    assert run.loss.grad_fn is not None
    params = dict(run.model.named_parameters())
    assert set(run.grads) == set(params) == {"weight", "bias"}
    for name, grad in run.grads.items():
        assert grad.shape == params[name].shape
    assert run.weight_change > 0


def test_stub_is_tiny_next_to_the_libraries(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_2_library.py")
    stub, libraries = proof.library_sizes()
    assert stub > 0
    assert max(libraries.values()) > 1000 * stub
    assert sum(libraries.values()) > 1000 * stub


def test_small_adds_cost_the_same_fixed_price(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_3_boundary.py")
    one, thousand = proof.add_cost(1), proof.add_cost(1000)
    # A thousand times the elements must not cost anywhere near a thousand times the time.
    assert thousand < 20 * one


def test_one_training_step_goes_through_the_expected_operators(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_4_dispatcher.py")
    names = proof.ops_of_one_step(batch=4, features=6, classes=3)
    assert all(name.startswith("aten::") for name in names)
    for expected in ("aten::addmm", "aten::mm", "aten::add_.Tensor"):
        assert expected in names
    # Forward comes before backward: addmm (forward) precedes mm (the weight gradient).
    assert names.index("aten::addmm") < names.index("aten::mm")


def test_graph_starts_at_the_loss_and_ends_at_the_parameters(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_5_graph.py")
    names = proof.graph_nodes(proof.program_loss())
    assert names[0] == "NllLossBackward0"
    assert names.count("AccumulateGrad") == 2  # one per parameter: weight and bias
    assert "AddmmBackward0" in names


def test_matmul_rate_is_positive_and_grows_with_size(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_6_kernels.py")
    cpu = torch.device("cpu")
    small, large = proof.matmul_flops(8, cpu), proof.matmul_flops(256, cpu)
    assert small > 0
    assert large > 2 * small  # tiny products are overhead-bound; larger ones keep the kernel busy


def test_python_loops_are_far_slower_than_the_kernel(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_6_kernels.py")
    cpu = torch.device("cpu")
    assert proof.matmul_flops(512, cpu) > 30 * proof.python_loop_flops(32)  # the page: "no Python loop comes near"


def test_copy_bandwidth_is_a_sane_rate(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_8_chip.py")
    rate = proof.copy_bandwidth(2**20, torch.device("cpu"))
    assert 1e8 < rate < 1e13  # bytes per second: between 0.1 GB/s and 10 TB/s


def test_territory_finds_the_libraries_and_blas(load_proof: Load) -> None:
    proof = load_proof("0-map/territory.py")
    for name in ("libtorch_cpu", "libtorch_python", "libc10"):
        assert proof.library(name) is not None
    cpu, python = proof.library("libtorch_cpu"), proof.library("libtorch_python")
    assert cpu.stat().st_size > python.stat().st_size
    assert proof.blas() != "unknown"
