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
# that does not synchronise measures the launch. In this lab you build that arrangement on a CPU
# and catch the difference, compare wall time with CPU time, measure memory bandwidth against
# buffer size, and see what extra threads buy.
#
# Every exercise and every self-check runs on a CPU-only machine. The cells marked *GPU only* run
# real CUDA code where a CUDA GPU is present and are skipped elsewhere; no self-check depends on
# them. Each exercise asks you to **predict** first, in the cell marked `YOUR ANSWER`, then to
# **run** the measurement, **change** something and measure again. The `SELF-CHECK` cell compares
# your answer with what your machine measured: it fails, saying what to fill in, until you have
# answered, and it fails, saying why, when the answer and the measurement disagree. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `require`, `expect`, `expect_type` and `within` are what the self-checks use to
# grade your answers (`expect_type` says which type an answer should have when it has another). `DEVICE` is `cuda` when a GPU is available, else `cpu`; `best_time` returns
# the seconds of one call (the fastest of fifteen short batches) and synchronises the device when asked to. PyTorch runs on one
# CPU thread except where an exercise sets more, so timings stay steady on a busy machine; `CoreShare`
# measures how much of a core a measurement got, and `unclear` says when a busy machine stretched
# the timings too much to grade a ratio; `threads_apart` runs threads on work of their own, to show
# what more threads buy where other programs hold the cores;
# `DEFAULT_THREADS` is how many it would use by default, `CORES` how many cores this process may use.

# %%
import numbers
import os
import statistics
import subprocess
import sys
import time

import torch

torch.manual_seed(0)
DEFAULT_THREADS = torch.get_num_threads()
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # cores this process may use
torch.set_num_threads(1)  # one thread unless an exercise asks for more: steadier timings on a busy machine
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

name = torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"CPU, {os.cpu_count()} logical cores ({CORES} for this process)"
print(f"torch {torch.__version__}, device: {name}, {DEFAULT_THREADS} CPU threads by default")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · Launch is not completion <a id="launch-vs-completion"></a>
#
# On a GPU, a PyTorch call only puts a kernel in a queue (a *stream*) and returns; the device
# works through the queue on its own clock. You can build the same arrangement on a CPU: a worker
# thread that takes matrix multiplies from a queue. The measurement submits `CALLS` multiplies,
# stops one clock when the last submission returns (the *launch*), and another when all of them
# are done (after *synchronising*). **Predict** whether the program is *launch-bound*: whether
# the launches take more than a tenth of the completed time. Then **run** it: it prints their share.
#
# **Change** `N` to `16`, so that each multiply is shorter than a submission, and predict again.

# %% tags=["answer"]
# YOUR ANSWER
LAUNCH_BOUND = None  # True if launching takes more than a tenth of the completed time, else False

# %% tags=["solution"]
LAUNCH_BOUND = False  # a submission costs microseconds, a 512 x 512 multiply on one thread milliseconds

# %%
from concurrent.futures import ThreadPoolExecutor

N, CALLS = 512, 50
a, b = torch.randn(N, N), torch.randn(N, N)
with ThreadPoolExecutor(max_workers=1) as worker, CoreShare() as core:  # the worker is the "device", its queue the "stream"
    worker.submit(torch.mm, a, b).result()  # warm up
    shares = []
    for _ in range(5):
        start = time.perf_counter()
        futures = [worker.submit(torch.mm, a, b) for _ in range(CALLS)]
        launched = time.perf_counter() - start
        for future in futures:
            future.result()  # synchronise: wait until the queue is empty
        completed = time.perf_counter() - start
        shares.append(launched / completed)
