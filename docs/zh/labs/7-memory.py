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
# # 实验 7 · 内存
#
# ## 目标 <a id="goal"></a>
#
# 张量是存储（storage）之上的一个视图：一块字节，加上说明每个元素位于何处的形状、步长（stride）和偏移量。在这个实验里，你将根据步长算出元素的地址，凭存储和开销分辨视图与副本，看看 `view` 何时拒绝、`reshape` 何时复制，然后预测并测量一个训练步的内存。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一格。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会指出它应该是什么类型）。`best_time` 返回函数单次调用的秒数（十五个短批次中最快的那个）；`same_storage` 判断两个张量是否共享同一块字节。本实验让 PyTorch 只用一个 CPU 线程运行，这样其他程序共享这台机器时计时仍然稳定。

# %%
import itertools
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # 单线程：繁忙的机器上计时更稳定（实验 8 会测量线程）


def same_storage(a, b):
    """True when `a` and `b` are windows onto the same block of bytes."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


print(f"torch {torch.__version__}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 步长就是地址公式 <a id="strides"></a>
#
# 张量的元素 `[i, j]` 位于存储中的 `offset + i·stride[0] + j·stride[1]` 处。测量会打印同一个 4 × 6 张量的几个视图的形状、步长和偏移量。**预测**每个视图的步长（一个元组，每个维度一个数），然后**运行**。
#
# **修改** `VIEWS`：加入 `base[::2, 1::3]`、`base.t()[1:]` 和 `base.unsqueeze(0).expand(3, 4, 6)`，也对它们做出预测；扩展出来的维度，步长会出人意料。

# %% tags=["answer"]
# YOUR ANSWER：每个视图的步长，写成元组
PREDICTED_STRIDES = {"base": None, "base.t()": None, "base[1:, ::2]": None, "base[2]": None}

# %% tags=["solution"]
PREDICTED_STRIDES = {"base": (6, 1), "base.t()": (1, 6), "base[1:, ::2]": (6, 2), "base[2]": (1,)}

# %%
base = torch.arange(24.0).reshape(4, 6)
VIEWS = {
    "base": base,
    "base.t()": base.t(),
    "base[1:, ::2]": base[1:, ::2],
    "base[2]": base[2],
}
for name, v in VIEWS.items():
    print(f"{name:<16} shape {tuple(v.shape)!s:<10} stride {v.stride()!s:<9} offset {v.storage_offset()}")

# %%
# SELF-CHECK：你的步长与 PyTorch 的相比较；并且步长公式能找到每个视图的每个元素。
require(PREDICTED_STRIDES={name: PREDICTED_STRIDES.get(name) for name in VIEWS})
for name in VIEWS:
    stride = PREDICTED_STRIDES[name]
    expect_type(f"PREDICTED_STRIDES[{name!r}]", stride, (tuple, list), "a tuple of ints, one per dimension, such as (6, 1) or (1,)")
    for number in stride:
        expect_type(f"each number in PREDICTED_STRIDES[{name!r}]", number, numbers.Integral, "an int")
flat = base.flatten()  # base 是连续的：它的存储顺序就是这个展平后的顺序
for name, v in VIEWS.items():
    expect(tuple(PREDICTED_STRIDES[name]) == v.stride(), f"{name}: the stride is {v.stride()}, not {PREDICTED_STRIDES[name]}")
    for index in itertools.product(*(range(size) for size in v.shape)):
        position = v.storage_offset() + sum(i * s for i, s in zip(index, v.stride()))
        expect(flat[position] == v[index], f"{name}{list(index)}: the stride formula should find it")
print(f"self-check passed: all {len(VIEWS)} strides predicted; offset + sum(index x stride) finds every element")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# `base[::2, 1::3]` 的步长是 `(12, 3)`，偏移量为 1；`base.t()[1:]` 的步长是 `(1, 6)`，偏移量为 1；`expand` 给新维度的步长是 **0**，所以三份“副本”其实是同一批字节被读了三遍。转置、切片和扩展从不搬动数据：它们只写入新的元数据。
#
# </details>

# %% [markdown]
# ## 练习 2 · 视图不花钱，副本要花钱 <a id="view-vs-copy"></a>
#
# 第 7 层比较了转置（视图）与 `clone()`（副本）的耗时。`OPS` 里的操作就没那么一目了然了：取对角线、转置之前和之后的 `flatten()`，以及用布尔掩码选取元素。测量在边长逐渐增大的方阵上运行每个操作，给它计时，并检查结果是否与输入共享存储。**预测**哪些返回视图（`True`）、哪些返回副本（`False`），然后**运行**。
#
# **修改** `OPS`：加入 `x[::2].flatten()` 和 `x.unsqueeze(0).expand(4, -1, -1)`，也对它们做出预测。

# %% tags=["answer"]
# YOUR ANSWER：视图（共享存储）填 True，副本填 False
IS_VIEW = {"x.diagonal()": None, "x.flatten()": None, "x.t().flatten()": None, "x[x > 0]": None}

# %% tags=["solution"]
IS_VIEW = {"x.diagonal()": True, "x.flatten()": True, "x.t().flatten()": False, "x[x > 0]": False}

# %%
SIDES = [64, 256, 1024]
OPS = {
    "x.diagonal()": lambda x: x.diagonal(),
    "x.flatten()": lambda x: x.flatten(),
    "x.t().flatten()": lambda x: x.t().flatten(),
    "x[x > 0]": lambda x: x[x > 0],
}
times = {name: {} for name in OPS}
shares = {}
with CoreShare() as views_core:  # 计时得到了多少核心
    for _ in range(2):  # 两轮交替进行，这样繁忙的时刻不会只影响一种大小
        for side in SIDES:
            x = torch.randn(side, side)
            for name, op in OPS.items():
                times[name][side] = min(best_time(lambda: op(x)), times[name].get(side, float("inf")))
                shares[name] = same_storage(op(x), x)

print(f"{'':<34}" + "".join(f"{s:>10}²" for s in SIDES))
for name, row in times.items():
    print(f"{name:<34}" + "".join(f"{row[s] * 1e6:>9.2f}µs" for s in SIDES))

# %%
# SELF-CHECK：你的答案与存储相比较；视图的开销不随大小增长，复制的开销会增长。
# 增长倍数与 4x 相差不超过本次运行所得核心份额对应的倍数时，太接近而无法判定（繁忙的机器
# 会拉长计时），不予评分；复制的增长超出 4x 多少取决于缓存。
require(IS_VIEW={name: IS_VIEW.get(name) for name in OPS})
for name in OPS:
    expect_type(f"IS_VIEW[{name!r}]", IS_VIEW[name], bool, "True or False (without quotes)")
small, large = min(SIDES), max(SIDES)
for name, really in shares.items():
    expect(IS_VIEW[name] == really, f"{name}: you said view={IS_VIEW[name]}, but it {'shares' if really else 'does not share'} x's storage")
    growth = times[name][large] / times[name][small]
    if not really and (large / small) ** 2 < 100:
        continue  # 字节数增加太少，看不出复制的增长
    why = unclear(growth, 4, views_core, margin=1, what=f"{name}'s growth")
    if why:
        print(why)
    elif really:
        expect(growth < 4, f"{name} is a view, yet it took {growth:.1f}x longer at the larger size")
    else:
        expect(growth > 4, f"{name} copies {(large / small) ** 2:.0f}x more bytes, yet it took only {growth:.1f}x longer")
print("self-check passed: views cost metadata, copies cost bytes")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 对角线是一个视图，只有一个步长 `side + 1`：向下一步再向右一步。`flatten()` 就是 `reshape(-1)`：张量连续时得到视图，转置之后则得到副本，因为此时没有哪一个步长能按顺序走遍所有元素（练习 3）。布尔掩码选出的元素根本无法用步长描述，所以 `x[x > 0]` 总是复制，这里大约复制了一半的字节。`x[::2].flatten()` 同样会复制（隔一行取一行会留下空隙，单个步长跳不过去），而 `expand` 是一个视图，新维度的步长为 0。副本的耗时随元素个数增长，视图的则不会。
#
# </details>

# %% [markdown]
# ## 练习 3 · `view` 何时拒绝，`reshape` 何时复制 <a id="contiguous"></a>
#
# `view` 只是重新解释现有的字节，因此当新形状无法用作用在这些字节上的步长来表达时，它就会失败。`reshape` 能返回视图时就返回视图，不得不复制时才复制。**预测** `x.t().view(-1)` 是否失败，以及每个 `reshape(-1)` 是否与 `x` 共享存储，然后**运行**测量。
#
# 把 `SHAPE` **改为** `(4, 1)`，再预测一次。转置后的一列就是一行：它是连续的吗？

# %% tags=["answer"]
# YOUR ANSWER
VIEW_FAILS = None  # x.t().view(-1) 报错则填 True
RESHAPE_SHARES = {"x.reshape(-1)": None, "x.t().reshape(-1)": None}  # 与 x 共享存储则填 True

# %% tags=["solution"]
VIEW_FAILS = True  # 没有哪个单一的步长能按顺序走遍转置后的元素
RESHAPE_SHARES = {"x.reshape(-1)": True, "x.t().reshape(-1)": False}

# %%
SHAPE = (4, 6)
x = torch.arange(float(torch.Size(SHAPE).numel())).reshape(SHAPE)
xt = x.t()
print(f"x contiguous: {x.is_contiguous()}, x.t() contiguous: {xt.is_contiguous()}")
try:
    xt.view(-1)
    view_error = None
except RuntimeError as error:
    view_error = str(error)
print("x.t().view(-1):", (view_error or "worked").split("(")[0])
reshaped = {"x.reshape(-1)": x.reshape(-1), "x.t().reshape(-1)": xt.reshape(-1)}
for name, flat in reshaped.items():
    print(f"{name} shares storage: {same_storage(flat, x)}")

# %%
# SELF-CHECK：你的答案与 view 和 reshape 的实际行为相比较；reshape 恰好在 view 失败时复制。
require(VIEW_FAILS=VIEW_FAILS, RESHAPE_SHARES={name: RESHAPE_SHARES.get(name) for name in reshaped})
expect_type("VIEW_FAILS", VIEW_FAILS, bool, "True or False (without quotes)")
for name in reshaped:
    expect_type(f"RESHAPE_SHARES[{name!r}]", RESHAPE_SHARES[name], bool, "True or False (without quotes)")
failed = view_error is not None
expect(VIEW_FAILS == failed, f"x.t().view(-1) {'raised' if failed else 'worked'} for SHAPE {SHAPE}: x.t() is {'not ' * (not xt.is_contiguous())}contiguous")
for name, flat in reshaped.items():
    really = same_storage(flat, x)
    expect(RESHAPE_SHARES[name] == really, f"{name}: you said shares={RESHAPE_SHARES[name]}, it {'shares' if really else 'copies'}")
expect(same_storage(reshaped["x.t().reshape(-1)"], x) != failed, "reshape should copy exactly when view fails")
print("self-check passed: contiguity decides view or copy")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 把 4 × 6 张量的 `x.t()` 展平，需要元素按 0, 6, 12, 18, 1, 7, ... 的顺序排列，没有哪一个步长能描述这种顺序，所以 `view` 报错，而 `reshape` 悄悄分配了一个新张量。这种无声的复制，正是在 `permute` 或 `transpose` 之后调用 `reshape` 时常见的隐藏开销；`.contiguous()` 则把同样的复制明明白白地写出来。当 `SHAPE = (4, 1)` 时，转置得到一个 1 × 4 的行，其元素本来就是按顺序排列的（大小为 1 的维度从不需要步长），所以它是连续的：`view` 能成功，`reshape` 也与 `x` 共享存储。
#
# </details>

# %% [markdown]
# ## 练习 4 · 先预测、再测量一个训练步的内存 <a id="training-step-memory"></a>
#
# 用 Adam 做的一个训练步持有四类张量：**参数**、它们的**梯度**、优化器的**状态**（每个参数两个矩，外加每个参数张量一个步数计数器），以及前向传播为反向传播保存的**激活值**。**预测**后两行，写成 `BATCH` 和 `HIDDEN` 的公式（单位为字节；float32 每个数 4 字节，目标是 int64，而且无论批大小是多少，损失都会为它的反向计算保存一个 float32 数），然后**运行**测量：它把真实张量的字节加起来。（实验 5 测量过前向传播保存了什么。）
#
# **修改** `BATCH` 和 `HIDDEN`。哪些行随批大小增长，哪些随模型增长？

# %% tags=["answer"]
# YOUR ANSWER
def predicted_step_bytes(batch, hidden):
    """Bytes of each line of one Adam step for the 784 -> hidden -> 10 model."""
    n_params = 784 * hidden + hidden + hidden * 10 + 10
    return {
        "parameters": 4 * n_params,
        "gradients": 4 * n_params,
        "optimizer state": None,  # 你的公式
        "activations": None,  # 你的公式（不计计算图保存的参数）
    }


# %% tags=["solution"]
def predicted_step_bytes(batch, hidden):
    """Bytes of each line of one Adam step for the 784 -> hidden -> 10 model."""
    n_params = 784 * hidden + hidden + hidden * 10 + 10
    return {
        "parameters": 4 * n_params,
        "gradients": 4 * n_params,
        "optimizer state": 2 * 4 * n_params + 4 * 4,  # exp_avg、exp_avg_sq；每个张量一个 float32 的 step
        "activations": 4 * batch * (784 + hidden + 10) + 8 * batch + 4,  # 输入、ReLU 输出、log-probs、targets；以及损失的总权重
    }


# %%
BATCH, HIDDEN = 64, 256
model = torch.nn.Sequential(torch.nn.Linear(784, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))
optimizer = torch.optim.Adam(model.parameters())
inputs, targets = torch.randn(BATCH, 784), torch.randint(0, 10, (BATCH,))

saved = {}


def pack(t):
    saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    loss = torch.nn.functional.cross_entropy(model(inputs), targets)
param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
loss.backward()
optimizer.step()

measured = {
    "parameters": sum(p.untyped_storage().nbytes() for p in model.parameters()),
    "gradients": sum(p.grad.untyped_storage().nbytes() for p in model.parameters()),
    "optimizer state": sum(t.untyped_storage().nbytes() for state in optimizer.state.values() for t in state.values()),
    "activations": sum(n for ptr, n in saved.items() if ptr not in param_ptrs),
}
for line, nbytes in measured.items():
    print(f"{line:<16} measured {nbytes:>11,} B")
print(f"{'total':<16} measured {sum(measured.values()):>11,} B")

# %% [markdown]
# *仅限 GPU*：在 CUDA 机器上，这个单元格还会借助缓存分配器测量这个训练步。在 CPU 上会跳过。

# %%
if torch.cuda.is_available():
    gpu_model = model.cuda()
    gpu_opt = torch.optim.Adam(gpu_model.parameters())
    torch.cuda.reset_peak_memory_stats()
    torch.nn.functional.cross_entropy(gpu_model(inputs.cuda()), targets.cuda()).backward()
    gpu_opt.step()
    print(f"CUDA peak allocated during the step: {torch.cuda.max_memory_allocated():,} B")
else:
    print("no CUDA device: the allocator's view is skipped")

# %%
# SELF-CHECK：你预测的每一行与真实张量的字节数相比较。
predicted = predicted_step_bytes(BATCH, HIDDEN)
require(predicted_step_bytes=predicted)
call = f"predicted_step_bytes({BATCH}, {HIDDEN})"
expect_type(call, predicted, dict, "a dict of bytes by line, as the answer cell returns")
require(**{call: {line: predicted.get(line) for line in measured}})
for line in measured:
    expect_type(f"{call}[{line!r}]", predicted[line], numbers.Real, "a number of bytes")
for line, nbytes in measured.items():
    expect(predicted[line] == nbytes, f"{line}: the step holds {nbytes:,} bytes, your formula gives {predicted[line]:,}")
print(f"self-check passed: you predicted all {sum(measured.values()):,} bytes of the step")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 无论批大小是多少，参数、梯度和 Adam 的两个矩合起来都是模型大小的四份。激活值随批大小增长：输入（为第一个网络层的权重梯度而保留）、经过 ReLU 之后的隐藏网络层输出（同一个张量，ReLU 为自己的反向计算保存它，第二个网络层为计算权重梯度也保存它）、对数概率和整数目标。`+ 4` 是唯一不随批大小增长的激活值：损失的*总权重*，一个 float32 标量，存放求平均时所除的目标个数，损失的反向计算会再除一次。ReLU 之前的值不会被保留：ReLU 的反向计算只需要知道输出在哪些位置为正。对于小模型、大批次，激活值占大头；对于大模型，则是“四份模型大小”这条规则说了算。在 GPU 上，缓存分配器的峰值还要加上反向传播的临时缓冲区，以及按其块大小取整多出来的部分。
#
# </details>
