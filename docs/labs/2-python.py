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
# Each exercise asks you to **predict** first, in the cell marked `YOUR ANSWER`, then to **run**
# the measurement, **change** something and measure again. The `SELF-CHECK` cell compares your
# answer with what your machine measured: it fails, saying what to fill in, until you have
# answered, and it fails, saying why, when the answer and the measurement disagree. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `require`, `expect`, `expect_type` and `within` are what the self-checks use to
# grade your answers (`expect_type` says which type an answer should have when it has another). `CoreShare` measures how much of a
# core a measurement got, and `unclear` says when a busy machine stretched the timings too much to
# grade a ratio. `TORCH_DIR` is where the package is installed; the lab prints paths relative to
# it.

# %%
import inspect
import numbers
import subprocess
import sys
import time
import timeit
from collections import Counter
from pathlib import Path

import torch

TORCH_DIR = Path(torch.__file__).resolve().parent
print(f"torch {torch.__version__}, Python {sys.version.split()[0]}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · What torch is on disk <a id="on-disk"></a>
#
# **Predict** what share of the installed package's bytes is Python source (`.py` files), in
# percent, and which file is the largest: its name (`libfoo.so`, or `libfoo` without the suffix).
# Write both into the answer cell, then **run** the
# measurement: it walks the installed package and adds up file sizes by kind.
#
# **Change** `KINDS` to split out more suffixes (`.pyi` stubs, `.h` headers), and change `TOP` to
# list more of the largest files. Where do the headers come from?

# %% tags=["answer"]
# YOUR ANSWER
PYTHON_SHARE = None  # percent of the package's bytes that are Python source
LARGEST = None  # the largest file's name, as a string (for example "libfoo.so" or "libfoo")

# %% tags=["solution"]
# The kernels of the device the build is for: on a CPU build, every CPU kernel and the dispatcher live
# in libtorch_cpu; a CUDA build (what Colab installs) adds libtorch_cuda, larger still, and so leaves
# the Python layer a smaller share.
PYTHON_SHARE = 2 if torch.version.cuda else 5  # a thin layer: a few percent
LARGEST = "libtorch_cuda" if torch.version.cuda else "libtorch_cpu"

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
largest_files = sorted(files, key=lambda p: p.stat().st_size, reverse=True)
print(f"\nthe {TOP} largest files (relative to the torch package):")
for path in largest_files[:TOP]:
    print(f"  {path.stat().st_size / 1e6:8.1f} MB  {path.relative_to(TORCH_DIR).as_posix()}")

# %%
# SELF-CHECK: your share within a factor of 3 of the measured one; the largest file of your install named,
# whole: its name, with or without the suffixes after its first dot and the "lib" before it (a part of the
# name, such as "u", can tell two files apart without naming either).
require(PYTHON_SHARE=PYTHON_SHARE, LARGEST=LARGEST)
expect_type("PYTHON_SHARE", PYTHON_SHARE, numbers.Real, "a number of percent (such as 30)")
expect_type("LARGEST", LARGEST, str, 'a string, the file\'s name (such as "libfoo.so")')
share = 100 * bytes_by_kind["Python source"] / total
expect(within(PYTHON_SHARE, share, 3), f"Python source is {share:.1f} % of the bytes, not about {PYTHON_SHARE} %")
largest = largest_files[0].name
expect(LARGEST.strip() != "", "LARGEST is empty: write the largest file's name")
given, wanted = (name.split(".")[0].removeprefix("lib") for name in (Path(LARGEST.strip()).name, largest))
expect(given == wanted, f"the largest file is {largest}, not {LARGEST!r}: write its whole name")
print(f"self-check passed: Python is {share:.1f} % of torch; the largest file is {largest}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The Python files are a thin layer; the bulk is a few shared libraries under `lib/`. On a CPU
# build they are led by `libtorch_cpu` (all CPU kernels and the dispatcher) and `libtorch_python`
# (the bindings between the two worlds); a CUDA build adds `libtorch_cuda`, the CUDA kernels,
# larger still. Which file is the largest depends on the build you installed, so the self-check
# compares your answer with your own list. Headers under `include/` are there so that C++
# extensions can compile against the same code.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Python or compiled <a id="python-or-compiled"></a>
#
# A function written in Python is a Python `function` object with bytecode; a compiled one is a
# `builtin_function_or_method` (or, for a method of a C++ class, a `method_descriptor`). Floor 2
# sorts the one-page program's names this way. The names in `NAMES` are ones it does not show:
# one operation spelled two ways (`torch.relu` and `torch.nn.functional.relu`), and operators and
# protocol methods of `torch.Tensor` itself. **Predict** for each whether it is `"Python"` or
# `"compiled"`, then **run** the measurement, which asks `inspect`.
#
# **Change** `NAMES`: add `torch.softmax`, `torch.nn.functional.softmax`, `torch.Tensor.__repr__`,
# `torch.Tensor.to`, and predict them too: the self-check wants a prediction for every name.

# %% tags=["answer"]
# YOUR ANSWER: "Python" or "compiled" for each function
PREDICTED_KIND = {
    "torch.relu": None,
    "torch.nn.functional.relu": None,
    "torch.Tensor.__add__": None,
    "torch.Tensor.__rsub__": None,
    "torch.Tensor.__len__": None,
    "torch.Tensor.item": None,
}

# %% tags=["solution"]
PREDICTED_KIND = {
    "torch.relu": "compiled",
    "torch.nn.functional.relu": "Python",
    "torch.Tensor.__add__": "compiled",
    "torch.Tensor.__rsub__": "Python",
    "torch.Tensor.__len__": "Python",
    "torch.Tensor.item": "compiled",
}

# %%
NAMES = {
    "torch.relu": torch.relu,
    "torch.nn.functional.relu": torch.nn.functional.relu,
    "torch.Tensor.__add__": torch.Tensor.__add__,
    "torch.Tensor.__rsub__": torch.Tensor.__rsub__,
    "torch.Tensor.__len__": torch.Tensor.__len__,
    "torch.Tensor.item": torch.Tensor.item,
}
kind_of = {}
for name, fn in NAMES.items():
    kind_of[name] = "Python" if inspect.isfunction(fn) else "compiled"
    where = f"{Path(inspect.getsourcefile(fn)).name}:{inspect.getsourcelines(fn)[1]}" if kind_of[name] == "Python" else ""
    print(f"{name:<36} {kind_of[name]:<9} {type(fn).__name__:<28} {where}")
print("\ntorch.Tensor's bases:", [f"{c.__module__}.{c.__qualname__}" for c in torch.Tensor.__mro__])

# %%
# SELF-CHECK: your classification against inspect's.
require(PREDICTED_KIND={name: PREDICTED_KIND.get(name) for name in NAMES})
for name in NAMES:
    expect_type(f"PREDICTED_KIND[{name!r}]", PREDICTED_KIND[name], str, 'the string "Python" or "compiled"')
    expect(PREDICTED_KIND[name] in ("Python", "compiled"), f'PREDICTED_KIND[{name!r}] should be "Python" or "compiled", not {PREDICTED_KIND[name]!r}')
wrong = [f"{name}: you said {PREDICTED_KIND[name]}, it is {kind}" for name, kind in kind_of.items() if PREDICTED_KIND[name] != kind]
expect(not wrong, "these are not what you predicted:\n  " + "\n  ".join(wrong))
print(f"self-check passed: all {len(kind_of)} functions classified")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# `torch.relu` and `torch.softmax` are compiled bindings generated from the operator list; their
# `torch.nn.functional` spellings are Python functions that handle options (`inplace`, `dim`,
# `dtype`) and then call a compiled one. `torch.Tensor` is a Python class (`torch/_tensor.py`)
# whose base, `torch._C.TensorBase`, is defined in C++: most methods and operators, such as
# `item`, `to` and `__add__`, come straight from the base, while a few are Python on top. The
# reflected operators such as `__rsub__` (for `2 - t`) are Python wrappers that turn a type error
# into `NotImplemented` so that Python can try the other operand; `__len__` is Python so that it
# can refuse a zero-dimensional tensor; `__repr__` is Python because printing is written in
# Python (`torch/_tensor_str.py`).
#
# </details>

# %% [markdown]
# ## Exercise 3 · The cost of `import torch` <a id="import-cost"></a>
#
# **Predict** whether a fresh `import torch` (a new Python process that imports it) takes more
# than 1 000 times as long as importing it a second time in a process that already has it, then
# **run** the measurement and read how many times longer it took.
#
# **Change** `MODULE` to `"json"`, predict again, and compare. Then, with `MODULE` back to
# `"torch"`, set `FLAGS = ["-X", "importtime"]` (options for the fresh Python) to see which
# submodules dominate: the measurement prints the slowest ones from Python's report, and the
# self-check still holds.

# %% tags=["answer"]
# YOUR ANSWER
OVER_A_THOUSAND = None  # True if a fresh import costs more than 1,000 repeated ones, else False

# %% tags=["solution"]
OVER_A_THOUSAND = True  # a second or so against a dictionary lookup well under a microsecond

# %%
MODULE = "torch"
FLAGS = []  # options for the fresh Python process
RUNS = 1  # raise it for a steadier number

fresh = []
with CoreShare() as core:  # how much of a core the measurement got (the child's CPU time counts too)
    for _ in range(RUNS):
        start = time.perf_counter()
        child = subprocess.run([sys.executable, *FLAGS, "-c", f"import {MODULE}"], check=True, capture_output=True, text=True)
        fresh.append(time.perf_counter() - start)
    __import__(MODULE)
    again = min(timeit.repeat(lambda: __import__(MODULE), number=1000, repeat=5)) / 1000  # best of 5 x 1,000 imports
# With FLAGS = ["-X", "importtime"] the child reports "self [us] | cumulative [us] | module" per import on stderr.
report = [line.split("|") for line in child.stderr.splitlines() if line.startswith("import time:") and "[us]" not in line]
for columns in sorted(report, key=lambda columns: -int(columns[1]))[:8]:
    print(f"{int(columns[1]) / 1e3:9.1f} ms cumulative  {columns[2].strip()}")
factor = min(fresh) / again
print(f"fresh process + import {MODULE}: {min(fresh):.2f} s (best of {RUNS})")
print(f"import {MODULE} again in this process: {again * 1e6:.3f} µs: {factor:,.0f} times less")
print(f"this process and its child got {core.share:.0%} of a core while they measured")

# %%
# SELF-CHECK: your answer on the same side of 1,000 times as the measured factor, unless the
# factor is too close to 1,000 to call on this run (a busy machine stretches the timings).
require(OVER_A_THOUSAND=OVER_A_THOUSAND)
expect_type("OVER_A_THOUSAND", OVER_A_THOUSAND, bool, "True or False (without quotes)")
why = unclear(factor, 1000, core, what="the factor")
if why:
    print(why)
else:
    side = "more" if factor > 1000 else "less"
    expect(OVER_A_THOUSAND == (factor > 1000), f"the fresh import took {factor:,.0f} times longer: {side} than 1,000 times")
print(f"self-check passed: the first import costs {factor:,.0f} times the second")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# A fresh `import torch` starts Python, loads the shared libraries, registers thousands of
# operators with the dispatcher and imports a few hundred Python modules. The second import finds
# `torch` in `sys.modules` and returns at once. Scripts that start many short Python processes pay
# the import every time; a notebook pays it once. With `json`, the fresh process costs mostly
# Python's own start-up, so the factor shrinks by one or two orders of magnitude. With
# `-X importtime`, Python reports each module's own and cumulative import time: loading the
# compiled core (`torch._C`) is among the slowest, next to the Python modules that register meta
# kernels and decompositions for the compiler (`torch._meta_registrations`, `torch._decomp`).
#
# </details>

# %% [markdown]
# ## Exercise 4 · Catch calls with `__torch_function__` <a id="torch-function"></a>
#
# Before a torch function goes to C++, it checks its arguments and any active mode for a
# `__torch_function__` override. The measurement runs the one-page program's forward and backward
# under a `TorchFunctionMode` that records the name of every torch-level call it sees.
# **Predict** the list of public names it records (those that do not start with `_`), in order,
# then **run** it. The printout also shows the private bookkeeping calls; the self-check leaves
# them out.
#
# **Change** the loss to `torch.nn.functional.mse_loss(model(x), torch.nn.functional.one_hot(y, 10).float())`
# and predict again: which calls appear? Then also add `optimizer.step()` inside the `with`
# block, after `loss.backward()`, and predict again: `step` is not a torch function, so what
# does the mode see of it?

# %% tags=["answer"]
# YOUR ANSWER: the public names the mode records, in order, as a list of strings
PREDICTED_CALLS = None

# %% tags=["solution"]
PREDICTED_CALLS = ["linear", "cross_entropy", "backward"]

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
public = [name for name in recorder.names if not name.startswith("_")]

# %%
# SELF-CHECK: your list against the public names in the mode's record.
require(PREDICTED_CALLS=PREDICTED_CALLS)
expect_type("PREDICTED_CALLS", PREDICTED_CALLS, (list, tuple), 'a list of strings (such as ["linear"])')
for index, name in enumerate(PREDICTED_CALLS):
    expect_type(f"PREDICTED_CALLS[{index}]", name, str, 'a string, a function\'s name (such as "linear")')
expect(list(PREDICTED_CALLS) == public, f"the mode recorded {public} (leaving out names that start with _), not {list(PREDICTED_CALLS)}")
print(f"self-check passed: you predicted all {len(public)} public calls in order")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The mode sees calls at the Python level, by their public names, before any argument parsing:
# `model(x)` is one `linear`, the loss one `cross_entropy`, `loss.backward()` one `backward`. With
# `mse_loss` on one-hot targets you also see `one_hot` and `float`, because you called them. It
# sees everything torch-level that runs, not only the lines you wrote: `optimizer.step()` is a
# plain Python method, so the mode sees what it calls: one `add_` per parameter (the update
# `p -= lr * p.grad`), wrapped in the optimiser's own bookkeeping (`_set_grad_enabled`, the
# profiler's record-function markers) and a `__get__` for each read of a tensor attribute such as
# `p.grad`. It does
# not see the operators those calls become further down: for that you need the dispatcher's own
# hook, `TorchDispatchMode`, in Lab 4.
#
# </details>