share = statistics.median(shares)
print(f"N = {N}: {CALLS} launches took {share:.4f} of the time to complete them (median of 5;"
      f" {core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK: your answer on the same side of 0.1 as the measured share (below it the work
# dominates, above it the launches do). A share within 2 times of 0.1 is too close to call, and
# more so when this process got less than a core (the submitting thread and the worker then wait
# for the other programs), so it is not graded.
require(LAUNCH_BOUND=LAUNCH_BOUND)
expect_type("LAUNCH_BOUND", LAUNCH_BOUND, bool, "True or False (without quotes)")
why = unclear(share, 0.1, core, what="the launches' share")
if why:
    print(why)
else:
    side = "more" if share > 0.1 else "less"
    expect(LAUNCH_BOUND == (share > 0.1), f"launching took {share:.4f} of the completed time: {side} than a tenth")
print(f"self-check passed: the launches took {share:.4f} of the time")

# %% [markdown]
# *GPU only:* on a CUDA machine this cell repeats the measurement with the GPU's own queue,
# and reads the device's clock with CUDA events. It is skipped on a CPU.

# %%
if DEVICE.type == "cuda":
    ga, gb = a.to(DEVICE), b.to(DEVICE)
    launch_only = best_time(lambda: ga @ gb, synchronize=False)
    synchronised = best_time(lambda: ga @ gb, synchronize=True)
    start_event, end_event = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start_event.record()
    ga @ gb
    end_event.record()
    end_event.synchronize()
    print(f"cuda: stop at return {launch_only * 1e6:.1f} µs, after sync {synchronised * 1e6:.1f} µs, "
          f"device clock {start_event.elapsed_time(end_event) * 1e3:.1f} µs")
else:
    print("no CUDA device: a CPU kernel runs inside the call, so the GPU's launch/sync gap cannot be shown here")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Submitting work to a queue returns long before the work is done; a clock stopped at the return
# measures the launch, not the work. That is what an unsynchronised GPU timer does: `torch.mm` on
# CUDA returns once the kernel is queued. When each piece of work is shorter than a launch
# (`N = 16`), the worker finishes each multiply before the next one arrives, so the completed time
# is mostly the launches themselves and their share climbs well above 0.1: the program is
# *launch-bound*, which is where CUDA graphs and fusion help. A plain CPU call runs its kernel
# inside the call, so `torch.cpu.synchronize()` has nothing to wait for; anything that needs a
# value on the host (`.item()`, `print(t)`, `.cpu()`) synchronises a GPU implicitly.
#
# </details>

# %% [markdown]
# ## Exercise 2 · Wall time and CPU time <a id="wall-vs-cpu"></a>
#
# The host has two clocks of its own: wall time (`time.perf_counter`) and the CPU time this
# process used (`time.process_time`, summed over all its threads). The measurement reads both
# around a sleep and around 20 matrix multiplies on `MATMUL_THREADS` threads. **Predict** CPU
# time divided by wall time for the sleep, and the most it can be for the multiplies (other
# programs on the machine can only lower it), then **run** it. When other programs hold the
# cores, the multiplies use less CPU per second of the wall clock; the measurement then also runs
# them on threads of their own and counts only the time those were not waiting for a core, and
# the self-check grades your bound against that, or says why it cannot.
#
# **Change** `MATMUL_THREADS` to `1` and predict again.

# %% tags=["answer"]
# YOUR ANSWER: CPU time / wall time
PREDICTED_CPU_PER_WALL = {"sleep": None, "matmul, at most": None}

# %% tags=["solution"]
PREDICTED_CPU_PER_WALL = {"sleep": 0, "matmul, at most": DEFAULT_THREADS}  # waiting costs no CPU; each thread spends it

# %%
MATMUL_THREADS = DEFAULT_THREADS


def both_clocks(fn):
    wall0, cpu0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall0, time.process_time() - cpu0


torch.set_num_threads(MATMUL_THREADS)
big_a, big_b = torch.randn(512, 512), torch.randn(512, 512)
clocks = {
    "sleep": both_clocks(lambda: time.sleep(0.2)),
    "matmul": both_clocks(lambda: [big_a @ big_b for _ in range(20)]),
}
torch.set_num_threads(1)
# The same multiplies on MATMUL_THREADS threads of their own, which never wait for each other: the CPU
# they use per second of the turns they got (Linux), which other programs cannot take from them.
apart_clocks = threads_apart(lambda: big_a @ big_b, MATMUL_THREADS) if MATMUL_THREADS > 1 else {}
cpu_per_wall = {what: cpu / wall for what, (wall, cpu) in clocks.items()}
for what, (wall, cpu) in clocks.items():
    print(f"{what:<7} wall {wall * 1e3:8.1f} ms   CPU {cpu * 1e3:8.1f} ms   CPU/wall {cpu_per_wall[what]:5.2f}")
if "cores" in apart_clocks:
    print(f"{MATMUL_THREADS} threads on their own matmuls, over the time they were not waiting for a core:"
          f" {apart_clocks['cores']:.2f} s of CPU per second")

# %%
# SELF-CHECK: both ratios 0 or more, sleep within 0.2 of the measured ratio. The matmuls within your bound (30 % allowed for the
# clocks), and the bound no looser than the threads. A bound below what the threads can use is wrong: a run
# shows it where they used more, over the wall clock or, where other programs held the cores, over the time
# that threads on their own matmuls were not waiting for a core. Where neither shows it, it is not graded.
require(PREDICTED_CPU_PER_WALL={what: PREDICTED_CPU_PER_WALL.get(what) for what in ("sleep", "matmul, at most")})
for what in ("sleep", "matmul, at most"):
    expect_type(f"PREDICTED_CPU_PER_WALL[{what!r}]", PREDICTED_CPU_PER_WALL[what], numbers.Real, "a number (such as 0.5)")
sleep_guess, matmul_bound = PREDICTED_CPU_PER_WALL["sleep"], PREDICTED_CPU_PER_WALL["matmul, at most"]
used = cpu_per_wall["matmul"]
for what, ratio in PREDICTED_CPU_PER_WALL.items():  # seconds of CPU per second of wall: neither can run backwards
    expect(ratio >= 0, f"{what}: a process cannot use {ratio} s of CPU per second; CPU time / wall time is 0 or more")
expect(abs(sleep_guess - cpu_per_wall["sleep"]) <= 0.2, f"sleeping used {cpu_per_wall['sleep']:.2f} s of CPU per second, not {sleep_guess}")
expect(used <= 1.3 * matmul_bound, f"the matmuls used {used:.2f} s of CPU per second, beyond your bound of {matmul_bound}")
expect(matmul_bound <= 1.5 * MATMUL_THREADS, f"a bound of {matmul_bound} is looser than it needs to be with {MATMUL_THREADS} threads")
most = min(MATMUL_THREADS, CORES)  # each thread can use at most one second of CPU per second, each core too
graded = True
if most == 1 and min(DEFAULT_THREADS, CORES) == 1:
    why = "this process may use one core" if CORES == 1 else "PyTorch runs one thread by default here"
    print(f"not applicable: one core: {why}, so the bound for the default threads is the bound for one thread")
elif matmul_bound < most / 1.3:
    own = min(apart_clocks.get("cores", 0.0), most)  # each thread at most one core, and the threads at most the cores
    expect(
        own <= 1.3 * matmul_bound,
        f"{MATMUL_THREADS} threads on their own matmuls used {own:.2f} s of CPU per second of the time they were not"
        f" waiting for a core (the matmuls used {used:.2f} per second of the wall clock): beyond your bound of {matmul_bound}",
    )
    graded = False
    print(
        f"not graded on this machine: the matmuls used only {used:.2f} s of CPU per second ({own:.2f} over their own"
        f" turns), within your bound of {matmul_bound}, so this run cannot show whether {MATMUL_THREADS} threads on"
        f" {CORES} cores can use more"
    )
print(f"self-check passed{'' if graded else ' as far as this run can tell'}: two host clocks, two different questions")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# Sleeping (like waiting for a GPU, a disk or the network) advances the wall clock while the CPU
# clock stands still. A multi-threaded kernel can burn CPU time up to *threads ×* faster than the
# wall clock, less when other programs hold some cores; with one thread it is at most 1.
# Wall time is what your user waits for; CPU time is what you pay for on a shared machine.
#
# </details>

# %% [markdown]
# ## Exercise 3 · Bandwidth against buffer size <a id="bandwidth-vs-size"></a>
#
# The measurement copies buffers from a few KiB to tens of MiB (`dst.copy_(src)`, on one thread)
# and reports GB/s. **Write** `copy_bytes(buffer_bytes)`, the bytes a copy of a buffer of that
# size moves through memory, then **run** it: the self-check compares your count with the
# tensors' `nbytes` and prints the rates from it.
#
# **Change** `SIZES_KIB` to find the steps in the curve: each is a cache level (L1, L2, the last
# level cache) running out, until main memory sets the rate. The self-check tests that tiny
# copies are slow only when your sizes include a tiny one (at most 4 KiB).

# %% tags=["answer"]
# YOUR ANSWER
def copy_bytes(buffer_bytes):
    """Bytes moved by dst.copy_(src) when src and dst each hold `buffer_bytes`."""
    return None  # your formula


# %% tags=["solution"]
def copy_bytes(buffer_bytes):
    """Bytes moved by dst.copy_(src) when src and dst each hold `buffer_bytes`."""
    return 2 * buffer_bytes  # every byte is read once and written once


# %%
SIZES_KIB = [4, 32, 256, 2048, 16384, 65536]
copy_seconds, moved = {}, {}
for kib in SIZES_KIB:
    src = torch.ones(kib * 1024 // 4)
    dst = torch.empty_like(src)
    copy_seconds[kib] = best_time(lambda: dst.copy_(src))
    moved[kib] = src.nbytes + dst.nbytes
    print(f"{kib:>7,} KiB: {copy_seconds[kib] * 1e6:>10.2f} µs")

# %%
# SELF-CHECK: your byte count against nbytes; a tiny copy, if you measured one, far from the best rate.
require(copy_bytes=copy_bytes(1024))
for kib, nbytes in moved.items():
    expect_type(f"copy_bytes({kib * 1024})", copy_bytes(kib * 1024), numbers.Real, "a number of bytes")
    expect(copy_bytes(kib * 1024) == nbytes, f"{kib} KiB: your formula gives {copy_bytes(kib * 1024):,} bytes; the copy reads and writes {nbytes:,}")
bandwidth = {kib: copy_bytes(kib * 1024) / t / 1e9 for kib, t in copy_seconds.items()}
for kib, rate in bandwidth.items():
    print(f"{kib:>7,} KiB: {rate:7.1f} GB/s")
smallest = min(SIZES_KIB)
if smallest <= 4:  # a tiny copy: the fixed cost of the call dominates its time
    expect(bandwidth[smallest] < max(bandwidth.values()) / 2, f"your tiny copy ({smallest} KiB) should be far from the peak")
else:
    print(
        f"the tiny copies are not graded with these sizes: your smallest buffer, {smallest:,} KiB, is too large for the fixed"
        " cost of a call to dominate its copy; add a size of a few KiB to see it"
    )
print("self-check passed: bandwidth depends on where the buffer lives")

# %% [markdown]
# *GPU only:* on a CUDA machine this cell measures host-to-device copies from ordinary and from
# pinned host memory. It is skipped on a CPU.

# %%
if DEVICE.type == "cuda":
    host = torch.ones(64 * 2**20 // 4)
    pinned = host.pin_memory()
    for label, buffer in (("pageable", host), ("pinned", pinned)):
        t = best_time(lambda: buffer.to(DEVICE, non_blocking=True))
        print(f"host to device, {label:<8}: {host.nbytes / t / 1e9:6.1f} GB/s")
else:
    print("no CUDA device: host-to-device copies are skipped")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# A copy reads every byte and writes it again, so it moves twice the buffer; counting only the
# bytes read halves every rate. The smallest copies pay the per-call cost of Floor 3. Buffers
# that fit in the caches copy at the caches' speed, and the rate steps down each time a level
# overflows, ending at main memory bandwidth for the largest buffers. On a GPU, copies from pinned
# host memory are faster than from ordinary (pageable) memory, which the driver must first stage
# through a pinned buffer, and both are far slower than the GPU's own memory: keep data on the
# device.
#
# </details>

# %% [markdown]
# ## Exercise 4 · What more threads buy <a id="threads"></a>
#
# The measurement times a matrix multiply and an elementwise add with 1 up to all available
# threads and prints the speedup over one thread. **Write** `max_speedup(threads)`: the largest
# speedup that `threads` threads can give a compute-bound matrix multiply over one thread. The
# self-check tests that no measurement beats your bound, and that your bound is not looser than
# it needs to be. Then **run** the measurement. On a busy machine the threads of one matmul wait
# for each other's turns and may buy nothing; the measurement then also runs threads on matmuls
# of their own, and the work each did per second of CPU shows what a core each would give: the
# self-check grades your bound against that, or says why it cannot.
#
# **Change** `N` to `512`, add an op to `OPS` such as `"exp": lambda: torch.exp(v, out=u)` (more
# arithmetic per byte than the add), and set `BUSY = True`, which keeps one core busy with another
# process while the cell measures. Which scales better with threads, the compute-bound matmul or
# the memory-bound add? What does a busy machine do to the speedups?

# %% tags=["answer"]
# YOUR ANSWER
def max_speedup(threads):
    """The most that `threads` threads can speed up a compute-bound matmul over one thread."""
    return None  # your formula


# %% tags=["solution"]
def max_speedup(threads):
    """The most that `threads` threads can speed up a compute-bound matmul over one thread."""
    return threads  # each thread brings one core's arithmetic units, no more


# %%
N = 384
BUSY = False  # True: another process spins on one core while this cell measures
THREADS = sorted({1, 2, DEFAULT_THREADS, os.cpu_count() or 1})
x, y = torch.randn(N, N), torch.randn(N, N)
v, w, u = torch.rand(2**22), torch.rand(2**22), torch.empty(2**22)
OPS = {"matmul": lambda: x @ y, "add": lambda: torch.add(v, w, out=u)}

spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if BUSY else None
try:
    seconds = {op: {} for op in OPS}
    one_thread_share = 0.0  # of a core, while the one-thread matmul was timed: the base of every speedup
    for _ in range(2):  # two rounds, interleaved, so a busy moment does not hit one thread count only
        for threads in THREADS:
            torch.set_num_threads(threads)
            for op, fn in OPS.items():
                with CoreShare() as timing:
                    seconds[op][threads] = min(best_time(fn), seconds[op].get(threads, float("inf")))
                if (op, threads) == ("matmul", 1):
                    one_thread_share = max(one_thread_share, timing.share)
finally:
    torch.set_num_threads(1)
    if spinner is not None:
        spinner.kill()
        spinner.wait()
speedup = {op: {t: row[1] / row[t] for t in THREADS} for op, row in seconds.items()}
for op, row in speedup.items():
    print(f"{op:<7}" + "".join(f"  {t} thread(s): {s:4.2f}x" for t, s in row.items()))
print(f"the one-thread matmul got {one_thread_share:.0%} of a core while it was timed")
apart = {t: threads_apart(OPS["matmul"], t) for t in THREADS if t > 1}  # each thread its own matmuls, one after another
for t, found in apart.items():
    print(f"{t} threads, each on its own matmuls: {found['calls']:.2f}x one thread's matmuls per second,"
          f" each did {found['per_cpu']:.0%} of one thread's per second of CPU")

# %%
# SELF-CHECK: no measured matmul speedup beats your bound (25 % allowed for timing), and the bound is no
# looser than the thread count. Every speedup is a ratio to the one-thread time, which other programs
# can stretch: at a share s of a core, up to 1/s times, so the allowance widens as much. A bound below
# what the threads can give is wrong: a run shows it where they gave more, or where threads on their own
# matmuls each did, with the turns they got, what one thread does (10 % allowed): with a core each, they
# would be that many times as fast. On a busy machine the threads of one matmul wait for each other's
# turns and can be slower than one thread; where neither shows more, the bound is not graded.
require(max_speedup=max_speedup(1))
allowance = 1.25 / min(max(one_thread_share, 0.01), 1.0)
too_little = []
for threads, measured in speedup["matmul"].items():
    bound = max_speedup(threads)
    expect_type(f"max_speedup({threads})", bound, numbers.Real, "a number (such as 1.5)")
    expect(
        measured <= allowance * bound,
        f"{threads} threads made the matmul {measured:.2f}x faster, beyond your bound of {bound}"
        f" ({allowance:.2f} times it allowed: the one-thread matmul got {one_thread_share:.0%} of a core)",
    )
    expect(bound <= 1.5 * threads, f"{threads} threads: a bound of {bound} is looser than it needs to be: what does one thread add?")
    if bound < min(threads, CORES) / 1.25:  # below what the threads' cores can give, yet not beaten here
        with_cores = min(threads, CORES) * apart[threads]["per_cpu"]  # each thread's work per CPU second, a core each
        expect(
            CORES == 1 or with_cores <= 1.1 * bound,
            f"{threads} threads, each on its own matmuls, each did {apart[threads]['per_cpu']:.0%} of one thread's"
            f" work per second of CPU: with a core each they are {with_cores:.2f}x as fast, beyond your bound of {bound}"
            f" (the threads of one matmul gave {measured:.2f}x in this run)",
        )
        too_little.append(f"{threads} threads gave {measured:.2f}x, your bound is {bound:.2f}")
if CORES == 1:
    too_little = []
    print("not applicable: one core: every thread shares it, so no speedup can show what more threads buy")
elif too_little:
    print(f"not graded on this machine: the matmul sped up too little to show whether threads can give more ({'; '.join(too_little)})")
print(f"self-check passed{' as far as this run can tell' if too_little else ''}: no speedup beat your bound")

# %% [markdown]
# <details class="success"><summary>What to notice</summary>
#
# On an idle machine the matmul scales close to the number of physical cores, because each core
# has its own arithmetic units, and never beyond it. The add behaves differently: all threads
# share the same memory bandwidth, so once it is saturated extra threads only wait; yet it can
# also scale better than the thread count, because each core brings its own cache and splitting
# the arrays lets more of them stay in cache. When other processes compete for the cores, extra
# threads can even slow things down: with `BUSY = True` the threads that have to share a core
# with the spinning process gain little or nothing, while the bound still holds, because it is
# the most threads can give. Threads beyond the physical cores (hyper-threads) rarely help dense
# arithmetic.
#
# </details>
