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
# calls, read an operator's schema, and run a model far too large for your memory on the meta
# device, where tensors have shapes but no data.
#
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `keys` shows a tensor's dispatch key set as a readable string.

# %%
import time
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)


def keys(t):
    """The dispatch key set the dispatcher sees for tensor `t`."""
    return str(torch._C._dispatch_keys(t))


print(f"torch {torch.__version__}")

# %% [markdown]
# ## Exercise 1 · Read a tensor's dispatch keys <a id="dispatch-keys"></a>
#
# **Run** the cell to print the key sets of a few tensors.
#
# **Predict**, then **change** `TENSORS`: add a tensor with `requires_grad=True`, an `int64`
# tensor, a sparse tensor (`torch.ones(3).to_sparse()`), and one made inside
# `torch.inference_mode()`. Which of them change the set, and which do not?

# %%
plain = torch.ones(3)
on_meta = torch.ones(3, device="meta")
with torch.inference_mode():
    inference = torch.ones(3)

TENSORS = {"plain CPU float": plain, "meta": on_meta, "made in inference_mode": inference}
key_sets = {name: keys(t) for name, t in TENSORS.items()}
for name, ks in key_sets.items():
    print(f"{name:<24} {ks}")

# %%
# SELF-CHECK: the device picks the backend key; autograd keys ride along unless you opt out.
assert "CPU" in key_sets["plain CPU float"] and "AutogradCPU" in key_sets["plain CPU float"]
assert "Meta" in key_sets["meta"] and "AutogradMeta" in key_sets["meta"], "the meta device has its own keys"
assert "Autograd" not in key_sets["made in inference_mode"], "inference tensors carry no autograd key"
print("self-check passed: keys come from device, layout and mode")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# A plain CPU tensor already carries `AutogradCPU`, whether or not it requires grad: the
# dispatcher visits the autograd kernel, which simply passes through when nothing needs a
# gradient. `requires_grad=True` and the dtype do not change the key set. A sparse tensor swaps
# the backend key (`SparseCPU`); the meta device has `Meta` and `AutogradMeta`; a tensor created
# under `inference_mode` drops the autograd keys entirely, which is why inference mode is
# cheaper than `no_grad`.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Every operator of the one-page program <a id="op-log"></a>
#
# `TorchDispatchMode` sits *below* autograd: it sees each operator as the dispatcher runs it.
# **Run** the cell: it logs the operators of the forward pass, the backward pass and the optimiser
# step separately.
#
# **Change**: replace `SGD` with `torch.optim.Adam`, or add a `torch.relu` between two layers.
# How many operators does each phase call now?

# %%
class OpLog(TorchDispatchMode):
    """Record the name of every aten operator dispatched while active."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

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
# SELF-CHECK: one Python line becomes several operators, and backward mirrors forward.
forward, backward = phases["forward"], phases["backward"]
assert len(forward) > 2, "two Python calls (linear, cross_entropy) become more operators"
assert any("addmm" in op or "mm" in op for op in forward), "the linear layer is a matrix multiply"
assert any(op.endswith("_backward.default") or "backward" in op for op in backward), "backward runs backward ops"
assert any(".mm." in op for op in backward), "the weight's gradient is a matrix multiply"
print("self-check passed: the dispatcher saw the program operator by operator")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The forward pass shows `aten.t` (a view of the weight), `aten.addmm` (input × weightᵀ + bias
# in one kernel), then `_log_softmax` and `nll_loss_forward`: `cross_entropy` is two operators.
# The backward pass runs the matching backward operators in reverse order and finishes with
# `mm` and `sum` for the weight and bias gradients. With Adam the step phase grows from one
# update per parameter to several operators per parameter (moments, square root, division).
#
# </details>

# %% [markdown]
# ## Exercise 3 · Operators, overloads and schemas <a id="schemas"></a>
#
# Every operator has a *schema*: its name, overload, argument types and what it may mutate.
# **Run** the cell to count the registered operators and print a few schemas.
#
# **Change** `OPS` to print the schemas of `aten.add_.Tensor` (in place: note the `(a!)`) and
# `aten.view.default` (a view: note the `(a)`). Then count how many overloads `aten.add` has.

# %%
OPS = [torch.ops.aten.addmm.default, torch.ops.aten.add.Tensor, torch.ops.aten.add.out]

registered = torch._C._dispatch_get_all_op_names()
base_names = {name.split(".")[0] for name in registered}
namespaces = Counter(name.split("::")[0] for name in base_names)
print(f"{len(registered)} operator overloads, {len(base_names)} distinct operators")
print("by namespace:", dict(namespaces.most_common(5)))
for op in OPS:
    print(op._schema)

# %%
# SELF-CHECK: overloads outnumber operators, and aten is the largest namespace.
assert len(registered) > len(base_names), "many operators have several overloads"
assert namespaces.most_common(1)[0][0] == "aten", "aten holds most operators"
assert "Tensor(a!) out" in str(torch.ops.aten.add.out._schema), "an out= overload declares that it mutates out"
print("self-check passed: schemas describe every overload")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# ```python
# print(torch.ops.aten.add_.Tensor._schema)   # aten::add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)
# print(torch.ops.aten.view.default._schema)  # aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
# print(torch.ops.aten.add.overloads())
# ```
#
# The annotations are the contract the rest of the system relies on: `(a!)` says the operator
# writes into that argument, `(a)` says the result aliases it. Autograd, `torch.compile` and the
# functionalisation pass read them from the schema instead of guessing.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Shapes without data: the meta device <a id="meta-device"></a>
#
# A tensor on the `meta` device has a shape, a dtype and strides, but no storage. **Run** the
# cell: it builds a linear layer with `FEATURES` inputs and outputs on the meta device, runs a
# forward pass and a loss, and reports how many bytes the real weights would take.
#
# **Change** `FEATURES` to `200_000` (a weight of 160 GB in float32). Does the cell get slower?

# %%
FEATURES = 50_000

start = time.perf_counter()
big = torch.nn.Linear(FEATURES, FEATURES, device="meta")
inputs = torch.empty(8, FEATURES, device="meta")
out = big(inputs)
meta_loss = torch.nn.functional.cross_entropy(out, torch.zeros(8, dtype=torch.long, device="meta"))
elapsed = time.perf_counter() - start

would_take = sum(p.numel() * p.element_size() for p in big.parameters())
print(f"output shape {tuple(out.shape)}, loss shape {tuple(meta_loss.shape)}, on {out.device}")
print(f"the real parameters would take {would_take / 1e9:.1f} GB; on meta this took {elapsed * 1e3:.1f} ms")

# %%
# SELF-CHECK: shapes and sizes are exact; no data exists.
assert out.shape == (8, FEATURES) and out.is_meta, "shape inference runs, data does not"
assert would_take == (FEATURES * FEATURES + FEATURES) * 4, "float32 weight plus bias"
print("self-check passed: the meta device computes shapes, not numbers")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The time does not grow with `FEATURES`: the meta kernels only compute output shapes, dtypes and
# strides (the same shape functions every real kernel runs first). That is how large models are
# sized and planned before any memory is allocated, and how `torch.compile` traces shapes without
# running the computation.
#
# </details>
