"""Facts about the running torch, one `name: value` a line: what the page "What changed inside PyTorch" compares.

Every torch the site is built or recorded on prints the same names, so a build reads this output from
its own run and from each torch tier's recording and puts the values side by side. A value is a count,
a size in bytes, seconds, a word or a comma-separated list; what cannot be read on this machine says
`not measured (...)` instead.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import torch
import torch._dynamo
import torch._dynamo.config
import torch._inductor.config
from torch.fx.experimental.proxy_tensor import make_fx

from pytorch_floors.claims import claim
from pytorch_floors.measure import CAPABILITIES, dispatch_stub_slots, stub_name

# The import is timed in fresh interpreters that import torch alone, as `snippets/2-python/import_cost.py`
# times it; each ends with os._exit, so its time is start-up plus import, not torch's clean-up.
PROBE = (
    "import sys, time, json, os; before = set(sys.modules); start = time.perf_counter(); import torch; "
    "seconds = time.perf_counter() - start; "
    "print(json.dumps({'seconds': seconds, 'modules': sorted(set(sys.modules) - before)}), flush=True); "
    "os._exit(0)"
)
IMPORT_RUNS = 3

# The dispatcher's operators right after `import torch`, in a fresh interpreter that imports nothing else.
OPERATORS = """
import json
import torch
names = sorted(torch._C._dispatch_get_all_op_names())
aten = [name for name in names if name.startswith("aten::")]
has = torch._C._dispatch_has_kernel_for_dispatch_key
print(json.dumps({
    "overloads": len(names),
    "namespaces": sorted({name.split("::", 1)[0] for name in names}),
    "aten": len(aten),
    "aten_operators": len({name.split(".", 1)[0] for name in aten}),
    "CPU": sum(has(name, "CPU") for name in aten),
    "Meta": sum(has(name, "Meta") for name in aten),
}))
"""

LIBRARIES = ("libtorch_cpu.so", "libtorch_python.so", "libc10.so", "libtorch_cuda.so")
"""The libraries whose size is printed: the CPU kernels, the Python binding, c10, and the CUDA kernels."""

KERNEL_STUBS = ("add_stub", "sum_stub", "exp_stub")
"""The stubs floor 6 walks (add and sum) and one with an AVX-512 kernel of its own (exp)."""

DYNAMO_DEFAULTS = (
    "recompile_limit",
    "assume_static_by_default",
    "automatic_dynamic_shapes",
    "fail_on_recompile_limit_hit",
)
"""The settings of `torch/_dynamo/config.py` the compile page describes."""

INDUCTOR_DEFAULTS = ("cpp.min_chunk_size",)
"""The setting of `torch/_inductor/config.py` behind the compile page's threads (`compile/generated_code.py`)."""


def scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    """The compile page's guards example (`snippets/compile/guards.py`): a tensor and a Python float."""
    return (x * scale + 1).relu()


def listed(items: list[str]) -> str:
    """A list as one value: its items joined by commas (none: `-`)."""
    return ", ".join(items) if items else "-"


def operators() -> dict[str, object]:
    """What the dispatcher holds after `import torch` alone: overloads, namespaces, aten's, and their kernels.

    Counted in a fresh interpreter: this process has imported Dynamo, Inductor and `make_fx`, which
    register operators of their own.
    """
    done = subprocess.run([sys.executable, "-c", OPERATORS], capture_output=True, text=True, check=True)
    counts = json.loads(done.stdout)
    return {
        "operators.overloads": counts["overloads"],
        "operators.namespaces": len(counts["namespaces"]),
        "operators.namespace_names": listed(counts["namespaces"]),
        "operators.aten_overloads": counts["aten"],
        "operators.aten_operators": counts["aten_operators"],
        "operators.aten_with_cpu_kernel": counts["CPU"],
        "operators.aten_with_meta_kernel": counts["Meta"],
    }


def dispatch_keys() -> dict[str, object]:
    """The dispatch keys of a plain CPU tensor, lowest priority first, as torch prints the set."""
    text = str(torch._C._dispatch_keys(torch.ones(3)))
    inside = text[text.index("(") + 1 : text.rindex(")")]
    return {"dispatch_keys.cpu_tensor": listed([name.strip() for name in inside.split(",") if name.strip()])}


