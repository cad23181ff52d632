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
# # 实验 3 · 边界
#
# ## 目标 <a id="goal"></a>
#
# PyTorch 在 eager 模式下的每次调用都要从 Python 跨入 C++：解析参数、查找算子、为结果张量分配内存，之后内核才会碰到你的数字。这次跨越有一笔固定开销，与张量大小无关；第 3 层的页面画出了它随大小变化的情况。在本实验中，你要在*你自己的*机器上把这笔开销拆开来看：与纯 Python 相比它换来了什么，参数解析器检查些什么，一次被拒绝的调用要花多少，以及跨越一次而不是一千次能省下多少。
#
# 每道练习都要求你先**预测**，把答案写进标有 `YOUR ANSWER`（你的答案）的单元格，再**运行**测量，然后**修改**某处并重新测量。`SELF-CHECK`（自检）单元格把你的答案与你的机器实测的结果相比较：在你作答之前，它会失败并提示你该填什么；答案与测量不一致时，它也会失败并说明原因。参考答案折叠在每道练习的下方。

# %% [markdown]
# ## 准备 <a id="setup"></a>
#
# 请先运行这一部分。`require`、`expect`、`expect_type` 和 `within` 是自检用来评判你答案的工具（答案的类型不对时，`expect_type` 会说明它应当是什么类型）。`best_time` 以足够长、能可靠计时的批次调用一个函数，并根据最快的那个批次返回单次调用的时间，单位为秒（其他程序只会让某个批次变慢）。`CoreShare` 测量一次测量期间得到了一个 CPU 核心的多少份额；当繁忙的机器把计时拉伸得太厉害、无法评判某个比值时，`unclear` 会说明这一点。本实验让 PyTorch 只用一个 CPU 线程，这样即使机器上还有别的程序在跑，计时也能保持稳定。

# %%
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # 单线程：繁忙的机器上计时更稳定（实验 8 会测量线程）

print(f"torch {torch.__version__}, timing with {torch.get_num_threads()} CPU thread")

# %% tags=["checker"]
# 自检辅助函数（require、expect、best_time 等）放在这个单元格里：构建时会把它们填进来。

# %% [markdown]
# ## 练习 1 · 固定开销换来了什么 <a id="what-the-floor-buys"></a>
#
# eager 模式下的每次调用都要付一笔固定开销，无论张量多大。这笔开销只是“Python 太慢”吗？**预测**一次单元素的 `torch.add` 抵得上多少次空 Python 函数调用，然后**运行**测量，它会为这两者以及两个 Python 浮点数相加分别计时。
#
# **修改**：把运算符写法 `a1 + b1` 和方法写法 `a1.add(b1)` 加进 `crossing`。它们的开销和 `torch.add(a1, b1)` 一样吗？

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_CALLS = None  # 一次 1 个元素的 torch.add 相当于多少次空 Python 函数调用

# %% tags=["solution"]
PREDICTED_CALLS = 30  # 解析、分发、分配内存和包装：相当于几十次 Python 调用

# %%
a1, b1 = torch.rand(1), torch.rand(1)
x, y = 1.5, 2.5


def noop(p, q):
    return p


with CoreShare() as crossing_core:  # 计时得到了多少核心
    crossing = {
        "python call": best_time(lambda: noop(x, y)),
        "python float add": best_time(lambda: x + y),
        "torch.add, 1 element": best_time(lambda: torch.add(a1, b1)),
    }
for name, t in crossing.items():
    print(f"{name:<22} {t * 1e9:>9.0f} ns")
