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
# # 实验 2 · Python
#
# ## 目标 <a id="goal"></a>
#
# `import torch` 给你的是一个 Python 包，但真正运行的大部分代码并不是 Python。在本实验中，你将称一称这个包在磁盘上的分量，把它的函数分成 Python 函数和编译函数两类，测量导入的代价，并用 `__torch_function__` 在调用向下传递的途中把它们拦截下来。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一部分。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会说明它应当是什么类型）。`CoreShare` 测量一次测量期间得到了一个 CPU 核心的多少份额；当繁忙的机器把计时拉伸得太厉害、无法评判某个比值时，`unclear` 会说明这一点。`TORCH_DIR` 是这个包的安装位置；本实验打印的路径都相对于它。

# %%
import inspect
import numbers
import subprocess
import sys
import time
import timeit
from collections import Counter
from pathlib import Path

import torch

TORCH_DIR = Path(torch.__file__).resolve().parent
print(f"torch {torch.__version__}, Python {sys.version.split()[0]}")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · torch 在磁盘上是什么样子 <a id="on-disk"></a>
#
# **预测**已安装的包的字节中，Python 源码（`.py` 文件）占百分之几，以及哪个文件最大：写出它的名字（`libfoo.so`，或去掉后缀的 `libfoo`）。把两者写进答案单元格，然后**运行**测量：它遍历已安装的包，按类别累加文件大小。
#
# **修改** `KINDS`，拆分出更多后缀（`.pyi` 存根文件、`.h` 头文件），并修改 `TOP`，列出更多最大的文件。这些头文件是从哪里来的？

# %% tags=["answer"]
# YOUR ANSWER
PYTHON_SHARE = None  # 包中 Python 源文件所占字节的百分比
LARGEST = None  # 最大文件的名字，写成字符串（例如 "libfoo.so" 或 "libfoo"）

# %% tags=["solution"]
# 构建所针对设备的内核：CPU 构建里，每个 CPU 内核和分发器都在 libtorch_cpu 中；
# CUDA 构建（Colab 安装的就是它）再加上更大的 libtorch_cuda，
# 于是 Python 这一级所占的份额更小。
PYTHON_SHARE = 2 if torch.version.cuda else 5  # 薄薄的一级：只占百分之几
LARGEST = "libtorch_cuda" if torch.version.cuda else "libtorch_cpu"

# %%
KINDS = {".py": "Python source", ".so": "compiled library", ".dll": "compiled library", ".dylib": "compiled library"}
TOP = 5

bytes_by_kind = Counter()
files = [p for p in TORCH_DIR.rglob("*") if p.is_file()]
for path in files:
    suffix = next((s for s in KINDS if path.name.endswith(s) or f"{s}." in path.name), None)
    bytes_by_kind[KINDS.get(suffix, "other")] += path.stat().st_size

total = sum(bytes_by_kind.values())
for kind, size in bytes_by_kind.most_common():
    print(f"{kind:<18} {size / 1e6:9.1f} MB  {100 * size / total:5.1f} %")
largest_files = sorted(files, key=lambda p: p.stat().st_size, reverse=True)
print(f"\nthe {TOP} largest files (relative to the torch package):")
for path in largest_files[:TOP]:
    print(f"  {path.stat().st_size / 1e6:8.1f} MB  {path.relative_to(TORCH_DIR).as_posix()}")

