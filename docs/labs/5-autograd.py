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
# # Lab 5 · The graph
#
# ## Goal <a id="goal"></a>
#
# While the forward pass runs, autograd records a graph: one node per differentiable operation,
# each holding the tensors it will need for the backward pass. In this lab you walk that graph,
# weigh what it saves, see what `retain_graph` changes, and switch recording off.
#
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `saved_bytes` runs a function while counting the bytes autograd saves for the
# backward pass (each distinct storage counted once).

# %%
import torch

torch.manual_seed(0)


def saved_bytes(fn):
    """Run `fn()` and return (its result, bytes of distinct storages saved for backward)."""
    storages = {}

    def pack(t):
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    return result, sum(storages.values())


def one_page_model(batch, hidden=None):
    """The one-page program's data and model; `hidden` inserts a ReLU hidden layer."""
    x = torch.randn(batch, 784)
    y = torch.randint(0, 10, (batch,))
    if hidden is None:
        model = torch.nn.Linear(784, 10)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    return x, y, model


print(f"torch {torch.__version__}")

# %% [markdown]
# ## Exercise 1 · Walk the recorded graph <a id="walk-the-graph"></a>
#
# **Run** the cell: it prints the graph behind `loss`, from `loss.grad_fn` through each node's
# `next_functions`, down to the `AccumulateGrad` leaves that write `.grad`.
#
# **Change** `HIDDEN` to `32` (a two-layer model with a ReLU) and run again. **Predict** how many
# `AccumulateGrad` leaves you will see.

# %%
HIDDEN = None  # try 32

x, y, model = one_page_model(64, HIDDEN)
loss = torch.nn.functional.cross_entropy(model(x), y)

seen, leaves = set(), []


def walk(node, depth=0):
    if node is None or node in seen:
        return
    seen.add(node)
    name = type(node).__name__
    if name == "AccumulateGrad":
        leaves.append(node.variable)
        name += f"  -> .grad of a {tuple(node.variable.shape)} parameter"
    print("  " * depth + name)
    for child, _ in node.next_functions:
        walk(child, depth + 1)


walk(loss.grad_fn)
parameters = [p for p in model.parameters() if p.requires_grad]
print(f"\n{len(seen)} nodes, {len(leaves)} AccumulateGrad leaves, {len(parameters)} parameters")

# %%
# SELF-CHECK: one AccumulateGrad leaf per parameter, and x (no grad needed) is not in the graph.
assert len(leaves) == len(parameters), "each parameter gets exactly one AccumulateGrad leaf"
assert {id(p) for p in leaves} == {id(p) for p in parameters}, "the leaves are the model's parameters"
assert not any(leaf is x for leaf in leaves), "x does not require grad, so the graph does not lead to it"
print("self-check passed: the graph ends at the parameters")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# For the one-layer model the chain is `NllLossBackward0 → LogSoftmaxBackward0 → AddmmBackward0`,
# which branches to the bias's `AccumulateGrad` and, through `TBackward0` (the transpose of the
# weight), to the weight's. With `HIDDEN = 32` there are four parameters and four leaves, with a
# `ReluBackward0` between the two `AddmmBackward0` nodes. The graph is built by the forward pass
# itself: nothing is recorded for tensors that do not require grad.
#
# </details>

# %% [markdown]
# ## Exercise 2 · What the graph keeps alive <a id="saved-tensors"></a>
#
# Each node saves what its backward needs: `AddmmBackward0` keeps the input to compute the weight's
# gradient, `LogSoftmaxBackward0` keeps its output, and so on. **Run** the cell to measure the
# saved bytes of the forward pass for a few batch sizes.
#
# **Predict** how the bytes grow with the batch. **Change** `HIDDEN` to `256`: how much does one
# hidden layer add per example?

# %%
BATCHES = [64, 128, 256, 512]
HIDDEN = None  # try 256

saved = {}
for batch in BATCHES:
    x, y, model = one_page_model(batch, HIDDEN)
    _, saved[batch] = saved_bytes(lambda: torch.nn.functional.cross_entropy(model(x), y))
    print(f"batch {batch:>4}: {saved[batch]:>10,} bytes saved ({saved[batch] / batch:,.0f} per example)")

