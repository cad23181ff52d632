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
# # Lab 3 · The boundary
#
# ## Goal <a id="goal"></a>
#
# Every eager PyTorch call crosses from Python into C++: the arguments are parsed, an operator is
# looked up, a result tensor is allocated, and only then does a kernel touch your numbers. That
# crossing has a fixed price that does not depend on the tensor's size; Floor 3's page plots it
# against the size. In this lab you take that price apart on *your* machine: what it buys compared
# with plain Python, what the argument parser checks, what a call it refuses costs, and how much
# you save by crossing once instead of a thousand times.
#
# Each exercise asks you to **predict** first, in the cell marked `YOUR ANSWER`, then to **run**
# the measurement, **change** something and measure again. The `SELF-CHECK` cell compares your
# answer with what your machine measured: it fails, saying what to fill in, until you have
# answered, and it fails, saying why, when the answer and the measurement disagree. Solutions are
# folded away under each exercise.

# %% [markdown]
# ## Setup <a id="setup"></a>
#
# Run this first. `require`, `expect`, `expect_type` and `within` are what the self-checks use to
# grade your answers (`expect_type` says which type an answer should have when it has another). `best_time` calls a function in batches long enough to be timed reliably and
# returns the time of one call, in seconds, from the fastest batch (other programs can only slow
# a batch down). `CoreShare` measures how much of a core a measurement got, and `unclear` says when
# a busy machine stretched the timings too much to grade a ratio. The lab runs PyTorch on one CPU
# thread so that timings stay steady when other programs share the machine.

# %%
import numbers

import torch

torch.manual_seed(0)
torch.set_num_threads(1)  # one thread: steadier timings on a busy machine (Lab 8 measures threads)

print(f"torch {torch.__version__}, timing with {torch.get_num_threads()} CPU thread")

# %% tags=["checker"]
# The self-check helpers (require, expect, best_time, ...) go in this cell: the build puts them here.

# %% [markdown]
# ## Exercise 1 · What the fixed cost buys <a id="what-the-floor-buys"></a>
#
# Every eager call pays a fixed price, whatever the tensor's size. Is that price "Python being
# slow"? **Predict** how many calls of an empty Python function cost as much as one `torch.add`
# on one element, then **run** the measurement, which times both and adding two Python floats.
#
# **Change**: add the operator form `a1 + b1` and the method form `a1.add(b1)` to `crossing`. Do
# they cost the same as `torch.add(a1, b1)`?

# %% tags=["answer"]
# YOUR ANSWER
PREDICTED_CALLS = None  # how many empty Python function calls one 1-element torch.add costs

# %% tags=["solution"]
PREDICTED_CALLS = 30  # parsing, dispatch, allocation and wrapping: tens of Python calls' worth

# %%
a1, b1 = torch.rand(1), torch.rand(1)
x, y = 1.5, 2.5


def noop(p, q):
    return p


with CoreShare() as crossing_core:  # how much of a core the timings got
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
# SELF-CHECK: your count within a factor of 4 of the measured one. A process that got a share s of
# a core can have had either timing stretched up to 1/s times: a count within 4/s times but not 4
# is too close to call on this run, and says so.
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
# <details class="success"><summary>What to notice</summary>
#
# ```python
# crossing["a1 + b1"] = best_time(lambda: a1 + b1)
# crossing["a1.add(b1)"] = best_time(lambda: a1.add(b1))
# ```
#
# All three spellings land in the same C++ function after argument parsing, so they cost about
# the same. The gap to a plain Python call is the boundary: parsing arguments against the
# operator's signatures, dispatching, allocating a result tensor and wrapping it back into a
# Python object.
#
# </details>

