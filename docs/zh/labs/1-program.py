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
# # 实验 1 · 你的程序
#
# ## 目标 <a id="goal"></a>
#
# 第 1 层就是你敲下的代码。往下走之前，先测一测这一层已经能告诉你什么：一个张量占多少字节，混合表达式会得到哪种数据类型，NumPy 数组与张量何时共享内存，以及单页训练程序里究竟是哪一行在花时间。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一部分。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会说明它应当是什么类型）。`best_time` 返回函数单次调用所花的秒数：取十五个短批次中最快的那个（其他程序只会让某个批次变慢，而短批次常常能躲开它们）。本实验让 PyTorch 只用一个 CPU 线程，这样即使机器上还有别的程序在跑，计时也能保持稳定。

# %%
import math
import numbers

import numpy as np
import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # 单线程：繁忙的机器上计时更稳定（实验 8 会测量线程）

print(f"torch {torch.__version__}, numpy {np.__version__}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 你申请的字节 <a id="bytes-per-tensor"></a>
#
# **预测** `torch.randn(64, 784)`（单页程序的第一行）占多少字节，并写出一个公式 `predicted_bytes(shape, dtype)`，不必创建张量就能算出任意张量的字节数。把两者都填进答案单元格并**运行**，然后**运行**测量：它为 `DTYPES` 中的每种数据类型创建一个形状为 `SHAPE` 的张量，并读出其存储（storage）实际占用的字节数。
#
# **修改** `DTYPES` 和 `SHAPE`：加入 `torch.int8`、`torch.bool`、`torch.complex64`，并试一个三维的 `SHAPE`，例如 `(2, 3, 5)`。自检会用你测量的每一行来检验你的公式。

# %% tags=["answer"]
# YOUR ANSWER
MY_GUESS = None  # torch.randn(64, 784) 占用的字节数


def predicted_bytes(shape, dtype):
    """Bytes held by a tensor of `shape` and `dtype`, worked out without creating it."""
    return None  # 你的公式


# %% tags=["solution"]
MY_GUESS = 64 * 784 * 4  # 50,176 个 float32 元素，每个 4 字节


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
# SELF-CHECK：你的猜测和公式，与存储实际占用的字节数相比较。
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
# <details class="success"><summary>观察要点</summary>
#
# `torch.randn(64, 784)` 有 64 × 784 = 50 176 个 float32 元素，每个占 4 字节。形状本身从不为每个元素存储任何东西；每个元素的宽度只由数据类型决定（`dtype.itemsize`）：`torch.bool` 和 `torch.int8` 占一个字节，`torch.complex64` 占八个。第 7 层正是以这条规则为基础，预测整个训练步的内存。
#
# </details>

# %% [markdown]
# ## 练习 2 · 哪种数据类型胜出 <a id="type-promotion"></a>
#
# 当操作数的数据类型不同时，PyTorch 会把它们提升为一个共同的类型。**预测** `PAIRS` 中每个表达式结果的数据类型，写进 `PREDICTED`（例如 `torch.float32`），然后**运行**测量，它会逐一计算这些加法。
#
# **修改** `PAIRS`：加入 `int8` 张量加 Python `int`、`bool` 张量加 `float16` 张量、零维 `float64` 张量加 `float32` 张量，并同样在 `PREDICTED` 中为每一项写下预测：自检要求每一对都有预测。

# %% tags=["answer"]
# YOUR ANSWER：你预期每一对得到的数据类型
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
# SELF-CHECK：每个预测的数据类型，与求和结果实际的数据类型相比较。
require(PREDICTED={name: PREDICTED.get(name) for name in PAIRS})
for name in PAIRS:
    expect_type(f"PREDICTED[{name!r}]", PREDICTED[name], torch.dtype, "a dtype such as torch.float32 (written without quotes)")
wrong = [f"{name}: you said {PREDICTED[name]}, it is {dtype}" for name, dtype in results.items() if PREDICTED[name] != dtype]
expect(not wrong, "not what PyTorch did:\n  " + "\n  ".join(wrong))
print(f"self-check passed: all {len(results)} predictions right")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 同一类别的两个张量会提升为较宽的那个（`float16 + float32` 得到 `float32`）。Python 数字只决定*类别*：浮点数会把整数张量变成默认的浮点数据类型，但不会把 `float16` 张量扩宽为 `float64`；`int` 永远不会改变 `int8` 张量。零维张量在这里表现得像 Python 数字，所以零维的 `float64` 加上 `float32` 仍是 `float32`。`torch.result_type(a, b)` 不做任何计算就能回答这个问题。
#
# </details>

# %% [markdown]
# ## 练习 3 · `as_tensor` 何时不得不复制 <a id="numpy-sharing"></a>
#
# 第 1 层展示过：`torch.from_numpy` 与 NumPy 数组共享内存，而 `torch.tensor` 会复制一份。`torch.as_tensor` 则是*能共享时*才共享。`CONVERSIONS` 中的转换都作用于同一个 float32 数组 `big`；对每一种转换，**预测**得到的张量是与数组共享内存（`True`），还是持有一份副本（`False`），然后**运行**测量：它向 NumPy 询问两块内存是否重叠，并在数组逐渐变大时为每种转换计时，作为第二位证人：复制的耗时与字节数成正比，共享的张量则不然。
#
# **修改** `ROWS` 为 `[10, 1_000]`，运行测量和检查；再改为 `[10, 1_000, 1_000_000]`，重新运行。哪些时间随行数增长？

# %% tags=["answer"]
# YOUR ANSWER：张量与数组共享内存填 True，是副本填 False
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
    "torch.as_tensor(big, dtype=torch.float64)": False,  # 新的数据类型，新的字节数
    "torch.as_tensor(big.T)": True,  # 张量沿用 NumPy 的步长
    "torch.as_tensor(big[:, ::2])": True,  # 正的步进也只是一种步长
    "torch.as_tensor(big.view(np.int32))": True,  # NumPy 重新解释了这些字节；torch 直接包装它们
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
# SELF-CHECK：你的答案与 NumPy 的共享内存检测相比较；耗时也吻合：共享时不变，复制时增长。
require(SHARES={name: SHARES.get(name) for name in CONVERSIONS})
for name in CONVERSIONS:
    expect_type(f"SHARES[{name!r}]", SHARES[name], bool, "True or False (without quotes)")
for name, really in shares.items():
    verb = "shares the array's memory" if really else "holds a copy"
    expect(SHARES[name] == really, f"{name}: you said {SHARES[name]}, but it {verb} (np.shares_memory says {really})")
small, large = min(ROWS), max(ROWS)
big_enough = large * 64 * 4 >= 2**22 and large >= 100 * small  # 至少 4 MiB，对比它的百分之一
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
# <details class="success"><summary>观察要点</summary>
#
# 只要张量能原样描述这个数组，`torch.as_tensor` 就会直接包装数组的缓冲区：数据类型是数组自己的（哪怕是 NumPy 原地重新解释过的，比如 `view(np.int32)`），步长（stride）可以是任意正数，因此转置过或带步进的数组，会变成同一批字节之上转置过或带步进的张量，在任何规模下耗时都相同。要求换一种数据类型就需要新的字节：这种转换会复制，一旦复制的开销超过调用本身的固定开销，它的耗时就随行数增长。张量根本无法描述的情形，例如负步长（第 1 层）或非本机字节序，会让 `as_tensor` 直接报错，而不是背着你偷偷复制。
#
# </details>

# %% [markdown]
# ## 练习 4 · 哪一行在花时间 <a id="line-by-line"></a>
#
# 当批次从 `SMALL` 行增长到 `LARGE` 行时，**预测**单页程序中哪些行会变慢、哪些不会：“变慢”填 `True`，“不变”填 `False`。然后**运行**测量：它在两种批次大小下为每一行计时（标签和优化器在计时之外准备好）。
#
# **修改** `LARGE` 为 `1024`，重新运行测量和检查。下面的各层会解释这些行为何不同。

# %% tags=["answer"]
# YOUR ANSWER：这一行的耗时随批量增长填 True，保持不变填 False
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
    # 两种大小轮流测量，各五轮：机器繁忙的时刻会让两者同样变慢，
    # 每种大小只保留最快的一轮。
    rounds = [(best_time(calls[SMALL][line], repeat=3), best_time(calls[LARGE][line], repeat=3)) for _ in range(5)]
    per_line[SMALL][line] = min(small for small, _ in rounds)
    per_line[LARGE][line] = min(large for _, large in rounds)

growth = {line: per_line[LARGE][line] / per_line[SMALL][line] for line in per_line[SMALL]}
print(f"{'line':<36} {f'batch {SMALL}':>12} {f'batch {LARGE}':>12} {'growth':>8}")
for line in growth:
    print(f"{line:<36} {per_line[SMALL][line] * 1e6:>10.1f}µs {per_line[LARGE][line] * 1e6:>10.1f}µs {growth[line]:>7.1f}x")

# %%
# SELF-CHECK：一行的耗时在较大批量下超过两倍，就算“增长”。
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
# <details class="success"><summary>观察要点</summary>
#
# 批次为 64 时，每一行都花不了多少时间，其中很大一部分是进入 C++ 的固定开销（第 3 层）。行数增多后，创建 `x`、前向传播和反向传播的耗时随数据增长，而构建 `nn.Linear` 和 `optimizer.step()` 只取决于那 7 850 个参数，保持不变。由哪个内核来干活（第 6 层）以及它搬运多少字节（第 7 层），决定了这些与数据相关的行增长得有多陡。
#
# </details>
