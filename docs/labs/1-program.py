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
# Each exercise asks you to **predict** first, in the cell marked `YOUR ANSWER`, then to **run**
# the measurement, **change** something and measure again. The `SELF-CHECK` cell compares your
# answer with what your machine measured: it fails, saying what to fill in, until you have
# answered, and it fails, saying why, when the answer and the measurement disagree. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `require`, `expect`, `expect_type` and `within` are what the self-checks use to
# grade your answers (`expect_type` says which type an answer should have when it has another). `best_time` returns the seconds of one call of a function: the fastest of
# fifteen short batches (other programs can only slow a batch down, and a short one often escapes them). The
# lab runs PyTorch on one CPU thread so that timings stay steady when other programs share the
# machine.

# %%
import math
import numbers

import numpy as np
import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)

print(f"torch {torch.__version__}, numpy {np.__version__}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · Bytes you asked for <a id="bytes-per-tensor"></a>
#
# **Predict** how many bytes `torch.randn(64, 784)` holds (the first line of the one-page
# program), and write a formula, `predicted_bytes(shape, dtype)`, that gives the bytes of any
# tensor without creating it. Fill both into the answer cell and **run** it, then **run** the
# measurement: it creates a tensor of `SHAPE` in each of `DTYPES` and reads the bytes its storage
# really holds.
#
# **Change** `DTYPES` and `SHAPE`: add `torch.int8`, `torch.bool`, `torch.complex64`, and try a
# three-dimensional `SHAPE` such as `(2, 3, 5)`. The self-check tests your formula on every row
# you measure.

# %% tags=["answer"]
# YOUR ANSWER
MY_GUESS = None  # bytes held by torch.randn(64, 784)


def predicted_bytes(shape, dtype):
    """Bytes held by a tensor of `shape` and `dtype`, worked out without creating it."""
    return None  # your formula


# %% tags=["solution"]
MY_GUESS = 64 * 784 * 4  # 50,176 float32 elements of 4 bytes


def predicted_bytes(shape, dtype):
    """Bytes held by a tensor of `shape` and `dtype`, worked out without creating it."""
    return math.prod(shape) * dtype.itemsize


# %%
SHAPE = (64, 784)
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]

sizes = {}
for dtype in DTYPES:
    t = torch.zeros(SHAPE, dtype=dtype)
    sizes[dtype] = t.untyped_storage().nbytes()
    print(f"{dtype!s:<16} numel {t.numel():>7,}  element_size {t.element_size()}  bytes {sizes[dtype]:>9,}")
actual = torch.randn(64, 784).untyped_storage().nbytes()

# %%
# SELF-CHECK: your guess and your formula against the bytes the storage really holds.
require(MY_GUESS=MY_GUESS, predicted_bytes=predicted_bytes(SHAPE, DTYPES[0]))
expect_type("MY_GUESS", MY_GUESS, numbers.Real, "a number of bytes (an int such as 1024)")
for dtype in sizes:
    expect_type(f"predicted_bytes({SHAPE}, {dtype})", predicted_bytes(SHAPE, dtype), numbers.Real, "a number of bytes")
expect(
    MY_GUESS == actual,
    f"torch.randn(64, 784) holds {actual:,} bytes, not {MY_GUESS:,}: count its elements, then the bytes of each",
)
for dtype, nbytes in sizes.items():
    formula = predicted_bytes(SHAPE, dtype)
    expect(formula == nbytes, f"{dtype}, shape {SHAPE}: your formula gives {formula}, the storage holds {nbytes:,} bytes")
print(f"self-check passed: your formula matches all {len(sizes)} dtypes you measured")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# `torch.randn(64, 784)` is 64 × 784 = 50 176 float32 elements of 4 bytes each. A shape never
# stores anything per element; the dtype alone decides each element's width (`dtype.itemsize`):
# `torch.bool` and `torch.int8` take one byte, `torch.complex64` eight. Floor 7 builds on this
# rule to predict the memory of a whole training step.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Which dtype wins <a id="type-promotion"></a>
#
# When operands differ in dtype, PyTorch promotes them to a common one. **Predict** the result
# dtype of each expression in `PAIRS` and write it into `PREDICTED` (for example
# `torch.float32`), then **run** the measurement, which computes each sum.
#
# **Change** `PAIRS`: add an `int8` tensor plus a Python `int`, a `bool` tensor plus a
# `float16` tensor, a zero-dimensional `float64` tensor plus a `float32` tensor, and predict
# each one in `PREDICTED` too: the self-check asks for a prediction for every pair.

# %% tags=["answer"]
# YOUR ANSWER: the dtype you expect for each pair
PREDICTED = {
    "int64 tensor + float32 tensor": None,
    "float16 tensor + float32 tensor": None,
    "float32 tensor + Python float": None,
    "int64 tensor + Python float": None,
    "float16 tensor + Python int": None,
}

