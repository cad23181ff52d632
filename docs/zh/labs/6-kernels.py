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
# # 实验 6 · 内核
#
# ## 目标 <a id="goal"></a>
#
# 在分发器（dispatcher）的最末端，由*内核*完成实际的运算。它能跑多快，取决于它每搬运一个字节做多少工作，也就是它的*算术强度*。在这个实验里，你将以 GFLOP/s 测量矩阵乘法、以 GB/s 测量逐元素加法，把两者放到一个简单的 roofline 模型上，并观察数据类型如何改变实际运行的内核。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一格。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会指出它应该是什么类型）。`best_time` 返回函数单次调用的秒数：取十五个短批次中最快的那个（其他程序只会让一个批次变慢，而短批次常常能躲开它们）。`CoreShare` 测量一次测量分到了多少个核心的算力，`unclear` 则在繁忙的机器把计时拉长到无法评判某个比值时给出说明。本实验让 PyTorch 只用一个 CPU 线程运行，这样其他程序共享这台机器时计时仍然稳定；更多线程能带来什么，由实验 8 来测量。

# %%
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # 单线程：繁忙的机器上计时更稳定（实验 8 会测量线程）

print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread, CPU capability {torch.backends.cpu.get_cpu_capability()}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 矩阵乘法的 GFLOP/s <a id="matmul-gflops"></a>
#
# 要得到以 GFLOP/s 计的速率，先得数出浮点运算的次数。**写出** `matmul_flops(n)`：两个 n × n 矩阵相乘的浮点运算次数（乘法和加法各算一次运算），然后**运行**测量：它对逐渐增大的 n 给 `a @ b` 计时，并询问 PyTorch 自己的 FLOP 计数器（`torch.utils.flop_counter.FlopCounterMode`）数出了多少次运算。自检会比较两者，并按你的公式打印 GFLOP/s。目前通行两种约定，两种都算对：一是精确计数；二是 PyTorch 的计数器（和大多数 FLOP 计数一样）采用的约定，它为每个乘积都算一次加法，因此每个输出比精确计数多一次加法。
#
# **修改** `MATMUL_SIZES`，加入 `1024`（如果你的机器有耐心，再加上 `2048`）。速率在哪里停止增长？

# %% tags=["answer"]
# YOUR ANSWER
def matmul_flops(n):
    """Floating-point operations in an n x n by n x n matrix multiply."""
    return None  # 你的公式


# %% tags=["solution"]
def matmul_flops(n):
    """Floating-point operations in an n x n by n x n matrix multiply."""
    return 2 * n**3  # n^2 个输出，每个 n 次乘法和 n 次加法（计数器的约定；精确值是 n^2 (2n - 1)）


# %%
from torch.utils.flop_counter import FlopCounterMode

MATMUL_SIZES = [16, 32, 64, 128, 256, 512]

matmul_seconds, counted_flops = {}, {}
with CoreShare() as matmul_core:  # 计时得到了多少核心
    for n in MATMUL_SIZES:
        a, b = torch.randn(n, n), torch.randn(n, n)
        matmul_seconds[n] = best_time(lambda: a @ b)
        with FlopCounterMode(display=False) as counter:
            a @ b
        counted_flops[n] = counter.get_total_flops()
        print(f"n = {n:>5}: {matmul_seconds[n] * 1e6:>10.1f} µs")

# %%
# SELF-CHECK：在每个大小上，你的次数与 PyTorch 的 FLOP 计数器相比较；然后比较速率。
require(matmul_flops=matmul_flops(MATMUL_SIZES[0]))
for n, counted in counted_flops.items():
    guess = matmul_flops(n)
    expect_type(f"matmul_flops({n})", guess, numbers.Real, "a number of operations")
    exact = counted - n * n  # 每个输出做 n - 1 次加法，而不是计数器的 n 次
    expect(
        guess in (counted, exact),
        f"n = {n}: your formula gives {guess:,}, PyTorch counts {counted:,} (and the exact count, with one add fewer per output, is {exact:,})",
    )
gflops = {n: matmul_flops(n) / t / 1e9 for n, t in matmul_seconds.items()}
for n, rate in gflops.items():
    print(f"n = {n:>5}: {rate:7.1f} GFLOP/s")
climb = max(gflops.values()) / gflops[min(gflops)]  # 最佳速率对比最小大小的速率
why = "" if climb > 4 else unclear(climb, 4, matmul_core, margin=1, what="the best rate over the smallest size's")
if why:
    print(why)