# %%
# SELF-CHECK：你的份额与实测值相差在 3 倍以内；并完整写出你安装中最大文件的名字：
# 可以带或不带第一个点之后的后缀和前面的 "lib"（名字的一部分，例如 "u"，
# 可能区分两个文件，却哪个也没写全）。
require(PYTHON_SHARE=PYTHON_SHARE, LARGEST=LARGEST)
expect_type("PYTHON_SHARE", PYTHON_SHARE, numbers.Real, "a number of percent (such as 30)")
expect_type("LARGEST", LARGEST, str, 'a string, the file\'s name (such as "libfoo.so")')
share = 100 * bytes_by_kind["Python source"] / total
expect(within(PYTHON_SHARE, share, 3), f"Python source is {share:.1f} % of the bytes, not about {PYTHON_SHARE} %")
largest = largest_files[0].name
expect(LARGEST.strip() != "", "LARGEST is empty: write the largest file's name")
given, wanted = (name.split(".")[0].removeprefix("lib") for name in (Path(LARGEST.strip()).name, largest))
expect(given == wanted, f"the largest file is {largest}, not {LARGEST!r}: write its whole name")
print(f"self-check passed: Python is {share:.1f} % of torch; the largest file is {largest}")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# Python 文件只是薄薄的一层；大头是 `lib/` 下的几个共享库。在 CPU 构建版本中，排在前面的是 `libtorch_cpu`（所有 CPU 内核以及分发器（dispatcher））和 `libtorch_python`（两个世界之间的绑定）；CUDA 构建版本还多了 `libtorch_cuda`，即 CUDA 内核，体积更大。哪个文件最大取决于你安装的构建版本，所以自检拿你的答案与你自己的列表比较。`include/` 下的头文件是为了让 C++ 扩展能针对同一份代码编译。
#
# </details>

# %% [markdown]
# ## 练习 2 · Python 还是编译代码 <a id="python-or-compiled"></a>
#
# 用 Python 写的函数是一个带字节码的 Python `function` 对象；编译的函数则是 `builtin_function_or_method`（若是 C++ 类的方法，则是 `method_descriptor`）。第 2 层就是这样给单页程序中的名字分类的。`NAMES` 里是它没有展示的名字：同一个运算的两种写法（`torch.relu` 和 `torch.nn.functional.relu`），以及 `torch.Tensor` 自身的运算符和协议方法。为每个名字**预测**它是 `"Python"` 还是 `"compiled"`，然后**运行**测量，它会去问 `inspect`。
#
# **修改** `NAMES`：加入 `torch.softmax`、`torch.nn.functional.softmax`、`torch.Tensor.__repr__`、`torch.Tensor.to`，并为它们写下预测：自检要求每个名字都有预测。

# %% tags=["answer"]
# YOUR ANSWER：每个函数填 "Python" 或 "compiled"
PREDICTED_KIND = {
    "torch.relu": None,
    "torch.nn.functional.relu": None,
    "torch.Tensor.__add__": None,
    "torch.Tensor.__rsub__": None,
    "torch.Tensor.__len__": None,
    "torch.Tensor.item": None,
}

# %% tags=["solution"]
PREDICTED_KIND = {
    "torch.relu": "compiled",
    "torch.nn.functional.relu": "Python",
    "torch.Tensor.__add__": "compiled",
    "torch.Tensor.__rsub__": "Python",
    "torch.Tensor.__len__": "Python",
    "torch.Tensor.item": "compiled",
}

# %%
NAMES = {
    "torch.relu": torch.relu,
    "torch.nn.functional.relu": torch.nn.functional.relu,
    "torch.Tensor.__add__": torch.Tensor.__add__,
    "torch.Tensor.__rsub__": torch.Tensor.__rsub__,
    "torch.Tensor.__len__": torch.Tensor.__len__,
    "torch.Tensor.item": torch.Tensor.item,
}
kind_of = {}
for name, fn in NAMES.items():
    kind_of[name] = "Python" if inspect.isfunction(fn) else "compiled"
    where = f"{Path(inspect.getsourcefile(fn)).name}:{inspect.getsourcelines(fn)[1]}" if kind_of[name] == "Python" else ""
    print(f"{name:<36} {kind_of[name]:<9} {type(fn).__name__:<28} {where}")
print("\ntorch.Tensor's bases:", [f"{c.__module__}.{c.__qualname__}" for c in torch.Tensor.__mro__])

# %%
# SELF-CHECK：你的分类与 inspect 的判断相比较。
require(PREDICTED_KIND={name: PREDICTED_KIND.get(name) for name in NAMES})
for name in NAMES:
    expect_type(f"PREDICTED_KIND[{name!r}]", PREDICTED_KIND[name], str, 'the string "Python" or "compiled"')
    expect(PREDICTED_KIND[name] in ("Python", "compiled"), f'PREDICTED_KIND[{name!r}] should be "Python" or "compiled", not {PREDICTED_KIND[name]!r}')
