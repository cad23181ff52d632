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
# # Lab 1 · Your program
#
# ## Goal <a id="goal"></a>
#
# The first floor is the code you type. Before going down, measure what it already tells you:
# how many bytes a tensor holds, which dtype a mixed expression produces, when a NumPy array and
# a tensor share memory, and which line of the one-page training program actually costs time.
#
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `best_time` returns the seconds of one call of a function: the fastest of a
# few batches, each long enough to be measured (other programs can only slow a batch down). The
# lab runs PyTorch on one CPU thread so that timings stay steady when other programs share the
# machine.

# %%
import time

import numpy as np
import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)


def best_time(fn, repeat=7, min_batch_s=0.005):
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


print(f"torch {torch.__version__}, numpy {np.__version__}")

# %% [markdown]
# ## Exercise 1 · Bytes you asked for <a id="bytes-per-tensor"></a>
#
# **Predict** how many bytes `torch.randn(64, 784)` holds (the first line of the one-page
# program). Write your guess into `MY_GUESS` and **run** the cell.
#
# **Change** `DTYPES` and `SHAPE`: add `torch.int8`, `torch.bool`, `torch.complex64`, try a
# three-dimensional shape. Which rule gives every row of the table?

# %%
MY_GUESS = 0  # bytes of torch.randn(64, 784); put your prediction here
SHAPE = (64, 784)
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]

sizes = {}
for dtype in DTYPES:
    t = torch.zeros(SHAPE, dtype=dtype)
    sizes[dtype] = (t.numel(), t.element_size(), t.untyped_storage().nbytes())
    print(f"{dtype!s:<16} numel {t.numel():>7,}  element_size {t.element_size()}  bytes {sizes[dtype][2]:>9,}")

actual = torch.randn(64, 784).untyped_storage().nbytes()
print(f"\ntorch.randn(64, 784) holds {actual:,} bytes; your guess was {MY_GUESS:,}")

# %%
# SELF-CHECK: bytes = numel x element_size, for every dtype you tried.
for dtype, (numel, element_size, nbytes) in sizes.items():
    assert nbytes == numel * element_size, f"{dtype}: storage bytes should be numel x element_size"
if torch.float32 in sizes and torch.float64 in sizes:
    assert sizes[torch.float64][2] == 2 * sizes[torch.float32][2], "float64 takes twice the bytes of float32"
print("self-check passed: bytes = numel x element_size")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# `torch.randn(64, 784)` is 64 × 784 = 50 176 float32 elements of 4 bytes each: 200 704 bytes.
# Shape never stores anything per element; the dtype alone decides the width of each element
# (`torch.bool` and `torch.int8` take one byte, `torch.complex64` eight). Floor 7 builds on this
# rule to predict the memory of a whole training step.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Which dtype wins <a id="type-promotion"></a>
#
# When operands differ in dtype, PyTorch promotes them to a common one. **Run** the cell, which
# prints the result dtype of a few mixed expressions.
#
# **Change** `PAIRS`: add an `int8` tensor plus an `int64` Python integer, a `bool` tensor plus a
# `float16` tensor, a zero-dimensional `float64` tensor plus a `float32` tensor. Predict each
# result before running.

# %%
PAIRS = {
    "int64 tensor + float32 tensor": (torch.ones(3, dtype=torch.int64), torch.ones(3)),
    "float16 tensor + float32 tensor": (torch.ones(3, dtype=torch.float16), torch.ones(3)),
    "float32 tensor + Python float": (torch.ones(3), 2.5),
    "int64 tensor + Python float": (torch.ones(3, dtype=torch.int64), 2.5),
    "float16 tensor + Python int": (torch.ones(3, dtype=torch.float16), 7),
}
results = {}
for name, (left, right) in PAIRS.items():
    results[name] = (left + right).dtype
    print(f"{name:<34} -> {results[name]}")

# %%
# SELF-CHECK: a Python number never widens a floating tensor; it only turns integers into floats.
for name, (left, right) in PAIRS.items():
    if isinstance(right, (int, float)) and left.is_floating_point():
        assert results[name] == left.dtype, f"{name}: a Python scalar should keep the tensor's float dtype"
    if isinstance(right, float) and not left.is_floating_point():
        assert results[name] == torch.get_default_dtype(), f"{name}: int tensor + Python float gives the default float"
    assert results[name] == torch.result_type(left, right), f"{name}: torch.result_type predicts the result"
