# ---
# jupyter:
#   floors:
#     language: zh
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
# # 实验 8 · 芯片与两个时钟
#
# ## 目标 <a id="goal"></a>
#
# 你的 Python 代码运行在主机的时钟上；它请求的工作运行在设备的时钟上。在 GPU 上，两者是彼此独立的两条时间线：一次启动在内核完成之前很久就返回了，不做同步的计时器测到的只是启动。在这个实验里，你将在 CPU 上搭出同样的结构并抓住这一差别，比较墙钟时间与 CPU 时间，测量内存带宽随缓冲区大小的变化，并看看增加线程能换来什么。
#
# 所有练习和所有自检都能在只有 CPU 的机器上运行。标有*仅限 GPU* 的单元格在有 CUDA GPU 时运行真正的 CUDA 代码，在别处则跳过；没有任何自检依赖它们。每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一格。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会指出它应该是什么类型）。有 GPU 时 `DEVICE` 为 `cuda`，否则为 `cpu`；`best_time` 返回单次调用的秒数（十五个短批次中最快的那个），并在要求时同步设备。除非某个练习设置了更多线程，PyTorch 只在一个 CPU 线程上运行，这样在繁忙的机器上计时也能保持稳定；`CoreShare` 测量一次测量分到了多少个核心的算力，`unclear` 则在繁忙的机器把计时拉长到无法评判某个比值时给出说明；`threads_apart` 让几个线程各做各的工作，在其他程序占着核心时也能看出多开线程能换来什么；`DEFAULT_THREADS` 是 PyTorch 默认会用的线程数，`CORES` 是本进程可以使用的核心数。

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
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # 这个进程可以使用的核心数
torch.set_num_threads(1)  # 除非练习要求更多，否则只用一个线程：繁忙的机器上计时更稳定
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

name = torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"CPU, {os.cpu_count()} logical cores ({CORES} for this process)"
print(f"torch {torch.__version__}, device: {name}, {DEFAULT_THREADS} CPU threads by default")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 启动不等于完成 <a id="launch-vs-completion"></a>
#
# 在 GPU 上，一次 PyTorch 调用只是把内核放进一个队列（*流*）就返回；设备按自己的时钟依次处理队列里的工作。你可以在 CPU 上搭出同样的结构：一个从队列中取出矩阵乘法来做的工作线程。测量提交 `CALLS` 次乘法，在最后一次提交返回时停下一个时钟（*启动*），在所有乘法都完成时（*同步*之后）停下另一个时钟。**预测**这个程序是否*启动受限*，即启动耗时是否超过完成总时间的十分之一。然后**运行**：它会打印启动所占的比例。
#
# 把 `N` **改为** `16`，让每次乘法都比一次提交更短，再预测一次。

# %% tags=["answer"]
# YOUR ANSWER
LAUNCH_BOUND = None  # 启动耗时超过完成时间的十分之一则填 True，否则填 False

# %% tags=["solution"]
LAUNCH_BOUND = False  # 一次提交只需几微秒，而单线程上一次 512 x 512 的乘法要几毫秒

# %%
from concurrent.futures import ThreadPoolExecutor

N, CALLS = 512, 50
a, b = torch.randn(N, N), torch.randn(N, N)
with ThreadPoolExecutor(max_workers=1) as worker, CoreShare() as core:  # worker 就是“设备”，它的队列就是“流”
    worker.submit(torch.mm, a, b).result()  # 预热
    shares = []
    for _ in range(5):
        start = time.perf_counter()
        futures = [worker.submit(torch.mm, a, b) for _ in range(CALLS)]
        launched = time.perf_counter() - start
        for future in futures:
            future.result()  # 同步：等到队列清空
        completed = time.perf_counter() - start
        shares.append(launched / completed)