else:
    expect(climb > 4, f"the best rate is {climb:.1f} times the smallest size's: large matrices should run several times more FLOP/s than tiny ones")
print(f"self-check passed: your FLOP count is right{', and the rate climbs with size' if climb > 4 else ''}")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# n² 个输出中的每一个都是 n 个乘积之和：n 次乘法和 n − 1 次加法，总共 n²(2n − 1)。FLOP 计数器（包括 PyTorch 的）按 n 次加法计，于是得到 2n³；两者之差 n² 占总数的 1/(2n)：n = 16 时为 3%，n = 512 时只有千分之一左右。对很小的矩阵，调用的固定开销（第 3 层）和内核的准备工作占了大头，所以 GFLOP/s 很低。随着 n 增大，BLAS 内核的分块循环让向量单元一直有活可干，速率不断攀升，直到稳定在单个核心所能达到的水平附近。工作量按 n³ 增长，而数据量只按 n² 增长，因此每个字节被重复使用的次数越来越多：这就是算术强度，见练习 3。
#
# </details>

# %% [markdown]
# ## 练习 2 · 逐元素加法的 GB/s <a id="add-bandwidth"></a>
#
# 要得到以 GB/s 计的速率，先得数出搬运的字节数。**写出** `add_bytes(n)`：对 n 个元素的 float32 张量，`torch.add(a, b, out=c)` 读写的字节数，然后**运行**测量：它在逐渐增大的规模下给加法计时，用张量自身的 `nbytes` 核对你的计数，并用第二种方法（`torch.utils.benchmark.Timer`）再测一次最大的规模。
#
# **修改** `ADD_SIZES`，找出速率下降的位置（三个数组再也放不进 CPU 缓存的时候）。只有当你的规模中包含一个很小的规模时（三个数组合计不超过 4 KiB，此时调用的固定开销占了大头），自检才会检验很小的加法是否很慢。

# %% tags=["answer"]
# YOUR ANSWER
def add_bytes(n):
    """Bytes read and written by torch.add(a, b, out=c) on float32 tensors of n elements."""
    return None  # 你的公式


# %% tags=["solution"]
def add_bytes(n):
    """Bytes read and written by torch.add(a, b, out=c) on float32 tensors of n elements."""
    return 3 * 4 * n  # 读 a 和 b，写 c


# %%
from torch.utils import benchmark

ADD_SIZES = [2**k for k in range(6, 23, 2)]  # 64 ... 4,194,304 个元素

add_seconds, tensor_bytes = {}, {}
with CoreShare() as add_core:  # 计时得到了多少核心
    for n in ADD_SIZES:
        a, b, c = torch.rand(n), torch.rand(n), torch.empty(n)
        add_seconds[n] = best_time(lambda: torch.add(a, b, out=c))
        tensor_bytes[n] = a.nbytes + b.nbytes + c.nbytes
        print(f"{n:>9,} elements: {add_seconds[n] * 1e6:>9.2f} µs")
    largest = max(ADD_SIZES)
    a, b, c = torch.rand(largest), torch.rand(largest), torch.empty(largest)
    timer = benchmark.Timer("torch.add(a, b, out=c)", globals={"torch": torch, "a": a, "b": b, "c": c}, num_threads=1)
    second_method_seconds = float("inf")
    for _ in range(3):  # 两个计时器交替使用，这样繁忙的时刻不会偏袒其中一个
        second_method_seconds = min(second_method_seconds, *timer.blocked_autorange(min_run_time=0.1).times)
        add_seconds[largest] = min(add_seconds[largest], best_time(lambda: torch.add(a, b, out=c)))

# %%
# SELF-CHECK：在每个大小上，你的字节数与 nbytes 相比较；两个计时器在最大大小上的 GB/s 一致；
# 如果你测了一个极小的加法，它比你最快的那次慢得多。
require(add_bytes=add_bytes(ADD_SIZES[0]))
for n, nbytes in tensor_bytes.items():
    expect_type(f"add_bytes({n})", add_bytes(n), numbers.Real, "a number of bytes")
    expect(add_bytes(n) == nbytes, f"n = {n:,}: your formula gives {add_bytes(n):,} bytes, the three tensors hold {nbytes:,}")
gbps = {n: add_bytes(n) / t / 1e9 for n, t in add_seconds.items()}
for n, rate in gbps.items():
    print(f"{n:>9,} elements: {rate:7.1f} GB/s")