# %%
# SELF-CHECK: saved bytes grow linearly with the batch: equal steps for equal increments.
steps = [saved[b2] - saved[b1] for b1, b2 in zip(BATCHES, BATCHES[1:])]
per_example = [(saved[b2] - saved[b1]) / (b2 - b1) for b1, b2 in zip(BATCHES, BATCHES[1:])]
assert all(step > 0 for step in steps), "more examples means more saved activations"
assert max(per_example) - min(per_example) < 0.01 * max(per_example), "the cost per example is constant"
print(f"self-check passed: {per_example[0]:,.0f} bytes per example, whatever the batch")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The saved bytes are a line: a fixed part plus a constant cost per example. For the one-layer
# model each example saves its 784 input floats (kept by `addmm` for the weight gradient) and a
# few values per class for the log-softmax and the loss. The weight itself is not saved: `x` does
# not require grad, so no gradient with respect to `x` will be computed and the weight is not
# needed. A hidden layer of 256 adds its activations (before and after the ReLU) for every example.
# This is the "activations" line of Floor 7's memory budget.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Backward frees the graph: `retain_graph` <a id="retain-graph"></a>
#
# **Run** the cell: after one `backward()`, a second one fails because the saved tensors were
# freed. The second part keeps the graph with `retain_graph=True` and calls backward twice.
#
# **Change**: call `model.zero_grad()` between the two backward calls. What do the gradients look
# like now?

# %%
x, y, model = one_page_model(64)
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()
try:
    loss.backward()
    second_error = None
except RuntimeError as error:
    second_error = str(error)
print("second backward:", (second_error or "no error").split(".")[0])

model.zero_grad()
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward(retain_graph=True)
once = model.weight.grad.clone()
loss.backward()
twice = model.weight.grad.clone()
print(f"|grad| after one backward {once.norm():.4f}, after two {twice.norm():.4f}")

# %%
# SELF-CHECK: the graph is single-use unless retained, and gradients accumulate.
assert second_error is not None and "second time" in second_error, "a freed graph cannot be run twice"
torch.testing.assert_close(twice, 2 * once)
print("self-check passed: backward frees the graph, .grad accumulates")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# `backward()` frees each node's saved tensors as soon as it has used them; that is what keeps
# training memory from growing step after step. `retain_graph=True` keeps them, and the second
# backward *adds* to `.grad` instead of replacing it, which is why training loops call
# `zero_grad()` (and why gradient accumulation over several micro-batches works). With
# `model.zero_grad()` between the two calls, the second gradient equals the first.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Turning recording off <a id="no-grad"></a>
#
# For evaluation you do not need a graph. **Run** the cell: it runs the same forward pass with
# recording on, under `torch.no_grad()` and under `torch.inference_mode()`, and measures what
# each saves.
#
# **Change** `BATCH` and `HIDDEN`. Does anything ever get saved with recording off?

# %%
BATCH, HIDDEN = 256, 128
x, y, model = one_page_model(BATCH, HIDDEN)


def forward():
    return torch.nn.functional.cross_entropy(model(x), y)


modes = {}
modes["recording"] = saved_bytes(forward)
with torch.no_grad():
    modes["no_grad"] = saved_bytes(forward)
with torch.inference_mode():
    modes["inference_mode"] = saved_bytes(forward)
for name, (out, nbytes) in modes.items():
    print(f"{name:<15} grad_fn={type(out.grad_fn).__name__:<18} saved {nbytes:>10,} bytes")

# %%
# SELF-CHECK: with recording off there is no graph and nothing is saved.
assert modes["recording"][1] > 0 and modes["recording"][0].grad_fn is not None
for name in ("no_grad", "inference_mode"):
    out, nbytes = modes[name]
    assert out.grad_fn is None and not out.requires_grad, f"{name}: no graph is recorded"
    assert nbytes == 0, f"{name}: nothing is saved for backward"
print("self-check passed: no graph, no saved tensors")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# With recording on, the forward pass saves activations in proportion to the batch; under
# `no_grad` or `inference_mode` it saves nothing and the result has no `grad_fn`, whatever the
# batch. `inference_mode` goes further: its tensors carry no autograd dispatch keys at all (see
# Lab 4), so they skip the autograd layer entirely, but they can never be used in a graph later.
#
# </details>
