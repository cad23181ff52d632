"""Checks beyond the claims for the proofs that extend the dispatcher and autograd (Floors 4 and 5).

The proofs register operators in the process that runs them; a test process may import a proof
more than once (`load_proof`), so registering must be idempotent, and the dump parsers must read
what the running torch prints.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import torch


def test_the_custom_op_registers_once_and_counts_its_kernels(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/custom_op.py")
    op = proof.define()
    assert proof.define() is op, "a second define() returns the operator already registered"
    rows = {key: (path, kinds) for key, path, kinds in proof.registrations()}
    assert rows["CPU"] == ("custom_ops.py", "boxed") and "Meta" in rows
    _, calls = proof.ran(lambda: op(torch.ones(2, 3, device="meta"), 1.0))
    assert calls == {"fake": 1}
    # A second import (a new module) registers again without an error, and its kernels take over.
    again = load_proof("4-dispatcher/custom_op.py")
    again.define()
    _, calls = again.ran(lambda: torch.ops.floors.soft_clip(torch.ones(2), 1.0))
    assert calls == {"kernel": 1}


def test_the_dump_parsers_read_every_registration(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/boxed_unboxed.py")
    proof.define_python_operator()
    proof.define_python_operator()  # idempotent
    cpu = [kinds for key, _, kinds in proof.registrations("aten::add.Tensor") if key == "CPU"]
    assert cpu == [{"boxed", "unboxed"}]
    table = proof.slots("floors_boxing::twice")
    assert table["CPU"][0] == "kernel" and table["Python"][0] == "fallback"
    assert proof.second_fallback_refused("AutocastCPU") == proof.second_fallback_refused("AutocastCPU")


def test_data_and_detach_differ_only_in_the_counter(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("5-autograd/views_inplace.py")
    version, error, grad = proof.saved_then_modified("a.data")
    assert (version, error) == (0, None) and grad is not None
    version, error, grad = proof.saved_then_modified("a.detach()")
    assert version == 1 and error is not None and grad is None


def test_the_wrong_backward_gives_another_gradient(load_proof: Callable[[str], ModuleType]) -> None:
    """What gradcheck catches in the proof is a real difference, not a tolerance artefact."""
    proof = load_proof("5-autograd/custom_function.py")
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    seed = torch.randn(5, dtype=torch.float64)
    (right,) = torch.autograd.grad(proof.Normalize.apply(x), x, seed)
    (wrong,) = torch.autograd.grad(proof.WrongNormalize.apply(x), x, seed)
    assert not torch.allclose(right, wrong)
    assert proof.recorded_nodes(proof.Normalize.apply(x)) == ["NormalizeBackward"]