second = add_bytes(largest) / second_method_seconds / 1e9
print(f"largest size, second method (benchmark.Timer): {second:.1f} GB/s")
apart = max(gbps[largest] / second, second / gbps[largest])  # 两个计时器的结果相差多少倍
why = "" if apart < 3 else unclear(apart, 3, add_core, margin=1, what="the two timers' disagreement")
if why:
    print(why)
else:
    expect(apart < 3, f"the two timers disagree {apart:.1f} times (within 3 expected): rerun on a quieter machine")
smallest = min(ADD_SIZES)
if tensor_bytes[smallest] <= 4096:  # 极小的加法：调用的固定开销主导了它的耗时
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
# <details class="success"><summary>观察要点</summary>
#
# 加法读两个数组、写一个数组：仅仅一次加法，每个元素就要搬运 3 × 4 字节。小规模的加法被每次调用的开销主导，所以 GB/s 极低。能放进缓存的中等规模数组跑得最快；一旦三个数组超出缓存，速率就回落到主内存所能提供的水平。如果只数一个数组而不是三个，你的机器看上去会比实际慢三倍；`nbytes` 检查能发现这个错误。
#
# </details>

# %% [markdown]
# ## 练习 3 · 算术强度与 roofline 模型 <a id="roofline"></a>
#
# 算术强度是每搬运一个字节所做的 FLOP 数。在内存带宽为 *B*、峰值计算速率为 *P* 的机器上，强度为 *I* 的内核最多只能跑到 min(*I × B*, *P*)：这就是 roofline 模型。两条上限线在*脊点*强度处相交。测量用你最快的那个矩阵乘法规模测出 *P*，用你最大的那次加法测出 *B*（超出缓存：是主内存的速率，而不是缓存的），两者轮流进行，共五轮，并保留脊点处于中位数的那一轮：两条上限线用同样的方式测量，因此繁忙的时刻会同时压低两者。**运行**它，然后用 `peak_gflops` 和 `memory_gbps` **算出**脊点，并**预测**在你的机器上每个操作是访存受限还是计算受限。
#
# 把 `N` **改为** `8`，再预测一次：很小的矩阵乘法是计算受限的吗？

# %%
N = 512
ROUNDS = 5
fastest = max(matmul_seconds, key=lambda n: counted_flops[n] / matmul_seconds[n])  # 练习 1 中最快的大小
ma, mb = torch.randn(fastest, fastest), torch.randn(fastest, fastest)
a, b, c = torch.rand(largest), torch.rand(largest), torch.empty(largest)  # 练习 2 中最大的加法
roofs = []
with CoreShare() as roof_core:  # 计时得到了多少核心
    for _ in range(ROUNDS):  # 每一轮都测两个上限
        compute = counted_flops[fastest] / best_time(lambda: ma @ mb, repeat=5) / 1e9  # 算力上限
        memory = tensor_bytes[largest] / best_time(lambda: torch.add(a, b, out=c), repeat=5) / 1e9  # 主存
        roofs.append((compute / memory, compute, memory))