print("self-check passed: scalars follow the tensor, tensors promote to the wider type")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# Two tensors of the same kind promote to the wider one (`float16 + float32` gives `float32`).
# A Python number only decides the *kind*: a float turns an integer tensor into the default
# floating dtype, but does not widen a `float16` tensor to `float64`. A zero-dimensional tensor
# behaves like a Python number here. `torch.result_type(a, b)` answers the question without
# computing anything.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Shared or copied <a id="numpy-sharing"></a>
#
# `torch.from_numpy(a)` wraps the array's memory; `torch.tensor(a)` copies it. **Run** the cell:
# it changes the array after both calls and times both as the array grows.
#
# **Change** `ROWS` and add `torch.as_tensor(a)` to the comparison. Is it a copy or a view?

# %%
ROWS = [10, 1_000, 100_000]
a = np.zeros(4, dtype=np.float32)
shared, copied = torch.from_numpy(a), torch.tensor(a)
a[0] = 42.0
print(f"after a[0] = 42: from_numpy sees {shared[0].item()}, torch.tensor sees {copied[0].item()}")

wrap_times, copy_times = {}, {}
for rows in ROWS:
    big = np.ones((rows, 64), dtype=np.float32)
    wrap_times[rows] = best_time(lambda: torch.from_numpy(big))
    copy_times[rows] = best_time(lambda: torch.tensor(big))
    print(f"{rows:>8,} rows: from_numpy {wrap_times[rows] * 1e6:8.2f} µs   torch.tensor {copy_times[rows] * 1e6:10.2f} µs")

# %%
# SELF-CHECK: wrapping shares memory and costs the same at any size; copying grows with size.
assert shared[0].item() == 42.0 and copied[0].item() == 0.0, "from_numpy shares, torch.tensor copies"
assert np.shares_memory(shared.numpy(), a), "the wrapped tensor's memory is the array's memory"
small, large = min(ROWS), max(ROWS)
assert wrap_times[large] < 5 * wrap_times[small], "from_numpy should not grow with the array"
assert copy_times[large] > 10 * copy_times[small], "a copy should grow with the array"
print("self-check passed: a wrap is flat, a copy grows")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# ```python
# print(np.shares_memory(torch.as_tensor(a).numpy(), a))  # True: as_tensor wraps when it can
# ```
#
# `from_numpy` and `as_tensor` (for a CPU array whose dtype PyTorch supports) build a tensor
# around the array's buffer: no bytes move, so the time is flat. `torch.tensor` always copies,
# so its time grows with the data. Sharing is why changing one changes the other, and why a
# tensor made by `from_numpy` must not outlive your assumptions about the array.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Which line costs the time <a id="line-by-line"></a>
#
# **Run** the cell: it times each line of the one-page program separately (the labels and the
# optimiser are set up outside the timing).
#
# **Change** `BATCH` from 64 to 4096 and run again. Which lines grow with the batch, and which do
# not? The floors below explain why.

# %%
BATCH = 64


def line_times(batch):
    x = torch.randn(batch, 784)
    y = torch.randint(0, 10, (batch,))
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def forward_and_loss():
        return torch.nn.functional.cross_entropy(model(x), y)

    def backward():
        optimizer.zero_grad()
        forward_and_loss().backward()

    return {
        "x = torch.randn(...)": best_time(lambda: torch.randn(batch, 784), repeat=5),
        "model = nn.Linear(...)": best_time(lambda: torch.nn.Linear(784, 10), repeat=5),
        "loss = cross_entropy(model(x), y)": best_time(forward_and_loss, repeat=5),
        "loss.backward() (with its forward)": best_time(backward, repeat=5),
        "optimizer.step()": best_time(optimizer.step, repeat=5),
    }


per_line = line_times(BATCH)
per_line_big = line_times(4096)
print(f"{'line':<36} {'batch ' + str(BATCH):>12} {'batch 4096':>12}")
for line, t in per_line.items():
    print(f"{line:<36} {t * 1e6:>10.1f}µs {per_line_big[line] * 1e6:>10.1f}µs")

# %%
# SELF-CHECK: data-sized lines grow with the batch; the model's own lines do not.
growth = {line: per_line_big[line] / per_line[line] for line in per_line}
data_growth = min(growth["x = torch.randn(...)"], growth["loss = cross_entropy(model(x), y)"])
parameter_growth = max(growth["model = nn.Linear(...)"], growth["optimizer.step()"])
assert data_growth > 4, "64x more data should take clearly longer to create and to run forward"
assert data_growth > 4 * parameter_growth, "building the model and the update do not depend on the batch"
print("self-check passed: data lines scale with the batch, parameter lines do not")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# With a batch of 64 every line costs little and much of it is the fixed cost of crossing into
# C++ (Floor 3). At 4096 rows, creating `x`, the forward pass and the backward pass grow with
# the data, while building `nn.Linear` and `optimizer.step()` depend only on the 7 850
# parameters and stay put. Which kernel does the work (Floor 6) and how many bytes it moves
# (Floor 7) decide how steeply the data lines grow.
#
# </details>
