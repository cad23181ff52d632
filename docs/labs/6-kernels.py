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
# fifteen short batches (other programs can only slow a batch down, and a short one often escapes them).
# `CoreShare` measures how much of a core a measurement got, and `unclear` says when a busy machine
# stretched the timings too much to grade a ratio. The lab runs PyTorch on one CPU thread so that
# timings stay steady when other programs share the machine; Lab 8 measures what more threads buy.

# %%
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)

print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread, CPU capability {torch.backends.cpu.get_cpu_capability()}")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · GFLOP/s of a matrix multiply <a id="matmul-gflops"></a>
#
# A rate in GFLOP/s needs a count of floating-point operations. **Write** `matmul_flops(n)`, the
# number of floating-point operations in multiplying two n × n matrices (count a multiply and an
# add as one operation each), then **run** the measurement: it times `a @ b` for growing n and
# asks PyTorch's own FLOP counter (`torch.utils.flop_counter.FlopCounterMode`) how many
# operations it counts. The self-check compares the two and prints GFLOP/s from your formula.
# Two conventions are in use and both are accepted: the exact count, and the one PyTorch's
# counter (like most FLOP counts) uses, which counts one add for every product, one more add per
# output than the exact count.
#
# **Change** `MATMUL_SIZES` to include `1024` (and `2048` if your machine is patient). Where does the rate
# stop growing?

# %% tags=["answer"]
# YOUR ANSWER
def matmul_flops(n):
    """Floating-point operations in an n x n by n x n matrix multiply."""
    return None  # your formula


# %% tags=["solution"]
def matmul_flops(n):
    """Floating-point operations in an n x n by n x n matrix multiply."""
    return 2 * n**3  # n^2 outputs, each n multiplies and n adds (the counter's convention; n^2 (2n - 1) is exact)


# %%
from torch.utils.flop_counter import FlopCounterMode

MATMUL_SIZES = [16, 32, 64, 128, 256, 512]

matmul_seconds, counted_flops = {}, {}
with CoreShare() as matmul_core:  # how much of a core the timings got
    for n in MATMUL_SIZES:
        a, b = torch.randn(n, n), torch.randn(n, n)
        matmul_seconds[n] = best_time(lambda: a @ b)
        with FlopCounterMode(display=False) as counter:
            a @ b
        counted_flops[n] = counter.get_total_flops()
        print(f"n = {n:>5}: {matmul_seconds[n] * 1e6:>10.1f} µs")

# %%
# SELF-CHECK: your count against PyTorch's FLOP counter at every size; then the rates.
require(matmul_flops=matmul_flops(MATMUL_SIZES[0]))
for n, counted in counted_flops.items():
    guess = matmul_flops(n)
    expect_type(f"matmul_flops({n})", guess, numbers.Real, "a number of operations")
    exact = counted - n * n  # n - 1 adds per output instead of the counter's n
    expect(
        guess in (counted, exact),
        f"n = {n}: your formula gives {guess:,}, PyTorch counts {counted:,} (and the exact count, with one add fewer per output, is {exact:,})",
    )
gflops = {n: matmul_flops(n) / t / 1e9 for n, t in matmul_seconds.items()}
for n, rate in gflops.items():
    print(f"n = {n:>5}: {rate:7.1f} GFLOP/s")
climb = max(gflops.values()) / gflops[min(gflops)]  # the best rate against the smallest size's
why = "" if climb > 4 else unclear(climb, 4, matmul_core, margin=1, what="the best rate over the smallest size's")
if why:
    print(why)
else:
    expect(climb > 4, f"the best rate is {climb:.1f} times the smallest size's: large matrices should run several times more FLOP/s than tiny ones")
