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
# # Lab 4 · The dispatcher
#
# ## Goal <a id="goal"></a>
#
# Below the Python bindings, every call becomes one or more *operators* (`aten::addmm`,
# `aten::nll_loss_forward`, ...) routed by the dispatcher according to the *dispatch keys* of
# their arguments. In this lab you read those keys, log every operator the one-page program
# calls, read an operator's schema, run a model far too large for your memory on the meta
# device, where tensors have shapes but no data, and define an operator of your own.
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
# grade your answers (`expect_type` says which type an answer should have when it has another). `keys` shows a tensor's dispatch key set as a readable string.

# %%
import numbers
import time
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)


def keys(t):
    """The dispatch key set the dispatcher sees for tensor `t`."""
    return str(torch._C._dispatch_keys(t))


print(f"torch {torch.__version__}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · What earns a dispatch key <a id="dispatch-keys"></a>
#
# Each tensor carries a set of *dispatch keys*; the dispatcher visits the kernels they name, in
# order. Floor 4 prints the sets of tensors that differ in device, `requires_grad`, integer dtype
# and inference mode. The tensors in `TENSORS` differ in other ways: a sparse layout, a boolean
# and a complex dtype, and a complex tensor viewed through `conj()`. **Predict** for each
# whether its key set differs from a plain CPU float tensor's (`True`) or not (`False`), then
# **run** the measurement, which prints the sets.
#
# **Change** `TENSORS`: add `torch.ones(3, dtype=torch.cfloat).conj().imag` and
# `torch.ones(3, dtype=torch.float16)`, and predict them too.

# %% tags=["answer"]
# YOUR ANSWER: True if the tensor's key set differs from a plain CPU float tensor's, else False
DIFFERS = {
    "sparse": None,
    "bool": None,
    "complex": None,
    "complex, conj()": None,
}

# %% tags=["solution"]
DIFFERS = {
    "sparse": True,
    "bool": False,
    "complex": False,
    "complex, conj()": True,
}

# %%
plain_keys = keys(torch.ones(3))
TENSORS = {
    "sparse": torch.ones(3).to_sparse(),
    "bool": torch.ones(3, dtype=torch.bool),
    "complex": torch.ones(3, dtype=torch.cfloat),
    "complex, conj()": torch.ones(3, dtype=torch.cfloat).conj(),
}
key_sets = {name: keys(t) for name, t in TENSORS.items()}
print(f"{'plain CPU float':<24} {plain_keys}")
for name, ks in key_sets.items():
    print(f"{name:<24} {ks}")

# %%
# SELF-CHECK: your answers against the key sets the dispatcher reports.
require(DIFFERS={name: DIFFERS.get(name) for name in TENSORS})
for name in TENSORS:
    expect_type(f"DIFFERS[{name!r}]", DIFFERS[name], bool, "True or False (without quotes)")
for name, ks in key_sets.items():
    really = ks != plain_keys
    expect(DIFFERS[name] == really, f"{name}: you said differs={DIFFERS[name]}, but its keys are {ks}")
print(f"self-check passed: all {len(key_sets)} key sets predicted")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# A key names a *kind of kernel* the dispatcher must visit, not every property of a tensor.
# A layout that needs kernels of its own swaps the backend key (`SparseCPU`). The dtype is not a
# key: boolean, complex and half-precision tensors use the same `CPU` kernels, which switch on
# the dtype inside. `conj()` on a complex tensor copies nothing: it
# returns a view marked with a `Conjugate` key, and an operator that meets the key either handles
# the conjugation itself or has the key's fallback materialise it first. Taking `.imag` of that
# view works the same way with a `Negative` key.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Every operator of the one-page program <a id="op-log"></a>
#
# `TorchDispatchMode` sits *below* autograd: it sees each operator as the dispatcher runs it.
# The measurement logs the operators of the forward pass, the backward pass and the optimiser
# step separately. **Predict** how many operators each phase runs (the forward is two Python
# calls, `linear` and `cross_entropy`; the optimiser puts its step between two markers of the
# profiler, which the mode logs as operators too), then **run** it.
#
# **Change** `OPTIMIZER` to `torch.optim.Adam` and predict the step again.

# %% tags=["answer"]
# YOUR ANSWER: the number of operators each phase dispatches
PREDICTED_OPS = {"forward": None, "backward": None, "step": None}

# %% tags=["solution"]
PREDICTED_OPS = {
    "forward": 2 + 2,  # linear: a transposed view of the weight, then addmm; cross_entropy: log-softmax, then the loss
    "backward": 1 + 4 + 4,  # a seed gradient of 1, a backward for each forward operator, and a few views to shape the results
    "step": 2 + 2,  # one add_ for each parameter (weight and bias), between the profiler's two markers
}

# %%
class OpLog(TorchDispatchMode):
    """Record the name of every operator dispatched while active."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


OPTIMIZER = torch.optim.SGD
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = OPTIMIZER(model.parameters(), lr=0.1)

phases = {}
with OpLog() as log:
    loss = torch.nn.functional.cross_entropy(model(x), y)
phases["forward"] = log.ops
with OpLog() as log:
    loss.backward()
phases["backward"] = log.ops
with OpLog() as log:
    optimizer.step()
phases["step"] = log.ops

for phase, ops in phases.items():
    print(f"{phase} ({len(ops)} ops): {', '.join(ops)}")

# %%
# SELF-CHECK: each predicted count within a factor of 2 of the operators logged.
require(PREDICTED_OPS={phase: PREDICTED_OPS.get(phase) for phase in phases})
for phase in phases:
    expect_type(f"PREDICTED_OPS[{phase!r}]", PREDICTED_OPS[phase], numbers.Real, "a number of operators (such as 3)")
for phase, ops in phases.items():
    expect(within(PREDICTED_OPS[phase], len(ops), 2), f"{phase}: {len(ops)} operators ran, not about {PREDICTED_OPS[phase]}")
print("self-check passed: " + ", ".join(f"{phase} {len(ops)}" for phase, ops in phases.items()))

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The forward pass shows `aten.t` (a view of the weight), `aten.addmm` (input × weightᵀ + bias
# in one kernel), then `_log_softmax` and `nll_loss_forward`: `cross_entropy` is two operators,
# plus a `detach` autograd makes of the log-softmax output it saves. The backward pass runs the
# matching backward operators in reverse order and finishes with `mm` and `sum` for the weight
# and bias gradients. SGD's step is one `add_` per parameter between the profiler's markers; with
# Adam it grows to several operators per parameter (moments, square root, division).
#
# </details>

# %% [markdown]
# ## Exercise 3 · Operators, overloads and schemas <a id="schemas"></a>
#
# Every operator has a *schema*: its name, overload, argument types and what it may mutate
# (`Tensor(a!)` marks an argument the operator writes into). **Predict** which of the overloads
# in `OPS` mutate one of their arguments, and how many overloads `aten.add` has, then **run** the
# measurement.
#
# **Change** `OPS`: add `torch.ops.aten.view.default` (a view: look for the (a) in its schema) and
# predict it too.

# %% tags=["answer"]
# YOUR ANSWER
MUTATES = {"aten.addmm.default": None, "aten.add.Tensor": None, "aten.add_.Tensor": None, "aten.add.out": None}
PREDICTED_OVERLOADS = None  # how many overloads aten.add has

# %% tags=["solution"]
MUTATES = {"aten.addmm.default": False, "aten.add.Tensor": False, "aten.add_.Tensor": True, "aten.add.out": True}
PREDICTED_OVERLOADS = 10  # Tensor, Scalar, their out= forms, and a few more

# %%
OPS = [torch.ops.aten.addmm.default, torch.ops.aten.add.Tensor, torch.ops.aten.add_.Tensor, torch.ops.aten.add.out]

registered = torch._C._dispatch_get_all_op_names()
base_names = {name.split(".")[0] for name in registered}
namespaces = Counter(name.split("::")[0] for name in base_names)
print(f"{len(registered)} operator overloads, {len(base_names)} distinct operators")
print("by namespace:", dict(namespaces.most_common(5)))
mutates = {}
for op in OPS:
    mutates[str(op)] = any(arg.alias_info is not None and arg.alias_info.is_write for arg in op._schema.arguments)
    print(op._schema)
add_overloads = torch.ops.aten.add.overloads()
print(f"\naten.add has {len(add_overloads)} overloads: {', '.join(add_overloads)}")

# %%
# SELF-CHECK: your answers against the schemas' write annotations; the overload count within a factor of 2.
require(MUTATES={name: MUTATES.get(name) for name in mutates}, PREDICTED_OVERLOADS=PREDICTED_OVERLOADS)
for name in mutates:
    expect_type(f"MUTATES[{name!r}]", MUTATES[name], bool, "True or False (without quotes)")
expect_type("PREDICTED_OVERLOADS", PREDICTED_OVERLOADS, numbers.Real, "a number of overloads (such as 3)")
for name, really in mutates.items():
    expect(MUTATES[name] == really, f"{name}: you said mutates={MUTATES[name]}; its schema says {really}")
expect(
    within(PREDICTED_OVERLOADS, len(add_overloads), 2), f"aten.add has {len(add_overloads)} overloads, not about {PREDICTED_OVERLOADS}"
)
print("self-check passed: you read the schemas right")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# ```python
# print(torch.ops.aten.add_.Tensor._schema)   # aten::add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)
# print(torch.ops.aten.view.default._schema)  # aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
# ```
#
# The annotations are the contract the rest of the system relies on: `(a!)` says the operator
# writes into that argument, `(a)` says the result aliases it without writing. Autograd,
# `torch.compile` and the functionalisation pass read them from the schema instead of guessing.
# `aten.add` has overloads for every combination of tensor and scalar arguments, with and without
# `out=`, and for Python numbers used in TorchScript.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Shapes without data: the meta device <a id="meta-device"></a>
#
# A tensor on the `meta` device has a shape, a dtype and strides, but no storage. The
# measurement builds a linear layer with `FEATURES` inputs and outputs on the meta device and runs
# a forward pass and a loss. **Predict**, as a formula of `FEATURES`, how many bytes its float32
# parameters would take if they were real, then **run** it.
#
# **Change** `FEATURES` to `200_000` (a weight of 160 GB). Does the cell get slower?

# %% tags=["answer"]
# YOUR ANSWER
def predicted_parameter_bytes(features):
    """Bytes of nn.Linear(features, features)'s float32 parameters."""
    return None  # your formula


# %% tags=["solution"]
def predicted_parameter_bytes(features):
    """Bytes of nn.Linear(features, features)'s float32 parameters."""
    return 4 * (features * features + features)  # weight and bias


# %%
FEATURES = 50_000

start = time.perf_counter()
big = torch.nn.Linear(FEATURES, FEATURES, device="meta")
inputs = torch.empty(8, FEATURES, device="meta")
out = big(inputs)
meta_loss = torch.nn.functional.cross_entropy(out, torch.zeros(8, dtype=torch.long, device="meta"))
elapsed = time.perf_counter() - start
print(f"output shape {tuple(out.shape)}, loss shape {tuple(meta_loss.shape)}, on {out.device}")
print(f"built and ran on meta in {elapsed * 1e3:.1f} ms")

# %%
# SELF-CHECK: your formula against the bytes the meta tensors describe (nbytes needs no data).
require(predicted_parameter_bytes=predicted_parameter_bytes(FEATURES))
described = sum(p.nbytes for p in big.parameters())
guess = predicted_parameter_bytes(FEATURES)
expect_type(f"predicted_parameter_bytes({FEATURES})", guess, numbers.Real, "a number of bytes")
expect(guess == described, f"the parameters would take {described:,} bytes, not {guess:,}")
expect(out.shape == (8, FEATURES) and out.is_meta, "shape inference runs, data does not")
print(f"self-check passed: {described / 1e9:.1f} GB described, none allocated")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The time does not grow with `FEATURES`: the meta kernels only compute output shapes, dtypes and
# strides (the same shape functions every real kernel runs first). That is how large models are
# sized and planned before any memory is allocated, and how `torch.compile` traces shapes without
# running the computation.
#
# </details>

# %% [markdown]
# ## Exercise 5 · A custom operator <a id="custom-op"></a>
#
# `torch.library.custom_op` turns a Python function into a dispatcher operator with three
# functions you write: the kernel (the function itself, registered for the CPU), a *fake* kernel
# (`register_fake`: only the result's shape, dtype and device, no data) and a derivative
# (`register_autograd`). The measurement defines `lab4::soft_clip`, counts which of the three run,
# and calls it five ways: on a CPU tensor, on a meta tensor, forward and backward, and twice through
# `torch.compile` (with the `aot_eager` backend, which needs no C++ compiler). **Predict** for each
# call the set of functions that run, taken from `"kernel"`, `"fake"` and `"backward"`, then **run**
# it.
#
# **Change** `SECOND_SHAPE` to `(5, 7)` (the second compiled call gets an input of a new shape) and
# predict that call again.

# %% tags=["answer"]
# YOUR ANSWER: for each call, the set of functions that run, such as {"kernel"}
RUNS = {
    "a CPU tensor": None,
    "a meta tensor": None,
    "forward and backward": None,
    "compiled, first call": None,
    "compiled, second call": None,
}

# %% tags=["solution"]
RUNS = {
    "a CPU tensor": {"kernel"},
    "a meta tensor": {"fake"},  # meta tensors have no data: only the fake kernel can run
    "forward and backward": {"kernel", "backward"},
    "compiled, first call": {"fake", "kernel"},  # traced with fake tensors, then the graph runs the kernel
    "compiled, second call": {"kernel"},  # same shape: nothing is traced again
}

# %%
SECOND_SHAPE = (3, 4)
calls = Counter()


@torch.library.custom_op("lab4::soft_clip", mutates_args=(), device_types="cpu")
def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    calls["kernel"] += 1
    return limit * torch.tanh(x / limit)


@soft_clip.register_fake
def _(x, limit):
    calls["fake"] += 1
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def backward(ctx, grad):
    calls["backward"] += 1
    (out,) = ctx.saved_tensors
    return grad * (1 - (out / ctx.limit) ** 2), None


soft_clip.register_autograd(backward, setup_context=setup_context)
# Run again, this cell starts from nothing compiled: torch.compile remembers which shapes changed
# between calls of the same source line, and would trace the second call's new shape as dynamic.
torch.compiler.reset()
compiled = torch.compile(lambda x: soft_clip(x, 2.0) * 2, backend="aot_eager", fullgraph=True)

CALLS = {
    "a CPU tensor": lambda: soft_clip(torch.randn(3, 4), 2.0),
    "a meta tensor": lambda: soft_clip(torch.randn(3, 4, device="meta"), 2.0),
    "forward and backward": lambda: soft_clip(torch.randn(3, 4, requires_grad=True), 2.0).sum().backward(),
    "compiled, first call": lambda: compiled(torch.randn(3, 4)),
    "compiled, second call": lambda: compiled(torch.randn(*SECOND_SHAPE)),
}
ran = {}
for name, call in CALLS.items():
    calls.clear()
    call()
    ran[name] = set(calls)
    print(f"{name:<22} ran {sorted(ran[name])}")
print(torch.ops.lab4.soft_clip.default._schema)

# %%
# SELF-CHECK: your sets against the functions that ran.
require(RUNS={name: RUNS.get(name) for name in ran})
for name in ran:
    expect_type(f"RUNS[{name!r}]", RUNS[name], (set, frozenset), 'a set of names, such as {"kernel", "fake"}')
    unknown = sorted(map(str, set(RUNS[name]) - {"kernel", "fake", "backward"}))
    expect(not unknown, f"{name}: {unknown} is not one of the three functions: kernel, fake, backward")
for name, really in ran.items():
    expect(set(RUNS[name]) == really, f"{name}: you said {sorted(RUNS[name])}, but {sorted(really)} ran")
print("self-check passed: you know which kernel each call runs")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Each kernel has its own job. A CPU tensor runs the kernel; a meta tensor has no data, so only
# the fake kernel, registered at the `Meta` key, can run: it gives the result's shape without
# computing anything. Backward runs your formula, which here needs only the saved output, so the
# kernel is not called again. The first compiled call traces the function with fake tensors (the
# fake kernel runs, the kernel does not), then runs the graph it built, in which the operator is one
# opaque node: the kernel runs once. The second call with the same shape finds the compiled graph
# and only runs the kernel. A new shape breaks the graph's guard, so the function is traced again
# and the fake kernel runs once more; without a fake kernel, `torch.compile` could not trace the
# operator at all.
#
# </details>