def kernel_stubs() -> dict[str, object]:
    """How many DispatchStubs `libtorch_cpu.so` holds, how many have a kernel per capability, and three stubs'."""
    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    names = ["stubs.count", *(f"stubs.with_{c.lower()}" for c in CAPABILITIES), *(f"stubs.{s}" for s in KERNEL_STUBS)]
    if platform.machine().lower() not in {"x86_64", "amd64"} or not library.is_file():
        return dict.fromkeys(names, "not measured (not an x86-64 Linux build of torch)")
    # One entry per stub, named by its DispatchStub type: copy_stub and cpublas::copy_stub are two.
    stubs = [(stub_name(mangled.encode()) or mangled, slots) for mangled, slots in dispatch_stub_slots(library).items()]
    found: dict[str, object] = {"stubs.count": len(stubs)}
    for capability in CAPABILITIES:
        found[f"stubs.with_{capability.lower()}"] = sum(1 for _, slots in stubs if slots.get(capability))
    by_name = {name: slots for name, slots in stubs}
    for stub in KERNEL_STUBS:
        slots = by_name.get(stub, {})
        found[f"stubs.{stub}"] = listed([c for c in CAPABILITIES if slots.get(c)])
    return found


def import_cost() -> dict[str, object]:
    """`import torch` in fresh interpreters: the median seconds, and the modules it loaded."""
    seconds, modules = [], []
    for _ in range(IMPORT_RUNS):
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
        report = json.loads(done.stdout)
        seconds.append(report["seconds"])
        modules = report["modules"]
    return {
        "import.seconds": f"{statistics.median(seconds):.3f}",
        "import.modules": len(modules),
        "import.torch_modules": sum(1 for name in modules if name == "torch" or name.startswith("torch.")),
    }


def library_sizes() -> dict[str, object]:
    """The size in bytes of each library of `LIBRARIES` (absent in this build: `-`) and of torch's folder."""
    package = Path(torch.__file__).parent
    found: dict[str, object] = {}
    for name in LIBRARIES:
        path = package / "lib" / name
        found[f"library.{name}"] = path.stat().st_size if path.is_file() else "-"
    found["library.torch_package"] = sum(p.stat().st_size for p in package.rglob("*") if p.is_file())
    return found


def linear_decomposition() -> dict[str, object]:
    """The aten operators an `nn.Linear` call becomes: traced below autograd, and before dispatch."""
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4)

    def ops(pre_dispatch: bool) -> str:
        graph = make_fx(layer, pre_dispatch=pre_dispatch)(x).graph
        return listed([str(node.target) for node in graph.nodes if node.op == "call_function"])

    return {"linear.make_fx": ops(False), "linear.pre_dispatch": ops(True)}


def setting(module: object, dotted: str) -> str:
    """A config setting's default as Python writes it, or `absent` where this torch has no such setting."""
    value: object = module
    for part in dotted.split("."):
        if not hasattr(value, part):
            return "absent"
        value = getattr(value, part)
    return repr(value)


def compiler_defaults() -> dict[str, object]:
    """The Dynamo and Inductor settings the compile page names, as this torch sets them by default."""
    return {
        **{f"dynamo.{name}": setting(torch._dynamo.config, name) for name in DYNAMO_DEFAULTS},
        **{f"inductor.{name}": setting(torch._inductor.config, name) for name in INDUCTOR_DEFAULTS},
    }


def guards() -> dict[str, object]:
    """The guards of the compile page's example's first graph: how many, and how many of each kind."""
    explained = torch._dynamo.explain(scaled)(torch.ones(8), 2.0)
    kinds = Counter(guard.create_fn_name() for guard in explained.out_guards)
    torch._dynamo.reset()
    return {
        "guards.count": len(explained.out_guards),
        "guards.kinds": listed([f"{kind} x{count}" if count > 1 else kind for kind, count in sorted(kinds.items())]),
    }


def facts() -> dict[str, object]:
    """Every fact, in the order the page's table shows them."""
    return {
        "torch.version": torch.__version__,
        "torch.build": f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU only",
        **operators(),
        **dispatch_keys(),
        **kernel_stubs(),
        **import_cost(),
        **library_sizes(),
        **linear_decomposition(),
        **compiler_defaults(),
        **guards(),
    }


def main() -> None:
    found = facts()
    for name, value in found.items():
        print(f"{name}: {value}")
    below, before = str(found["linear.make_fx"]).split(", "), str(found["linear.pre_dispatch"]).split(", ")
    claim(
        "nn.Linear reaches the dispatcher as one aten.linear call, and below autograd it is other aten operators",
        held=before == ["aten.linear.default"] and "aten.linear.default" not in below and len(below) > 0,
        detail=f"before dispatch: {', '.join(before)}; below autograd: {', '.join(below)}",
    )


if __name__ == "__main__":
    main()