_, peak_gflops, memory_gbps = sorted(roofs)[ROUNDS // 2]  # 脊点处于中位数的那一轮


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
ridge = None  # 两个上限相交处每字节的 FLOP 数，由 peak_gflops 和 memory_gbps 算出
BOUND = {"add": None, "matmul": None}  # "memory" 或 "compute"，针对大小为 N 的矩阵乘法

# %% tags=["solution"]
ridge = peak_gflops / memory_gbps  # 低于它时访存受限，高于它时计算受限
BOUND = {"add": "memory", "matmul": "compute"}

# %%
# SELF-CHECK：你的脊点与两个上限的交点相差在 1 % 以内；每个运算都在你所说的那一侧，
# 除非它的算术强度离脊点太近，这次运行无法判定。只得到核心 s 份额时，
# 任一上限的计时都可能被拉长到 1/s 倍，脊点向两边偏离的幅度也一样：强度离脊点超过 1/s 倍
# （另加 25 % 留给计时本身的噪声），才算落在它看起来所在的那一侧。
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
# <details class="success"><summary>观察要点</summary>
#
# 加法的强度固定为每字节 1/12 FLOP，远在脊点左侧，因此它的 FLOP 速率就是带宽 × 1/12，任何内核都无法做得更好：它是*访存受限*的。矩阵乘法的强度随 n 增长（对 float32 方阵，每个矩阵只计一次时为每字节 n/6 FLOP），因此当 n 达到脊点的几倍之后，它就是*计算受限*的；很小的矩阵乘法（n = 8，强度 1.3）和加法一样位于脊点左侧。如果把缓存内的带宽当作内存带宽上限，脊点就会左移，把那些其实被主内存饿着的内核判为计算受限。融合逐元素操作能提高它们的强度；这正是编译器要做融合的原因。
#
# </details>

# %% [markdown]
# ## 练习 4 · 数据类型决定内核 <a id="dtype-kernels"></a>
#
# 分发器按设备*和*数据类型挑选内核，而不同的内核差别很大。第 6 层比较了各种浮点类型，它们都能用上经过调优的库内核。整数矩阵乘法同样可以做，但 BLAS 库没有整数例程：它运行的是 PyTorch 自己的通用循环。**预测** `float32` 和 `int64` 哪个乘得更快（按每秒运算次数计），以及差距是 `"small"`（小于 2 倍：大约相当于元素宽一倍给同类内核带来的代价）还是 `"large"`（大于 2 倍：换了另一类内核），然后**运行**测量。
#
# **修改** `DTYPES`，加入 `torch.int32` 和 `torch.int8`。更窄的整数会像更窄的浮点数那样带来提升吗？

# %% tags=["answer"]
# YOUR ANSWER
FASTER = None  # 乘法每秒能完成更多运算的数据类型：torch.float32 或 torch.int64
GAP = None  # 速率不到另一种的 2 倍填 "small"，超过则填 "large"

# %% tags=["solution"]
FASTER = torch.float32  # BLAS 分块、向量化的 float32 例程，对比 PyTorch 通用的整数循环
GAP = "large"  # 内核的种类不同，而不只是元素宽了一倍

# %%
SIDE = 256
DTYPES = [torch.float32, torch.int64]

dtype_gops = {}
for _ in range(2):  # 两轮交替进行，这样繁忙的时刻不会偏袒某一种数据类型
    for dtype in DTYPES:
        a, b = torch.randint(-8, 8, (SIDE, SIDE)).to(dtype), torch.randint(-8, 8, (SIDE, SIDE)).to(dtype)
        dtype_gops[dtype] = max(2 * SIDE**3 / best_time(lambda: a @ b) / 1e9, dtype_gops.get(dtype, 0))
for dtype, rate in dtype_gops.items():
    print(f"{dtype!s:<15} {rate:8.1f} G multiply-adds x 2 per second, float32 / this: {dtype_gops[torch.float32] / rate:6.1f}")
dtype_ratio = dtype_gops[torch.float32] / dtype_gops[torch.int64]

# %%
# SELF-CHECK：较快的数据类型和差距的大小，与你的测量相比较。差距在
# 1.5 到 3 倍之间时离 2 太近，无法判定大小；低于 1.5 倍时离得太近，
# 无法判定哪种数据类型更快：这样的运行不对那一部分评分。
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
# <details class="success"><summary>观察要点</summary>
#
# 同一个算子、同样的形状，却是不同的内核：`float32` 进入 BLAS 库分块、向量化的例程，而整数类型没有 BLAS 例程，只能运行 PyTorch 自己的通用内核。元素宽一倍，对同类内核而言大约会带来 2 倍的代价；差距之所以更大，是因为换了一个内核。究竟大多少，比本实验中的其他任何结果都更取决于你的 CPU：同样的差距，在一台机器上是几倍，在另一台上可能是一百倍甚至更多。这次运行测的是差距，而不是它的成因。你可以检验一个嫌疑对象，即 PyTorch 自己的内核所用的向量指令（准备单元格打印了是哪一种）：在 Python 启动之前设置 `ATEN_CPU_CAPABILITY=avx2` 或 `ATEN_CPU_CAPABILITY=default`，再运行一次本实验。如果差距保持不变（在测试本实验的那台 Intel CPU 上正是如此），那么在你的机器上决定差距的就不是 PyTorch 内核的向量宽度。更窄的整数搬运的字节更少，一个向量寄存器也能装下更多值，所以它们可能比 `int64` 跑得快，但它们仍走通用路径，在大多数 CPU 上仍低于 float32 的速率。你选择的数据类型决定了运行哪一段代码，而不只是搬运多少字节；要做快速的整数运算，库会改用专门的量化内核。
#
# </details>
