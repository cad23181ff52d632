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
# # Lab 3 · The boundary
#
# ## Goal <a id="goal"></a>
#
# Every eager PyTorch call crosses from Python into C++: the arguments are parsed, an operator is
# looked up, a result tensor is allocated, and only then does a kernel touch your numbers. That
# crossing has a fixed price that does not depend on the tensor's size. In this lab you measure
# that price on *your* machine and find the tensor size at which the work finally outweighs it.
#
# Each exercise asks you to **run** a cell, **change** something, and **measure** again. The
# `SELF-CHECK` cells test the *pattern* in your own numbers, never a fixed figure: your machine is
# faster or slower than the one that built this page, but the patterns hold everywhere. Solutions
# are folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `best_time` calls a function in batches long enough to be timed reliably and
# returns the time of one call, in seconds, from the fastest batch (other programs can only slow
# a batch down). The lab runs PyTorch on one CPU thread so that timings stay steady when other
# programs share the machine.

# %%
import statistics
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)


def best_time(fn, repeat=7, min_batch_s=0.005):
    """Fastest seconds per call of `fn()` over `repeat` batches of at least `min_batch_s` each."""
    fn()  # warm up: first calls pay one-off costs
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


print(f"torch {torch.__version__}, timing with {torch.get_num_threads()} CPU thread")

# %% [markdown]
# ## Exercise 1 · The floor under every op <a id="overhead-floor"></a>
#
# **Run** the cell: it times `torch.add(a, b)` for tensors from one element to a few million and
# prints the time per call and per element.
#
# **Predict** before you look: if adding one element costs *t*, what does adding a thousand cost?
#
# **Change** `SIZES` (add sizes between the ones that are there) and find the smallest size whose
# time is at least twice the time of a tiny tensor: below it, the call is *overhead-bound*; above it,
# the work dominates.

# %%
SIZES = [4**k for k in range(0, 12)]  # 1 ... 4,194,304 elements

add_times = {}
for n in SIZES:
    a, b = torch.rand(n), torch.rand(n)
    add_times[n] = best_time(lambda: torch.add(a, b))

print(f"{'elements':>10} {'µs per call':>12} {'ns per element':>15}")
for n, t in add_times.items():
    print(f"{n:>10,} {t * 1e6:>12.2f} {t * 1e9 / n:>15.3f}")

floor = statistics.median(t for n, t in add_times.items() if n <= 64)
crossover = next((n for n, t in add_times.items() if n > 64 and t >= 2 * floor), None)
print(f"\nsmallest size at least twice the small-tensor time: {crossover:,} elements")

# %%
# SELF-CHECK: small sizes sit on a flat floor, large sizes climb far above it.
small = [t for n, t in add_times.items() if n <= 256]
assert max(small) < 5 * min(small), "times for 1..256 elements should be nearly equal (the fixed cost)"
assert add_times[max(add_times)] > 10 * floor, "the largest tensor should cost far more than a tiny one"
assert crossover is not None, "some size should cost at least twice the floor"
print("self-check passed: a flat floor, then growth with size")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# Up to a few hundred (often a few thousand) elements the time barely moves: you are paying the
# fixed cost of the crossing, not for arithmetic. The per-element column falls steeply over the
# same range, because one fixed cost is shared by more and more elements. Past the crossover the
# time grows roughly in proportion to the size and the per-element cost levels off at what memory
# bandwidth allows. To pin the crossover down, refine between the two sizes around it:
#
# ```python
# lo = crossover // 4
# SIZES = [lo * k // 4 for k in range(4, 17)]
# ```
#
# and run the cell again.
#
# </details>

# %% [markdown]
# ## Exercise 2 · What the fixed cost buys <a id="what-the-floor-buys"></a>
#
# Is that floor "Python being slow"? **Run** the cell to compare a one-element `torch.add` with
# a plain Python function call and with adding two Python floats.
#
# **Change**: add a line that times `a + b` (the operator form) and `a.add(b)` (the method form)
# on the one-element tensors. Do they cost the same as `torch.add(a, b)`?

# %%
a1, b1 = torch.rand(1), torch.rand(1)
x, y = 1.5, 2.5


def noop(p, q):
    return p


