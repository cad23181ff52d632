"""Pattern tests for Floor 3, the boundary: the patterns its page states, asserted on this machine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
import torch


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Run a timing test on one intra-op thread, as the proof does, then restore the setting."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_binding_is_in_no_shipped_source_but_in_the_library(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/binding_in_library.py")
    files = proof.source_files()
    assert any(p.suffix == ".py" for p in files) and any(p.suffix == ".h" for p in files)
    assert proof.files_mentioning(proof.NAME, files) == []

    data = proof.python_library().read_bytes()
    signatures = proof.signature_strings(data, "randn")
    assert signatures and all(s.startswith("randn(") and "size" in s for s in signatures)

    tables = proof.elf_symbols(data)
    if ".dynsym" in tables:  # an ELF build: the binding is never exported
        assert not any(proof.NAME.encode() in s.name for s in tables[".dynsym"])
    if ".symtab" in tables:  # an unstripped build: the static function is named, and local
        found = [s for s in tables[".symtab"] if (m := proof.BINDING.match(s.name)) and m.group(1) == b"randn"]
        assert [(s.kind, s.binding) for s in found if s.kind == "FUNC"] == [("FUNC", "LOCAL")]
        assert found[0].size > 0
        bindings = [s for s in tables[".symtab"] if proof.BINDING.match(s.name) and s.kind == "FUNC"]
        assert len(bindings) > 1000
        assert all(s.binding == "LOCAL" for s in bindings)


def test_parser_error_lists_the_signatures_the_library_holds(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/parser_error.py")
    library = load_proof("3-boundary/binding_in_library.py")
    messages = {text: proof.parser_message(call) for text, call in proof.CALLS.items()}

    randn_bad_dtype, max_bad_dim, _float_first, randn_float = messages.values()
    assert "invalid combination of arguments" in randn_bad_dtype
    listed = proof.listed_signatures(randn_bad_dtype)
    assert len(listed) >= 2
    assert all(s.startswith("(tuple of ints size") for s in listed)
    stored = library.signature_strings(library.python_library().read_bytes(), "randn")
    assert len(listed) == len(stored)

    assert len(proof.listed_signatures(max_bad_dim)) >= 3
    assert proof.listed_signatures(randn_float) == []
    assert "argument 'size'" in randn_float


def test_same_argument_count_gives_different_errors(load_proof: Callable[[str], ModuleType]) -> None:
    """randn(64.0, 784) and randn(64, 784.0) have the same count; only the first lists every signature.

    The int-list check looks at the first positional element only: a float there matches no
    signature, a float second matches one and fails later while converting the list.
    """
    proof = load_proof("3-boundary/parser_error.py")
    float_first = proof.parser_message(proof.CALLS["torch.randn(64.0, 784)"])
    float_second = proof.parser_message(proof.CALLS["torch.randn(64, 784.0)"])
    full_list = proof.parser_message(proof.CALLS['torch.randn(64, 784, dtype="float32")'])
    assert proof.listed_signatures(float_first) == proof.listed_signatures(full_list)
    assert proof.listed_signatures(float_second) == []
    assert "pos 2" in float_second


def test_crossover_interpolates_on_log_axes(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/crossing_cost.py")
    assert proof.crossover([(1, 1.0), (10, 1.0), (100, 4.0)]) == pytest.approx(10**1.5)
    assert proof.crossover([(1, 1.0), (10, 1.5)]) == float("inf")


def test_eager_add_has_a_flat_floor_then_grows_with_size(
    load_proof: Callable[[str], ModuleType], one_thread: None
) -> None:
    proof = load_proof("3-boundary/crossing_cost.py")
    small = proof.sweep([1, 16, 256])
    floor = small[0][1]
    # Flat floor: 256 elements cost about what 1 element costs.
    assert all(t < 2.5 * floor for _, t in small)

    big = proof.sweep([1 << 22, 1 << 24], reuse_output=True)
    (_, t_4m), (_, t_16m) = big
    # Far above the floor, and roughly linear: 4x the data takes a few times the time.
    assert t_16m > 100 * floor
    assert 2.0 < t_16m / t_4m < 16.0

    cross = proof.crossover(small + proof.sweep([1 << 12, 1 << 16, 1 << 20]))
    assert 256 < cross < 1 << 20


def test_tiny_add_python_then_numpy_then_torch(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/tiny_add.py")
    times = proof.per_call(samples=7)
    python, numpy, torch_add = (
        times["Python function add(x, y)"],
        times["NumPy array a + b"],
        times["torch tensor a + b"],
    )
    assert python < numpy < torch_add
    assert torch_add > 1.5 * numpy
