"""More ways onto the dispatcher: an operator that writes in place, a C++ registration, a Python-dispatcher kernel."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch._C import DispatchKey
from torch._dispatch.python import enable_python_dispatcher
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from pytorch_floors.claims import claim, not_applicable

_DEFINED: dict[str, Any] = {}

CXX_SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

namespace {
// The kernel: an ordinary C++ function of typed arguments.
at::Tensor twice_cpu(const at::Tensor& x) { return x.add(x); }
}  // namespace

// The schema, in the floors_cxx namespace, and the kernel for the CPU key.
TORCH_LIBRARY(floors_cxx, m) { m.def("twice(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(floors_cxx, CPU, m) { m.impl("twice", &twice_cpu); }
"""
"""A whole C++ extension: one operator defined with `TORCH_LIBRARY`, its CPU kernel with `TORCH_LIBRARY_IMPL`."""


def define_clip() -> Any:
    """`floors::clip_(Tensor(a!) x, float limit) -> ()`: clamps `x` in place (once per process)."""
    if "clip_" not in _DEFINED:

        @torch.library.custom_op("floors::clip_", mutates_args={"x"}, device_types="cpu")
        def clip_(x: torch.Tensor, limit: float) -> None:
            x.clamp_(-limit, limit)

        _DEFINED["clip_"] = clip_
    return _DEFINED["clip_"]