wrong = [f"{name}: you said {PREDICTED_KIND[name]}, it is {kind}" for name, kind in kind_of.items() if PREDICTED_KIND[name] != kind]
expect(not wrong, "these are not what you predicted:\n  " + "\n  ".join(wrong))
print(f"self-check passed: all {len(kind_of)} functions classified")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# `torch.relu` 和 `torch.softmax` 是根据算子列表生成的编译绑定；它们在 `torch.nn.functional` 中的写法是 Python 函数，先处理选项（`inplace`、`dim`、`dtype`），再调用编译好的函数。`torch.Tensor` 是一个 Python 类（`torch/_tensor.py`），它的基类 `torch._C.TensorBase` 在 C++ 中定义：大多数方法和运算符，例如 `item`、`to` 和 `__add__`，直接来自基类，只有少数是在其上用 Python 实现的。`__rsub__`（用于 `2 - t`）这类反射运算符是 Python 包装函数，它们把类型错误转换为 `NotImplemented`，让 Python 去尝试另一个操作数；`__len__` 用 Python 实现，是为了能拒绝零维张量；`__repr__` 用 Python 实现，是因为打印本身就是用 Python 写的（`torch/_tensor_str.py`）。
#
# </details>

# %% [markdown]
# ## 练习 3 · `import torch` 的代价 <a id="import-cost"></a>
#
# **预测**一次全新的 `import torch`（在新的 Python 进程中导入它）所花的时间，是否超过在已经导入过它的进程里再导入一次的 1 000 倍，然后**运行**测量，读出它慢了多少倍。
#
# **修改** `MODULE` 为 `"json"`，再预测一次并比较。然后把 `MODULE` 改回 `"torch"`，设置 `FLAGS = ["-X", "importtime"]`（传给新 Python 进程的选项），看看哪些子模块占了大头：测量会从 Python 的报告中打印最慢的几个，而自检依然成立。

# %% tags=["answer"]
# YOUR ANSWER
OVER_A_THOUSAND = None  # 全新 import 的开销超过 1,000 次重复 import 则填 True，否则填 False

# %% tags=["solution"]
OVER_A_THOUSAND = True  # 一秒左右，对比远不到一微秒的字典查找

# %%
MODULE = "torch"
FLAGS = []  # 新 Python 进程的选项
RUNS = 1  # 调大它可以得到更稳定的数字

fresh = []
with CoreShare() as core:  # 测量得到了多少核心（子进程的 CPU 时间也算在内）
    for _ in range(RUNS):
        start = time.perf_counter()
        child = subprocess.run([sys.executable, *FLAGS, "-c", f"import {MODULE}"], check=True, capture_output=True, text=True)
        fresh.append(time.perf_counter() - start)
    __import__(MODULE)
    again = min(timeit.repeat(lambda: __import__(MODULE), number=1000, repeat=5)) / 1000  # 5 x 1,000 次 import 中最好的一次
# 设置 FLAGS = ["-X", "importtime"] 时，子进程会在 stderr 上为每个 import 报告 "self [us] | cumulative [us] | module"。
report = [line.split("|") for line in child.stderr.splitlines() if line.startswith("import time:") and "[us]" not in line]
for columns in sorted(report, key=lambda columns: -int(columns[1]))[:8]:
    print(f"{int(columns[1]) / 1e3:9.1f} ms cumulative  {columns[2].strip()}")
factor = min(fresh) / again
print(f"fresh process + import {MODULE}: {min(fresh):.2f} s (best of {RUNS})")
print(f"import {MODULE} again in this process: {again * 1e6:.3f} µs: {factor:,.0f} times less")
print(f"this process and its child got {core.share:.0%} of a core while they measured")

# %%
# SELF-CHECK：你的答案与实测倍数落在 1,000 倍的同一侧，除非该倍数离 1,000
# 太近，这次运行无法判定（繁忙的机器会拉长计时）。
require(OVER_A_THOUSAND=OVER_A_THOUSAND)
expect_type("OVER_A_THOUSAND", OVER_A_THOUSAND, bool, "True or False (without quotes)")
why = unclear(factor, 1000, core, what="the factor")
if why:
    print(why)
