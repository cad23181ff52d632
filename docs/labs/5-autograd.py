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
# # Lab 5 · Autograd: the graph
#
# ## Goal <a id="goal"></a>
#
# While the forward pass runs, autograd records a graph: one node per differentiable operation,
# each holding the tensors it will need for the backward pass. In this lab you walk that graph,
# weigh what it saves, accumulate gradients over micro-batches, switch recording off, and watch
# the version counters that guard what it saved.
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
# grade your answers (`expect_type` says which type an answer should have when it has another). `saved_bytes` runs a function while counting the bytes autograd saves for the
# backward pass (each distinct storage counted once).

# %%
import numbers

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

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · Who gets a leaf <a id="walk-the-graph"></a>
#
# Floor 5 walks the one-page program's graph from `loss.grad_fn` through `next_functions` down to
# the `AccumulateGrad` leaves that write `.grad`. The models in `MODELS` bend the rule you may
# have guessed from it, "one leaf per parameter": one applies the *same* square layer twice, one
# has its first layer frozen (`requires_grad_(False)`). **Predict** how many `AccumulateGrad`
# leaves each model's graph has, then **run** the measurement, which walks each graph.
#
# **Change** `X_REQUIRES_GRAD` to `True` (the input asks for a gradient too, as it does when you
# compute a saliency map) and predict again.

# %% tags=["answer"]
# YOUR ANSWER: the number of AccumulateGrad nodes in each model's graph
PREDICTED_LEAVES = {"one layer": None, "a square layer used twice": None, "first layer frozen": None}

# %% tags=["solution"]
PREDICTED_LEAVES = {"one layer": 2, "a square layer used twice": 4, "first layer frozen": 2}  # one per tensor that requires grad

# %%
X_REQUIRES_GRAD = False

square = torch.nn.Linear(784, 784)
MODELS = {
    "one layer": torch.nn.Linear(784, 10),
    "a square layer used twice": torch.nn.Sequential(square, torch.nn.ReLU(), square, torch.nn.ReLU(), torch.nn.Linear(784, 10)),
    "first layer frozen": torch.nn.Sequential(torch.nn.Linear(784, 32).requires_grad_(False), torch.nn.ReLU(), torch.nn.Linear(32, 10)),
}


def leaves_of(node, seen):
    """The tensors behind the AccumulateGrad nodes reachable from `node`, each node visited once."""
    if node is None or node in seen:
        return []
    seen.add(node)
    found = [node.variable] if type(node).__name__ == "AccumulateGrad" else []
    for child, _ in node.next_functions:
        found += leaves_of(child, seen)
    return found


x, y = torch.randn(64, 784).requires_grad_(X_REQUIRES_GRAD), torch.randint(0, 10, (64,))
leaves, wanted = {}, {}
for name, model in MODELS.items():
    seen = set()
    leaves[name] = leaves_of(torch.nn.functional.cross_entropy(model(x), y).grad_fn, seen)
    wanted[name] = [p for p in model.parameters() if p.requires_grad] + ([x] if X_REQUIRES_GRAD else [])
    print(f"{name:<26} {len(seen):>3} nodes, {len(leaves[name])} AccumulateGrad leaves: "
          + ", ".join(str(tuple(t.shape)) for t in leaves[name]))

# %%
# SELF-CHECK: your counts against the graphs; the leaves are exactly the tensors that require grad.
require(PREDICTED_LEAVES={name: PREDICTED_LEAVES.get(name) for name in MODELS})
for name in MODELS:
    expect_type(f"PREDICTED_LEAVES[{name!r}]", PREDICTED_LEAVES[name], numbers.Real, "a number of leaves (such as 3)")
for name, found in leaves.items():
    expect(PREDICTED_LEAVES[name] == len(found), f"{name}: the graph has {len(found)} AccumulateGrad leaves, not {PREDICTED_LEAVES[name]}")
    expect({id(t) for t in found} == {id(t) for t in wanted[name]}, f"{name}: the leaves should be the tensors that require grad")
print("self-check passed: " + ", ".join(f"{name} {len(found)}" for name, found in leaves.items()))

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# A leaf belongs to a *tensor* that requires grad, not to a use of it: the square layer used
# twice has one `AccumulateGrad` for its weight and one for its bias, reached from both
# `AddmmBackward0` nodes that used them, so its gradient is the sum of both uses. A frozen layer
# gets none: nothing is recorded for tensors that need no gradient. An input that requires grad is a leaf like any parameter, so each
# graph gains one; `x.grad` then holds the gradient with respect to the input.
#
# </details>

