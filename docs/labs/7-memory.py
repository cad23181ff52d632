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
# # Lab 7 · Memory
#
# ## Goal <a id="goal"></a>
#
# A tensor is a view onto a storage: a block of bytes plus a shape, strides and an offset that
# say where each element lives. In this lab you compute element addresses from strides, tell
# views from copies by their storage and by their cost, see when `view` refuses and `reshape`
# copies, and then predict and measure the memory of one training step.
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
# grade your answers (`expect_type` says which type an answer should have when it has another). `best_time` returns the seconds of one call of a function (the fastest of
# fifteen short batches); `same_storage` tells whether two tensors share their bytes. The lab runs PyTorch on one CPU
# thread so that timings stay steady when other programs share the machine.

# %%
import itertools
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)


def same_storage(a, b):
    """True when `a` and `b` are windows onto the same block of bytes."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


print(f"torch {torch.__version__}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · Strides are the address formula <a id="strides"></a>
#
# Element `[i, j]` of a tensor lives at storage position `offset + i·stride[0] + j·stride[1]`.
# The measurement prints shape, stride and offset for a few views of one 4 × 6 tensor.
# **Predict** each view's stride (a tuple, one number per dimension), then **run** it.
#
# **Change** `VIEWS`: add `base[::2, 1::3]`, `base.t()[1:]` and `base.unsqueeze(0).expand(3, 4, 6)`,
# and predict them too; an expanded dimension has a surprising stride.

# %% tags=["answer"]
# YOUR ANSWER: the stride of each view, as a tuple
PREDICTED_STRIDES = {"base": None, "base.t()": None, "base[1:, ::2]": None, "base[2]": None}

# %% tags=["solution"]
PREDICTED_STRIDES = {"base": (6, 1), "base.t()": (1, 6), "base[1:, ::2]": (6, 2), "base[2]": (1,)}

# %%
base = torch.arange(24.0).reshape(4, 6)
VIEWS = {
    "base": base,
    "base.t()": base.t(),
    "base[1:, ::2]": base[1:, ::2],
    "base[2]": base[2],
}
for name, v in VIEWS.items():
    print(f"{name:<16} shape {tuple(v.shape)!s:<10} stride {v.stride()!s:<9} offset {v.storage_offset()}")

# %%
# SELF-CHECK: your strides against PyTorch's; and the stride formula finds every element of every view.
require(PREDICTED_STRIDES={name: PREDICTED_STRIDES.get(name) for name in VIEWS})
for name in VIEWS:
    stride = PREDICTED_STRIDES[name]
    expect_type(f"PREDICTED_STRIDES[{name!r}]", stride, (tuple, list), "a tuple of ints, one per dimension, such as (6, 1) or (1,)")
    for number in stride:
        expect_type(f"each number in PREDICTED_STRIDES[{name!r}]", number, numbers.Integral, "an int")
flat = base.flatten()  # base is contiguous: its storage order is this flat order
for name, v in VIEWS.items():
    expect(tuple(PREDICTED_STRIDES[name]) == v.stride(), f"{name}: the stride is {v.stride()}, not {PREDICTED_STRIDES[name]}")
    for index in itertools.product(*(range(size) for size in v.shape)):
        position = v.storage_offset() + sum(i * s for i, s in zip(index, v.stride()))
        expect(flat[position] == v[index], f"{name}{list(index)}: the stride formula should find it")
print(f"self-check passed: all {len(VIEWS)} strides predicted; offset + sum(index x stride) finds every element")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# `base[::2, 1::3]` has strides `(12, 3)` and offset 1; `base.t()[1:]` has strides `(1, 6)` and
# offset 1; `expand` gives the new dimension a stride of **0**, so three "copies" are the same
# bytes read three times. Transposing, slicing and expanding never move data: they only write new
# metadata.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Views are free, copies are not <a id="view-vs-copy"></a>
#
# Floor 7 times a transpose (a view) against `clone()` (a copy). The operations in `OPS` are less
# obvious: a diagonal, `flatten()` before and after a transpose, and selecting elements with a
# boolean mask. The measurement runs each on square tensors of growing side, times it, and asks
# whether its result shares the input's storage. **Predict** which return a view (`True`) and
# which a copy (`False`), then **run** it.
#
# **Change** `OPS`: add `x[::2].flatten()` and `x.unsqueeze(0).expand(4, -1, -1)`, and predict
# them too.

# %% tags=["answer"]
# YOUR ANSWER: True for a view (shares storage), False for a copy
IS_VIEW = {"x.diagonal()": None, "x.flatten()": None, "x.t().flatten()": None, "x[x > 0]": None}

# %% tags=["solution"]
IS_VIEW = {"x.diagonal()": True, "x.flatten()": True, "x.t().flatten()": False, "x[x > 0]": False}

# %%
SIDES = [64, 256, 1024]
OPS = {
    "x.diagonal()": lambda x: x.diagonal(),
    "x.flatten()": lambda x: x.flatten(),
    "x.t().flatten()": lambda x: x.t().flatten(),
    "x[x > 0]": lambda x: x[x > 0],
}
times = {name: {} for name in OPS}
shares = {}
with CoreShare() as views_core:  # how much of a core the timings got
    for _ in range(2):  # two rounds, interleaved, so a busy moment does not hit one size only
        for side in SIDES:
            x = torch.randn(side, side)
            for name, op in OPS.items():
                times[name][side] = min(best_time(lambda: op(x)), times[name].get(side, float("inf")))
                shares[name] = same_storage(op(x), x)

print(f"{'':<34}" + "".join(f"{s:>10}²" for s in SIDES))
for name, row in times.items():
    print(f"{name:<34}" + "".join(f"{row[s] * 1e6:>9.2f}µs" for s in SIDES))

# %%
# SELF-CHECK: your answers against the storages; a view's cost does not grow with the size, a copy's does.
# A growth within the share of a core this run got of 4x is too close to call (a busy machine
# stretches the timings), and not graded; how far past 4x a copy grows depends on the caches.
require(IS_VIEW={name: IS_VIEW.get(name) for name in OPS})
for name in OPS:
    expect_type(f"IS_VIEW[{name!r}]", IS_VIEW[name], bool, "True or False (without quotes)")
small, large = min(SIDES), max(SIDES)
for name, really in shares.items():
    expect(IS_VIEW[name] == really, f"{name}: you said view={IS_VIEW[name]}, but it {'shares' if really else 'does not share'} x's storage")
    growth = times[name][large] / times[name][small]
    if not really and (large / small) ** 2 < 100:
        continue  # too few more bytes for a copy's growth to show
    why = unclear(growth, 4, views_core, margin=1, what=f"{name}'s growth")
    if why:
        print(why)
    elif really:
        expect(growth < 4, f"{name} is a view, yet it took {growth:.1f}x longer at the larger size")
    else:
        expect(growth > 4, f"{name} copies {(large / small) ** 2:.0f}x more bytes, yet it took only {growth:.1f}x longer")
print("self-check passed: views cost metadata, copies cost bytes")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The diagonal is a view with a single stride of `side + 1`: one step down and one to the right.
# `flatten()` is `reshape(-1)`: a view when the tensor is contiguous, a copy after a transpose,
# where no single stride walks the elements in order (Exercise 3). A boolean mask selects
# elements with no stride pattern at all, so `x[x > 0]` always copies, about half the bytes here.
# `x[::2].flatten()` copies too (every other row leaves gaps one stride cannot skip), while
# `expand` is a view whose new dimension has stride 0. The copies' times grow with the number of
# elements; the views' do not.
#
# </details>

# %% [markdown]
# ## Exercise 3 · When `view` refuses and `reshape` copies <a id="contiguous"></a>
#
# `view` only reinterprets the existing bytes, so it fails when the new shape cannot be expressed
# with strides over them. `reshape` returns a view when it can and a copy when it must.
# **Predict** whether `x.t().view(-1)` fails, and whether each `reshape(-1)` shares `x`'s storage,
# then **run** the measurement.
#
# **Change** `SHAPE` to `(4, 1)` and predict again. A transposed column is a row: is it
# contiguous?

# %% tags=["answer"]
# YOUR ANSWER
VIEW_FAILS = None  # True if x.t().view(-1) raises
RESHAPE_SHARES = {"x.reshape(-1)": None, "x.t().reshape(-1)": None}  # True if it shares x's storage

# %% tags=["solution"]
VIEW_FAILS = True  # no single stride walks the transposed elements in order
RESHAPE_SHARES = {"x.reshape(-1)": True, "x.t().reshape(-1)": False}

# %%
SHAPE = (4, 6)
x = torch.arange(float(torch.Size(SHAPE).numel())).reshape(SHAPE)
xt = x.t()
print(f"x contiguous: {x.is_contiguous()}, x.t() contiguous: {xt.is_contiguous()}")
try:
    xt.view(-1)
    view_error = None
except RuntimeError as error:
    view_error = str(error)
print("x.t().view(-1):", (view_error or "worked").split("(")[0])
reshaped = {"x.reshape(-1)": x.reshape(-1), "x.t().reshape(-1)": xt.reshape(-1)}
for name, flat in reshaped.items():
    print(f"{name} shares storage: {same_storage(flat, x)}")

# %%
# SELF-CHECK: your answers against what view and reshape did; reshape copies exactly when view fails.
require(VIEW_FAILS=VIEW_FAILS, RESHAPE_SHARES={name: RESHAPE_SHARES.get(name) for name in reshaped})
expect_type("VIEW_FAILS", VIEW_FAILS, bool, "True or False (without quotes)")
for name in reshaped:
    expect_type(f"RESHAPE_SHARES[{name!r}]", RESHAPE_SHARES[name], bool, "True or False (without quotes)")
failed = view_error is not None
expect(VIEW_FAILS == failed, f"x.t().view(-1) {'raised' if failed else 'worked'} for SHAPE {SHAPE}: x.t() is {'not ' * (not xt.is_contiguous())}contiguous")
for name, flat in reshaped.items():
    really = same_storage(flat, x)
    expect(RESHAPE_SHARES[name] == really, f"{name}: you said shares={RESHAPE_SHARES[name]}, it {'shares' if really else 'copies'}")
expect(same_storage(reshaped["x.t().reshape(-1)"], x) != failed, "reshape should copy exactly when view fails")
print("self-check passed: contiguity decides view or copy")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Flattening `x.t()` of a 4 × 6 tensor needs the elements in the order 0, 6, 12, 18, 1, 7, ...,
# which no single stride can describe, so `view` raises and `reshape` quietly allocates a new
# tensor. That silent copy is the usual hidden cost of `reshape` after `permute` or `transpose`;
# `.contiguous()` makes the same copy explicit. With `SHAPE = (4, 1)` the transpose is a 1 × 4 row
# whose elements are already in order (a dimension of size 1 never needs a stride), so it is
# contiguous: `view` works and `reshape` shares.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Predict, then measure, a training step's memory <a id="training-step-memory"></a>
#
# One training step with Adam holds four kinds of tensors: the **parameters**, their
# **gradients**, the optimiser's **state** (two moments per parameter, plus a step counter per
# parameter tensor), and the **activations** saved by the forward pass for the backward pass.
# **Predict** the last two lines as formulas of `BATCH` and `HIDDEN` (in bytes; float32 is 4
# bytes per number, the targets are int64, and the loss saves one float32 number for its
# backward, whatever the batch), then **run** the measurement: it adds up the real tensors.
# (Lab 5 measured what the forward pass saves.)
#
# **Change** `BATCH` and `HIDDEN`. Which lines grow with the batch, which with the model?

# %% tags=["answer"]
# YOUR ANSWER
def predicted_step_bytes(batch, hidden):
    """Bytes of each line of one Adam step for the 784 -> hidden -> 10 model."""
    n_params = 784 * hidden + hidden + hidden * 10 + 10
    return {
        "parameters": 4 * n_params,
        "gradients": 4 * n_params,
        "optimizer state": None,  # your formula
        "activations": None,  # your formula (not counting parameters the graph saves)
    }


# %% tags=["solution"]
def predicted_step_bytes(batch, hidden):
    """Bytes of each line of one Adam step for the 784 -> hidden -> 10 model."""
    n_params = 784 * hidden + hidden + hidden * 10 + 10
    return {
        "parameters": 4 * n_params,
        "gradients": 4 * n_params,
        "optimizer state": 2 * 4 * n_params + 4 * 4,  # exp_avg, exp_avg_sq; a float32 step per tensor
        "activations": 4 * batch * (784 + hidden + 10) + 8 * batch + 4,  # input, ReLU output, log-probs, targets; the loss's total weight
    }


# %%
BATCH, HIDDEN = 64, 256
model = torch.nn.Sequential(torch.nn.Linear(784, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))
optimizer = torch.optim.Adam(model.parameters())
inputs, targets = torch.randn(BATCH, 784), torch.randint(0, 10, (BATCH,))

saved = {}


def pack(t):
    saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    loss = torch.nn.functional.cross_entropy(model(inputs), targets)
param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
loss.backward()
optimizer.step()

measured = {
    "parameters": sum(p.untyped_storage().nbytes() for p in model.parameters()),
    "gradients": sum(p.grad.untyped_storage().nbytes() for p in model.parameters()),
    "optimizer state": sum(t.untyped_storage().nbytes() for state in optimizer.state.values() for t in state.values()),
    "activations": sum(n for ptr, n in saved.items() if ptr not in param_ptrs),
}
for line, nbytes in measured.items():
    print(f"{line:<16} measured {nbytes:>11,} B")
print(f"{'total':<16} measured {sum(measured.values()):>11,} B")

# %% [markdown]
# *GPU only:* on a CUDA machine this cell also measures the step with the caching allocator.
# It is skipped on a CPU.

# %%
if torch.cuda.is_available():
    gpu_model = model.cuda()
    gpu_opt = torch.optim.Adam(gpu_model.parameters())
    torch.cuda.reset_peak_memory_stats()
    torch.nn.functional.cross_entropy(gpu_model(inputs.cuda()), targets.cuda()).backward()
    gpu_opt.step()
    print(f"CUDA peak allocated during the step: {torch.cuda.max_memory_allocated():,} B")
else:
    print("no CUDA device: the allocator's view is skipped")

# %%
# SELF-CHECK: every line of your prediction against the bytes of the real tensors.
predicted = predicted_step_bytes(BATCH, HIDDEN)
require(predicted_step_bytes=predicted)
call = f"predicted_step_bytes({BATCH}, {HIDDEN})"
expect_type(call, predicted, dict, "a dict of bytes by line, as the answer cell returns")
require(**{call: {line: predicted.get(line) for line in measured}})
for line in measured:
    expect_type(f"{call}[{line!r}]", predicted[line], numbers.Real, "a number of bytes")
for line, nbytes in measured.items():
    expect(predicted[line] == nbytes, f"{line}: the step holds {nbytes:,} bytes, your formula gives {predicted[line]:,}")
print(f"self-check passed: you predicted all {sum(measured.values()):,} bytes of the step")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Parameters, gradients and Adam's two moments make four copies of the model's size, whatever
# the batch. The activations grow with the batch: the input (kept for the first layer's weight
# gradient), the hidden layer after the ReLU (one tensor, saved by the ReLU for its own backward
# and by the second layer for its weight gradient), the log-probabilities and the integer
# targets. The `+ 4` is the one activation that does not grow with the batch: the loss's *total
# weight*, a float32 scalar holding the number of targets it divided by to take the mean, which
# its backward divides by again. The pre-ReLU values are not kept: the ReLU's backward only needs
# to know where its output is positive. For small models and large batches, activations dominate;
# for large models the four-copies rule does. On a GPU, the caching allocator's peak adds the
# temporary buffers of the backward pass and rounding to its block sizes.
#
# </details>
