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
# # Lab 6 · Kernels
#
# ## Goal <a id="goal"></a>
#
# At the bottom of the dispatcher a *kernel* does the arithmetic. How fast it can go depends on
# how much work it does per byte it moves: its *arithmetic intensity*. In this lab you measure
# matrix multiplication in GFLOP/s, elementwise addition in GB/s, place both on a simple
# roofline, and see how the dtype changes which kernel runs.
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
# machine; Lab 8 measures what more threads buy.

# %%
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)


def best_time(fn, repeat=5, min_batch_s=0.01):
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


print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread, kernels for {torch.backends.cpu.get_cpu_capability()}")

# %% [markdown]
# ## Exercise 1 · GFLOP/s of a matrix multiply <a id="matmul-gflops"></a>
#
# Multiplying two n × n matrices takes 2n³ floating-point operations (a multiply and an add per
# term). **Run** the cell: it times `a @ b` for growing n and reports GFLOP/s.
#
# **Change** `SIZES` to include 1024 (and 2048 if your machine is patient). Where does the rate
# stop growing?

# %%
SIZES = [16, 32, 64, 128, 256, 512]

gflops = {}
for n in SIZES:
    a, b = torch.randn(n, n), torch.randn(n, n)
    t = best_time(lambda: a @ b)
    gflops[n] = 2 * n**3 / t / 1e9
    print(f"n = {n:>5}: {t * 1e6:>10.1f} µs  {gflops[n]:>7.1f} GFLOP/s")

# %%
# SELF-CHECK: small matrices cannot keep the arithmetic units busy; large ones can.
smallest, largest = min(gflops), max(gflops)
assert gflops[largest] > 4 * gflops[smallest], "large matrices should run several times more FLOP/s"
print("self-check passed: the rate climbs with size, then levels off")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# For tiny matrices the fixed cost of the call (Floor 3) and the kernel's setup dominate, so
# GFLOP/s is low. As n grows the BLAS kernel's blocked loops keep the vector units fed and the
# rate climbs until it levels off near what your cores can do (their peak is cores × clock ×
# FLOP per cycle per core). The work grows as n³ while the data grows only as n², so each byte
# is reused more and more: that is arithmetic intensity, next.
#
# </details>

# %% [markdown]
# ## Exercise 2 · GB/s of an elementwise add <a id="add-bandwidth"></a>
#
# `torch.add(a, b, out=c)` reads two arrays and writes one: 3 × 4 bytes per float32 element, for
# a single addition. **Run** the cell: it reports the achieved bytes per second.
#
# **Change** `SIZES` to find where the rate drops (when the three arrays no longer fit in your
# CPU's caches) and compare with the rate at the largest size.

# %%
SIZES = [2**k for k in range(6, 23, 2)]  # 64 ... 4,194,304 elements

gbps = {}
for n in SIZES:
    a, b, c = torch.rand(n), torch.rand(n), torch.empty(n)
    t = best_time(lambda: torch.add(a, b, out=c))
    gbps[n] = 3 * 4 * n / t / 1e9
    print(f"{n:>9,} elements: {t * 1e6:>9.2f} µs  {gbps[n]:>7.1f} GB/s")

# %%
# SELF-CHECK: tiny adds are overhead-bound; big ones are bandwidth-bound and move far more bytes per second.
assert max(gbps.values()) > 4 * gbps[min(gbps)], "large adds should move bytes much faster than tiny ones"
print("self-check passed: bandwidth, not arithmetic, limits the add")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# Small adds are dominated by the per-call cost, so their GB/s is tiny. Mid-sized arrays that fit
# in cache run fastest; once the three arrays exceed the cache, the rate falls back to what main
# memory delivers. At every size the add does one floating-point operation per 12 bytes, so its
# GFLOP/s stays far below the matrix multiply's.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Arithmetic intensity and the roofline <a id="roofline"></a>
#
# Arithmetic intensity is FLOP per byte moved. A kernel with intensity *I* on a machine with
# bandwidth *B* can run at most *I × B* FLOP/s, and never faster than the peak compute rate: that
# is the roofline. **Run** the cell: it computes both intensities and places your measurements.
#
# **Change** `N` (the matrix size). At which n does the matmul's intensity times your measured
# bandwidth exceed the GFLOP/s you measured? From there on, compute, not memory, is the limit.