share = statistics.median(shares)
print(f"N = {N}: {CALLS} launches took {share:.4f} of the time to complete them (median of 5;"
      f" {core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK：你的答案与实测占比落在 0.1 的同一侧（低于它时工作
# 占主导，高于它时启动占主导）。占比与 0.1 相差在 2 倍以内就太接近而无法判定，
# 当这个进程得到的不足一个核心时更是如此（提交线程和 worker 都要等
# 其他程序），因此不予评分。
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
# *仅限 GPU*：在 CUDA 机器上，这个单元格用 GPU 自己的队列重复这次测量，并用 CUDA 事件读取设备的时钟。在 CPU 上会跳过。

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
# <details class="success"><summary>观察要点</summary>
#
# 把工作提交到队列后，调用在工作完成之前很久就返回了；在返回时停下的时钟测到的是启动，而不是工作本身。不做同步的 GPU 计时器正是如此：CUDA 上的 `torch.mm` 一把内核排进队列就返回。当每份工作都比一次启动更短时（`N = 16`），工作线程在下一次乘法到来之前就做完了当前这一次，于是完成总时间基本就是启动本身，启动所占的比例远远超过 0.1：程序是*启动受限*的，这正是 CUDA graphs 和融合能派上用场的地方。普通的 CPU 调用在调用内部就把内核运行完了，所以 `torch.cpu.synchronize()` 没有什么可等的；任何需要在主机上拿到值的操作（`.item()`、`print(t)`、`.cpu()`）都会隐式地同步 GPU。
#
# </details>

# %% [markdown]
# ## 练习 2 · 墙钟时间与 CPU 时间 <a id="wall-vs-cpu"></a>
#
# 主机自己就有两个时钟：墙钟时间（`time.perf_counter`）和本进程用掉的 CPU 时间（`time.process_time`，对所有线程求和）。测量在一次休眠前后、以及在 `MATMUL_THREADS` 个线程上做 20 次矩阵乘法前后读取这两个时钟。**预测**休眠时 CPU 时间与墙钟时间之比，以及矩阵乘法时这个比值最大能到多少（机器上的其他程序只会让它更低），然后**运行**。当其他程序占着核心时，矩阵乘法每墙钟秒用到的 CPU 会变少；这时测量还会让这些乘法在各自独立的线程上运行，只计这些线程没在等待核心的时间，自检用它来评判你的上界，无法评判时则说明原因。
#
# 把 `MATMUL_THREADS` **改为** `1`，再预测一次。

# %% tags=["answer"]
# YOUR ANSWER：CPU 时间 / 墙钟时间
PREDICTED_CPU_PER_WALL = {"sleep": None, "matmul, at most": None}

# %% tags=["solution"]
PREDICTED_CPU_PER_WALL = {"sleep": 0, "matmul, at most": DEFAULT_THREADS}  # 等待不耗 CPU；每个线程都在消耗 CPU

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
# 同样的乘法在 MATMUL_THREADS 个各自独立、互不等待的线程上运行：它们在
# 分到的时间片里每秒使用的 CPU（Linux），这部分其他程序拿不走。
apart_clocks = threads_apart(lambda: big_a @ big_b, MATMUL_THREADS) if MATMUL_THREADS > 1 else {}
cpu_per_wall = {what: cpu / wall for what, (wall, cpu) in clocks.items()}
for what, (wall, cpu) in clocks.items():
    print(f"{what:<7} wall {wall * 1e3:8.1f} ms   CPU {cpu * 1e3:8.1f} ms   CPU/wall {cpu_per_wall[what]:5.2f}")
if "cores" in apart_clocks:
    print(f"{MATMUL_THREADS} threads on their own matmuls, over the time they were not waiting for a core:"
          f" {apart_clocks['cores']:.2f} s of CPU per second")

# %%
# SELF-CHECK：两个比值都不小于 0，sleep 与实测比值相差在 0.2 以内。矩阵乘法不超过你给的上界（时钟误差允许 30 %），
# 并且上界不比线程数更宽松。上界低于线程所能用的量就是错的：运行中若线程用得更多，
# 按墙钟时间，或者（在其他程序占着核心时）按各自运行矩阵乘法的线程没有在等核心的时间，
# 都会显示出来。两者都显示不出来时，不予评分。
require(PREDICTED_CPU_PER_WALL={what: PREDICTED_CPU_PER_WALL.get(what) for what in ("sleep", "matmul, at most")})
for what in ("sleep", "matmul, at most"):
    expect_type(f"PREDICTED_CPU_PER_WALL[{what!r}]", PREDICTED_CPU_PER_WALL[what], numbers.Real, "a number (such as 0.5)")
sleep_guess, matmul_bound = PREDICTED_CPU_PER_WALL["sleep"], PREDICTED_CPU_PER_WALL["matmul, at most"]
used = cpu_per_wall["matmul"]
for what, ratio in PREDICTED_CPU_PER_WALL.items():  # 每秒墙钟时间对应的 CPU 秒数：两者都不会倒着走
    expect(ratio >= 0, f"{what}: a process cannot use {ratio} s of CPU per second; CPU time / wall time is 0 or more")
expect(abs(sleep_guess - cpu_per_wall["sleep"]) <= 0.2, f"sleeping used {cpu_per_wall['sleep']:.2f} s of CPU per second, not {sleep_guess}")
expect(used <= 1.3 * matmul_bound, f"the matmuls used {used:.2f} s of CPU per second, beyond your bound of {matmul_bound}")
expect(matmul_bound <= 1.5 * MATMUL_THREADS, f"a bound of {matmul_bound} is looser than it needs to be with {MATMUL_THREADS} threads")
most = min(MATMUL_THREADS, CORES)  # 每个线程每秒最多使用一秒 CPU，每个核心也一样
graded = True
if most == 1 and min(DEFAULT_THREADS, CORES) == 1:
    why = "this process may use one core" if CORES == 1 else "PyTorch runs one thread by default here"
    print(f"not applicable: one core: {why}, so the bound for the default threads is the bound for one thread")
elif matmul_bound < most / 1.3:
    own = min(apart_clocks.get("cores", 0.0), most)  # 每个线程最多一个核心，所有线程最多用满全部核心
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
# <details class="success"><summary>观察要点</summary>
#
# 休眠（就像等待 GPU、磁盘或网络一样）会让墙钟时间前进，而 CPU 时钟停着不动。多线程内核消耗 CPU 时间的速度最多可以是墙钟的*线程数*倍，其他程序占用部分核心时会更少；只有一个线程时，这个比值最多为 1。墙钟时间是你的用户要等的时间；CPU 时间是你在共享机器上要付费的时间。
#
# </details>

# %% [markdown]
# ## 练习 3 · 带宽与缓冲区大小 <a id="bandwidth-vs-size"></a>
#
# 测量复制从几 KiB 到几十 MiB 不等的缓冲区（`dst.copy_(src)`，单线程），并报告 GB/s。**写出** `copy_bytes(buffer_bytes)`：复制一个该大小的缓冲区时经过内存搬运的字节数，然后**运行**：自检会把你的计数与张量的 `nbytes` 相比较，并据此打印速率。
#
# **修改** `SIZES_KIB`，找出曲线上的台阶：每一级台阶都是某一级缓存（L1、L2、末级缓存）装不下了，直到最后由主内存决定速率。只有当你的规模中包含一个很小的规模时（不超过 4 KiB），自检才会检验很小的复制是否很慢。

# %% tags=["answer"]
# YOUR ANSWER
def copy_bytes(buffer_bytes):
    """Bytes moved by dst.copy_(src) when src and dst each hold `buffer_bytes`."""
    return None  # 你的公式


# %% tags=["solution"]
def copy_bytes(buffer_bytes):
    """Bytes moved by dst.copy_(src) when src and dst each hold `buffer_bytes`."""
    return 2 * buffer_bytes  # 每个字节读一次、写一次


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
# SELF-CHECK：你的字节数与 nbytes 相比较；如果你测了一个极小的复制，它离最佳速率很远。
require(copy_bytes=copy_bytes(1024))
for kib, nbytes in moved.items():
    expect_type(f"copy_bytes({kib * 1024})", copy_bytes(kib * 1024), numbers.Real, "a number of bytes")
    expect(copy_bytes(kib * 1024) == nbytes, f"{kib} KiB: your formula gives {copy_bytes(kib * 1024):,} bytes; the copy reads and writes {nbytes:,}")
bandwidth = {kib: copy_bytes(kib * 1024) / t / 1e9 for kib, t in copy_seconds.items()}
for kib, rate in bandwidth.items():
    print(f"{kib:>7,} KiB: {rate:7.1f} GB/s")
smallest = min(SIZES_KIB)
if smallest <= 4:  # 极小的复制：调用的固定开销主导了它的耗时
    expect(bandwidth[smallest] < max(bandwidth.values()) / 2, f"your tiny copy ({smallest} KiB) should be far from the peak")
else:
    print(
        f"the tiny copies are not graded with these sizes: your smallest buffer, {smallest:,} KiB, is too large for the fixed"
        " cost of a call to dominate its copy; add a size of a few KiB to see it"
    )
print("self-check passed: bandwidth depends on where the buffer lives")

# %% [markdown]
# *仅限 GPU*：在 CUDA 机器上，这个单元格测量分别从普通主机内存和锁页主机内存复制到设备的速率。在 CPU 上会跳过。

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
# <details class="success"><summary>观察要点</summary>
#
# 复制要把每个字节读一遍再写一遍，所以搬运的是缓冲区大小的两倍；只数读取的字节会让每个速率减半。最小的复制要付出第 3 层讲过的每次调用开销。能放进缓存的缓冲区以缓存的速度复制，每当一级缓存溢出，速率就下一个台阶，最大的缓冲区最终落到主内存带宽。在 GPU 上，从锁页主机内存复制比从普通（可分页）内存复制更快，后者得由驱动先经一个锁页缓冲区中转；而两者都远比 GPU 自己的内存慢：让数据留在设备上。
#
# </details>

# %% [markdown]
# ## 练习 4 · 更多线程能换来什么 <a id="threads"></a>
#
# 测量用 1 个直到全部可用的线程，分别为矩阵乘法和逐元素加法计时，并打印相对单线程的加速比。**写出** `max_speedup(threads)`：`threads` 个线程能让计算受限的矩阵乘法相对单线程获得的最大加速比。自检会检验没有任何测量超过你的上界，并且你的上界不比必要的更宽松。然后**运行**测量。在繁忙的机器上，同一个矩阵乘法的各个线程要互相等待轮到自己，可能什么也换不来；这时测量还会让几个线程各做各的矩阵乘法，每个线程每 CPU 秒完成的工作量说明了每个线程各有一个核心时能带来什么：自检用它来评判你的上界，无法评判时则说明原因。
#
# 把 `N` **改为** `512`，往 `OPS` 里加一个操作，比如 `"exp": lambda: torch.exp(v, out=u)`（每字节的运算比加法多），并设置 `BUSY = True`，让另一个进程在这个单元格测量期间一直占着一个核心。计算受限的矩阵乘法和访存受限的加法，哪个随线程数扩展得更好？繁忙的机器会让加速比变成什么样？

# %% tags=["answer"]
# YOUR ANSWER
def max_speedup(threads):
    """The most that `threads` threads can speed up a compute-bound matmul over one thread."""
    return None  # 你的公式


# %% tags=["solution"]
def max_speedup(threads):
    """The most that `threads` threads can speed up a compute-bound matmul over one thread."""
    return threads  # 每个线程带来一个核心的运算单元，仅此而已


# %%
N = 384
BUSY = False  # True：这个单元格测量时，另一个进程在一个核心上空转
THREADS = sorted({1, 2, DEFAULT_THREADS, os.cpu_count() or 1})
x, y = torch.randn(N, N), torch.randn(N, N)
v, w, u = torch.rand(2**22), torch.rand(2**22), torch.empty(2**22)
OPS = {"matmul": lambda: x @ y, "add": lambda: torch.add(v, w, out=u)}

spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if BUSY else None
try:
    seconds = {op: {} for op in OPS}
    one_thread_share = 0.0  # 单线程矩阵乘法计时期间所得的核心份额：每个加速比的基准
    for _ in range(2):  # 两轮交替进行，这样繁忙的时刻不会只影响一种线程数
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
apart = {t: threads_apart(OPS["matmul"], t) for t in THREADS if t > 1}  # 每个线程各自运行自己的矩阵乘法，一个接一个
for t, found in apart.items():
    print(f"{t} threads, each on its own matmuls: {found['calls']:.2f}x one thread's matmuls per second,"
          f" each did {found['per_cpu']:.0%} of one thread's per second of CPU")

# %%
# SELF-CHECK：实测的矩阵乘法加速比都不超过你的上界（计时误差允许 25 %），并且上界不比
# 线程数更宽松。每个加速比都是相对单线程耗时的比值，而其他程序可能拉长后者：
# 在核心份额为 s 时最多拉长到 1/s 倍，因此允许的误差也放宽同样的倍数。上界低于
# 线程所能提供的量就是错的：运行中若线程提供了更多，或者各自运行矩阵乘法的线程
# 在分到的时间片里都完成了一个线程的工作量（允许 10 %），就会显示出来：各有一个核心时，
# 它们会快上那么多倍。在繁忙的机器上，同一个矩阵乘法的线程要互相等待时间片，
# 可能比单线程还慢；两者都显示不出更多时，不对上界评分。
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
    if bound < min(threads, CORES) / 1.25:  # 低于这些线程的核心所能提供的量，却没有在这里被超过
        with_cores = min(threads, CORES) * apart[threads]["per_cpu"]  # 每个线程每 CPU 秒完成的工作量，每个线程一个核心
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
# <details class="success"><summary>观察要点</summary>
#
# 在空闲的机器上，矩阵乘法的加速比接近物理核心数，因为每个核心都有自己的运算单元，但绝不会超过它。加法则不同：所有线程共享同一份内存带宽，一旦带宽饱和，多出来的线程只能干等；不过它也可能扩展得比线程数还好，因为每个核心都带来了自己的缓存，把数组切开后能让更多部分留在缓存里。当其他进程争抢核心时，多出来的线程甚至可能让程序变慢：设置 `BUSY = True` 时，不得不与空转进程共享一个核心的线程几乎得不到任何好处，而上界依然成立，因为它是线程所能带来的最大值。超出物理核心数的线程（超线程）很少能帮上密集算术运算的忙。
#
# </details>
