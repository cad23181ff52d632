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
# # 实验 4 · 分发器
#
# ## 目标 <a id="goal"></a>
#
# 在 Python 绑定之下，每次调用都会变成一个或多个*算子*（`aten::addmm`、`aten::nll_loss_forward` 等），由分发器（dispatcher）根据其参数的*分发键（dispatch key）*进行路由。在本实验中，你将读出这些键，记录单页程序调用的每一个算子，阅读一个算子的 schema，在 meta 设备上运行一个远远超出你内存容量的模型（在这个设备上，张量有形状却没有数据），并定义一个你自己的算子。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一部分。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会说明它应当是什么类型）。`keys` 把张量的分发键集合显示为易读的字符串。

# %%
import numbers
import time
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)


def keys(t):
    """The dispatch key set the dispatcher sees for tensor `t`."""
    return str(torch._C._dispatch_keys(t))


print(f"torch {torch.__version__}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 什么会让张量多出一个分发键 <a id="dispatch-keys"></a>
#
# 每个张量都带着一个*分发键*集合；分发器按顺序访问这些键所指向的内核。第 4 层打印了在设备、`requires_grad`、整数数据类型和推理模式上各有不同的张量的键集合。`TENSORS` 中的张量则在别的方面不同：稀疏布局、布尔和复数数据类型，以及一个通过 `conj()` 查看的复数张量。为每个张量**预测**它的键集合与普通 CPU 浮点张量的是否不同（`True`）或相同（`False`），然后**运行**测量，它会打印这些集合。
#
# **修改** `TENSORS`：加入 `torch.ones(3, dtype=torch.cfloat).conj().imag` 和 `torch.ones(3, dtype=torch.float16)`，并为它们写下预测。

# %% tags=["answer"]
# YOUR ANSWER：张量的分发键集合与普通 CPU 浮点张量的不同填 True，否则填 False
DIFFERS = {
    "sparse": None,
    "bool": None,
    "complex": None,
    "complex, conj()": None,
}

# %% tags=["solution"]
DIFFERS = {
    "sparse": True,
    "bool": False,
    "complex": False,
    "complex, conj()": True,
}

# %%
plain_keys = keys(torch.ones(3))
TENSORS = {
    "sparse": torch.ones(3).to_sparse(),
    "bool": torch.ones(3, dtype=torch.bool),
    "complex": torch.ones(3, dtype=torch.cfloat),
    "complex, conj()": torch.ones(3, dtype=torch.cfloat).conj(),
}
key_sets = {name: keys(t) for name, t in TENSORS.items()}
print(f"{'plain CPU float':<24} {plain_keys}")
for name, ks in key_sets.items():
    print(f"{name:<24} {ks}")

# %%
# SELF-CHECK：你的答案与分发器报告的分发键集合相比较。
require(DIFFERS={name: DIFFERS.get(name) for name in TENSORS})
for name in TENSORS:
    expect_type(f"DIFFERS[{name!r}]", DIFFERS[name], bool, "True or False (without quotes)")
for name, ks in key_sets.items():
    really = ks != plain_keys
    expect(DIFFERS[name] == really, f"{name}: you said differs={DIFFERS[name]}, but its keys are {ks}")
print(f"self-check passed: all {len(key_sets)} key sets predicted")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 一个键指的是分发器必须访问的*一类内核*，而不是张量的每一种属性。需要专属内核的布局会替换后端键（`SparseCPU`）。数据类型不是键：布尔、复数和半精度张量使用同样的 `CPU` 内核，由内核在内部按数据类型分支。对复数张量调用 `conj()` 不会复制任何东西：它返回一个带有 `Conjugate` 键标记的视图，遇到这个键的算子要么自己处理共轭，要么由这个键的回退内核先把共轭结果真正算出来。对这个视图取 `.imag` 也是同样的道理，用的是 `Negative` 键。
#
# </details>

# %% [markdown]
# ## 练习 2 · 单页程序的每一个算子 <a id="op-log"></a>
#
# `TorchDispatchMode` 位于自动求导*之下*：分发器运行每个算子时，它都能看到。测量分别记录前向传播、反向传播和优化器 step 的算子。**预测**每个阶段运行多少个算子（前向是两次 Python 调用，`linear` 和 `cross_entropy`；优化器把它的 step 夹在性能分析器的两个标记之间，模式也会把这两个标记记为算子），然后**运行**。
#
# **修改** `OPTIMIZER` 为 `torch.optim.Adam`，再预测一次 step 阶段。

# %% tags=["answer"]
# YOUR ANSWER：每个阶段分发的算子个数
PREDICTED_OPS = {"forward": None, "backward": None, "step": None}

# %% tags=["solution"]
PREDICTED_OPS = {
    "forward": 2 + 2,  # linear：权重的一个转置视图，然后是 addmm；cross_entropy：先 log-softmax，再算损失
    "backward": 1 + 4 + 4,  # 一个值为 1 的初始梯度，每个前向算子各一个反向算子，再加几个视图来整理结果的形状
    "step": 2 + 2,  # 每个参数（weight 和 bias）一个 add_，位于 profiler 的两个标记之间
}

# %%
class OpLog(TorchDispatchMode):
    """Record the name of every operator dispatched while active."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


OPTIMIZER = torch.optim.SGD
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = OPTIMIZER(model.parameters(), lr=0.1)

phases = {}
with OpLog() as log:
    loss = torch.nn.functional.cross_entropy(model(x), y)
phases["forward"] = log.ops
with OpLog() as log:
    loss.backward()
phases["backward"] = log.ops
with OpLog() as log:
    optimizer.step()
phases["step"] = log.ops

for phase, ops in phases.items():
    print(f"{phase} ({len(ops)} ops): {', '.join(ops)}")

# %%
# SELF-CHECK：每个预测的次数与记录到的算子数相差在 2 倍以内。
require(PREDICTED_OPS={phase: PREDICTED_OPS.get(phase) for phase in phases})
for phase in phases:
    expect_type(f"PREDICTED_OPS[{phase!r}]", PREDICTED_OPS[phase], numbers.Real, "a number of operators (such as 3)")
for phase, ops in phases.items():
    expect(within(PREDICTED_OPS[phase], len(ops), 2), f"{phase}: {len(ops)} operators ran, not about {PREDICTED_OPS[phase]}")
print("self-check passed: " + ", ".join(f"{phase} {len(ops)}" for phase, ops in phases.items()))

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 前向传播显示的是 `aten.t`（权重的一个视图）、`aten.addmm`（在一个内核里完成 input × weightᵀ + bias），然后是 `_log_softmax` 和 `nll_loss_forward`：`cross_entropy` 是两个算子，外加自动求导为它所保存的 log-softmax 输出做的一次 `detach`。反向传播按相反的顺序运行对应的反向算子，最后用 `mm` 和 `sum` 得到权重和偏置的梯度。SGD 的 step 是夹在性能分析器标记之间、每个参数一次的 `add_`；换成 Adam，每个参数会变成好几个算子（矩估计、平方根、除法）。
#
# </details>

# %% [markdown]
# ## 练习 3 · 算子、重载与 schema <a id="schemas"></a>
#
# 每个算子都有一个 *schema*（算子的类型声明）：它的名字、重载、参数类型，以及它可能修改什么（`Tensor(a!)` 标记算子会写入的参数）。**预测** `OPS` 中哪些重载会修改自己的某个参数，以及 `aten.add` 有多少个重载，然后**运行**测量。
#
# **修改** `OPS`：加入 `torch.ops.aten.view.default`（一个视图：在它的 schema 中找一找 (a)），并为它写下预测。

# %% tags=["answer"]
# YOUR ANSWER
MUTATES = {"aten.addmm.default": None, "aten.add.Tensor": None, "aten.add_.Tensor": None, "aten.add.out": None}
PREDICTED_OVERLOADS = None  # aten.add 有多少个重载

# %% tags=["solution"]
MUTATES = {"aten.addmm.default": False, "aten.add.Tensor": False, "aten.add_.Tensor": True, "aten.add.out": True}
PREDICTED_OVERLOADS = 10  # Tensor、Scalar、它们的 out= 形式，再加几个

# %%
OPS = [torch.ops.aten.addmm.default, torch.ops.aten.add.Tensor, torch.ops.aten.add_.Tensor, torch.ops.aten.add.out]

registered = torch._C._dispatch_get_all_op_names()
base_names = {name.split(".")[0] for name in registered}
namespaces = Counter(name.split("::")[0] for name in base_names)
print(f"{len(registered)} operator overloads, {len(base_names)} distinct operators")
print("by namespace:", dict(namespaces.most_common(5)))
mutates = {}
for op in OPS:
    mutates[str(op)] = any(arg.alias_info is not None and arg.alias_info.is_write for arg in op._schema.arguments)
    print(op._schema)
add_overloads = torch.ops.aten.add.overloads()
print(f"\naten.add has {len(add_overloads)} overloads: {', '.join(add_overloads)}")

# %%
# SELF-CHECK：你的答案与 schema 的写入标注相比较；重载个数相差在 2 倍以内。
require(MUTATES={name: MUTATES.get(name) for name in mutates}, PREDICTED_OVERLOADS=PREDICTED_OVERLOADS)
for name in mutates:
    expect_type(f"MUTATES[{name!r}]", MUTATES[name], bool, "True or False (without quotes)")
expect_type("PREDICTED_OVERLOADS", PREDICTED_OVERLOADS, numbers.Real, "a number of overloads (such as 3)")
for name, really in mutates.items():
    expect(MUTATES[name] == really, f"{name}: you said mutates={MUTATES[name]}; its schema says {really}")
expect(
    within(PREDICTED_OVERLOADS, len(add_overloads), 2), f"aten.add has {len(add_overloads)} overloads, not about {PREDICTED_OVERLOADS}"
)
print("self-check passed: you read the schemas right")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# ```python
# print(torch.ops.aten.add_.Tensor._schema)   # aten::add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)
# print(torch.ops.aten.view.default._schema)  # aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
# ```
#
# 这些标注是系统其余部分所依赖的契约：`(a!)` 表示算子会写入该参数，`(a)` 表示结果与它互为别名但不写入。自动求导、`torch.compile` 和函数化 pass 都从 schema 中读取这些信息，而不是靠猜。`aten.add` 为张量参数与标量参数的每种组合都提供了重载，有带 `out=` 的，也有不带的，还有供 TorchScript 中使用 Python 数字的重载。
#
# </details>

# %% [markdown]
# ## 练习 4 · 没有数据的形状：meta 设备 <a id="meta-device"></a>
#
# `meta` 设备上的张量有形状、数据类型和步长（stride），却没有存储（storage）。测量在 meta 设备上构建一个输入和输出都是 `FEATURES` 维的线性网络层，并运行一次前向传播和损失计算。**预测**它的 float32 参数如果是真实的，会占多少字节，写成 `FEATURES` 的公式，然后**运行**。
#
# **修改** `FEATURES` 为 `200_000`（权重达 160 GB）。这个单元格会变慢吗？

# %% tags=["answer"]
# YOUR ANSWER
def predicted_parameter_bytes(features):
    """Bytes of nn.Linear(features, features)'s float32 parameters."""
    return None  # 你的公式


# %% tags=["solution"]
def predicted_parameter_bytes(features):
    """Bytes of nn.Linear(features, features)'s float32 parameters."""
    return 4 * (features * features + features)  # weight 和 bias


# %%
FEATURES = 50_000

start = time.perf_counter()
big = torch.nn.Linear(FEATURES, FEATURES, device="meta")
inputs = torch.empty(8, FEATURES, device="meta")
out = big(inputs)
meta_loss = torch.nn.functional.cross_entropy(out, torch.zeros(8, dtype=torch.long, device="meta"))
elapsed = time.perf_counter() - start
print(f"output shape {tuple(out.shape)}, loss shape {tuple(meta_loss.shape)}, on {out.device}")
print(f"built and ran on meta in {elapsed * 1e3:.1f} ms")

# %%
# SELF-CHECK：你的公式与 meta 张量描述的字节数相比较（nbytes 不需要数据）。
require(predicted_parameter_bytes=predicted_parameter_bytes(FEATURES))
described = sum(p.nbytes for p in big.parameters())
guess = predicted_parameter_bytes(FEATURES)
expect_type(f"predicted_parameter_bytes({FEATURES})", guess, numbers.Real, "a number of bytes")
expect(guess == described, f"the parameters would take {described:,} bytes, not {guess:,}")
expect(out.shape == (8, FEATURES) and out.is_meta, "shape inference runs, data does not")
print(f"self-check passed: {described / 1e9:.1f} GB described, none allocated")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 时间并不随 `FEATURES` 增长：meta 内核只计算输出的形状、数据类型和步长（与每个真实内核最先运行的形状函数相同）。大模型正是这样在分配任何内存之前就完成规模估算和规划的，`torch.compile` 也正是这样在不执行计算的情况下追踪形状的。
#
# </details>

# %% [markdown]
# ## 练习 5 · 自定义算子 <a id="custom-op"></a>
#
# `torch.library.custom_op` 把一个 Python 函数变成分发器的算子，它由你编写的三个函数组成：内核（即函数本身，为 CPU 注册）、*fake* 内核（`register_fake`：只给出结果的形状、数据类型和设备，没有数据）以及导数（`register_autograd`）。测量定义了 `lab4::soft_clip`，统计三者中哪些会运行，并以五种方式调用它：作用于 CPU 张量、作用于 meta 张量、前向加反向，以及经由 `torch.compile` 调用两次（使用 `aot_eager` 后端，不需要 C++ 编译器）。为每次调用**预测**会运行的函数集合，从 `"kernel"`、`"fake"` 和 `"backward"` 中选取，然后**运行**。
#
# **修改** `SECOND_SHAPE` 为 `(5, 7)`（第二次编译调用会得到一个新形状的输入），再预测一次这次调用。

# %% tags=["answer"]
# YOUR ANSWER：每次调用所运行的函数集合，例如 {"kernel"}
RUNS = {
    "a CPU tensor": None,
    "a meta tensor": None,
    "forward and backward": None,
    "compiled, first call": None,
    "compiled, second call": None,
}

# %% tags=["solution"]
RUNS = {
    "a CPU tensor": {"kernel"},
    "a meta tensor": {"fake"},  # meta 张量没有数据：只有 fake 内核能运行
    "forward and backward": {"kernel", "backward"},
    "compiled, first call": {"fake", "kernel"},  # 先用 fake 张量追踪，然后由图运行内核
    "compiled, second call": {"kernel"},  # 形状相同：不会再追踪一次
}

# %%
SECOND_SHAPE = (3, 4)
calls = Counter()


@torch.library.custom_op("lab4::soft_clip", mutates_args=(), device_types="cpu")
def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    calls["kernel"] += 1
    return limit * torch.tanh(x / limit)


@soft_clip.register_fake
def _(x, limit):
    calls["fake"] += 1
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def backward(ctx, grad):
    calls["backward"] += 1
    (out,) = ctx.saved_tensors
    return grad * (1 - (out / ctx.limit) ** 2), None


soft_clip.register_autograd(backward, setup_context=setup_context)
# 再次运行时，这个单元格从没有任何编译结果开始：torch.compile 会记住同一行源码的两次调用之间
# 哪些形状变了，并会把第二次调用的新形状当作动态形状来追踪。
torch.compiler.reset()
compiled = torch.compile(lambda x: soft_clip(x, 2.0) * 2, backend="aot_eager", fullgraph=True)

CALLS = {
    "a CPU tensor": lambda: soft_clip(torch.randn(3, 4), 2.0),
    "a meta tensor": lambda: soft_clip(torch.randn(3, 4, device="meta"), 2.0),
    "forward and backward": lambda: soft_clip(torch.randn(3, 4, requires_grad=True), 2.0).sum().backward(),
    "compiled, first call": lambda: compiled(torch.randn(3, 4)),
    "compiled, second call": lambda: compiled(torch.randn(*SECOND_SHAPE)),
}
ran = {}
for name, call in CALLS.items():
    calls.clear()
    call()
    ran[name] = set(calls)
    print(f"{name:<22} ran {sorted(ran[name])}")
print(torch.ops.lab4.soft_clip.default._schema)

# %%
# SELF-CHECK：你的集合与实际运行的函数相比较。
require(RUNS={name: RUNS.get(name) for name in ran})
for name in ran:
    expect_type(f"RUNS[{name!r}]", RUNS[name], (set, frozenset), 'a set of names, such as {"kernel", "fake"}')
    unknown = sorted(map(str, set(RUNS[name]) - {"kernel", "fake", "backward"}))
    expect(not unknown, f"{name}: {unknown} is not one of the three functions: kernel, fake, backward")
for name, really in ran.items():
    expect(set(RUNS[name]) == really, f"{name}: you said {sorted(RUNS[name])}, but {sorted(really)} ran")
print("self-check passed: you know which kernel each call runs")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 每个内核各司其职。CPU 张量运行内核；meta 张量没有数据，所以只有注册在 `Meta` 键上的 fake 内核能运行：它不做任何计算就给出结果的形状。反向传播运行你写的公式，这里只需要保存下来的输出，所以内核不会被再次调用。第一次编译调用用 fake 张量追踪函数（fake 内核运行，内核不运行），然后运行它构建出的图，在图中这个算子是一个不透明的节点：内核运行一次。以相同形状进行的第二次调用找到已编译的图，只运行内核。新形状会让图的守卫失效，于是函数被重新追踪，fake 内核再运行一次；如果没有 fake 内核，`torch.compile` 根本无法追踪这个算子。
#
# </details>
