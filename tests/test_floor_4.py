"""Pattern tests for Floor 4, the dispatcher: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

import torch

from conftest import ROOT
from pytorch_floors.measure import detect_device


def test_out_overloads_write_into_their_argument(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_schema.py")
    rows = {overload: schema for overload, schema, _ in proof.overload_schemas("add")}
    assert "Tensor(a!) out" in rows["out"]


def test_keys_and_the_accelerator_row(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/dispatch_keys.py")
    assert "AutogradMeta" in proof.keys(torch.ones(3, device="meta"))
    include, exclude = proof.tls_sets()
    assert "BackendSelect" in include and "AutocastCPU" in exclude
    assert (proof.accelerator_example() is None) == (detect_device().type == "cpu")


def test_op_log_details_and_its_compression(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_log.py")
    log = proof.run_program()
    _, below = log[proof.FORWARD]
    assert below.index("aten.t.default") < below.index("aten.addmm.default")
    assert "aten._log_softmax.default" in below and "aten.nll_loss_forward.default" in below
    _, below = log[proof.BACKWARD]
    for op in ("aten.nll_loss_backward.default", "aten._log_softmax_backward_data.default"):
        assert op in below
    assert below.count("aten.detach.default") >= 2
    assert log[proof.UPDATE][0].count("torch.Tensor.add_") == 2
    assert proof.compress(["a", "a", "b", "a"]) == "a ×2, b, a"


def test_operator_table_names(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_count.py")
    names = proof.operator_names()
    assert len(proof.base_names(names)) < len(names)
    aten = [name for name in names if name.startswith("aten::")]
    assert "aten::add.Tensor" in aten and "aten::addmm" in aten
    assert proof.with_kernel(aten, "CompositeImplicitAutograd") > 0


def test_trace_layers_and_source_links(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/trace_add.py")
    steps = proof.trace()
    assert [s.layer.split(". ", 1)[1] for s in steps] == [
        "binding",
        "key set",
        "dispatch table",
        "autograd kernel",
        "redispatch",
        "TensorIterator",
        "dtype switch",
        "vectorized loop",
    ]
    table = proof.dispatch_table()
    assert table["AutogradCPU"].startswith("kernel ")  # autograd has a kernel of its own for add
    assert proof.registration_source(table["AutogradCPU"]) is None  # VariableType_*.cpp exists only in a build tree
    assert proof.registration_source(table["ADInplaceOrView"]).endswith(
        "VariableFallbackKernel.cpp#L" + (table["ADInplaceOrView"].rpartition(":")[2])
    )
    assert proof.source_link("c10/core/TensorImpl.h").endswith(f"{torch.version.git_version}/c10/core/TensorImpl.h")


def test_the_trace_visits_the_keys_the_dispatch_order_proof_prints(load_proof: Callable[[str], ModuleType]) -> None:
    """The trace of `a + b` and the dispatch-order walk compute the call's keys the same way (thread sets applied)."""
    trace = load_proof("4-dispatcher/trace_add.py")
    order = load_proof("4-dispatcher/dispatch_order.py")
    a = torch.ones(3, requires_grad=True)
    walked = [key for key, _, _ in order.walk("aten::add.Tensor", a)]
    assert trace.call_keys(a, torch.ones(2, 1, dtype=torch.float64)) == walked
    visited = [entry.split()[0] for entry in trace.trace()[2].seen.split(" > ")]
    assert visited == walked and "AutocastCPU" not in visited
    _, excluded = trace.thread_sets()
    assert "AutocastCPU" in excluded


def test_the_meta_model_is_sized_from_the_machines_memory(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/meta_run.py")
    memory = proof.machine_memory()
    assert memory is None or memory > 1 << 28
    depth = proof.depth_for(1 << 30)
    assert 4 * depth * (proof.WIDTH**2 + proof.WIDTH) > 2 * (1 << 30) > 4 * (depth - 1) * (proof.WIDTH**2 + proof.WIDTH)
    assert proof.depth_for(None) == 32


def test_the_page_numbers_the_steps_of_a_plus_b_as_the_proof_prints_them(
    load_proof: Callable[[str], ModuleType],
) -> None:
    """Issue 60: the page's walk of `a + b` had 7 steps and pointed at "step 6" (the dtype switch) and "step 3"
    (the autograd kernel), while the proof prints 8 and numbers them 7 and 4: each number must be the proof's."""
    steps = {}
    for step in load_proof("4-dispatcher/trace_add.py").trace():
        number, name = step.layer.split(". ", 1)
        steps[int(number)] = name.lower()
    english = (ROOT / "docs/floors/4-dispatcher.md").read_text(encoding="utf-8")
    walk = english.split("{ #trace-a-plus-b }", 1)[1].split("\n### ", 1)[0]
    items = re.findall(r"^(\d+)\. \*\*(?:The )?([^*.(]+?)[.*]", walk, flags=re.MULTILINE)
    assert [(int(n), name.strip().lower()) for n, name in items] == sorted(steps.items())
    references = re.findall(r"([\w ]+?) of \[step (\d+)\]\(#trace-a-plus-b\)", english)
    assert references, "the page names steps of the walk elsewhere"
    for words, number in references:
        assert words.lower().endswith(steps[int(number)]), (words, number)
    chinese = (ROOT / "docs/zh/floors/4-dispatcher.md").read_text(encoding="utf-8")
    assert re.findall(r"\[第 (\d+) 步\]\(#trace-a-plus-b\)", chinese) == [n for _, n in references]
    zh_walk = chinese.split("{ #trace-a-plus-b }", 1)[1].split("\n### ", 1)[0]
    assert [int(n) for n in re.findall(r"^(\d+)\. \*\*", zh_walk, flags=re.MULTILINE)] == sorted(steps)