# %% tags=["solution"]
PREDICTED = {
    "int64 tensor + float32 tensor": torch.float32,
    "float16 tensor + float32 tensor": torch.float32,
    "float32 tensor + Python float": torch.float32,
    "int64 tensor + Python float": torch.float32,
    "float16 tensor + Python int": torch.float16,
}

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
# SELF-CHECK: every predicted dtype against the dtype the sum really has.
require(PREDICTED={name: PREDICTED.get(name) for name in PAIRS})
for name in PAIRS:
    expect_type(f"PREDICTED[{name!r}]", PREDICTED[name], torch.dtype, "a dtype such as torch.float32 (written without quotes)")
wrong = [f"{name}: you said {PREDICTED[name]}, it is {dtype}" for name, dtype in results.items() if PREDICTED[name] != dtype]
expect(not wrong, "not what PyTorch did:\n  " + "\n  ".join(wrong))
print(f"self-check passed: all {len(results)} predictions right")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Two tensors of the same kind promote to the wider one (`float16 + float32` gives `float32`).
# A Python number only decides the *kind*: a float turns an integer tensor into the default
# floating dtype, but does not widen a `float16` tensor to `float64`; an `int` never changes an
# `int8` tensor. A zero-dimensional tensor behaves like a Python number here, so `float64` of
# zero dimensions plus `float32` stays `float32`. `torch.result_type(a, b)` answers the question
# without computing anything.
#
# </details>

# %% [markdown]
# ## Exercise 3 · When `as_tensor` has to copy <a id="numpy-sharing"></a>
#
# Floor 1 shows that `torch.from_numpy` shares a NumPy array's memory and `torch.tensor` copies
# it. `torch.as_tensor` shares *when it can*. **Predict** for each conversion in `CONVERSIONS`,
# all of a float32 array `big`, whether the tensor shares the array's memory (`True`) or holds a
# copy (`False`), then **run** the measurement: it asks NumPy whether the memories overlap, and
# times each conversion as the array grows, a second witness: a copy costs time in proportion to
# the bytes, a shared tensor does not.
#
# **Change** `ROWS` to `[10, 1_000]` and run the measurement and the check; then change it to
# `[10, 1_000, 1_000_000]` and run them again. Which times grow with the rows?

# %% tags=["answer"]
# YOUR ANSWER: True if the tensor shares the array's memory, False if it is a copy
SHARES = {
    "torch.as_tensor(big)": None,
    "torch.as_tensor(big, dtype=torch.float64)": None,
    "torch.as_tensor(big.T)": None,
    "torch.as_tensor(big[:, ::2])": None,
    "torch.as_tensor(big.view(np.int32))": None,
}

# %% tags=["solution"]
SHARES = {
    "torch.as_tensor(big)": True,
    "torch.as_tensor(big, dtype=torch.float64)": False,  # new dtype, new bytes
    "torch.as_tensor(big.T)": True,  # the tensor takes NumPy's strides
    "torch.as_tensor(big[:, ::2])": True,  # a positive step is a stride too
    "torch.as_tensor(big.view(np.int32))": True,  # NumPy reinterpreted the bytes; torch wraps them
}

# %%
ROWS = [10, 1_000, 100_000]
CONVERSIONS = {
    "torch.as_tensor(big)": lambda big: torch.as_tensor(big),
    "torch.as_tensor(big, dtype=torch.float64)": lambda big: torch.as_tensor(big, dtype=torch.float64),
    "torch.as_tensor(big.T)": lambda big: torch.as_tensor(big.T),
    "torch.as_tensor(big[:, ::2])": lambda big: torch.as_tensor(big[:, ::2]),
    "torch.as_tensor(big.view(np.int32))": lambda big: torch.as_tensor(big.view(np.int32)),
}
small_array = np.ones((min(ROWS), 64), dtype=np.float32)
shares = {name: bool(np.shares_memory(convert(small_array).numpy(), small_array)) for name, convert in CONVERSIONS.items()}

times = {name: {} for name in CONVERSIONS}
for rows in ROWS:
    big = np.ones((rows, 64), dtype=np.float32)
    for name, convert in CONVERSIONS.items():
        times[name][rows] = best_time(lambda: convert(big))
print(f"{'conversion':<44} {'shares':>6}" + "".join(f"{f'{rows:,} rows':>16}" for rows in ROWS))
for name, row in times.items():
    print(f"{name:<44} {shares[name]!s:>6}" + "".join(f"{row[rows] * 1e6:>14.2f}µs" for rows in ROWS))

# %%
# SELF-CHECK: your answers against NumPy's test of shared memory; the times agree: flat when shared, growing when copied.
require(SHARES={name: SHARES.get(name) for name in CONVERSIONS})
for name in CONVERSIONS:
    expect_type(f"SHARES[{name!r}]", SHARES[name], bool, "True or False (without quotes)")
for name, really in shares.items():
    verb = "shares the array's memory" if really else "holds a copy"
    expect(SHARES[name] == really, f"{name}: you said {SHARES[name]}, but it {verb} (np.shares_memory says {really})")