else:
    side = "more" if factor > 1000 else "less"
    expect(OVER_A_THOUSAND == (factor > 1000), f"the fresh import took {factor:,.0f} times longer: {side} than 1,000 times")
print(f"self-check passed: the first import costs {factor:,.0f} times the second")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 全新的 `import torch` 要启动 Python、加载共享库、向分发器注册数以千计的算子，并导入几百个 Python 模块。第二次导入在 `sys.modules` 中找到 `torch`，立即返回。启动许多短命 Python 进程的脚本每次都要付这笔导入开销；notebook 只付一次。换成 `json` 时，新进程的开销主要是 Python 自身的启动，因此倍数会缩小一到两个数量级。使用 `-X importtime` 时，Python 会报告每个模块自身的以及累计的导入时间：加载编译好的核心（`torch._C`）属于最慢的一批，与之并列的是为编译器注册 meta 内核和分解的那些 Python 模块（`torch._meta_registrations`、`torch._decomp`）。
#
# </details>

# %% [markdown]
# ## 练习 4 · 用 `__torch_function__` 拦截调用 <a id="torch-function"></a>
#
# torch 函数在进入 C++ 之前，会检查它的参数以及当前激活的模式中有没有 `__torch_function__` 重载。测量在一个 `TorchFunctionMode` 下运行单页程序的前向和反向传播，这个模式记录它看到的每个 torch 调用的名字。**预测**它按顺序记录下的公开名字（不以 `_` 开头的名字）列表，然后**运行**。打印结果中也会出现私有的内部调用；自检会把它们排除在外。
#
# **修改**损失为 `torch.nn.functional.mse_loss(model(x), torch.nn.functional.one_hot(y, 10).float())`，再预测一次：会出现哪些调用？然后在 `with` 块内、`loss.backward()` 之后再加上 `optimizer.step()`，再预测一次：`step` 不是 torch 函数，那么模式能看到它的什么？

# %% tags=["answer"]
# YOUR ANSWER：该模式依次记录的公开名称，写成字符串列表
PREDICTED_CALLS = None

# %% tags=["solution"]
PREDICTED_CALLS = ["linear", "cross_entropy", "backward"]

# %%
from torch.overrides import TorchFunctionMode


class RecordCalls(TorchFunctionMode):
    """Record the name of every torch function called while active."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", repr(func)))
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

with RecordCalls() as recorder:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
print("torch-level calls:", recorder.names)
public = [name for name in recorder.names if not name.startswith("_")]

# %%
# SELF-CHECK：你的列表与该模式记录中的公开名称相比较。
require(PREDICTED_CALLS=PREDICTED_CALLS)
expect_type("PREDICTED_CALLS", PREDICTED_CALLS, (list, tuple), 'a list of strings (such as ["linear"])')
for index, name in enumerate(PREDICTED_CALLS):
    expect_type(f"PREDICTED_CALLS[{index}]", name, str, 'a string, a function\'s name (such as "linear")')
expect(list(PREDICTED_CALLS) == public, f"the mode recorded {public} (leaving out names that start with _), not {list(PREDICTED_CALLS)}")
print(f"self-check passed: you predicted all {len(public)} public calls in order")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 模式在 Python 这一侧、以公开名字看到这些调用，早于任何参数解析：`model(x)` 是一次 `linear`，损失是一次 `cross_entropy`，`loss.backward()` 是一次 `backward`。对 one-hot 目标使用 `mse_loss` 时，你还会看到 `one_hot` 和 `float`，因为是你调用了它们。它能看到运行的所有 torch 调用，而不只是你写下的那几行：`optimizer.step()` 是一个普通的 Python 方法，所以模式看到的是它所调用的东西：每个参数一次 `add_`（即更新 `p -= lr * p.grad`），外面包着优化器自己的内部调用（`_set_grad_enabled`、性能分析器的 record-function 标记），以及每次读取 `p.grad` 这类张量属性时的一次 `__get__`。它看不到这些调用在更下面变成的算子：要看那些，你需要分发器自己的钩子 `TorchDispatchMode`，见实验 4。
#
# </details>