# %%
N = 512
add_intensity = 1 / 12  # one add per 12 bytes (two reads, one write of float32)
matmul_intensity = 2 * N**3 / (3 * 4 * N * N)  # 2n^3 FLOP over three n x n float32 matrices
bandwidth = max(gbps.values())  # your best measured GB/s
add_gflops = max(g * add_intensity for g in gbps.values())
a, b = torch.randn(N, N), torch.randn(N, N)
matmul_gflops = 2 * N**3 / best_time(lambda: a @ b) / 1e9

print(f"add:    intensity {add_intensity:8.3f} FLOP/byte, roof {add_intensity * bandwidth:8.1f} GFLOP/s, measured {add_gflops:7.1f}")
print(f"matmul: intensity {matmul_intensity:8.1f} FLOP/byte, roof {matmul_intensity * bandwidth:8.1f} GFLOP/s, measured {matmul_gflops:7.1f}")

# %%
# SELF-CHECK: the op with the higher intensity reaches the higher FLOP rate.
assert matmul_intensity > 100 * add_intensity
assert matmul_gflops > 5 * add_gflops, "high-intensity kernels turn bytes into many more FLOP/s"
assert add_gflops <= add_intensity * bandwidth * 1.01, "the add sits on the bandwidth roof, never above it"
print("self-check passed: intensity decides which roof you hit")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The add's intensity is fixed at 1/12 FLOP per byte, so its FLOP rate is bandwidth × 1/12 and
# no kernel can do better: it is *memory-bound*. The matmul's intensity grows with n (n/6 FLOP per
# byte for square float32 matrices, counting each matrix once), so already at modest n the
# bandwidth roof is far above the measured rate and the cores' arithmetic becomes the limit: it
# is *compute-bound*. Fusing elementwise ops raises their intensity; it is why compilers fuse.
#
# </details>

# %% [markdown]
# ## Exercise 4 · The dtype picks the kernel <a id="dtype-kernels"></a>
#
# The dispatcher picks a kernel by device *and* dtype, and the kernels differ. **Run** the cell:
# it times the same matrix multiply in `float32` and `float64`.
#
# **Change** `DTYPES` to add `torch.bfloat16` and `torch.float16`. Are the half-width types
# faster or slower on your CPU? (It depends on whether your CPU has instructions for them.)

# %%
N = 256
DTYPES = [torch.float32, torch.float64]

dtype_gflops = {}
for dtype in DTYPES:
    a, b = torch.randn(N, N, dtype=dtype), torch.randn(N, N, dtype=dtype)
    dtype_gflops[dtype] = 2 * N**3 / best_time(lambda: a @ b) / 1e9
    print(f"{dtype!s:<15} {dtype_gflops[dtype]:8.1f} GFLOP/s")

# %%
# SELF-CHECK: double precision does the same work with half as many numbers per vector register.
assert dtype_gflops[torch.float32] > 1.2 * dtype_gflops[torch.float64], "float32 should clearly beat float64"
print("self-check passed: the dtype changes the kernel and its speed")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# A vector register holds twice as many float32 values as float64 values, so the float32 BLAS
# kernel does up to twice the FLOP per instruction (and moves half the bytes). Half-width types
# are fast only on CPUs with native instructions for them (for example AVX-512 BF16 or AMX);
# elsewhere PyTorch converts and the kernel can be much slower than float32. On a GPU the picture
# changes again: tensor cores make half precision many times faster.
#
# </details>