# %% [markdown]
# ## Exercise 2 · What the graph keeps alive <a id="saved-tensors"></a>
#
# Each node saves what its backward needs. The measurement counts the bytes the forward pass
# saves for a few batch sizes and works out the cost of one more example, for the one-layer
# model (`None`) and with a ReLU hidden layer of 256. **Predict** that cost per example as a
# formula of `hidden` (float32 is 4 bytes, the integer targets are int64), then **run** it.
#
# **Change** `HIDDENS` to add `128` and `1024`: your formula must hold for every width.

# %% tags=["answer"]
# YOUR ANSWER
def predicted_per_example(hidden):
    """Bytes saved for backward per example; `hidden` is None for the one-layer model."""
    return None  # your formula


# %% tags=["solution"]
def predicted_per_example(hidden):
    """Bytes saved for backward per example; `hidden` is None for the one-layer model."""
    input_row, log_probs, target = 4 * 784, 4 * 10, 8
    relu_output = 0 if hidden is None else 4 * hidden  # one tensor, shared by ReLU and the second layer
    return input_row + relu_output + log_probs + target


# %%
BATCHES = [64, 128, 256]
HIDDENS = [None, 256]

per_example = {}
for hidden in HIDDENS:
    saved = {}
    for batch in BATCHES:
        x, y, model = one_page_model(batch, hidden)
        _, saved[batch] = saved_bytes(lambda: torch.nn.functional.cross_entropy(model(x), y))
    steps = {(saved[b2] - saved[b1]) / (b2 - b1) for b1, b2 in zip(BATCHES, BATCHES[1:])}
    per_example[hidden] = steps.pop() if len(steps) == 1 else None
    print(f"hidden {hidden!s:>5}: " + ", ".join(f"batch {b} saves {n:,} B" for b, n in saved.items()))
    print(f"              one more example saves {per_example[hidden]} bytes")

# %%
# SELF-CHECK: your formula against the measured bytes per example, for every width you tried.
require(predicted_per_example=predicted_per_example(None))
for hidden in per_example:
    expect_type(f"predicted_per_example({hidden})", predicted_per_example(hidden), numbers.Real, "a number of bytes")
for hidden, measured in per_example.items():
    expect(measured is not None, "the saved bytes should grow by the same amount for every added example")
    guess = predicted_per_example(hidden)
    expect(guess == measured, f"hidden={hidden}: each example saves {measured:,.0f} bytes, your formula gives {guess}")
