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
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `best_time` returns the seconds of one call of a function (the fastest of a
# few batches); `same_storage` tells whether two tensors share their bytes. The lab runs PyTorch on one CPU
# thread so that timings stay steady when other programs share the machine.

# %%
import itertools
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)


def best_time(fn, repeat=5, min_batch_s=0.005):
    """Fastest seconds per call of `fn()` over `repeat` batches of at least `min_batch_s` each."""
    fn()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_batch_s:
            break
        calls *= 2
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return min(samples)  # other programs can only add time to a batch, never remove it


def same_storage(a, b):
    """True when `a` and `b` are windows onto the same block of bytes."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


print(f"torch {torch.__version__}")

# %% [markdown]
# ## Exercise 1 · Strides are the address formula <a id="strides"></a>
#
# Element `[i, j]` of a tensor lives at storage position `offset + i·stride[0] + j·stride[1]`.
# **Run** the cell: it prints shape, stride and offset for a few views of one 4 × 6 tensor.
#
# **Change** `VIEWS`: add `base[::2, 1::3]`, `base.t()[1:]` and `base.unsqueeze(0).expand(3, 4, 6)`.
# Predict each stride before running; an expanded dimension has a surprising one.

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
# SELF-CHECK: for every view and every index, the stride formula finds the element in storage.
flat = base.flatten()  # base is contiguous: its storage order is this flat order
for name, v in VIEWS.items():
    for index in itertools.product(*(range(size) for size in v.shape)):
        position = v.storage_offset() + sum(i * s for i, s in zip(index, v.stride()))
        assert flat[position] == v[index], f"{name}{list(index)}: the stride formula should find it"
    assert same_storage(v, base), f"{name} should be a view of base"
print("self-check passed: offset + sum(index x stride) is where every element lives")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
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
# **Run** the cell: it times a view (`x.t()`), a slice, and a real copy (`x.t().contiguous()`)
# as the tensor grows.
#
# **Predict** which column grows with the size. **Change** `SIDES`, and add `x.clone()` and
# `x[:, ::2]` (is that a view?) to the comparison.

# %%
SIDES = [64, 256, 1024]
times = {"view x.t()": {}, "slice x[1:]": {}, "copy x.t().contiguous()": {}}
for side in SIDES:
    x = torch.randn(side, side)
    times["view x.t()"][side] = best_time(lambda: x.t())
    times["slice x[1:]"][side] = best_time(lambda: x[1:])
    times["copy x.t().contiguous()"][side] = best_time(lambda: x.t().contiguous())

print(f"{'':<26}" + "".join(f"{s:>10}²" for s in SIDES))
for name, row in times.items():
    print(f"{name:<26}" + "".join(f"{row[s] * 1e6:>9.2f}µs" for s in SIDES))

# %%
# SELF-CHECK: a view's cost does not depend on the size; a copy's grows with it.
small, large = min(SIDES), max(SIDES)
for name in ("view x.t()", "slice x[1:]"):
    assert times[name][large] < 4 * times[name][small], f"{name} should cost the same at any size"
copy_row = times["copy x.t().contiguous()"]
assert copy_row[large] > 20 * copy_row[small], "a copy should grow with the number of bytes"
print("self-check passed: views cost metadata, copies cost bytes")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The view and the slice take the same time at every size: they allocate a small tensor object
# and compute new strides. The copy grows with the number of elements (256 times more elements
# from 64² to 1024²), and `clone()` does too. `x[:, ::2]` is a view with stride `(side, 2)`: basic
# slicing, even with steps, never copies.
#
# </details>

# %% [markdown]
# ## Exercise 3 · When `view` refuses and `reshape` copies <a id="contiguous"></a>
#
# `view` only reinterprets the existing bytes, so it fails when the new shape cannot be expressed
# with strides over them. `reshape` returns a view when it can and a copy when it must.
# **Run** the cell.
#
# **Change** `SHAPE` and the permutation (try `x.permute(1, 0, 2)` on a 3-D tensor) and predict
# which calls share storage.

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
flat_from_contiguous = x.reshape(-1)
flat_from_transposed = xt.reshape(-1)
print(f"x.reshape(-1) shares storage: {same_storage(flat_from_contiguous, x)}")
print(f"x.t().reshape(-1) shares storage: {same_storage(flat_from_transposed, x)}")

# %%
# SELF-CHECK: reshape is a view exactly when view would have worked.
assert view_error is not None, "a transposed tensor cannot be flattened without a copy"
assert same_storage(flat_from_contiguous, x), "reshape of a contiguous tensor is a view"
assert not same_storage(flat_from_transposed, x), "reshape of a transposed tensor must copy"
print("self-check passed: contiguity decides view or copy")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# Flattening `x.t()` would need the elements in the order 0, 6, 12, 18, 1, 7, ..., which no
# single stride can describe, so `view` raises and `reshape` quietly allocates a new tensor. That
# silent copy is the usual hidden cost of `reshape` after `permute` or `transpose`; calling
# `.contiguous()` makes the same copy explicit.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Predict, then measure, a training step's memory <a id="training-step-memory"></a>
#
# One training step with Adam holds four kinds of tensors: the **parameters**, their
# **gradients**, the optimiser's **state** (two moments per parameter, plus a step counter), and
# the **activations** saved by the forward pass for the backward pass. **Predict** each line in
# `PREDICTED` (in bytes, float32 is 4 bytes per number), then **run** the cell: it measures them
# by adding up the real tensors.
#
# **Change** `BATCH` and `HIDDEN`. Which lines grow with the batch, which with the model?

# %%
BATCH, HIDDEN = 64, 256
model = torch.nn.Sequential(torch.nn.Linear(784, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(BATCH, 784), torch.randint(0, 10, (BATCH,))

n_params = sum(p.numel() for p in model.parameters())
PREDICTED = {  # fill in your own formulas; these are the parameter and gradient lines
    "parameters": 4 * n_params,
    "gradients": 4 * n_params,
    "optimizer state": None,  # your prediction
    "activations": None,  # your prediction
}

saved = {}


def pack(t):
    saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    loss = torch.nn.functional.cross_entropy(model(x), y)
param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
activation_bytes = sum(n for ptr, n in saved.items() if ptr not in param_ptrs)
loss.backward()
optimizer.step()

measured = {
    "parameters": sum(p.untyped_storage().nbytes() for p in model.parameters()),
    "gradients": sum(p.grad.untyped_storage().nbytes() for p in model.parameters()),
    "optimizer state": sum(
        t.untyped_storage().nbytes() for state in optimizer.state.values() for t in state.values()
    ),
    "activations": activation_bytes,
}
for line, nbytes in measured.items():
    guess = "?" if PREDICTED[line] is None else f"{PREDICTED[line]:,}"
    print(f"{line:<16} measured {nbytes:>11,} B   predicted {guess:>11}")
print(f"{'total':<16} measured {sum(measured.values()):>11,} B")

if torch.cuda.is_available():  # on a GPU the caching allocator can measure the step directly
    gpu_model = model.cuda()
    gpu_opt = torch.optim.Adam(gpu_model.parameters())
    torch.cuda.reset_peak_memory_stats()
    torch.nn.functional.cross_entropy(gpu_model(x.cuda()), y.cuda()).backward()
    gpu_opt.step()
    print(f"CUDA peak allocated during the step: {torch.cuda.max_memory_allocated():,} B")

# %%
# SELF-CHECK: gradients mirror parameters, Adam keeps two moments per parameter, activations follow the batch.
assert measured["gradients"] == measured["parameters"], "one gradient per parameter, same dtype"
step_counters = 4 * len(optimizer.state)  # one float32 step counter per parameter tensor
assert measured["optimizer state"] == 2 * measured["parameters"] + step_counters, "Adam: exp_avg + exp_avg_sq"
assert activation_bytes > BATCH * 784 * 4, "at least the input batch is saved for the first layer's gradient"
print("self-check passed: the step's memory is parameters x 4 plus activations")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# ```python
# PREDICTED["optimizer state"] = 2 * 4 * n_params + 4 * len(list(model.parameters()))
# PREDICTED["activations"] = 4 * BATCH * (784 + HIDDEN + 10) + 8 * BATCH + 4
# ```
#
# Parameters, gradients and Adam's two moments make four copies of the model's size, whatever
# the batch. The activations grow with the batch: the input (kept for the first layer's weight
# gradient), the hidden layer after the ReLU (one tensor, saved by the ReLU for its own backward
# and by the second layer for its weight gradient), the log-probabilities, the integer targets
# and one scalar of the loss. The pre-ReLU values are not kept: the ReLU's backward only needs
# to know where its output is positive. For small models and large batches, activations dominate; for large models the
# four-copies rule does. On a GPU, the caching allocator's peak adds the temporary buffers of the
# backward pass and rounding to its block sizes.
#
# </details>