print(f"self-check passed: your FLOP count is right{', and the rate climbs with size' if climb > 4 else ''}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Each of the n² outputs is a sum of n products: n multiplies and n − 1 adds, n²(2n − 1) in all.
# FLOP counters, PyTorch's among them, count n adds and so 2n³; the difference, n², is 1/(2n) of
# the total: 3 % at n = 16, a tenth of a percent at n = 512. For tiny
# matrices the fixed cost of the call (Floor 3) and the kernel's setup dominate, so GFLOP/s is
# low. As n grows the BLAS kernel's blocked loops keep the vector units fed and the rate climbs
# until it levels off near what one core can do. The work grows as n³ while the data grows only
# as n², so each byte is reused more and more: that is arithmetic intensity, in Exercise 3.
#
# </details>

# %% [markdown]
# ## Exercise 2 · GB/s of an elementwise add <a id="add-bandwidth"></a>
#
# A rate in GB/s needs a count of bytes moved. **Write** `add_bytes(n)`, the bytes that
# `torch.add(a, b, out=c)` reads and writes for float32 tensors of n elements, then **run** the
# measurement: it times the add at growing sizes, checks your count against the tensors' own
# `nbytes`, and measures the largest size a second way, with `torch.utils.benchmark.Timer`.
#
# **Change** `ADD_SIZES` to find where the rate drops (when the three arrays no longer fit in your
# CPU's caches). The self-check tests that tiny adds are slow only when your sizes include a tiny
# one (three arrays of at most 4 KiB, where the fixed cost of the call dominates).

# %% tags=["answer"]
# YOUR ANSWER
def add_bytes(n):
    """Bytes read and written by torch.add(a, b, out=c) on float32 tensors of n elements."""
    return None  # your formula


# %% tags=["solution"]
def add_bytes(n):
    """Bytes read and written by torch.add(a, b, out=c) on float32 tensors of n elements."""
    return 3 * 4 * n  # read a and b, write c


# %%
from torch.utils import benchmark

ADD_SIZES = [2**k for k in range(6, 23, 2)]  # 64 ... 4,194,304 elements

add_seconds, tensor_bytes = {}, {}
with CoreShare() as add_core:  # how much of a core the timings got
    for n in ADD_SIZES:
        a, b, c = torch.rand(n), torch.rand(n), torch.empty(n)
        add_seconds[n] = best_time(lambda: torch.add(a, b, out=c))
        tensor_bytes[n] = a.nbytes + b.nbytes + c.nbytes
        print(f"{n:>9,} elements: {add_seconds[n] * 1e6:>9.2f} µs")
    largest = max(ADD_SIZES)
    a, b, c = torch.rand(largest), torch.rand(largest), torch.empty(largest)
    timer = benchmark.Timer("torch.add(a, b, out=c)", globals={"torch": torch, "a": a, "b": b, "c": c}, num_threads=1)
    second_method_seconds = float("inf")
    for _ in range(3):  # alternate the two timers, so a busy moment cannot favour one of them
        second_method_seconds = min(second_method_seconds, *timer.blocked_autorange(min_run_time=0.1).times)
        add_seconds[largest] = min(add_seconds[largest], best_time(lambda: torch.add(a, b, out=c)))

# %%
# SELF-CHECK: your bytes against nbytes at every size; two timers agree on the largest size's GB/s;
# a tiny add, if you measured one, much slower than your fastest.
require(add_bytes=add_bytes(ADD_SIZES[0]))
for n, nbytes in tensor_bytes.items():
    expect_type(f"add_bytes({n})", add_bytes(n), numbers.Real, "a number of bytes")
    expect(add_bytes(n) == nbytes, f"n = {n:,}: your formula gives {add_bytes(n):,} bytes, the three tensors hold {nbytes:,}")
gbps = {n: add_bytes(n) / t / 1e9 for n, t in add_seconds.items()}
for n, rate in gbps.items():
    print(f"{n:>9,} elements: {rate:7.1f} GB/s")
second = add_bytes(largest) / second_method_seconds / 1e9
print(f"largest size, second method (benchmark.Timer): {second:.1f} GB/s")
apart = max(gbps[largest] / second, second / gbps[largest])  # how many times the two timers disagree
why = "" if apart < 3 else unclear(apart, 3, add_core, margin=1, what="the two timers' disagreement")
if why:
    print(why)
else:
    expect(apart < 3, f"the two timers disagree {apart:.1f} times (within 3 expected): rerun on a quieter machine")
smallest = min(ADD_SIZES)
if tensor_bytes[smallest] <= 4096:  # a tiny add: the fixed cost of the call dominates its time
    climb = max(gbps.values()) / gbps[smallest]
    why = "" if climb > 3 else unclear(climb, 3, add_core, margin=1, what="the fastest rate over the tiny add's")
    if why:
        print(why)
    else:
        expect(climb > 3, f"your tiny add ({smallest:,} elements) should move bytes much more slowly than your fastest")
else:
    print(
        f"the climb is not graded with these sizes: your smallest add moves {tensor_bytes[smallest]:,} bytes, too many for"
        " the fixed cost of a call to dominate; add a size of a few hundred elements to see it"
    )
print(f"self-check passed: your byte count is the tensors'{', and two timers agree' if apart < 3 else ''}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The add reads two arrays and writes one: 3 × 4 bytes per element for a single addition. Small
# adds are dominated by the per-call cost, so their GB/s is tiny. Mid-sized arrays that fit in
# cache run fastest; once the three arrays exceed the cache, the rate falls back to what main
# memory delivers. Counting one array instead of three would have made your machine look three
# times slower than it is; the `nbytes` check catches it.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Arithmetic intensity and the roofline <a id="roofline"></a>
#
# Arithmetic intensity is FLOP per byte moved. A kernel with intensity *I* on a machine with
# memory bandwidth *B* and peak compute rate *P* runs at most at min(*I × B*, *P*): that is the
# roofline. The two roofs meet at the *ridge* intensity. The measurement times the size of your
# fastest matrix multiply for *P* and your largest add for *B* (out of cache: main memory's rate,
# not the caches'), in turn, in five rounds, and keeps the round whose ridge is the median: both
# roofs are measured the same way, so a busy moment weighs on both. **Run** it, then **compute**
# the ridge from `peak_gflops` and `memory_gbps`, and **predict** whether each op is memory-bound
# or compute-bound on your machine.
#
# **Change** `N` to `8` and predict again: is a tiny matrix multiply compute-bound?

# %%
N = 512
ROUNDS = 5
fastest = max(matmul_seconds, key=lambda n: counted_flops[n] / matmul_seconds[n])  # Exercise 1's fastest size
ma, mb = torch.randn(fastest, fastest), torch.randn(fastest, fastest)
a, b, c = torch.rand(largest), torch.rand(largest), torch.empty(largest)  # Exercise 2's largest add
roofs = []
with CoreShare() as roof_core:  # how much of a core the timings got
    for _ in range(ROUNDS):  # both roofs in every round
        compute = counted_flops[fastest] / best_time(lambda: ma @ mb, repeat=5) / 1e9  # the compute roof
        memory = tensor_bytes[largest] / best_time(lambda: torch.add(a, b, out=c), repeat=5) / 1e9  # main memory
        roofs.append((compute / memory, compute, memory))
_, peak_gflops, memory_gbps = sorted(roofs)[ROUNDS // 2]  # the round whose ridge is the median


def matmul_intensity(n):
    """FLOP per byte of an n x n matrix multiply that reads a and b and writes c once each."""
    return 2 * n**3 / (3 * 4 * n * n)


intensity = {"add": 1 / 12, "matmul": matmul_intensity(N)}
print(f"compute roof {peak_gflops:.1f} GFLOP/s (n = {fastest}), memory roof {memory_gbps:.1f} GB/s"
      f" ({roof_core.share:.0%} of a core while timing)")
for op, i in intensity.items():
    print(f"{op:<7} intensity {i:8.3f} FLOP/byte, attainable {min(i * memory_gbps, peak_gflops):7.1f} GFLOP/s")

# %% tags=["answer"]
# YOUR ANSWER
ridge = None  # FLOP per byte where the two roofs meet, computed from peak_gflops and memory_gbps
BOUND = {"add": None, "matmul": None}  # "memory" or "compute", for the matmul of size N

# %% tags=["solution"]
ridge = peak_gflops / memory_gbps  # below it memory limits, above it compute does
BOUND = {"add": "memory", "matmul": "compute"}

# %%
# SELF-CHECK: your ridge within 1 % of the roofs' crossing; each op on the side of it you said,
# unless its intensity is too close to the ridge to call on this run. A share s of a core can stretch
# either roof's timings up to 1/s times, so the ridge as far either way: an intensity more than 1/s times
# from it (and 25 % more for the timings' own noise) is on the side it seems to be.
require(ridge=ridge, BOUND={op: BOUND.get(op) for op in intensity})
expect_type("ridge", ridge, numbers.Real, "a number of FLOP per byte")
for op in intensity:
    expect_type(f"BOUND[{op!r}]", BOUND[op], str, 'the string "memory" or "compute"')
crossing = peak_gflops / memory_gbps
expect(abs(ridge - crossing) <= 0.01 * crossing, f"the roofs meet at {crossing:.2f} FLOP/byte, not {ridge}")
graded = []
for op, i in intensity.items():
    why = unclear(i, crossing, roof_core, margin=1.25, what=f"{op}'s intensity")
    if why:
        print(why)
        continue
    really = "memory" if i < crossing else "compute"
    expect(BOUND[op] == really, f"{op}: intensity {i:.2f} is {'below' if really == 'memory' else 'above'} the ridge, so it is {really}-bound")
    graded.append(f"{op}{f' n={N}' if op == 'matmul' else ''} {really}-bound")
print(f"self-check passed: ridge at {crossing:.2f} FLOP/byte; {', '.join(graded) or 'neither op graded on this run'}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# The add's intensity is fixed at 1/12 FLOP per byte, far left of the ridge, so its FLOP rate is
# bandwidth × 1/12 and no kernel can do better: it is *memory-bound*. The matmul's intensity grows
# with n (n/6 FLOP per byte for square float32 matrices, counting each matrix once), so from an n
# of a few times the ridge it is *compute-bound*; a tiny one (n = 8, intensity 1.3) sits left of
# the ridge with the add. Using the in-cache bandwidth as the memory roof would move the ridge
# left and call kernels compute-bound that main memory starves. Fusing elementwise ops raises
# their intensity; it is why compilers fuse.
#
# </details>

# %% [markdown]
# ## Exercise 4 · The dtype picks the kernel <a id="dtype-kernels"></a>
#
# The dispatcher picks a kernel by device *and* dtype, and the kernels differ. Floor 6 compares
# the floating-point types, which all reach tuned library kernels. An integer matrix multiply
# is also allowed, but BLAS libraries have no integer routine: it runs PyTorch's own generic
# loop. **Predict** which of `float32` and `int64` multiplies faster, in operations per second,
# and whether the gap is `"small"` (less than 2 times: about what elements twice as wide would
# cost a kernel of the same kind) or `"large"` (more than 2 times: a different kind of kernel),
# then **run** the measurement.
#
# **Change** `DTYPES` to add `torch.int32` and `torch.int8`. Do narrower integers help, as
# narrower floats do?

# %% tags=["answer"]
# YOUR ANSWER
FASTER = None  # the dtype whose multiply reaches more operations per second: torch.float32 or torch.int64
GAP = None  # "small" if it reaches less than 2 times the other's rate, "large" if more

# %% tags=["solution"]
FASTER = torch.float32  # BLAS's blocked, vectorised float32 routine against PyTorch's generic integer loop
GAP = "large"  # a different kind of kernel, not only elements twice as wide

# %%
SIDE = 256
DTYPES = [torch.float32, torch.int64]

dtype_gops = {}
for _ in range(2):  # two rounds, interleaved, so a busy moment cannot favour one dtype
    for dtype in DTYPES:
        a, b = torch.randint(-8, 8, (SIDE, SIDE)).to(dtype), torch.randint(-8, 8, (SIDE, SIDE)).to(dtype)
        dtype_gops[dtype] = max(2 * SIDE**3 / best_time(lambda: a @ b) / 1e9, dtype_gops.get(dtype, 0))
for dtype, rate in dtype_gops.items():
    print(f"{dtype!s:<15} {rate:8.1f} G multiply-adds x 2 per second, float32 / this: {dtype_gops[torch.float32] / rate:6.1f}")
dtype_ratio = dtype_gops[torch.float32] / dtype_gops[torch.int64]

# %%
# SELF-CHECK: the faster dtype and the size of the gap, against your measurement. A gap between
# 1.5 and 3 times is too close to 2 to call small or large, and one under 1.5 times too close to
# say which dtype is faster: on such a run that part is not graded.
require(FASTER=FASTER, GAP=GAP)
expect_type("FASTER", FASTER, torch.dtype, "a dtype, torch.float32 or torch.int64 (without quotes)")
expect(FASTER in (torch.float32, torch.int64), f"FASTER should be torch.float32 or torch.int64, not {FASTER}")
expect_type("GAP", GAP, str, 'the string "small" or "large"')
expect(GAP in ("small", "large"), f'GAP should be "small" or "large", not {GAP!r}')
faster, slower = (torch.float32, torch.int64) if dtype_ratio >= 1 else (torch.int64, torch.float32)
gap = max(dtype_ratio, 1 / dtype_ratio)
measured = f"{faster} ran {gap:.1f} times the operations per second of {slower}"
if gap < 1.5:
    print(f"not graded on this machine: {measured}, too close to say which is faster")
else:
    expect(FASTER == faster, f"{measured}: the faster one is {faster}, not {FASTER}")
if 1.5 <= gap <= 3:
    print(f"not graded on this machine: {measured}, too close to 2 times to call the gap small or large")
else:
    really = "large" if gap > 3 else "small"
    expect(GAP == really, f"{measured}: a {really} gap, not a {GAP} one")
print(f"self-check passed: {measured}")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Same operator, same shapes, different kernels: `float32` goes to the BLAS library's blocked,
# vectorised routine, while integer types have no BLAS routine and run PyTorch's own generic
# kernel. Elements twice as wide would cost a kernel of the same kind about 2 times; the gap is
# larger because the kernel is another one. How much larger depends on your CPU more than
# anything else in this lab does: the same gap that is several times on one machine is a hundred
# times or more on another. This run measures the gap, not its cause. You can test one suspect,
# the vector instructions PyTorch's own kernels use (the setup printed which): run the lab again
# with `ATEN_CPU_CAPABILITY=avx2` or `ATEN_CPU_CAPABILITY=default` set before Python starts. If the
# gap stays where it was, as it did on the Intel CPU this lab was tested on, the vector width of
# PyTorch's kernels is not what sets it on your machine.
# Narrower integers move fewer bytes and fit more values in a vector register, so they can run
# faster than `int64`, but they stay on the generic path and, on most CPUs, below the float32
# rate. The dtype you choose decides which code runs, not only how many bytes it moves; for fast
# integer arithmetic, libraries use dedicated quantised kernels instead.
#
# </details>