# %% [markdown]
# ## Exercise 2 · What the parser checks <a id="argument-parsing"></a>
#
# The bindings check every argument against the operator's signatures before anything runs.
# The measurement makes each deliberately wrong call in `WRONG_CALLS`, starting with
# `torch.add(a1, "two")`, and prints the error; it also times `torch.add` with and without
# `alpha=2`. **Predict**, for each call, which argument the message will name, then **run** it.
#
# **Change** `WRONG_CALLS`: add `torch.add(a1, [1, 2])` (a list), `torch.add(a1, b1, alpha=None)`
# and `torch.add(a1, b1, scale=2)` (a keyword that does not exist), predict the word each message
# names, and read how the messages differ.

# %% tags=["answer"]
# YOUR ANSWER: for each wrong call, the argument you expect its message to name, as a string
PREDICTED_WORD = {'torch.add(a1, "two")': None}

# %% tags=["solution"]
PREDICTED_WORD = {'torch.add(a1, "two")': "other"}  # add's second parameter is called `other`

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
# SELF-CHECK: every call was rejected by the parser, and each message names what you predicted.
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
# <details class="success"><summary>What to notice</summary>
#
# The message is written by the argument parser, not by the kernel: it knows each parameter's
# name, position and type from the signature that `native_functions.yaml` declares for `add`
# (`add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)`), which is why it can say
# "argument 'other' (position 2) must be Tensor". A list is still named as `'other'` (the
# message ends with the type it got instead), `alpha=None` is named as `'alpha'`, and an unknown
# keyword as `'scale'`, in a message that no longer names a position. A keyword argument is parsed by the same machinery, so its cost
# is a small change of an already small number.
#
# </details>

# %% [markdown]
# ## Exercise 3 · The price of a rejected call <a id="rejected-call"></a>
#
# Some code uses exceptions as control flow: it tries a call and falls back when the call raises.
# In Exercise 2 the parser refused `torch.add(a1, "two")` before any kernel ran, so no arithmetic
# was done. **Predict** how many accepted calls of `torch.add(a1, b1)` one refused call costs,
# raised and caught by `try`/`except`: `"under 2"` (about as much as one), `"2 to 100"`, or
# `"over 100"` (orders of magnitude more); then **run** the measurement, which prints the count.
# It also times Python raising and catching a `TypeError` of its own, for comparison.
#
# **Change** the call in `rejected` to one that the parser accepts and the kernel refuses,
# `torch.add(a2, a3)` (shapes 2 and 3 do not broadcast), and predict again: does an error raised
# further down cost less than the parser's, or more?

# %% tags=["answer"]
# YOUR ANSWER
REFUSED_COST = None  # "under 2", "2 to 100" or "over 100": accepted calls' worth of one refused call

# %% tags=["solution"]
REFUSED_COST = "2 to 100"  # a C++ exception, unwound and made a Python one: about ten accepted calls' worth

# %%
a2, a3 = torch.ones(2), torch.ones(3)  # shapes 2 and 3 do not broadcast


def rejected():
    """Make a call torch refuses; return its error, or None if it was accepted."""
    try:
        torch.add(a1, "two")  # the argument parser refuses it
    except (TypeError, RuntimeError) as refused:  # parser: TypeError, kernel: RuntimeError
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
with CoreShare() as call_core:  # how much of a core the timings got
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
# SELF-CHECK: the call was refused; the measured count in the range you said, unless it is too
# close to 2 or 100 to call on this run (a busy machine stretches the timings).
require(REFUSED_COST=REFUSED_COST)
RANGES = ("under 2", "2 to 100", "over 100")
expect_type("REFUSED_COST", REFUSED_COST, str, 'the string "under 2", "2 to 100" or "over 100"')
expect(REFUSED_COST in RANGES, f'REFUSED_COST should be "under 2", "2 to 100" or "over 100", not {REFUSED_COST!r}')
expect(refusal is not None, "the call in rejected() was accepted: make a call that torch refuses")
nearest = 2 if refused_factor < (2 * 100) ** 0.5 else 100  # the line nearer the count, on a log scale
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
# <details class="success"><summary>What to notice</summary>
#
# An accepted call runs the path the bindings are built for. A refused one takes the other path:
# the parser tries `add`'s signatures, finds none that fits, writes the message you read in
# Exercise 2 (`torch/csrc/utils/python_arg_parser.cpp`; when several signatures could have fit,
# `invalid_arguments.cpp` lists them all) and throws it as a C++ exception. The exception unwinds
# the C++ frames up to the `catch` that every generated binding wraps around its body (the
# `HANDLE_TH_ERRORS` macro in `torch/csrc/Exceptions.h`), where it is turned into a Python
# `TypeError`. Python's own raise and catch is a small share of that, as the self-check prints:
# the cost sits on the C++ side. C++ compilers make exceptions free while nothing is thrown and
# expensive when one is: finding the handler means walking unwind tables frame by frame.
#
# After the change the parser accepts `torch.add(a2, a3)` and the call goes down through the
# dispatcher (Floor 4) to the kernel, whose broadcasting check refuses the shapes and throws a
# `c10::Error` that the same `catch` turns into a `RuntimeError`. It costs the same order of
# magnitude: what is expensive is the throw, wherever it starts, and a throw from deeper down has
# more frames to unwind. So a `try`/`except` around a torch call is fine for a rare error and
# costly as the normal path of a loop: check what you pass (`isinstance(x, torch.Tensor)`, the
# shapes) before the call, rather than catching the refusal after it.
#
# </details>

