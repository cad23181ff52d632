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
# # 实验 5 · 自动求导：计算图
#
# ## 目标 <a id="goal"></a>
#
# 前向传播运行时，自动求导会记录一张图：每个可微操作对应一个节点，每个节点都存着反向传播时要用到的张量。在这个实验里，你将沿着这张图走一遍，掂量它保存了多少数据，在多个微批次上累积梯度，关闭记录，并观察保护这些已保存张量的版本计数器。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一格。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会指出它应该是什么类型）。`saved_bytes` 运行一个函数，同时统计自动求导为反向传播保存的字节数（每块不同的存储（storage）只计一次）。

# %%
import numbers

import torch

torch.manual_seed(0)


def saved_bytes(fn):
    """Run `fn()` and return (its result, bytes of distinct storages saved for backward)."""
    storages = {}

    def pack(t):
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    return result, sum(storages.values())


def one_page_model(batch, hidden=None):
    """The one-page program's data and model; `hidden` inserts a ReLU hidden layer."""
    x = torch.randn(batch, 784)
    y = torch.randint(0, 10, (batch,))
    if hidden is None:
        model = torch.nn.Linear(784, 10)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    return x, y, model


print(f"torch {torch.__version__}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 谁会得到叶子 <a id="walk-the-graph"></a>
#
# 第 5 层从 `loss.grad_fn` 出发，经由 `next_functions` 一路走到写入 `.grad` 的 `AccumulateGrad` 叶子，遍历了单页程序的计算图。你也许从中猜出了一条规则：“每个参数一个叶子”。`MODELS` 里的模型偏偏让这条规则走了样：一个模型把*同一个*方阵网络层用了两次，另一个冻结了第一个网络层（`requires_grad_(False)`）。**预测**每个模型的计算图里有多少个 `AccumulateGrad` 叶子，然后**运行**测量，它会遍历每一张图。
#
# 把 `X_REQUIRES_GRAD` **改为** `True`（输入也要求梯度，就像计算显著图时那样），再预测一次。

# %% tags=["answer"]
# YOUR ANSWER：每个模型的计算图中 AccumulateGrad 节点的个数
PREDICTED_LEAVES = {"one layer": None, "a square layer used twice": None, "first layer frozen": None}

# %% tags=["solution"]
PREDICTED_LEAVES = {"one layer": 2, "a square layer used twice": 4, "first layer frozen": 2}  # 每个需要梯度的张量算一个

# %%
X_REQUIRES_GRAD = False

square = torch.nn.Linear(784, 784)
MODELS = {
    "one layer": torch.nn.Linear(784, 10),
    "a square layer used twice": torch.nn.Sequential(square, torch.nn.ReLU(), square, torch.nn.ReLU(), torch.nn.Linear(784, 10)),
    "first layer frozen": torch.nn.Sequential(torch.nn.Linear(784, 32).requires_grad_(False), torch.nn.ReLU(), torch.nn.Linear(32, 10)),
}


def leaves_of(node, seen):
    """The tensors behind the AccumulateGrad nodes reachable from `node`, each node visited once."""
    if node is None or node in seen:
        return []
    seen.add(node)
    found = [node.variable] if type(node).__name__ == "AccumulateGrad" else []
    for child, _ in node.next_functions:
        found += leaves_of(child, seen)
    return found


x, y = torch.randn(64, 784).requires_grad_(X_REQUIRES_GRAD), torch.randint(0, 10, (64,))
leaves, wanted = {}, {}
for name, model in MODELS.items():
    seen = set()
    leaves[name] = leaves_of(torch.nn.functional.cross_entropy(model(x), y).grad_fn, seen)
    wanted[name] = [p for p in model.parameters() if p.requires_grad] + ([x] if X_REQUIRES_GRAD else [])
    print(f"{name:<26} {len(seen):>3} nodes, {len(leaves[name])} AccumulateGrad leaves: "
          + ", ".join(str(tuple(t.shape)) for t in leaves[name]))

# %%
# SELF-CHECK：你的个数与计算图相比较；叶子张量恰好是那些需要梯度的张量。
require(PREDICTED_LEAVES={name: PREDICTED_LEAVES.get(name) for name in MODELS})
for name in MODELS:
    expect_type(f"PREDICTED_LEAVES[{name!r}]", PREDICTED_LEAVES[name], numbers.Real, "a number of leaves (such as 3)")
for name, found in leaves.items():
    expect(PREDICTED_LEAVES[name] == len(found), f"{name}: the graph has {len(found)} AccumulateGrad leaves, not {PREDICTED_LEAVES[name]}")
    expect({id(t) for t in found} == {id(t) for t in wanted[name]}, f"{name}: the leaves should be the tensors that require grad")
print("self-check passed: " + ", ".join(f"{name} {len(found)}" for name, found in leaves.items()))

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 叶子属于一个要求梯度的*张量*，而不属于对它的某一次使用：用了两次的方阵网络层，权重和偏置各有一个 `AccumulateGrad`，用到它们的两个 `AddmmBackward0` 节点都会连到这里，所以它的梯度是两次使用之和。冻结的网络层一个叶子也没有：不需要梯度的张量什么都不会被记录。要求梯度的输入和任何参数一样也是叶子，于是每张图都多出一个；此时 `x.grad` 存放的是相对于输入的梯度。
#
# </details>

# %% [markdown]
# ## 练习 2 · 计算图让什么一直活着 <a id="saved-tensors"></a>
#
# 每个节点都保存它的反向计算所需的东西。测量针对几个批大小统计前向传播保存的字节数，并算出每多一个样本多出的开销，分别针对只有一个网络层的模型（`None`）和带一个宽为 256 的 ReLU 隐藏网络层的模型。**预测**每个样本的开销，写成 `hidden` 的公式（float32 占 4 字节，整数目标是 int64），然后**运行**。
#
# **修改** `HIDDENS`，加上 `128` 和 `1024`：你的公式必须对每个宽度都成立。

# %% tags=["answer"]
# YOUR ANSWER
def predicted_per_example(hidden):
    """Bytes saved for backward per example; `hidden` is None for the one-layer model."""
    return None  # 你的公式


# %% tags=["solution"]
def predicted_per_example(hidden):
    """Bytes saved for backward per example; `hidden` is None for the one-layer model."""
    input_row, log_probs, target = 4 * 784, 4 * 10, 8
    relu_output = 0 if hidden is None else 4 * hidden  # 一个张量，由 ReLU 和第二个网络层共用
    return input_row + relu_output + log_probs + target


# %%
BATCHES = [64, 128, 256]
HIDDENS = [None, 256]

per_example = {}
for hidden in HIDDENS:
    saved = {}
    for batch in BATCHES:
        x, y, model = one_page_model(batch, hidden)
        _, saved[batch] = saved_bytes(lambda: torch.nn.functional.cross_entropy(model(x), y))
    steps = {(saved[b2] - saved[b1]) / (b2 - b1) for b1, b2 in zip(BATCHES, BATCHES[1:])}
    per_example[hidden] = steps.pop() if len(steps) == 1 else None
    print(f"hidden {hidden!s:>5}: " + ", ".join(f"batch {b} saves {n:,} B" for b, n in saved.items()))
    print(f"              one more example saves {per_example[hidden]} bytes")

# %%
# SELF-CHECK：对你试过的每个宽度，你的公式与实测的每个样本字节数相比较。
require(predicted_per_example=predicted_per_example(None))
for hidden in per_example:
    expect_type(f"predicted_per_example({hidden})", predicted_per_example(hidden), numbers.Real, "a number of bytes")
for hidden, measured in per_example.items():
    expect(measured is not None, "the saved bytes should grow by the same amount for every added example")
    guess = predicted_per_example(hidden)
    expect(guess == measured, f"hidden={hidden}: each example saves {measured:,.0f} bytes, your formula gives {guess}")
print(f"self-check passed: your formula is right for hidden = {', '.join(map(str, HIDDENS))}")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 保存的字节数是一条直线：一个固定部分，加上每个样本不变的开销。对只有一个网络层的模型，每个样本保存它的 784 个输入浮点数（由 `addmm` 保留，用来计算权重梯度）、10 个对数概率（由 log-softmax 保留）和它的 int64 目标（由损失保留）。权重不会被保存：`x` 不要求梯度，因此不会计算相对于 `x` 的梯度，也就用不到权重。隐藏网络层让每个样本**只多出一个** float32 张量的数据，即 ReLU 的输出：ReLU 保留它，以便知道输出在哪些位置为正；第二个网络层为计算权重梯度也保留同一个张量，所以它只计一次。ReLU 之前的值不会被保留。这就是第 7 层内存预算里“激活值”那一行。
#
# </details>

# %% [markdown]
# ## 练习 3 · 梯度会累加：微批次 <a id="micro-batches"></a>
#
# 第 5 层展示过，第二次 `backward()` 会把梯度*加*到 `.grad` 上。内存放不下的大批次正是这样分块训练的：在每个微批次上运行前向和反向，最后只更新一步。测量先在 64 个样本的批次上一次性算出只有一个网络层的模型的权重梯度，再把同样这 64 个样本分成 `MICRO_BATCHES` 个等大的微批次累积计算，中间不调用 `zero_grad()`。**预测**累积梯度的范数是完整批次梯度范数的几倍（损失是对其样本取的*平均值*），然后**运行**。
#
# 把 `SCALE_LOSS` **改为** `True`（每个微批次的损失在反向之前先除以 `MICRO_BATCHES`），再预测一次；然后把 `SCALE_LOSS` 改回 `False`，把 `MICRO_BATCHES` 改为 `2`，再预测一次。

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_MULTIPLE = None  # |累积梯度| / |整批梯度|

# %% tags=["solution"]
PREDICTED_MULTIPLE = 4  # 每个微批次的平均梯度与整批梯度大小相同；四个相加


# %%
MICRO_BATCHES = 4
SCALE_LOSS = False

x, y, model = one_page_model(64)
torch.nn.functional.cross_entropy(model(x), y).backward()
full = model.weight.grad.clone()

model.zero_grad()
for xs, ys in zip(x.chunk(MICRO_BATCHES), y.chunk(MICRO_BATCHES)):
    loss = torch.nn.functional.cross_entropy(model(xs), ys)
    (loss / MICRO_BATCHES if SCALE_LOSS else loss).backward()  # 没有 zero_grad：.grad 会累积
accumulated = model.weight.grad.clone()
multiple = (accumulated.norm() / full.norm()).item()
# 累积梯度与整批梯度的那个倍数相差多远，相对于它自身的大小：
# 仅 float32 舍入误差大约留下 1e-7，而指向别处的梯度会留下大得多的差。
off = ((accumulated - multiple * full).norm() / accumulated.norm()).item()
print(f"|grad| of the full batch {full.norm():.4f}, accumulated over {MICRO_BATCHES} micro-batches "
      f"{accumulated.norm():.4f}: {multiple:.3f} times; off that multiple by {off:.1e} of its size")

# %%
# SELF-CHECK：你的倍数与实测值相差在 1 % 以内；并且累积梯度就是整批梯度的那个倍数，
# 误差不超过 float32 舍入（相对于梯度的大小）。
require(PREDICTED_MULTIPLE=PREDICTED_MULTIPLE)
expect_type("PREDICTED_MULTIPLE", PREDICTED_MULTIPLE, numbers.Real, "a number (such as 0.5)")
expect(
    abs(PREDICTED_MULTIPLE - multiple) <= 0.01 * multiple,
    f"the accumulated gradient's norm is {multiple:.3f} times the full batch's, not {PREDICTED_MULTIPLE}",
)
expect(off < 1e-4, f"the accumulated gradient should point the same way as the full batch's: it is off by {off:.1e} of its size")
print(f"self-check passed: accumulating gives {multiple:.3f} times the full batch's gradient")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 每个微批次的损失是对它自己那些样本取的平均，所以它的梯度和完整批次的梯度一样大；`AccumulateGrad` 把它们加起来，`MICRO_BATCHES` 个微批次就得到完整批次梯度的 `MICRO_BATCHES` 倍，方向相同。把每个损失除以微批次的个数，就把求和变回了求平均：倍数为 1，这一步与完整批次会走的那一步相同，而每次前向传播只让一个微批次的激活值留在内存里（练习 2）。忘了这次除法，就等于把学习率乘上了微批次的个数。
#
# </details>

# %% [markdown]
# ## 练习 4 · 关闭记录 <a id="no-grad"></a>
#
# 做评估时不需要计算图。测量分别在开启记录、`torch.no_grad()` 和 `torch.inference_mode()` 下运行同一个有两个网络层的模型的前向传播，并统计每种情况保存了多少字节。**预测**每种情况保存的字节数，写成 `BATCH` 和 `HIDDEN` 的公式（回顾练习 2；另有两个张量是每个模型保存一次，而不是每个样本一次：一个和某个权重一样大，另一个是单个 float32 数），然后**运行**。
#
# **修改** `BATCH` 和 `HIDDEN`：你的公式必须依然成立。

# %% tags=["answer"]
# YOUR ANSWER
def predicted_saved(batch, hidden):
    """Bytes saved for backward by one forward pass, in each mode."""
    return {"recording": None, "no_grad": None, "inference_mode": None}  # 你的公式


# %% tags=["solution"]
def predicted_saved(batch, hidden):
    """Bytes saved for backward by one forward pass, in each mode."""
    per_example = 4 * (784 + hidden + 10) + 8  # 练习 2
    second_weight = 4 * 10 * hidden  # 第二个网络层的输入需要梯度，所以它的权重会被保存
    loss_scalar = 4  # 损失的总权重，一个 float32 标量
    return {"recording": batch * per_example + second_weight + loss_scalar, "no_grad": 0, "inference_mode": 0}


# %%
BATCH, HIDDEN = 256, 128
x, y, model = one_page_model(BATCH, HIDDEN)


def forward():
    return torch.nn.functional.cross_entropy(model(x), y)


modes = {}
modes["recording"] = saved_bytes(forward)
with torch.no_grad():
    modes["no_grad"] = saved_bytes(forward)
with torch.inference_mode():
    modes["inference_mode"] = saved_bytes(forward)
for name, (out, nbytes) in modes.items():
    print(f"{name:<15} grad_fn={type(out.grad_fn).__name__:<18} saved {nbytes:>10,} bytes")

# %%
# SELF-CHECK：你的公式与统计的字节数相比较；关闭记录时不会有计算图。
require(predicted_saved=predicted_saved(BATCH, HIDDEN))
guess = predicted_saved(BATCH, HIDDEN)
call = f"predicted_saved({BATCH}, {HIDDEN})"
expect_type(call, guess, dict, 'a dict of bytes by mode: {"recording": ..., "no_grad": ..., "inference_mode": ...}')
require(**{call: {name: guess.get(name) for name in modes}})
for name in modes:
    expect_type(f"{call}[{name!r}]", guess[name], numbers.Real, "a number of bytes")
for name, (out, nbytes) in modes.items():
    expect(guess[name] == nbytes, f"{name}: {nbytes:,} bytes were saved, your formula gives {guess[name]:,}")
    expect((out.grad_fn is None) == (name != "recording"), f"{name}: a graph exactly when recording")
print("self-check passed: you can predict what a forward pass keeps alive")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 开启记录时，前向传播保存的激活值与批大小成正比，另外每个模型还保存两个张量。一个是第二个网络层的权重，第二个网络层的反向计算要用它把梯度继续传给隐藏网络层（第一个网络层的权重不会被保存，因为 `x` 不需要梯度）。另一个是 float32 标量，4 字节：损失的*总权重*，即求平均时所除的目标个数，损失的反向计算会再除一次。在 `no_grad` 或 `inference_mode` 下，无论批大小是多少，都什么也不保存，结果也没有 `grad_fn`。`inference_mode` 走得更远：它产生的张量根本不带自动求导的分发键（dispatch key，见实验 4），因此完全绕过自动求导，但它们以后再也不能用在计算图里。
#
# </details>

# %% [markdown]
# ## 练习 5 · 版本计数器 <a id="version-counters"></a>
#
# 第 5 层展示过：每次原地操作都会让张量的版本计数器（`t._version`）加一，而反向传播会拒绝使用版本已经变了的已保存张量。测量计算 `y = (a * a).sum()`，其中 `a = x * 2`，于是乘法保存了 `a`；接着从 `a` 得到三个张量——视图 `b = a[1:3]`、`c = a.detach()` 和副本 `d = a.clone()`——对 `c` 原地修改一次，对 `d` 原地修改三次，然后调用 `y.backward()`。**预测**最后每个张量的版本号，以及反向传播是否报错，然后**运行**。
#
# 把生成 `c` 的那一行**改为** `c = a.data`，再预测一次。

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_VERSIONS = {"a": None, "b": None, "c": None, "d": None}
BACKWARD_RAISES = None  # True 或 False

# %% tags=["solution"]
PREDICTED_VERSIONS = {"a": 1, "b": 1, "c": 1, "d": 3}  # a、它的视图和它的 detach() 共用一个计数器
BACKWARD_RAISES = True  # 保存下来的 a 版本为 1，而节点期望的是 0

# %%
x = torch.ones(4, requires_grad=True)
a = x * 2
y = (a * a).sum()  # MulBackward0 保存 a，记下它此刻的版本
b = a[1:3]  # a 的一个视图
c = a.detach()
d = a.clone()  # a 的一个副本
c.add_(1)
d.mul_(3)
d[0] = 7
d += 1
versions = {name: t._version for name, t in {"a": a, "b": b, "c": c, "d": d}.items()}
try:
    y.backward()
    raised = None
except RuntimeError as error:
    raised = str(error).splitlines()[0]
print("versions:", versions)
if raised:
    print(f"backward raised: {raised[:120]}...")
else:
    print(f"backward ran: x.grad = {x.grad.tolist()}; the gradient of (2x)² summed is 8x = {(8 * x).tolist()}")

# %%
# SELF-CHECK：你的版本号与计数器相比较；你的答案与 backward 的实际行为相比较。
require(PREDICTED_VERSIONS={name: PREDICTED_VERSIONS.get(name) for name in versions}, BACKWARD_RAISES=BACKWARD_RAISES)
for name in versions:
    expect_type(f"PREDICTED_VERSIONS[{name!r}]", PREDICTED_VERSIONS[name], numbers.Real, "a version number (such as 2)")
expect_type("BACKWARD_RAISES", BACKWARD_RAISES, bool, "True or False (without quotes)")
for name, version in versions.items():
    expect(PREDICTED_VERSIONS[name] == version, f"{name}: its version is {version}, not {PREDICTED_VERSIONS[name]}")
expect(
    BACKWARD_RAISES == (raised is not None),
    f"backward {'raised' if raised else 'did not raise'}; you said BACKWARD_RAISES = {BACKWARD_RAISES}",
)
expect(raised is None or "modified by an inplace operation" in raised, f"backward raised another error: {raised}")
expect((raised is None) == (versions["a"] == 0), "backward raises exactly when the saved tensor's version moved")
print(f"self-check passed: versions {versions}, backward {'raised' if raised else 'ran'}")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 计数器属于张量之间共享的数据，而不属于某个 Python 名字：`a`、它的视图 `b` 和 `c = a.detach()` 都能看到通过 `c` 做的那一次修改，而副本 `d` 自己数它的三次（`d[0] = 7` 和 `d += 1` 也是原地操作）。在版本 0 时保存了 `a` 的节点发现它已是版本 1，于是拒绝继续，这是对的：求导所需的值已经被覆盖了。若改用 `c = a.data`，修改经由一个拥有自己计数器的张量进行，`a` 仍停在版本 0，反向传播照常运行，梯度却是用改过的值算出来的——该是 8 的地方得到 12，而且悄无声息。这就是为什么要用 `detach()`（做更新时用 `torch.no_grad()`）取代 `.data`。
#
# </details>
