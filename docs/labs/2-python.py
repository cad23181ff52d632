# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 2 · Python
#
# ## Goal <a id="goal"></a>
#
# `import torch` gives you a Python package, but most of what runs is not Python. In this lab you
# weigh the package on disk, sort its functions into Python and compiled ones, measure what the
# import costs, and intercept calls on their way down with `__torch_function__`.
#
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `TORCH_DIR` is where the package is installed; the lab prints paths relative to
# it.

# %%
import inspect
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import torch

TORCH_DIR = Path(torch.__file__).resolve().parent
print(f"torch {torch.__version__}, Python {sys.version.split()[0]}")

# %% [markdown]
# ## Exercise 1 · What torch is on disk <a id="on-disk"></a>
#
# **Run** the cell: it walks the installed package and adds up file sizes by kind.
#
# **Predict** first: what share of the bytes is Python source? **Change** `KINDS` to split out
# more suffixes (`.pyi` stubs, `.h` headers), and change `TOP` to list more of the largest files.

# %%
KINDS = {".py": "Python source", ".so": "compiled library", ".dll": "compiled library", ".dylib": "compiled library"}
TOP = 5

bytes_by_kind = Counter()
files = [p for p in TORCH_DIR.rglob("*") if p.is_file()]
for path in files:
    suffix = next((s for s in KINDS if path.name.endswith(s) or f"{s}." in path.name), None)
    bytes_by_kind[KINDS.get(suffix, "other")] += path.stat().st_size

total = sum(bytes_by_kind.values())
for kind, size in bytes_by_kind.most_common():
    print(f"{kind:<18} {size / 1e6:9.1f} MB  {100 * size / total:5.1f} %")
print(f"\nthe {TOP} largest files (relative to the torch package):")
for path in sorted(files, key=lambda p: p.stat().st_size, reverse=True)[:TOP]:
    print(f"  {path.stat().st_size / 1e6:8.1f} MB  {path.relative_to(TORCH_DIR).as_posix()}")

# %%
# SELF-CHECK: the compiled libraries outweigh the Python source several times over.
assert bytes_by_kind["compiled library"] > 3 * bytes_by_kind["Python source"], (
    "compiled code should outweigh the Python source"
)
print("self-check passed: torch is mostly compiled code under a Python layer")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The Python files are a thin layer; the bulk is a few shared libraries under `lib/`, led by
# `libtorch_cpu` (all CPU kernels and the dispatcher) and `libtorch_python` (the bindings between
# the two worlds). On a CUDA build, the CUDA libraries dwarf even those. Headers under `include/`
# are there so that C++ extensions can compile against the same code.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Python or compiled <a id="python-or-compiled"></a>
#
# A function written in Python has a `__code__` object; a compiled one is a
# `builtin_function_or_method`. **Run** the cell to classify a few functions of the one-page
# program.
#
# **Change** `NAMES`: add `torch.matmul`, `torch.nn.functional.relu`, `torch.Tensor.backward`,
# `torch.Tensor.add`. Predict each answer first.

# %%
NAMES = {
    "torch.randn": torch.randn,
    "torch.add": torch.add,
    "torch.nn.functional.linear": torch.nn.functional.linear,
    "torch.nn.functional.cross_entropy": torch.nn.functional.cross_entropy,
    "torch.nn.Linear.forward": torch.nn.Linear.forward,
}
kind_of = {}
for name, fn in NAMES.items():
    kind_of[name] = "Python" if inspect.isfunction(fn) else "compiled"
    print(f"{name:<36} {kind_of[name]:<9} {type(fn).__name__}")

print("\ntorch.Tensor's bases:", [f"{c.__module__}.{c.__qualname__}" for c in torch.Tensor.__mro__])

# %%
# SELF-CHECK: your classification agrees with where the code lives.
for name, fn in NAMES.items():
    if kind_of[name] == "Python":
        assert inspect.getsourcefile(fn) is not None, f"{name}: a Python function has a source file"
    else:
        assert not hasattr(fn, "__code__"), f"{name}: a compiled function has no Python bytecode"