# %% [markdown]
# ## Exercise 4 · Cross once, not a thousand times <a id="batch-the-crossings"></a>
#
# If every call pays the fixed price, then a thousand small calls pay it a thousand times. The
# measurement sums the same numbers two ways: a Python loop of `PIECES` small adds, and one
# batched reduction. **Predict** whether the batched sum is more than 5 times as fast as the loop,
# then **run** it: it prints how many times faster it was.
#
# **Change** `PIECES` and `PIECE_SIZE` to 100 pieces of 100 000 elements and predict again.
# Does batching still pay off?

# %% tags=["answer"]
# YOUR ANSWER
MUCH_FASTER = None  # True if the batched sum takes less than a fifth of the loop's time, else False

# %% tags=["solution"]
MUCH_FASTER = True  # a thousand crossings of a few microseconds against one short kernel

# %%
PIECES, PIECE_SIZE = 1000, 100
pieces = [torch.rand(PIECE_SIZE) for _ in range(PIECES)]
stacked = torch.stack(pieces)


def loop_sum():
    total = torch.zeros(PIECE_SIZE)
    for piece in pieces:
        total += piece  # in place: `total = total + piece` would also pay for new memory on every add
    return total


def batched_sum():
    return stacked.sum(dim=0)


torch.testing.assert_close(loop_sum(), batched_sum())
with CoreShare() as batch_core:  # how much of a core the timings got
    loop_t, batched_t = best_time(loop_sum), best_time(batched_sum)
speedup = loop_t / batched_t
verdict = f"{speedup:.1f}x faster" if speedup >= 1 else f"{1 / speedup:.1f}x slower"
print(f"loop of {PIECES} adds: {loop_t * 1e3:.3f} ms")
print(f"one batched sum:      {batched_t * 1e3:.3f} ms  ({verdict}; {batch_core.share:.0%} of a core while timing)")

# %%
# SELF-CHECK: your answer on the same side of 5 times as the measured speed-up, unless the
# speed-up is too close to 5 to call on this run: a share s of a core can stretch either timing up to
# 1/s times, so the speed-up as far either way (and 25 % more for the timings' own noise).
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
# <details class="success"><summary>What to notice</summary>
#
# With small pieces the loop is dominated by a thousand crossings and the batched sum wins by a
# large factor. With large pieces each add does real work, the fixed cost is a small share, and
# batching buys little: the speed-up falls far below 5, to about 1 (the batched sum can even lose,
# by several times without vectorised kernels: it walks the stacked array across its rows). The
# loop adds in place: written `total = total + piece`, each add would also get new memory for its
# result, a cost that grows with the piece, and the loop would lose more than the crossings. This
# is the whole argument for vectorised code, batching, and (further down) fusing kernels and
# capturing graphs: pay the boundary less often.
#
# </details>
