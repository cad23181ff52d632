"""Pattern tests for Floor 2, Python: compiled built-ins, a thin Python layer, import cost, __torch_function__."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch

Load = Callable[[str], ModuleType]


def test_randn_is_compiled_and_the_wrappers_are_python(load_proof: Load) -> None:
    proof = load_proof("2-python/what_randn_is.py")
    rows = {name: (kind, where) for name, kind, where in proof.kinds()}
    assert rows["torch.randn"] == ("builtin_function_or_method", "compiled: no Python source")
    assert rows["torch.nn.functional.linear"][0] == "builtin_function_or_method"
    assert rows["torch.nn.functional.cross_entropy"][1].startswith("nn/functional.py:")
    assert rows["torch.Tensor.backward"][1].startswith("_tensor.py:")
    assert rows["torch.optim.SGD.step"][1].startswith("optim/sgd.py:")
    assert torch.Tensor.__mro__[1] is torch._C.TensorBase
    from_c, from_python = proof.tensor_methods()
    assert from_c > 10 * from_python > 0


def test_python_is_a_small_fraction_of_the_compiled_bytes(load_proof: Load) -> None:
    proof = load_proof("2-python/package_on_disk.py")
    kinds = proof.classify(Path(torch.__file__).parent)
    total = proof.totals(kinds)
    assert len(kinds["stub"]) == 1
    assert total["python"] < 0.10 * total["compiled"]
    assert total["stub"] < 0.001 * total["library"]
    biggest = max(size for _, size in kinds["library"])
    assert biggest > total["python"]  # one compiled library outweighs all the Python source


def test_import_torch_costs_far_more_than_an_empty_interpreter(load_proof: Load) -> None:
    proof = load_proof("2-python/import_cost.py")
    m = proof.measure(runs=3)
    assert m["with_torch"] > 5 * m["empty"]
    assert 0 < m["import"] < m["with_torch"]
    assert m["torch_modules"] > 100
    assert m["modules"] > m["torch_modules"]


def test_loading_the_compiled_module_is_among_the_slowest_imports(load_proof: Load) -> None:
    proof = load_proof("2-python/import_cost.py")
    slowest = [name for name, _ in proof.slowest_modules(count=2)]
    assert "torch._C" in slowest


def test_torch_function_sees_the_calls(load_proof: Load) -> None:
    proof = load_proof("2-python/torch_function.py")
    seen, loss_class = proof.subclass_sees(batch=4, features=6)
    assert loss_class == "LoggingTensor"
    for name in ("torch.nn.functional.linear", "torch.nn.functional.cross_entropy", "torch.Tensor.backward"):
        assert name in seen
    assert "torch.randn" not in seen  # a factory has no tensor argument to ask
    calls = proof.mode_sees(batch=4, features=6)
    assert calls[0] == "torch.randn"
    assert "torch.Tensor.add_" in calls  # the optimizer's in-place update
    assert len(calls) > len(seen)
