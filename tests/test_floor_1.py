"""Pattern tests for Floor 1, your program: what each line makes, default dtypes, NumPy sharing, views."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import torch

Load = Callable[[str], ModuleType]


def test_each_line_does_what_the_page_says(load_proof: Load) -> None:
    proof = load_proof("1-program/line_by_line.py")
    walk = proof.walk_program(batch=8, features=12, classes=3)
    assert len(walk.steps) == 5
    assert walk.checks == {
        "loss_is_finite": True,
        "grads_none_before": True,
        "grad_shapes_match": True,
        "step_matches_sgd": True,
    }


def test_default_dtypes(load_proof: Load) -> None:
    proof = load_proof("1-program/creation_and_dtypes.py")
    dtypes = {text: t.dtype for text, t in proof.created()}
    assert dtypes["torch.tensor([[1, 2], [3, 4]])"] == torch.int64
    assert dtypes["torch.tensor([1.0, -1.0])"] == torch.get_default_dtype() == torch.float32
    assert dtypes["torch.tensor([1, 2.5])"] == torch.float32
    assert dtypes["torch.tensor([True, False])"] == torch.bool
    assert dtypes["torch.randn(2, 3)"] == torch.float32
    assert dtypes["torch.arange(5)"] == torch.int64
    assert dtypes["torch.full((2,), 7)"] == torch.int64
    # NumPy arrays keep their own dtype: NumPy's default float is float64.
    assert dtypes["torch.tensor(np.array([1.0, 2.0]))"] == torch.float64


def test_from_numpy_shares_and_tensor_copies(load_proof: Load) -> None:
    proof = load_proof("1-program/numpy_sharing.py")
    assert proof.write_through("from_numpy") is True
    assert proof.write_through("as_tensor") is True
    assert proof.write_through("tensor") is False
    assert proof.back_to_numpy_shares() is True


def test_wrapping_is_flat_and_copying_grows(load_proof: Load) -> None:
    proof = load_proof("1-program/numpy_sharing.py")
    wrap_growth = proof.creation_time("from_numpy", 1_000_000) / proof.creation_time("from_numpy", 1_000)
    copy_growth = proof.creation_time("tensor", 1_000_000) / proof.creation_time("tensor", 1_000)
    assert wrap_growth < 5
    assert copy_growth > 5
    assert copy_growth > 2 * wrap_growth


def test_view_shares_reshape_may_copy(load_proof: Load) -> None:
    proof = load_proof("1-program/view_and_reshape.py")
    rows = {text: (shape, shared) for text, shape, shared in proof.shapes_and_sharing()}
    assert rows["x.view(-1, 8)"] == ((2, 8), True)
    assert rows["x.view(2, -1, 2)"] == ((2, 4, 2), True)
    assert rows["x.reshape(-1)"] == ((16,), True)
    assert rows["x[0]"][1] is True
    assert rows["x[[0, 2]]"][1] is False
    assert rows["x.t()"][1] is True
    assert rows["x.t().reshape(-1)"][1] is False
    refusals = dict(proof.refusals())
    assert refusals["x.t().view(-1)"] != "no error"
    assert "only one dimension can be inferred" in refusals["x.view(-1, -1)"]
    assert refusals["x.view(3, -1)"] != "no error"


def test_from_numpy_refuses_a_negative_stride(load_proof: Load) -> None:
    proof = load_proof("1-program/numpy_sharing.py")
    strides, message = proof.reversed_array_error()
    assert strides[0] < 0
    assert "negative" in message


def test_to_returns_the_same_object_only_when_nothing_changes(load_proof: Load) -> None:
    proof = load_proof("1-program/to_returns.py")
    x = torch.arange(4, dtype=torch.float32)
    before = x.clone()
    results = dict(proof.to_cases(x))
    assert results["x.to(torch.float32)"] is x
    assert results['x.to("cpu")'] is x
    assert results["x.cpu()"] is x
    changed = results["x.to(torch.float64)"]
    assert changed is not x and changed.dtype == torch.float64
    assert proof.describe(x, changed) == "a new tensor, new memory"
    assert proof.describe(x, results["x.to(torch.float32, copy=True)"]) == "a new tensor, new memory"
    assert torch.equal(x, before) and x.dtype == torch.float32