print(f"self-check passed: your formula is right for hidden = {', '.join(map(str, HIDDENS))}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The saved bytes are a line: a fixed part plus a constant cost per example. For the one-layer
# model each example saves its 784 input floats (kept by `addmm` for the weight gradient), its 10
# log-probabilities (kept by the log-softmax) and its int64 target (kept by the loss). The weight
# is not saved: `x` does not require grad, so no gradient with respect to `x` is computed and the
# weight is not needed. A hidden layer adds **one** float32 tensor per example, the ReLU's output:
# the ReLU keeps it to know where its output is positive, and the second layer keeps the same
# tensor for its weight gradient, so it is counted once. The pre-ReLU values are not kept. This is
# the "activations" line of Floor 7's memory budget.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Gradients add up: micro-batches <a id="micro-batches"></a>
#
# Floor 5 shows that a second `backward()` *adds* into `.grad`. That is how a batch too large for
# memory is trained in pieces: run forward and backward on each micro-batch, and step once. The
# measurement computes the weight gradient of the one-layer model once on a batch of 64, and once
# accumulated over `MICRO_BATCHES` equal micro-batches of the same 64 examples, without
# `zero_grad()` between them. **Predict** the accumulated gradient's norm as a multiple of the
# full batch's (the loss is a *mean* over its examples), then **run** it.
#
# **Change** `SCALE_LOSS` to `True` (each micro-batch's loss is divided by `MICRO_BATCHES` before
# its backward) and predict again; then, with `SCALE_LOSS` back to `False`, change `MICRO_BATCHES`
# to `2` and predict again.

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_MULTIPLE = None  # |accumulated gradient| / |full-batch gradient|

# %% tags=["solution"]
PREDICTED_MULTIPLE = 4  # each micro-batch's mean gradient is the full batch's size; four of them add up


# %%
MICRO_BATCHES = 4
SCALE_LOSS = False

x, y, model = one_page_model(64)
torch.nn.functional.cross_entropy(model(x), y).backward()
full = model.weight.grad.clone()

model.zero_grad()
for xs, ys in zip(x.chunk(MICRO_BATCHES), y.chunk(MICRO_BATCHES)):
    loss = torch.nn.functional.cross_entropy(model(xs), ys)
    (loss / MICRO_BATCHES if SCALE_LOSS else loss).backward()  # no zero_grad: .grad accumulates
accumulated = model.weight.grad.clone()
multiple = (accumulated.norm() / full.norm()).item()
# How far the accumulated gradient is from that multiple of the full one, relative to its own size:
# float32 rounding alone leaves about 1e-7, and a gradient pointing elsewhere leaves far more.
off = ((accumulated - multiple * full).norm() / accumulated.norm()).item()
print(f"|grad| of the full batch {full.norm():.4f}, accumulated over {MICRO_BATCHES} micro-batches "
      f"{accumulated.norm():.4f}: {multiple:.3f} times; off that multiple by {off:.1e} of its size")

# %%
# SELF-CHECK: your multiple within 1 % of the measured one; and the accumulated gradient is that
# multiple of the full one, up to float32 rounding (relative to the gradient's size).
require(PREDICTED_MULTIPLE=PREDICTED_MULTIPLE)
expect_type("PREDICTED_MULTIPLE", PREDICTED_MULTIPLE, numbers.Real, "a number (such as 0.5)")
expect(
    abs(PREDICTED_MULTIPLE - multiple) <= 0.01 * multiple,
    f"the accumulated gradient's norm is {multiple:.3f} times the full batch's, not {PREDICTED_MULTIPLE}",
)
expect(off < 1e-4, f"the accumulated gradient should point the same way as the full batch's: it is off by {off:.1e} of its size")
print(f"self-check passed: accumulating gives {multiple:.3f} times the full batch's gradient")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Each micro-batch's loss is a mean over its own examples, so its gradient is as large as the
# full batch's; `AccumulateGrad` adds them up, and `MICRO_BATCHES` of them give `MICRO_BATCHES`
# times the full batch's gradient, pointing the same way. Dividing each loss by the number of
# micro-batches turns the sum back into the mean: the multiple is 1, and the step is the one the full
# batch would take, while each forward pass keeps only a micro-batch's activations alive (Exercise
# 2). Forgetting the division is the same as multiplying the learning rate by the number of
# micro-batches.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Turning recording off <a id="no-grad"></a>
#
# For evaluation you do not need a graph. The measurement runs the same two-layer forward pass
# with recording on, under `torch.no_grad()` and under `torch.inference_mode()`, and counts what
# each saves. **Predict** the saved bytes of each, as formulas of `BATCH` and `HIDDEN` (look back
# at Exercise 2; two more tensors are saved once per model, not per example: one as large as a
# weight, and one float32 number), then **run** it.
#
# **Change** `BATCH` and `HIDDEN`: your formulas must still hold.

# %% tags=["answer"]
# YOUR ANSWER
def predicted_saved(batch, hidden):
    """Bytes saved for backward by one forward pass, in each mode."""
    return {"recording": None, "no_grad": None, "inference_mode": None}  # your formulas


# %% tags=["solution"]
def predicted_saved(batch, hidden):
    """Bytes saved for backward by one forward pass, in each mode."""
    per_example = 4 * (784 + hidden + 10) + 8  # Exercise 2
    second_weight = 4 * 10 * hidden  # the second layer's input requires grad, so its weight is saved
    loss_scalar = 4  # the loss's total weight, a float32 scalar
    return {"recording": batch * per_example + second_weight + loss_scalar, "no_grad": 0, "inference_mode": 0}


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
# SELF-CHECK: your formulas against the bytes counted; with recording off there is no graph.
require(predicted_saved=predicted_saved(BATCH, HIDDEN))
guess = predicted_saved(BATCH, HIDDEN)
call = f"predicted_saved({BATCH}, {HIDDEN})"
expect_type(call, guess, dict, 'a dict of bytes by mode: {"recording": ..., "no_grad": ..., "inference_mode": ...}')
require(**{call: {name: guess.get(name) for name in modes}})
for name in modes:
    expect_type(f"{call}[{name!r}]", guess[name], numbers.Real, "a number of bytes")
for name, (out, nbytes) in modes.items():
    expect(guess[name] == nbytes, f"{name}: {nbytes:,} bytes were saved, your formula gives {guess[name]:,}")
    expect((out.grad_fn is None) == (name != "recording"), f"{name}: a graph exactly when recording")
print("self-check passed: you can predict what a forward pass keeps alive")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# With recording on, the forward pass saves activations in proportion to the batch, plus two
# tensors per model. One is the second layer's weight, which its backward needs to send the
# gradient on to the hidden layer (the first layer's weight is not saved, because `x` needs no
# gradient). The other is a float32 scalar, 4 bytes: the loss's *total weight*, the number of
# targets it divided by to take the mean, which its backward divides by again. Under
# `no_grad` or `inference_mode` it saves nothing and the result has no `grad_fn`, whatever the
# batch. `inference_mode` goes further: its tensors carry no autograd dispatch keys at all (see
# Lab 4), so they skip the autograd layer entirely, but they can never be used in a graph later.
#
# </details>

# %% [markdown]
# ## Exercise 5 · Version counters <a id="version-counters"></a>
#
# Floor 5 shows that every in-place operation adds one to a tensor's version counter
# (`t._version`), and that backward refuses a saved tensor whose version has changed. The
# measurement computes `y = (a * a).sum()` with `a = x * 2`, so the multiplication saves `a`; then it
# makes three tensors from `a` — a view `b = a[1:3]`, `c = a.detach()` and a copy `d = a.clone()` —
# changes `c` once and `d` three times in place, and calls `y.backward()`. **Predict** each tensor's
# version at the end, and whether backward raises, then **run** it.
#
# **Change** the line that makes `c` to `c = a.data` and predict again.

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_VERSIONS = {"a": None, "b": None, "c": None, "d": None}
BACKWARD_RAISES = None  # True or False

# %% tags=["solution"]
PREDICTED_VERSIONS = {"a": 1, "b": 1, "c": 1, "d": 3}  # a, its view and its detach() share one counter
BACKWARD_RAISES = True  # the saved a is at version 1, the node expects 0

# %%
x = torch.ones(4, requires_grad=True)
a = x * 2
y = (a * a).sum()  # MulBackward0 saves a, at its version now
b = a[1:3]  # a view of a
c = a.detach()
d = a.clone()  # a copy
c.add_(1)
d.mul_(3)
d[0] = 7
d += 1
versions = {name: t._version for name, t in {"a": a, "b": b, "c": c, "d": d}.items()}
try:
    y.backward()
    raised = None
except RuntimeError as error:
    raised = str(error).splitlines()[0]
print("versions:", versions)
if raised:
    print(f"backward raised: {raised[:120]}...")
else:
    print(f"backward ran: x.grad = {x.grad.tolist()}; the gradient of (2x)² summed is 8x = {(8 * x).tolist()}")

# %%
# SELF-CHECK: your versions against the counters; your answer against what backward did.
require(PREDICTED_VERSIONS={name: PREDICTED_VERSIONS.get(name) for name in versions}, BACKWARD_RAISES=BACKWARD_RAISES)
for name in versions:
    expect_type(f"PREDICTED_VERSIONS[{name!r}]", PREDICTED_VERSIONS[name], numbers.Real, "a version number (such as 2)")
expect_type("BACKWARD_RAISES", BACKWARD_RAISES, bool, "True or False (without quotes)")
for name, version in versions.items():
    expect(PREDICTED_VERSIONS[name] == version, f"{name}: its version is {version}, not {PREDICTED_VERSIONS[name]}")
expect(
    BACKWARD_RAISES == (raised is not None),
    f"backward {'raised' if raised else 'did not raise'}; you said BACKWARD_RAISES = {BACKWARD_RAISES}",
)
expect(raised is None or "modified by an inplace operation" in raised, f"backward raised another error: {raised}")
expect((raised is None) == (versions["a"] == 0), "backward raises exactly when the saved tensor's version moved")
print(f"self-check passed: versions {versions}, backward {'raised' if raised else 'ran'}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The counter belongs to the data that tensors share, not to a Python name: `a`, its view `b` and
# `c = a.detach()` all see the one change made through `c`, while the copy `d` counts its own three
# (`d[0] = 7` and `d += 1` are in-place operations too). The node that saved `a` at version 0 finds
# it at 1 and refuses, which is right: the values its derivative needs were overwritten. With
# `c = a.data` the change goes through a tensor with a counter of its own, so `a` stays at version
# 0, backward runs, and the gradient is computed from the changed values — 12 where 8 is right,
# without a word. That is why `detach()` (or `torch.no_grad()` for an update) replaces `.data`.
#
# </details>