calls = crossing["torch.add, 1 element"] / crossing["python call"]
print(f"\none torch.add costs {calls:.0f} empty Python calls ({crossing_core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK：你的次数与实测值相差在 4 倍以内。一个只得到核心 s 份额的进程，
# 任一计时都可能被拉长到 1/s 倍：次数在 4/s 倍以内、却不在 4 倍以内，
# 这次运行就无法判定，检查会如实说明。
require(PREDICTED_CALLS=PREDICTED_CALLS)
expect_type("PREDICTED_CALLS", PREDICTED_CALLS, numbers.Real, "a number of calls (such as 5)")
reach = 4 / min(crossing_core.share, 1.0) if crossing_core.share > 0 else float("inf")
if not within(PREDICTED_CALLS, calls, 4) and within(PREDICTED_CALLS, calls, reach):
    print(
        f"not graded on this machine: your {PREDICTED_CALLS} is within {reach:.3g} times of the {calls:.0f}"
        f" measured, too close to call when this process got {crossing_core.share:.0%} of a core while it measured"
    )
else:
    expect(within(PREDICTED_CALLS, calls, 4), f"one torch.add cost {calls:.0f} Python calls here, not about {PREDICTED_CALLS}")
print(f"self-check passed: the crossing costs about {calls:.0f} Python calls")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# ```python
# crossing["a1 + b1"] = best_time(lambda: a1 + b1)
# crossing["a1.add(b1)"] = best_time(lambda: a1.add(b1))
# ```
#
# 三种写法在参数解析之后都落到同一个 C++ 函数里，所以开销大致相同。它们与一次普通 Python 调用之间的差距就是边界：按算子的签名解析参数、分发、分配结果张量，再把结果包装回 Python 对象。
#
# </details>

# %% [markdown]
# ## 练习 2 · 解析器检查些什么 <a id="argument-parsing"></a>
#
# 在任何东西运行之前，绑定都会按算子的签名检查每个参数。测量会逐个执行 `WRONG_CALLS` 中故意写错的调用（第一个是 `torch.add(a1, "two")`），并打印错误信息；它还会为带和不带 `alpha=2` 的 `torch.add` 计时。为每个调用**预测**错误信息会点出哪个参数，然后**运行**。
#
# **修改** `WRONG_CALLS`：加入 `torch.add(a1, [1, 2])`（一个列表）、`torch.add(a1, b1, alpha=None)` 和 `torch.add(a1, b1, scale=2)`（一个不存在的关键字），预测每条信息点出的名字，并看看这些信息有何不同。

# %% tags=["answer"]
# YOUR ANSWER：对每个错误的调用，写出你预期其报错信息点名的参数（字符串）
PREDICTED_WORD = {'torch.add(a1, "two")': None}

# %% tags=["solution"]
PREDICTED_WORD = {'torch.add(a1, "two")': "other"}  # add 的第二个参数名叫 `other`

# %%
WRONG_CALLS = {
    'torch.add(a1, "two")': lambda: torch.add(a1, "two"),
}

messages = {}
for call, wrong_call in WRONG_CALLS.items():
    try:
        wrong_call()
        messages[call] = None
    except TypeError as error:
        messages[call] = str(error)
    print(f"{call:<32} {messages[call] or 'no error: the parser accepted this call'}")

with_alpha = best_time(lambda: torch.add(a1, b1, alpha=2))
without_alpha = best_time(lambda: torch.add(a1, b1))
print(f"\nwithout alpha {without_alpha * 1e9:.0f} ns, with alpha=2 {with_alpha * 1e9:.0f} ns")

# %%
# SELF-CHECK：每次调用都被参数解析器拒绝，并且每条消息都提到了你预测的内容。
require(PREDICTED_WORD={call: PREDICTED_WORD.get(call) for call in WRONG_CALLS})
for call in WRONG_CALLS:
    expect_type(f"PREDICTED_WORD[{call!r}]", PREDICTED_WORD[call], str, 'a string, an argument\'s name (such as "input")')
for call, message in messages.items():
    expect(message is not None, f"{call} did not raise: the parser accepted it; pass an argument the signature rejects")
    word = PREDICTED_WORD[call]
    expect(f"'{word}'" in message, f"{call}: the message names something else than {word!r}: {message}")
expect(0.2 < with_alpha / without_alpha < 5, "a keyword argument should change the cost only a little")
print(f"self-check passed: you predicted the argument named in all {len(messages)} messages")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 错误信息是参数解析器写的，而不是内核：解析器从 `native_functions.yaml` 为 `add` 声明的签名（`add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)`）中知道每个参数的名字、位置和类型，所以它才能说出“argument 'other' (position 2) must be Tensor”。列表同样被点名为 `'other'`（信息末尾改为给出它实际收到的类型），`alpha=None` 被点名为 `'alpha'`，未知的关键字则被点名为 `'scale'`，而且这条信息不再给出位置。关键字参数由同一套机制解析，所以它的开销只是给一个本来就很小的数带来一点小变化。
#
# </details>

# %% [markdown]
# ## 练习 3 · 被拒绝的调用有多贵 <a id="rejected-call"></a>
#
# 有些代码把异常当作控制流：先尝试调用，调用抛出异常时再退而求其次。在练习 2 中，解析器在任何内核运行之前就拒绝了 `torch.add(a1, "two")`，因此没有做任何算术。**预测**一次被拒绝、抛出后由 `try`/`except` 捕获的调用，抵得上多少次被接受的 `torch.add(a1, b1)` 调用：`"under 2"`（和一次差不多）、`"2 to 100"`，还是 `"over 100"`（多出几个数量级）；然后**运行**测量，它会打印这个次数。作为对比，它还会为 Python 自己抛出并捕获一个 `TypeError` 计时。
#
# **修改** `rejected` 中的调用，换成解析器接受、但内核拒绝的 `torch.add(a2, a3)`（形状 2 和 3 无法广播），再预测一次：在更下层抛出的错误，比解析器的错误更便宜还是更贵？

# %% tags=["answer"]
# YOUR ANSWER
REFUSED_COST = None  # "under 2"、"2 to 100" 或 "over 100"：一次被拒绝的调用相当于多少次被接受的调用

# %% tags=["solution"]
REFUSED_COST = "2 to 100"  # 一个 C++ 异常，展开后转成 Python 异常：大约相当于十次被接受的调用

# %%
a2, a3 = torch.ones(2), torch.ones(3)  # 形状 2 和 3 无法广播


def rejected():
    """Make a call torch refuses; return its error, or None if it was accepted."""
    try:
        torch.add(a1, "two")  # 参数解析器拒绝这次调用
    except (TypeError, RuntimeError) as refused:  # 参数解析器：TypeError，内核：RuntimeError
        return refused
    return None


def python_raise():
    """Raise and catch an exception without leaving Python, for comparison."""
    try:
        raise TypeError("refused")
    except TypeError as refused:
        return refused


refusal = rejected()
if refusal is None:
    print("no error: the call in rejected() was accepted")
else:
    print(f"rejected() raised {type(refusal).__name__}: {str(refusal).splitlines()[0]}")
with CoreShare() as call_core:  # 计时得到了多少核心
    error_path = {
        "torch.add accepted": best_time(lambda: torch.add(a1, b1)),
        "torch.add refused, caught": best_time(rejected),
        "Python raise, caught": best_time(python_raise),
    }
for name, t in error_path.items():
    print(f"{name:<26} {t * 1e9:>9.0f} ns")
refused_factor = error_path["torch.add refused, caught"] / error_path["torch.add accepted"]
print(f"\none refused call costs {refused_factor:.1f} accepted calls ({call_core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK：调用被拒绝；实测次数落在你给出的区间内，除非它离 2 或 100
# 太近，这次运行无法判定（繁忙的机器会拉长计时）。
require(REFUSED_COST=REFUSED_COST)
RANGES = ("under 2", "2 to 100", "over 100")
expect_type("REFUSED_COST", REFUSED_COST, str, 'the string "under 2", "2 to 100" or "over 100"')
expect(REFUSED_COST in RANGES, f'REFUSED_COST should be "under 2", "2 to 100" or "over 100", not {REFUSED_COST!r}')
expect(refusal is not None, "the call in rejected() was accepted: make a call that torch refuses")
nearest = 2 if refused_factor < (2 * 100) ** 0.5 else 100  # 在对数尺度上离次数更近的那条界线
why = unclear(refused_factor, nearest, call_core, margin=1.5, what="the refused call's cost in accepted calls")
if why:
    print(why)
else:
    really = RANGES[(refused_factor > 2) + (refused_factor > 100)]
    expect(REFUSED_COST == really, f"one refused call cost {refused_factor:.1f} accepted calls here: {really}, not {REFUSED_COST}")
python_share = error_path["Python raise, caught"] / error_path["torch.add refused, caught"]
why = "" if python_share < 0.5 else unclear(python_share, 0.5, call_core, margin=1, what="Python's own share of the refused call")
if why:
    print(why)
else:
    expect(
        python_share < 0.5,
        f"Python's own raise and catch took {python_share:.0%} of the refused call, not a small share:"
        " run the measurement again when the machine is quieter",
    )
print(f"Python's own raise and catch is {python_share:.0%} of a refused call")
print(f"self-check passed: a refused call costs {refused_factor:.1f} accepted ones")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 被接受的调用走的是绑定专门为之打造的那条路径。被拒绝的调用走另一条路：解析器逐个尝试 `add` 的签名，找不到合适的，于是写出你在练习 2 中读到的那条信息（`torch/csrc/utils/python_arg_parser.cpp`；当有多个签名都可能匹配时，由 `invalid_arguments.cpp` 把它们全部列出），并把它作为 C++ 异常抛出。异常沿着 C++ 栈帧逐层展开，直到每个生成的绑定包在函数体外面的那个 `catch`（`torch/csrc/Exceptions.h` 中的 `HANDLE_TH_ERRORS` 宏），在那里被转换为 Python 的 `TypeError`。正如自检打印的那样，Python 自己的抛出和捕获只占其中一小部分：开销在 C++ 那一侧。C++ 编译器让异常在没有抛出时毫无代价，一旦抛出则代价高昂：寻找异常处理程序需要一帧一帧地遍历展开表。
#
# 改动之后，解析器接受了 `torch.add(a2, a3)`，调用经由分发器（dispatcher，第 4 层）一路向下到达内核，内核的广播检查拒绝了这两个形状，抛出一个 `c10::Error`，再由同一个 `catch` 转换为 `RuntimeError`。它的开销在同一个数量级：昂贵的是抛出本身，无论从哪里开始；从更深处抛出的异常，要展开的栈帧还更多。所以，在 torch 调用外面包一层 `try`/`except` 来处理罕见的错误没有问题，但若把它当作循环里的常规路径，代价就很高：应当在调用之前检查你传入的东西（`isinstance(x, torch.Tensor)`、形状），而不是在调用之后捕获拒绝。
#
# </details>

# %% [markdown]
# ## 练习 4 · 跨越一次，而不是一千次 <a id="batch-the-crossings"></a>
#
# 如果每次调用都要付固定开销，那么一千次小调用就要付一千次。测量用两种方式对同样的数字求和：一个做 `PIECES` 次小加法的 Python 循环，以及一次批量归约。**预测**批量求和是否比循环快 5 倍以上，然后**运行**：它会打印快了多少倍。
#
# **修改** `PIECES` 和 `PIECE_SIZE`，改为 100 段、每段 100 000 个元素，再预测一次。批量化还划算吗？

# %% tags=["answer"]
# YOUR ANSWER
MUCH_FASTER = None  # 批量求和的耗时不到循环的五分之一则填 True，否则填 False

# %% tags=["solution"]
MUCH_FASTER = True  # 一千次几微秒的跨越，对比一次短小的内核

# %%
PIECES, PIECE_SIZE = 1000, 100
pieces = [torch.rand(PIECE_SIZE) for _ in range(PIECES)]
stacked = torch.stack(pieces)


def loop_sum():
    total = torch.zeros(PIECE_SIZE)
    for piece in pieces:
        total += piece  # 原地相加：`total = total + piece` 每次相加还要为新内存付出代价
    return total


def batched_sum():
    return stacked.sum(dim=0)


torch.testing.assert_close(loop_sum(), batched_sum())
with CoreShare() as batch_core:  # 计时得到了多少核心
    loop_t, batched_t = best_time(loop_sum), best_time(batched_sum)
speedup = loop_t / batched_t
verdict = f"{speedup:.1f}x faster" if speedup >= 1 else f"{1 / speedup:.1f}x slower"
print(f"loop of {PIECES} adds: {loop_t * 1e3:.3f} ms")
print(f"one batched sum:      {batched_t * 1e3:.3f} ms  ({verdict}; {batch_core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK：你的答案与实测加速比落在 5 倍的同一侧，除非加速比离 5 太近，
# 这次运行无法判定：只得到核心 s 份额时，任一计时都可能被拉长到 1/s 倍，
# 加速比向两边偏离的幅度也一样（另加 25 % 留给计时本身的噪声）。
require(MUCH_FASTER=MUCH_FASTER)
expect_type("MUCH_FASTER", MUCH_FASTER, bool, "True or False (without quotes)")
why = unclear(speedup, 5, batch_core, margin=1.25, what="the speed-up")
if why:
    print(why)
else:
    side = "more" if speedup > 5 else "less"
    expect(MUCH_FASTER == (speedup > 5), f"the batched sum was {verdict}: {side} than 5 times as fast as the loop")
print(f"self-check passed: the batched sum is {verdict}")

# %% [markdown]
# <details class="success"><summary>观察要点</summary>
#
# 每段很小时，循环的耗时由一千次跨越主导，批量求和以很大的倍数胜出。每段很大时，每次加法都在做实打实的工作，固定开销只占一小部分，批量化几乎买不到什么：加速比远低于 5 倍，降到 1 倍左右（批量求和甚至可能落败，在没有向量化内核的机器上会慢好几倍：它要跨行遍历堆叠后的数组）。循环是原地相加的：若写成 `total = total + piece`，每次加法还要为结果申请新的内存，这笔开销随每段的大小增长，循环输掉的就不只是跨越的代价了。这就是向量化代码、批处理以及（更下层的）内核融合和图捕获的全部理由：少付几次边界的代价。
#
# </details>