crossing = {
    "python call": best_time(lambda: noop(x, y)),
    "python float add": best_time(lambda: x + y),
    "torch.add, 1 element": best_time(lambda: torch.add(a1, b1)),
}
for name, t in crossing.items():
    print(f"{name:<22} {t * 1e9:>9.0f} ns")
ratio = crossing["torch.add, 1 element"] / crossing["python call"]
print(f"\none torch.add costs {ratio:.0f} plain Python calls")

# %%
# SELF-CHECK: the crossing costs many times a Python call.
assert crossing["torch.add, 1 element"] > 5 * crossing["python call"], (
    "a one-element torch.add should cost several Python function calls"
)
print("self-check passed: the crossing is much more than a Python call")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# ```python
# crossing["a + b"] = best_time(lambda: a1 + b1)
# crossing["a.add(b)"] = best_time(lambda: a1.add(b1))
# ```
#
# All three spellings land in the same C++ function after argument parsing, so they cost about
# the same. The gap to a plain Python call is the boundary: parsing arguments against the
# operator's signatures, dispatching, allocating a result tensor and wrapping it back into a
# Python object.
#
# </details>

# %% [markdown]
# ## Exercise 3 · What the parser checks <a id="argument-parsing"></a>
#
# The bindings check every argument against the operator's signature before anything runs.
# **Run** the cell: a deliberately wrong call is caught and its message printed.
#
# **Change** the wrong argument (try a list, `None`, `alpha=None`, or a keyword that does not
# exist, such as `scale=2`) and read how the message changes. Then **measure**: does passing `alpha=2` cost more
# than leaving it out?

# %%
try:
    torch.add(a1, "two")
except TypeError as error:
    message = str(error)
print(message)

with_alpha = best_time(lambda: torch.add(a1, b1, alpha=2))
without_alpha = best_time(lambda: torch.add(a1, b1))
print(f"\nwithout alpha {without_alpha * 1e9:.0f} ns, with alpha=2 {with_alpha * 1e9:.0f} ns")

# %%
# SELF-CHECK: the message comes from the parser: it names the function it was parsing.
assert message.startswith("add()"), "the error names the function it parsed"
assert 0.2 < with_alpha / without_alpha < 5, "a keyword argument changes the cost only a little"
print("self-check passed: the parser knows the signatures")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The message is written by the argument parser, not by the kernel: it knows each parameter's
# name, position and type from the signature that `native_functions.yaml` declares for `add`
# (`add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)`), which is why it can say
# "argument 'other' (position 2) must be Tensor". A keyword argument is parsed by the same machinery, so its cost
# is a small change of an already small number.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Cross once, not a thousand times <a id="batch-the-crossings"></a>
#
# If every call pays the floor, then a thousand small calls pay it a thousand times. **Run** the
# cell: it sums the same numbers two ways, a Python loop of small adds and one batched reduction.
#
# **Change** `PIECES` and `PIECE_SIZE` (try 100 pieces of 100 000 elements). When does batching
# stop paying off?

# %%
PIECES, PIECE_SIZE = 1000, 100
pieces = [torch.rand(PIECE_SIZE) for _ in range(PIECES)]
stacked = torch.stack(pieces)


def loop_sum():
    total = torch.zeros(PIECE_SIZE)
    for piece in pieces:
        total = total + piece
    return total


def batched_sum():
    return stacked.sum(dim=0)


torch.testing.assert_close(loop_sum(), batched_sum())
loop_t, batched_t = best_time(loop_sum, repeat=5), best_time(batched_sum, repeat=5)
print(f"loop of {PIECES} adds: {loop_t * 1e3:.3f} ms")
print(f"one batched sum:      {batched_t * 1e3:.3f} ms  ({loop_t / batched_t:.0f}x faster)")

# %%
# SELF-CHECK: with many small pieces, one crossing beats many.
if PIECE_SIZE <= 1000 and PIECES >= 100:
    assert loop_t > 3 * batched_t, "many small calls should be much slower than one batched call"
    print("self-check passed: batching removes the per-call floor")
else:
    print(f"large pieces: loop/batched = {loop_t / batched_t:.1f}; the floor matters less here")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# With small pieces the loop is dominated by a thousand crossings and the batched sum wins by a
# large factor. With large pieces each add does real work, the fixed cost is a small share, and
# the two approaches move closer together. This is the whole argument for vectorised code,
# batching, and (further down) fusing kernels and capturing graphs: pay the boundary less often.
#
# </details>
