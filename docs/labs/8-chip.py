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
# # Lab 8 · The chip and the two clocks
#
# ## Goal <a id="goal"></a>
#
# Your Python code runs on the host's clock; the work it asks for runs on the device's. On a GPU
# the two are separate timelines: a launch returns long before the kernel finishes, and a timer
# that does not synchronise measures the launch. In this lab you catch that difference (or, on a
# CPU, confirm it is absent), compare wall time with CPU time, measure memory bandwidth against
# buffer size, and see what extra threads buy.
#
# Every cell runs on a CPU-only machine. Where a CUDA GPU is present, the CUDA branches run real
# CUDA code. Each exercise asks you to **run** a cell, **change** something, and **measure**
# again. The `SELF-CHECK` cells test the *pattern* in your own results, never a fixed figure.
# Solutions are folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `DEVICE` is `cuda` when a GPU is available, else `cpu`; `best_time` returns
# the seconds of one call (the fastest of a few batches) and synchronises the device when asked to. PyTorch runs on one
# CPU thread except where an exercise sets more, so timings stay steady on a busy machine.

# %%
import os
import time

import torch

torch.manual_seed(0)
DEFAULT_THREADS = torch.get_num_threads()
torch.set_num_threads(1)  # one thread unless an exercise asks for more: steadier timings on a busy machine
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def sync():
    """Wait until the device has finished all queued work (a no-op on the CPU)."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def best_time(fn, repeat=5, min_batch_s=0.005, synchronize=True):
    """Fastest seconds per call of `fn()` over `repeat` batches; with `synchronize`, wait for the device."""
    fn()
    sync()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            sync()
        if time.perf_counter() - start >= min_batch_s:
            break
        calls *= 2
    samples = []
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            sync()
        samples.append((time.perf_counter() - start) / calls)
    sync()
    return min(samples)  # other programs can only add time to a batch, never remove it


name = torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"CPU, {os.cpu_count()} logical cores"
print(f"torch {torch.__version__}, device: {name}, {DEFAULT_THREADS} CPU threads by default")

# %% [markdown]
# ## Exercise 1 · Launch is not completion <a id="launch-vs-completion"></a>
#
# **Run** the cell: it times the same matrix multiply twice, once stopping the clock as soon as
# the call returns and once after synchronising with the device. On a GPU it also times the
# kernel on the device's own clock with CUDA events.
#
# **Change** `N`. On a GPU, how large must the matrices be before the unsynchronised timing is
# obviously wrong? On a CPU, does synchronising change anything?

# %%
N = 1024 if DEVICE.type == "cuda" else 256
a = torch.randn(N, N, device=DEVICE)
b = torch.randn(N, N, device=DEVICE)

launch_only = best_time(lambda: a @ b, synchronize=False)
completed = best_time(lambda: a @ b, synchronize=True)
print(f"{DEVICE.type}: stop at return {launch_only * 1e6:9.1f} µs, stop after sync {completed * 1e6:9.1f} µs")

if DEVICE.type == "cuda":
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    start_event.record()
    a @ b
    end_event.record()
    end_event.synchronize()
    print(f"device clock (CUDA events): {start_event.elapsed_time(end_event) * 1e3:9.1f} µs")

# %%
# SELF-CHECK: a GPU returns before it finishes; a CPU finishes before it returns.
if DEVICE.type == "cuda":
    assert launch_only < completed / 2, "without synchronize you timed the launch, not the kernel"
else:
    assert 1 / 3 < launch_only / completed < 3, "on the CPU the call returns when the work is done"
print("self-check passed: you know which clock you read")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# On a GPU the Python call only puts the kernel in a queue (a stream) and returns; the loop of
# launches can run far ahead of the device until the queue fills. The unsynchronised number is
# the host's launch cost, the synchronised one is the real time, and the CUDA events read the
# device's own clock. On the CPU the kernel runs inside the call, so both timings agree and
# `torch.cpu.synchronize()` has nothing to wait for. Anything that needs a value on the host
# (`.item()`, `print(t)`, `.cpu()`) synchronises implicitly.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Wall time and CPU time <a id="wall-vs-cpu"></a>
#
# The host has two clocks of its own: wall time (`time.perf_counter`) and the CPU time this
# process used (`time.process_time`, summed over all its threads). **Run** the cell: it reads
# both around a sleep and around a multi-threaded matrix multiply.
#
# **Change** `torch.set_num_threads(DEFAULT_THREADS)` to `torch.set_num_threads(1)`. How does
# the ratio of the two clocks change?

# %%
def both_clocks(fn):
    wall0, cpu0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall0, time.process_time() - cpu0


torch.set_num_threads(DEFAULT_THREADS)
big_a, big_b = torch.randn(512, 512), torch.randn(512, 512)
clocks = {
    "sleep 0.2 s": both_clocks(lambda: time.sleep(0.2)),
    "20 matmuls 512²": both_clocks(lambda: [big_a @ big_b for _ in range(20)]),
}
threads_used = torch.get_num_threads()
torch.set_num_threads(1)
for what, (wall, cpu) in clocks.items():
    print(f"{what:<18} wall {wall * 1e3:8.1f} ms   CPU {cpu * 1e3:8.1f} ms   CPU/wall {cpu / wall:5.2f}")

# %%
# SELF-CHECK: waiting costs wall time but no CPU time; threads can spend CPU time faster than the wall clock runs.
wall, cpu = clocks["sleep 0.2 s"]
assert cpu < 0.5 * wall, "a sleeping process uses (almost) no CPU time"
wall, cpu = clocks["20 matmuls 512²"]
assert cpu < 1.3 * threads_used * wall, "CPU time cannot exceed threads x wall time"
print("self-check passed: two host clocks, two different questions")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# Sleeping (like waiting for a GPU, a disk or the network) advances the wall clock while the CPU
# clock stands still. A multi-threaded kernel can burn CPU time up to *threads ×* faster than the
# wall clock; with one thread the ratio drops to about 1. Wall time is what your user waits for;
# CPU time is what you pay for on a shared machine.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Bandwidth against buffer size <a id="bandwidth-vs-size"></a>
#
# **Run** the cell: it copies buffers from a few KiB to tens of MiB (`dst.copy_(src)`, on one
# thread) and reports GB/s, counting the bytes read plus the bytes written. On a GPU it also
# measures host-to-device copies from ordinary and from pinned host memory.
#
# **Change** `SIZES_KIB` to find the steps in the curve: each is a cache level (L1, L2, the last
# level cache) running out, until main memory sets the rate.

# %%
SIZES_KIB = [4, 32, 256, 2048, 16384, 65536]
bandwidth = {}
for kib in SIZES_KIB:
    src = torch.ones(kib * 1024 // 4)
    dst = torch.empty_like(src)
    t = best_time(lambda: dst.copy_(src))
    bandwidth[kib] = 2 * kib * 1024 / t / 1e9
    print(f"{kib:>7,} KiB: {t * 1e6:>10.2f} µs  {bandwidth[kib]:>7.1f} GB/s")

if DEVICE.type == "cuda":
    host = torch.ones(64 * 2**20 // 4)
    pinned = host.pin_memory()
    for label, buffer in (("pageable", host), ("pinned", pinned)):
        t = best_time(lambda: buffer.to(DEVICE, non_blocking=True))
        print(f"host to device, {label:<8}: {host.nbytes / t / 1e9:6.1f} GB/s")

# %%
# SELF-CHECK: tiny copies are dominated by the call, so their rate is far below the best.
assert bandwidth[min(SIZES_KIB)] < max(bandwidth.values()) / 2, "the smallest copy should be far from the peak"
print("self-check passed: bandwidth depends on where the buffer lives")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# The smallest copies pay the per-call cost of Floor 3. Buffers that fit in the caches copy at
# the caches' speed, and the rate steps down each time a level overflows, ending at main memory
# bandwidth for the largest buffers. On a GPU, copies from pinned host memory are faster than from
# ordinary (pageable) memory, which the driver must first stage through a pinned buffer, and both
# are far slower than the GPU's own memory: keep data on the device.
#
# </details>

# %% [markdown]
# ## Exercise 4 · What more threads buy <a id="threads"></a>
#
# **Run** the cell: it times a matrix multiply and an elementwise add with 1 up to all available
# threads and prints the speedup over one thread.
#
# **Change** `N` and the op. Which scales better with threads, the compute-bound matmul or the
# memory-bound add? Other programs running on the machine change the answer: try it while
# something else is busy.

# %%
N = 384
THREADS = sorted({1, 2, DEFAULT_THREADS, os.cpu_count() or 1})
x, y = torch.randn(N, N), torch.randn(N, N)
v, w, u = torch.rand(2**22), torch.rand(2**22), torch.empty(2**22)
speedup = {"matmul": {}, "add": {}}
for threads in THREADS:
    torch.set_num_threads(threads)
    speedup["matmul"][threads] = best_time(lambda: x @ y)
    speedup["add"][threads] = best_time(lambda: torch.add(v, w, out=u))
torch.set_num_threads(1)
for op, row in speedup.items():
    one = row[1]
    print(f"{op:<7}" + "".join(f"  {t} thread(s): {one / row[t]:4.2f}x" for t in THREADS))

# %%
# SELF-CHECK: n threads never make a compute-bound matmul much more than n times faster.
row = speedup["matmul"]
for threads, seconds in row.items():
    assert row[1] / seconds < 1.3 * threads, f"matmul: {threads} threads cannot be much more than {threads}x faster"
assert torch.get_num_threads() == 1, "the thread count is back to one"
print("self-check passed: speedup is bounded by the thread count")

# %% [markdown]
# <details class="success"><summary>Solution and what to notice</summary>
#
# On an idle machine the matmul scales close to the number of physical cores, because each core
# has its own arithmetic units, and never beyond it. The add behaves differently: all threads
# share the same memory bandwidth, so once it is saturated extra threads only wait; yet it can
# also scale better than the thread count, because each core brings its own cache and splitting
# the arrays lets more of them stay in cache. When other processes compete for the cores,
# extra threads can even slow things down. Threads beyond the physical cores (hyper-threads)
# rarely help dense arithmetic.
#
# </details>