small, large = min(ROWS), max(ROWS)
big_enough = large * 64 * 4 >= 2**22 and large >= 100 * small  # at least 4 MiB against a hundredth of it
for name, row in times.items():
    growth = row[large] / row[small]
    if shares[name]:
        expect(growth < 5, f"{name} shares memory, yet it took {growth:.1f}x longer for {large // small:,}x the rows")
    elif big_enough:
        expect(growth > 5, f"{name} copies {large // small:,}x the bytes, yet it took only {growth:.1f}x longer")
if not big_enough:
    print(f"(your largest array, {large * 256:,} bytes, is too small to show a copy growing: add a larger size)")
print(f"self-check passed: you know which of the {len(shares)} conversions share, and the clock agrees")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# `torch.as_tensor` wraps the array's buffer whenever a tensor can describe the array as it is:
# its own dtype (even one NumPy reinterpreted in place, as `view(np.int32)` does) and any
# positive strides, so a transposed or stepped array becomes a transposed or stepped tensor over
# the same bytes, in the same time at every size. Asking for another dtype needs new bytes: that
# conversion copies, and its time grows with the rows once the copy outweighs the fixed cost of
# the call. What a tensor cannot describe at all, such as a negative stride (Floor 1) or a
# non-native byte order, makes `as_tensor` raise instead of copying behind your back.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Which line costs the time <a id="line-by-line"></a>
#
# **Predict** which lines of the one-page program take longer when the batch grows from `SMALL`
# to `LARGE` rows, and which do not: `True` for "grows", `False` for "stays put". Then **run** the
# measurement: it times each line at both batch sizes (labels and optimiser are set up outside
# the timing).
#
# **Change** `LARGE` to `1024` and run the measurement and the check again. The floors below
# explain why the lines differ.

# %% tags=["answer"]
# YOUR ANSWER: True if the line's time grows with the batch, False if it stays put
GROWS = {
    "x = torch.randn(...)": None,
    "model = nn.Linear(...)": None,
    "loss = cross_entropy(model(x), y)": None,
    "loss.backward() (with its forward)": None,
    "optimizer.step()": None,
}

# %% tags=["solution"]
GROWS = {
    "x = torch.randn(...)": True,
    "model = nn.Linear(...)": False,
    "loss = cross_entropy(model(x), y)": True,
    "loss.backward() (with its forward)": True,
    "optimizer.step()": False,
}


# %%
SMALL, LARGE = 64, 4096


def line_calls(batch):
    """Each line of the program as a function to time, at `batch` rows."""
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
        "x = torch.randn(...)": lambda: torch.randn(batch, 784),
        "model = nn.Linear(...)": lambda: torch.nn.Linear(784, 10),
        "loss = cross_entropy(model(x), y)": forward_and_loss,
        "loss.backward() (with its forward)": backward,
        "optimizer.step()": optimizer.step,
    }


calls = {batch: line_calls(batch) for batch in (SMALL, LARGE)}
per_line = {SMALL: {}, LARGE: {}}
for line in calls[SMALL]:
    # The two sizes take turns, five rounds each: a moment when this machine is busy slows both alike,
    # and the fastest round of each is kept.
    rounds = [(best_time(calls[SMALL][line], repeat=3), best_time(calls[LARGE][line], repeat=3)) for _ in range(5)]
    per_line[SMALL][line] = min(small for small, _ in rounds)
    per_line[LARGE][line] = min(large for _, large in rounds)

growth = {line: per_line[LARGE][line] / per_line[SMALL][line] for line in per_line[SMALL]}
print(f"{'line':<36} {f'batch {SMALL}':>12} {f'batch {LARGE}':>12} {'growth':>8}")
for line in growth:
    print(f"{line:<36} {per_line[SMALL][line] * 1e6:>10.1f}µs {per_line[LARGE][line] * 1e6:>10.1f}µs {growth[line]:>7.1f}x")

# %%
# SELF-CHECK: a line "grows" when it took more than twice as long at the larger batch.
require(GROWS={line: GROWS.get(line) for line in growth})
for line in growth:
    expect_type(f"GROWS[{line!r}]", GROWS[line], bool, "True or False (without quotes)")
expect(LARGE >= 8 * SMALL, "make LARGE at least 8 times SMALL, or no line has room to grow")
for line, factor in growth.items():
    if 1.5 < factor < 3:
        print(f"not graded on this machine: {line} took {factor:.1f}x as long, too close to 2x to call on this run")
        continue
    expect(GROWS[line] == (factor > 2), f"{line}: you said grows={GROWS[line]}, but it took {factor:.1f}x as long")
print("self-check passed: you know which lines scale with the batch")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# With a batch of 64 every line costs little and much of it is the fixed cost of crossing into
# C++ (Floor 3). With more rows, creating `x`, the forward pass and the backward pass grow with
# the data, while building `nn.Linear` and `optimizer.step()` depend only on the 7 850
# parameters and stay put. Which kernel does the work (Floor 6) and how many bytes it moves
# (Floor 7) decide how steeply the data lines grow.
#
# </details>
