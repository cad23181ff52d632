"""Pattern tests for floor 7 (memory): the proofs' claims, asserted with small sizes."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import torch

from pytorch_floors.measure import detect_device

Loader = Callable[[str], ModuleType]


def test_bytes_are_numel_times_element_size(load_proof: Loader) -> None:
    proof = load_proof("7-memory/bytes_per_element.py")
    rows = proof.element_sizes((3, 5))
    names = [name for name, _, _ in rows]
    assert {"float64", "float32", "bfloat16", "int64", "uint16", "bool"} <= set(names)
    for name, size, total in rows:
        assert size == getattr(torch, name).itemsize
        assert total == 15 * size
    sizes = dict((name, size) for name, size, _ in rows)
    assert sizes["float64"] == 2 * sizes["float32"] == 4 * sizes["bfloat16"]
    assert sizes["bool"] == 1
    seen, held = proof.slice_versus_storage()
    assert seen * 8 == held


def test_meta_accounting_allocates_nothing(load_proof: Loader) -> None:
    proof = load_proof("7-memory/meta_accounting.py")
    w = proof.big_matrix()
    assert w.device.type == "meta" and w.data_ptr() == 0
    assert w.nbytes == 12288 * 49152 * 4
    result = proof.account(2, d_model=2048, hidden=8192)
    assert result["parameters"] == result["formula"] == proof.formula_parameters(2, 2048, 8192)
    assert result["bytes"] == 4 * result["parameters"]
    assert result["devices"] == 1
    assert result["rss_growth"] < result["bytes"] / 100


def test_address_arithmetic_equals_indexing(load_proof: Loader) -> None:
    proof = load_proof("7-memory/address_arithmetic.py")
    views = proof.layouts()
    base = views["base"]
    for t in views.values():
        assert proof.check_addresses(t) == t.numel()
        assert proof.rebuild_with_as_strided(t, base)
    odd = torch.randn(3, 4, 5).permute(2, 0, 1)[1:, ::2, 1:]
    assert proof.check_addresses(odd) == odd.numel()
    v = views["base[1:, ::2]"]
    assert proof.element_offset(v, (2, 1)) == v.storage_offset() + 2 * v.stride(0) + v.stride(1)


def test_views_share_storage_and_copies_do_not(load_proof: Loader) -> None:
    proof = load_proof("7-memory/views_and_copies.py")
    shared = {name: same for name, same, _, _ in proof.classify()}
    for name in ("x[1]", "x[:, 1]", "x.t()", "x.view(4, 3)", "x.reshape(12)", "x.contiguous()"):
        assert shared[name], name
    for name in ("x.t().reshape(12)", "x.t().contiguous()", "x.clone()", "x * 1"):
        assert not shared[name], name
    before, after = proof.mutate_through_view()
    assert before != after == 100.0
    message = proof.view_error()
    assert "view size is not compatible" in message and ".reshape" in message


def test_view_cost_is_flat_while_copy_cost_grows(load_proof: Loader) -> None:
    proof = load_proof("7-memory/view_vs_copy_cost.py")
    small, large = proof.measure(sides=(64, 1024), samples=7)
    assert large["bytes"] / small["bytes"] == 256
    assert large["view"] / small["view"] < 3
    assert large["clone"] / small["clone"] > 16
    assert large["transpose_copy"] / small["transpose_copy"] > 16
    assert large["view"] < large["clone"] / 10


def test_training_step_estimate_matches_measurement(load_proof: Loader) -> None:
    proof = load_proof("7-memory/training_step_memory.py")
    for widths, batch in (((784, 10), 64), ((784, 512, 512, 10), 64), ((32, 48, 16, 5), 8)):
        guess, real = proof.estimate(widths, batch), proof.measure(widths, batch)
        assert guess.keys() == real.keys()
        for key, value in real.items():
            assert value > 0
            assert abs(guess[key] - value) <= 0.02 * value, (widths, key, guess[key], value)
        assert real["gradients"] == real["parameters"]
        assert 2 * real["parameters"] <= real["Adam state"] < 2.01 * real["parameters"]


def test_allocator_counters_and_first_touch(load_proof: Loader) -> None:
    proof = load_proof("7-memory/allocator.py")
    if detect_device().type == "cuda":
        rows = {step: (allocated, reserved) for step, allocated, reserved in proof.cuda_story(64)}
        start, after_alloc, after_del = rows["start"], rows["t = torch.empty(64 MiB)"], rows["del t"]
        assert after_alloc[0] - start[0] >= 64 << 20
        assert after_del[0] == start[0] and after_del[1] == after_alloc[1]
    else:
        assert torch.cuda.memory_allocated() == 0 and torch.cuda.memory_reserved() == 0
    size = 64 << 20
    steps = dict(proof.cpu_story(64))
    assert steps["t = torch.empty(64 MiB)"] < size // 4
    assert steps["t.fill_(1.0)  (first write)"] > size * 3 // 4
    assert steps["del t"] < size // 4
    assert proof.alignment_of_cpu_tensors() >= 64


def test_strides_follow_the_row_major_rule(load_proof: Loader) -> None:
    proof = load_proof("7-memory/rank_and_strides.py")
    assert proof.row_major_strides((2, 3, 4)) == torch.zeros(2, 3, 4).stride() == (12, 4, 1)
    for shape in [(5,), (3, 7), (2, 1, 6, 4)]:
        assert proof.row_major_strides(shape) == torch.empty(shape).stride()
    assert [rank for _, rank, _ in proof.ranks()] == [0, 1, 2, 3, 4]


def test_attention_tensor_bytes_and_unit_gaps(load_proof: Loader) -> None:
    proof = load_proof("7-memory/rank_and_strides.py")
    q = proof.attention_tensor(torch.float32)
    assert q.dim() == 4
    assert q.numel() * 4 == proof.tensor_bytes(q) == 2 * proof.tensor_bytes(proof.attention_tensor(torch.bfloat16))
    gaps = [gap for _, _, gap in proof.unit_gaps()]
    assert gaps == sorted(gaps)  # the gap grows with each step up the ladder
    assert 0.07 < gaps[-1] < 0.08  # the page: GiB and GB differ by about 7 %