assert torch._C.TensorBase in torch.Tensor.__mro__, "torch.Tensor is a Python class over a C++ base"
print("self-check passed: Python wrappers on top, compiled functions underneath")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# `torch.randn`, `torch.add` and `torch.matmul` are compiled bindings generated from the operator
# list; `torch.nn.functional.cross_entropy` and `relu` are Python functions that call compiled
# ones; `nn.Linear.forward` is Python that calls the compiled `linear`. `torch.Tensor` itself is a
# Python class whose base, `torch._C.TensorBase`, is defined in C++, so `Tensor.add` is compiled
# while `Tensor.backward` is Python.
#
# </details>

# %% [markdown]
# ## Exercise 3 · The cost of `import torch` <a id="import-cost"></a>
#
# **Run** the cell: it starts fresh Python processes that import torch and reports the wall time,
# then imports torch again in this process.
#
# **Change** `MODULE` to `"numpy"` and then `"json"`, and compare. Add `-X importtime` to the
# command and look at which submodules dominate (the report goes to stderr).

# %%
MODULE = "torch"
RUNS = 1  # raise it for a steadier number

fresh = []
for _ in range(RUNS):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {MODULE}"], check=True)
    fresh.append(time.perf_counter() - start)
start = time.perf_counter()
__import__(MODULE)
again = time.perf_counter() - start
print(f"fresh process + import {MODULE}: {min(fresh):.2f} s (best of {RUNS})")
print(f"import {MODULE} again in this process: {again * 1e6:.1f} µs")

# %%
# SELF-CHECK: the first import is paid once per process; later imports are a dictionary lookup.
assert again * 100 < min(fresh), "a repeated import should be at least a hundred times cheaper"
print("self-check passed: the import is paid once, on process start")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# A fresh `import torch` loads the shared libraries, registers thousands of operators with the
# dispatcher and imports a few hundred Python modules, which is why it costs far more than
# `import json`. The second import finds `torch` in `sys.modules` and returns at once. Scripts that
# start many short Python processes pay the import every time; a notebook pays it once.
#
# ```python
# subprocess.run([sys.executable, "-X", "importtime", "-c", "import torch"], check=True)
# ```
#
# </details>

# %% [markdown]
# ## Exercise 4 · Catch calls with `__torch_function__` <a id="torch-function"></a>
#
# Before a torch function goes to C++, it checks its arguments and any active mode for a
# `__torch_function__` override. **Run** the cell: a `TorchFunctionMode` records the name of every
# torch-level call the forward and backward of the one-page program make.
#
# **Change**: add `optimizer.step()` inside the `with` block, or replace `cross_entropy` with
# `torch.nn.functional.mse_loss` on one-hot targets. Which calls appear?

# %%
from torch.overrides import TorchFunctionMode


class RecordCalls(TorchFunctionMode):
    """Record the name of every torch function called while active."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", repr(func)))
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

with RecordCalls() as recorder:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
print("torch-level calls:", recorder.names)

# %%
# SELF-CHECK: the mode saw the calls of the program by their Python names.
assert "linear" in recorder.names, "model(x) calls torch.nn.functional.linear"
assert "cross_entropy" in recorder.names, "the loss is computed by cross_entropy"
assert recorder.names.index("linear") < recorder.names.index("cross_entropy"), "calls are seen in program order"
print("self-check passed: __torch_function__ sees each call before it goes down")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The mode sees calls at the Python level, by their public names (`linear`, `cross_entropy`,
# `backward`), one per call you wrote, before any argument parsing. It does not see the many
# operators those calls become further down: for that you need the dispatcher's own hook,
# `TorchDispatchMode`, in Lab 4. `torch.compile`, tensor subclasses and libraries such as
# `torch.func` build on this same hook.
#
# </details>
