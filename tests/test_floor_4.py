"""Pattern tests for Floor 4, the dispatcher: the patterns its page states, asserted on this machine."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import torch

from pytorch_floors.measure import detect_device


def test_add_schema_and_which_overloads_are_dispatcher_ops(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_schema.py")
    rows = {overload: (schema, registered) for overload, schema, registered in proof.overload_schemas("add")}
    assert rows["Tensor"] == ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", True)
    assert "Tensor(a!) out" in rows["out"][0]
    on_dispatcher = {overload for overload, (_, registered) in rows.items() if registered}
    assert {"Tensor", "Scalar", "out", "Scalar_out"} <= on_dispatcher
    assert not rows["int"][1] and not rows["str"][1]


def test_key_sets(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/dispatch_keys.py")
    keys = {label: proof.keys(tensor) for label, tensor in proof.examples().items()}
    plain, grad = keys["torch.ones(3)"], keys["torch.ones(3, requires_grad=True)"]
    assert any(key.startswith("Autograd") for key in grad)
    assert plain == grad  # requires_grad does not change the key set in this release
    assert keys["torch.ones(3, dtype=torch.int64)"] == plain  # nor does the dtype
    meta = keys['torch.ones(3, device="meta")']
    assert "Meta" in meta and "CPU" not in meta and "AutogradMeta" in meta
    assert not any(key.startswith("Autograd") for key in keys["made under torch.inference_mode()"])
    include, exclude = proof.tls_sets()
    assert "BackendSelect" in include and "AutocastCPU" in exclude
    extra = proof.accelerator_example()
    assert (extra is None) == (detect_device().type == "cpu")


def test_keys_are_visited_in_priority_order(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/dispatch_order.py")
    a = torch.ones(3, requires_grad=True)

    rows = proof.walk("aten::add.Tensor", a)
    order = [key for key, _, _ in rows]
    assert order == ["AutogradCPU", "ADInplaceOrView", "BackendSelect", "CPU"]
    assert proof.first_kernel(rows) == "AutogradCPU"
    kinds = {key: kind for key, kind, _ in rows}
    assert kinds["ADInplaceOrView"] == kinds["BackendSelect"] == "fallthrough"
    assert kinds["CPU"] == "kernel"

    linear = {key: kind for key, kind, _ in proof.walk("aten::linear", a)}
    assert linear["AutogradCPU"] == "math kernel"  # a decomposition, run at the autograd key

    with torch.autocast("cpu"):
        assert proof.first_kernel(proof.walk("aten::addmm", a)) == "AutocastCPU"
    with torch.inference_mode():
        inference = proof.walk("aten::add.Tensor", a)
    assert "AutogradCPU" not in [key for key, _, _ in inference]
    assert proof.first_kernel(inference) == "CPU"
    with proof._PassThrough():
        moded = [key for key, _, _ in proof.walk("aten::add.Tensor", a)]
    assert moded[0] == "PythonTLSSnapshot"
    assert moded.index("AutogradCPU") < moded.index("Python") < moded.index("CPU")


def test_op_log_of_the_program(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_log.py")
    log = proof.run_program()
    above, below = log[proof.FORWARD]
    assert above == ["torch.nn.functional.linear", "torch.nn.functional.cross_entropy"]
    assert below.index("aten.t.default") < below.index("aten.addmm.default")
    assert "aten._log_softmax.default" in below and "aten.nll_loss_forward.default" in below
    assert not any("linear" in op or "cross_entropy" in op for op in below)  # decomposed above Python key

    above, below = log[proof.BACKWARD]
    assert above == ["torch.Tensor.backward"]
    for op in ("aten.nll_loss_backward.default", "aten._log_softmax_backward_data.default", "aten.mm.default"):
        assert op in below
    assert below.count("aten.detach.default") >= 2

    above, below = log[proof.UPDATE]
    assert below.count("aten.add_.Tensor") == 2  # one in-place update per parameter
    assert above.count("torch.Tensor.add_") == 2
    assert proof.compress(["a", "a", "b", "a"]) == "a ×2, b, a"


def test_operator_table(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/op_count.py")
    names = proof.operator_names()
    spaces = proof.by_namespace(names)
    assert spaces.most_common(1)[0][0] == "aten"
    assert spaces["aten"] > sum(spaces.values()) / 2
    assert len(proof.base_names(names)) < len(names)
    aten = [name for name in names if name.startswith("aten::")]
    assert "aten::add.Tensor" in aten and "aten::addmm" in aten
    assert proof.with_kernel(aten, "Meta") > proof.with_kernel(aten, "CPU") > 0
    assert proof.with_kernel(aten, "CompositeImplicitAutograd") > 0


def test_meta_device_gives_shapes_without_memory(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("4-dispatcher/meta_run.py")
    real, meta = proof.program_shapes("cpu"), proof.program_shapes("meta")
    for name, tensor in meta.items():
        assert tensor.device.type == "meta"
        assert tensor.shape == real[name].shape
        assert tensor.untyped_storage().data_ptr() == 0
    model = proof.big_model(width=2048, depth=4)
    assert all(p.device.type == "meta" and p.untyped_storage().data_ptr() == 0 for p in model.parameters())
    out = model(torch.empty(8, 2048, device="meta"))
    assert out.shape == (8, 2048) and out.untyped_storage().data_ptr() == 0


def test_trace_of_a_plus_b_reports_every_layer(load_proof: Callable[[str], ModuleType]) -> None:
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
    assert table["ADInplaceOrView"].startswith("fallthrough ")  # out-of-place: nothing to do there
    assert table["CPU"].startswith("kernel ")
    visited = steps[2].seen.split(" > ")
    assert visited.index("AutogradCPU kernel") < visited.index("CPU kernel") == len(visited) - 1  # backend last
    assert "AddBackward0" in steps[3].seen
    assert "(2, 3) float64" in steps[5].seen  # broadcast and promoted by TensorIterator
    assert "same keys (True)" in steps[6].seen  # the dtype is not a dispatch key
    assert proof.registration_source(table["AutogradCPU"]) is None  # VariableType_*.cpp exists only in a build tree
    assert proof.registration_source(table["ADInplaceOrView"]).endswith(
        "VariableFallbackKernel.cpp#L" + (table["ADInplaceOrView"].rpartition(":")[2])
    )
    assert proof.source_link("c10/core/TensorImpl.h").endswith(f"{torch.version.git_version}/c10/core/TensorImpl.h")