def define_twice_in_python() -> Any:
    """`floors::twice_py(Tensor x) -> Tensor`, a plain Python custom operator to hang a Python-dispatcher kernel on."""
    if "twice_py" not in _DEFINED:

        @torch.library.custom_op("floors::twice_py", mutates_args=(), device_types="cpu")
        def twice_py(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        _DEFINED["twice_py"] = twice_py
    return _DEFINED["twice_py"]


def kernels(name: str) -> dict[str, tuple[str, str]]:
    """`{key: (file, calling conventions)}` for each kernel the dispatcher holds for `name` (file name only)."""
    rows = {}
    for line in torch._C._dispatch_dump(name).splitlines():
        if ": registered at " in line and " :: " in line:
            key, rest = line.split(": registered at ", 1)
            place, kinds = rest.split(" :: ", 1)
            rows[key] = (Path(place.rsplit(":", 1)[0]).name, kinds.rsplit("[", 1)[1].strip(" ]"))
    return rows


def traced_graphs(fn: Callable[..., Any], *args: Any) -> tuple[list[str], list[str]]:
    """The call targets in Dynamo's graph of `fn`, and in the forward graph AOTAutograd makes of it."""
    dynamo = torch._dynamo.explain(fn)(*args)
    before = [str(node.target) for graph in dynamo.graphs for node in graph.graph.nodes if node.op == "call_function"]
    after: list[str] = []

    def record(graph: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        after.extend(str(node.target) for node in graph.graph.nodes if node.op == "call_function")
        return make_boxed_func(graph.forward)

    torch._dynamo.reset()
    torch.compile(fn, backend=aot_autograd(fw_compiler=record), fullgraph=True)(*args)
    torch._dynamo.reset()
    return before, after


def compiler_tools() -> str | None:
    """Why a C++ extension cannot be built here (no compiler, no setuptools, no ninja), or None when it can."""
    if sys.platform == "win32":
        return "the proof builds with the Unix tool chain; Windows needs MSVC set up first"
    if not any(shutil.which(name) for name in ("c++", "g++", "clang++")):
        return "no C++ compiler on this machine"
    try:
        # Imported here, not above: it imports setuptools, which torch does not install (newer releases), so a
        # Python with torch alone lacks it, and only this part needs it.
        from torch.utils import cpp_extension  # noqa: PLC0415
    except ModuleNotFoundError as error:
        return f"no {error.name} in this Python: torch.utils.cpp_extension builds C++ extensions with it"
    if not cpp_extension.is_ninja_available():
        return "no ninja on this machine (torch.utils.cpp_extension builds with it)"
    return None


def build_cxx_operator() -> None:
    """Compile `CXX_SOURCE` into a shared library in a temporary folder and load it into the dispatcher."""
    from torch.utils import cpp_extension  # noqa: PLC0415  (once compiler_tools found it importable)

    with tempfile.TemporaryDirectory(prefix="floors-cxx-") as folder:
        source = Path(folder) / "twice.cpp"
        source.write_text(CXX_SOURCE, encoding="utf-8")
        cpp_extension.load(
            "floors_cxx_twice",
            sources=[str(source)],
            is_python_module=False,  # the library registers operators; it is not a Python module
            build_directory=folder,
            extra_cflags=["-O0"],  # the kernel's speed is not the point; the build's time is
            verbose=False,
        )


def error_line(fn: Callable[[], object]) -> str | None:
    """The first line of the error `fn()` raises, shortened; None when it runs."""
    try:
        fn()
    except (RuntimeError, NotImplementedError) as error:
        first = str(error).splitlines()[0].split(". ", 1)[0]  # the first sentence: the next ones give advice
        return first if len(first) <= 110 else first[:107] + "..."
    return None


def mutation() -> None:
    """Part 1: an operator that writes its argument, in eager mode and after functionalisation."""
    clip_ = define_clip()
    print(f"1. schema: {torch.ops.floors.clip_.default._schema}")
    x = torch.linspace(-3, 3, 7)
    address, version = x.data_ptr(), x._version
    clip_(x, 1.5)
    print(
        f"   eager: x is now {x.tolist()}; same storage: {x.data_ptr() == address}; version {version} -> {x._version}"
    )

    def step(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        clip_(y, 1.0)
        return y + 1

    before, after = traced_graphs(step, torch.linspace(-1, 1, 5))
    # Printed for a phone's 46 columns: each graph's calls under its name, the two lists one above the other.
    print("   Dynamo's graph:")
    print(f"     {', '.join(before)}")
    print("   AOTAutograd's forward:")
    print(f"     {', '.join(after)}")
    compiled = torch.compile(step, backend="aot_eager")(torch.linspace(-1, 1, 5))
    torch._dynamo.reset()
    same = torch.equal(compiled, step(torch.linspace(-1, 1, 5)))
    print(f"   compiled result equals eager: {same}")

    claim(
        "a declared mutation is written into the schema as an alias annotation",
        held="(a" in str(torch.ops.floors.clip_.default._schema)
        and "!)" in str(torch.ops.floors.clip_.default._schema),
    )
    claim(
        "in eager mode the operator writes into the tensor it was given, and bumps its version",
        held=x.data_ptr() == address and x._version > version and x.abs().max().item() == 1.5,
        detail=f"version {version} -> {x._version}",
    )
    claim(
        "Dynamo keeps the mutating call; functionalisation replaces it with a pure auto_functionalized call",
        held="floors.clip_.default" in before
        and "floors.clip_.default" not in after
        and any(target.startswith("auto_functionalized") for target in after),
    )
    claim("the functionalised graph computes the eager result", held=same)


def cxx_registration() -> None:
    """Part 2: an operator defined and implemented in C++, given a fake kernel from Python."""
    python_kinds = kernels("floors::clip_").get("CPU", ("", ""))[1]
    why_not = compiler_tools()
    if why_not is not None:
        print(f"\n2. C++ registration: not built ({why_not})")
        not_applicable("a C++ kernel is registered boxed and unboxed; a Python one boxed only", why=why_not)
        return
    if not hasattr(torch.ops.floors_cxx, "twice"):
        build_cxx_operator()
    before = kernels("floors_cxx::twice")
    on_meta = error_line(lambda: torch.ops.floors_cxx.twice(torch.empty(4, device="meta")))
    if "Meta" not in before:

        @torch.library.register_fake("floors_cxx::twice")
        def _(x: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)

    after = kernels("floors_cxx::twice")
    meta = torch.ops.floors_cxx.twice(torch.empty(4, device="meta"))
    result = torch.ops.floors_cxx.twice(torch.arange(4.0))
    print(
        f"\n2. C++: {torch.ops.floors_cxx.twice.default._schema}, built from a {len(CXX_SOURCE.splitlines())}-line file"
    )
    # Printed for a phone's 46 columns: each kernel's key, calling conventions and file, the columns as wide as
    # their longest entries (the Meta kernel's row comes later, under the line that says what registered it).
    key_width = max(len(key) for key in after)
    kinds_width = max(len(kinds) for _, kinds in after.values()) + 2
    for key, (place, kinds) in before.items():
        print(f"   {key:<{key_width}}  {'[' + kinds + ']':<{kinds_width}}  from {place}")
    print(f"   twice(arange(4.)) = {result.tolist()}")
    print(f"   on a meta tensor, before a fake kernel: {on_meta}")
    for key, (place, kinds) in after.items():
        if key not in before:
            print("   registered from Python (register_fake):")
            print(f"   {key:<{key_width}}  {'[' + kinds + ']':<{kinds_width}}  from {place}")
    print(f"   on a meta tensor, after: shape {tuple(meta.shape)} on {meta.device}")
    print(f"   a Python custom operator's CPU kernel, for comparison: [{python_kinds}]")
    claim(
        "a C++ kernel is registered boxed and unboxed; a Python one boxed only",
        held=before.get("CPU", ("", ""))[1] == "boxed unboxed" and python_kinds == "boxed",
        detail=f"C++ [{before.get('CPU', ('', ''))[1]}], Python [{python_kinds}]",
    )
    claim(
        "with no Meta kernel the operator cannot run on meta; a fake kernel from Python fixes that",
        held=on_meta is not None and "Meta" in on_meta and meta.is_meta and tuple(meta.shape) == (4,),
    )
    claim("the C++ kernel computes x + x", held=result.tolist() == [0.0, 2.0, 4.0, 6.0])


def python_dispatcher() -> None:
    """Part 3: a kernel registered with `py_impl`, which only the Python dispatcher consults."""
    twice_py = define_twice_in_python()
    runs: list[str] = []
    overload = torch.ops.floors.twice_py.default
    if DispatchKey.CPU not in overload.py_kernels:

        @overload.py_impl(DispatchKey.CPU)
        def _(x: torch.Tensor) -> torch.Tensor:
            runs.append("py_impl")
            return x + x

    plain = twice_py(torch.ones(2))
    plain_runs = len(runs)
    with enable_python_dispatcher():
        inside = twice_py(torch.ones(2))
    add_keys = [str(key).rsplit(".", 1)[-1] for key in torch.ops.aten.add.Tensor.py_kernels]
    print(f"\n3. py_impl(DispatchKey.CPU) on floors::twice_py: runs in plain eager {plain_runs} times;")
    print(f"   under enable_python_dispatcher() {len(runs) - plain_runs} time")
    print(f"   results {plain.tolist()} and {inside.tolist()}")
    print(f"   aten::add.Tensor's Python-dispatcher kernels: {add_keys}")
    claim(
        "a py_impl kernel is invisible to the C++ dispatcher and runs under the Python dispatcher",
        held=plain_runs == 0 and len(runs) == 1 and torch.equal(plain, inside),
        detail=f"{plain_runs} runs outside, {len(runs) - plain_runs} inside",
    )
    claim("add's Python meta kernel is also a Python-dispatcher kernel", held="Meta" in add_keys)
    table, calls, dispatcher_on = meta_in_eager()
    print(f"   aten::add.Tensor's Meta kernel in the C++ table: registered in {table}")
    print(f"   torch.add on meta tensors, Python dispatcher on: {dispatcher_on}; Python calls under it: {calls}")
    claim(
        "add's Python meta kernel is in the C++ table too: a meta tensor runs it in plain eager mode",
        held=table == "_meta_registrations.py" and calls > 0 and not dispatcher_on,
        detail=f"{table}, {calls} Python calls",
    )


def meta_in_eager() -> tuple[str, int, bool]:
    """Where the C++ table's active `Meta` kernel of `aten::add.Tensor` was registered (the file's name),
    how many Python calls a plain eager `torch.add` on meta tensors made, and whether the Python dispatcher
    was on. A C++ kernel makes no Python call; the Python meta kernel (a function of `torch/_refs` wrapped
    for `torch/_meta_registrations.py`) makes many.
    """
    dump = torch._C._dispatch_dump("aten::add.Tensor").splitlines()
    active = next((line for line in dump if line.startswith("Meta:")), "")
    where = active.split("registered at ", 1)[-1].split(":", 1)[0]
    a, b = torch.empty(3, device="meta"), torch.empty(3, device="meta")
    torch.add(a, b)  # the first call may import or cache; count a later one
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    on = torch._C._dispatch_tls_is_dispatch_key_included(DispatchKey.PythonDispatcher)
    sys.setprofile(count)
    try:
        torch.add(a, b)
    finally:
        sys.setprofile(None)
    return Path(where).name or "nowhere", calls, on


def main() -> None:
    mutation()
    cxx_registration()
    python_dispatcher()


if __name__ == "__main__":
    main()
