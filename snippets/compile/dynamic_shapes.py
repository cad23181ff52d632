"""Dynamic shapes and escape hatches: when a size becomes a symbol, where it stays a number, and how to steer Dynamo."""

from __future__ import annotations

import io
import logging
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
import torch._dynamo
import torch._dynamo.decorators
import torch.fx
from torch._dynamo.utils import guard_failures

from pytorch_floors.claims import claim

SIZES = (2, 3, 4, 5, 1, 0, 6)
"""The first dimension of each call's input: four sizes of two or more, the two Dynamo treats apart, one more."""

MARKS: dict[str, Callable[[torch.Tensor], None] | None] = {
    "default": None,
    "mark_dynamic": lambda x: torch._dynamo.mark_dynamic(x, 0),
    "mark_unbacked": lambda x: torch._dynamo.decorators.mark_unbacked(x, 0),
}
"""What is done to the first call's input before it is passed: nothing, or mark its first dimension."""

REPEATS = (2, 3, 4, 5, 6, 2, 3)
"""The int of each call to `doubled`: three new values fill the lowered limit, then two more, then two old ones."""

LIMIT = 3

RAN_COMPILING: list[bool] = []
"""What `torch.compiler.is_compiling()` said each time the disabled helper ran."""


def column_sums(x: torch.Tensor) -> torch.Tensor:
    """Elementwise work and a sum over the first dimension, the one whose size changes from call to call."""
    return (x * 2).sin().sum(0)


def doubled(x: torch.Tensor, n: int) -> torch.Tensor:
    """Doubles `x` n times: Dynamo unrolls the loop, so the graph is only right for this one value of n."""
    for _ in range(n):
        x = x * 2
    return x + 1


def sin_cos(x: torch.Tensor) -> torch.Tensor:
    """A helper Dynamo traces into: three operations of its caller's graph."""
    return torch.sin(x) * torch.cos(x)


def eager_log(y: torch.Tensor) -> torch.Tensor:
    """A helper kept out of the graph by `torch.compiler.disable`: it records whether it runs under the compiler."""
    RAN_COMPILING.append(torch.compiler.is_compiling())
    return torch.log1p(y.abs())


class Recorder:
    """A backend that keeps each graph Dynamo hands it and counts how often each one runs."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []
        self.runs: list[int] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., object]:
        index = len(self.graphs)
        self.graphs.append(gm)
        self.runs.append(0)

        def run(*args: object) -> object:
            self.runs[index] += 1
            return gm.forward(*args)

        return run


def failures() -> list[str]:
    """Every guard failure Dynamo has recorded, oldest first: its first line, without the source comment."""
    lines = (str(reason).splitlines()[0] for reasons in guard_failures.values() for reason in reasons)
    return [" ".join(line.split("#", 1)[0].split()) for line in lines]


def symbolic_inputs(gm: torch.fx.GraphModule) -> tuple[int, list[str]]:
    """How many of the graph's inputs are sizes (SymInt), and the kind of each dimension of its tensor input."""
    values = [node.meta.get("example_value") for node in gm.graph.nodes if node.op == "placeholder"]
    sizes = sum(isinstance(value, torch.SymInt) for value in values)
    tensor = next(value for value in values if isinstance(value, torch.Tensor))
    return sizes, [type(dim).__name__ for dim in tensor.shape]


def shapes(mark: Callable[[torch.Tensor], None] | None) -> tuple[list[int], Recorder, list[list[str]], bool]:
    """Call the compiled `column_sums` with each of `SIZES`; the graphs each call compiled, and its failed guards."""
    torch._dynamo.reset()
    recorder = Recorder()
    compiled = torch.compile(column_sums, backend=recorder)
    new, failed, right = [], [], True
    for number, size in enumerate(SIZES):
        x = torch.linspace(-1, 1, size * 3).reshape(size, 3)
        if mark is not None and number == 0:
            mark(x)
        graphs, seen = len(recorder.graphs), len(failures())
        out = compiled(x)
        new.append(len(recorder.graphs) - graphs)
        failed.append(failures()[seen:])
        right = right and torch.allclose(out, column_sums(x))
    torch._dynamo.reset()
    return new, recorder, failed, right


@contextmanager
def captured_dynamo_log() -> Iterator[io.StringIO]:
    """Dynamo's warnings, written to a string instead of the terminal, for the time of the block."""
    logger = logging.getLogger("torch._dynamo")
    saved = logger.handlers[:], logger.propagate, logger.level
    stream = io.StringIO()
    logger.handlers = [logging.StreamHandler(stream)]
    logger.propagate = False
    logger.setLevel(logging.WARNING)  # an earlier proof of the page may have raised it to ERROR
    try:
        yield stream
    finally:
        logger.handlers, logger.propagate = saved[:2]
        logger.setLevel(saved[2])


Row = tuple[int, int, str, list[str], bool]
"""A call of the compiled `doubled`: n, graphs it compiled, what ran it, guards that failed, whether it was right."""


def recompiles() -> tuple[list[Row], list[str]]:
    """Call the compiled `doubled` with each of `REPEATS` under a recompile limit of `LIMIT`.

    Returns:
        A `Row` for each call, and what Dynamo logged: the first line, and the last reason, of each message.
    """
    torch._dynamo.reset()
    recorder = Recorder()
    compiled = torch.compile(doubled, backend=recorder)
    rows = []
    with torch._dynamo.config.patch(recompile_limit=LIMIT), captured_dynamo_log() as log:
        for n in REPEATS:
            x = torch.ones(4)
            graphs, runs, seen = len(recorder.graphs), list(recorder.runs), len(failures())
            out = compiled(x, n)
            ran = [i for i, count in enumerate(recorder.runs[: len(runs)]) if count > runs[i]]
            ran += [i for i in range(len(runs), len(recorder.runs)) if recorder.runs[i]]
            by = f"graph {ran[0]}" if ran else "eager"
            rows.append((n, len(recorder.graphs) - graphs, by, failures()[seen:], torch.equal(out, doubled(x, n))))
    torch._dynamo.reset()
    lines = [line.strip() for line in log.getvalue().splitlines()]
    # Keep the message and its reason; the line naming the function's file is left out, as a machine path.
    logged = [" ".join(line.split("#", 1)[0].split()) for line in lines if line.startswith(("torch._dynamo", "last"))]
    return rows, logged


def targets(gm: torch.fx.GraphModule) -> list[str]:
    """The names of what the graph's call nodes call."""
    called = [node.target for node in gm.graph.nodes if node.op in ("call_function", "call_method")]
    return [getattr(target, "__name__", str(target)) for target in called]


def calling(helper: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A function that runs `helper` between two operations of its own."""

    def caller(x: torch.Tensor) -> torch.Tensor:
        return helper(x * 2) + 1

    return caller


def in_graph_copy() -> Callable[[torch.Tensor], torch.Tensor]:
    """A copy of `sin_cos` passed to `allow_in_graph` (the copy is forgotten again once it is collected)."""
    copy = types.FunctionType(sin_cos.__code__, sin_cos.__globals__, "sin_cos")
    allowed: Callable[[torch.Tensor], torch.Tensor] = torch.compiler.allow_in_graph(copy)  # type: ignore[no-untyped-call]
    return allowed


def show_shapes() -> None:
    """Automatic dynamic shapes, `mark_dynamic` and `mark_unbacked`, over the same sizes: the graphs each compiled."""
    runs = {name: shapes(mark) for name, mark in MARKS.items()}
    print(f"graphs compiled by each call of column_sums, by the size of its first dimension ({len(SIZES)} calls):")
    # Printed for a phone's 46 columns: each column as wide as its name, each mode's graphs under its name.
    print(f"  {'size':>4}" + "".join(f"  {name:>{len(name)}}" for name in runs))
    for number, size in enumerate(SIZES):
        print(f"  {size:>4}" + "".join(f"  {new[number]:>{len(name)}}" for name, (new, _, _, _) in runs.items()))
    print("the graphs each compiled, in order: x's dimensions as the graph sees them, and its inputs that are sizes")
    for name, (_, recorder, _, _) in runs.items():
        kinds = [symbolic_inputs(gm) for gm in recorder.graphs]
        shown = ", ".join(f"({', '.join(dims)})" + (f" + {sizes} SymInt" if sizes else "") for sizes, dims in kinds)
        print(f"  {name}:")
        print(f"    {shown}")
    default_new, default, _, _ = runs["default"]
    marked_new, marked, marked_failed, _ = runs["mark_dynamic"]
    unbacked_new, _, _, _ = runs["mark_unbacked"]
    one, zero = SIZES.index(1), SIZES.index(0)
    print(f"under mark_dynamic, the guard the size-1 call failed: {'; '.join(marked_failed[one])}")
    right = all(ok for _, _, _, ok in runs.values())
    print(f"every call matched eager column_sums: {right}")
    claim(
        "by default the first size is compiled in, the second compiles a graph for any size, later sizes nothing",
        held=default_new[:4] == [1, 1, 0, 0]
        and symbolic_inputs(default.graphs[0])[0] == 0
        and symbolic_inputs(default.graphs[1])[0] == 1,
        detail=f"new graphs for sizes {SIZES[:4]}: {default_new[:4]}",
    )
    claim(
        "mark_dynamic makes the first graph take the size as a SymInt: no second compile for sizes of two or more",
        held=marked_new[:4] == [1, 0, 0, 0] and symbolic_inputs(marked.graphs[0]) == (1, ["SymInt", "int"]),
        detail=f"new graphs for sizes {SIZES[:4]}: {marked_new[:4]}",
    )
    claim(
        "sizes 1 and 0 still compile graphs of their own, because the symbolic graph is guarded by size >= 2",
        held=[default_new[one], default_new[zero], marked_new[one], marked_new[zero]] == [1, 1, 1, 1]
        and any(reason.endswith("2 <= x.size()[0]") for reason in marked_failed[one]),
        detail=f"default {default_new[one]} and {default_new[zero]}, mark_dynamic {marked_new[one]} and "
        f"{marked_new[zero]} new graphs for sizes 1 and 0",
    )
    claim(
        "mark_unbacked makes no such guard: one graph serves every size, 0 and 1 included",
        held=unbacked_new == [1] + [0] * (len(SIZES) - 1),
        detail=f"new graphs per call: {unbacked_new}",
    )
    claim("every compiled call returned what eager column_sums returns", held=right)


def show_limit() -> None:
    """An int compiled in as a constant, one graph per value, until the recompile limit: then eager."""
    rows, logged = recompiles()
    default_limit = torch._dynamo.config.recompile_limit
    print(f"\ndoubled(x, n) loops range(n) times; recompile_limit lowered from {default_limit} to {LIMIT}:")
    for n, new, ran, failed, same in rows:
        print(f"  n = {n}: {new} new graph{'s' if new != 1 else ''}, run by {ran}, same as eager: {same}")
        if failed:
            print(f"      guards that failed, newest first: {'; '.join(failed)}")
    print("what Dynamo logged (captured; the warning's first line and its last reason):")
    for line in logged:
        print(f"  {line}")
    first = [new for _, new, _, _, _ in rows[:LIMIT]]
    # Each call with a new value fails the guard of the graph the value before it compiled: n == that value.
    guarded = all(any(f"n == {REPEATS[k - 1]}" in reason for reason in rows[k][3]) for k in range(1, LIMIT + 1))
    claim(
        "an int that sets a loop's range is compiled in: each new value compiles a graph, guarded by n == value",
        held=first == [1] * LIMIT and guarded,
        detail=f"new graphs for n = {REPEATS[:LIMIT]}: {first}",
    )
    after = rows[LIMIT:]
    expected = ["eager" if n not in REPEATS[:LIMIT] else f"graph {REPEATS.index(n)}" for n, *_ in after]
    claim(
        "past recompile_limit nothing more is compiled: new values run eagerly, stored graphs still run their own",
        held=all(new == 0 for _, new, _, _, _ in after) and [ran for _, _, ran, _, _ in after] == expected,
        detail=", ".join(f"n = {n}: {ran}" for n, _, ran, _, _ in after),
    )
    claim("every call gave eager doubled's result, before and past the limit", held=all(same for *_, same in rows))
    claim(
        "Dynamo says once, in its log, that the limit was hit",
        held=sum("hit config.recompile_limit" in line for line in logged) == 1,
        detail=logged[0] if logged else "nothing logged",
    )


def show_escapes() -> None:
    """`torch.compiler.disable` keeps a helper out of the graph; `allow_in_graph` keeps one in it as a single call."""
    disabled = calling(torch.compiler.disable(eager_log))  # type: ignore[no-untyped-call]
    explained = torch._dynamo.explain(disabled)(torch.ones(4))
    reasons = [str(reason.reason).splitlines()[0] for reason in explained.break_reasons]
    torch._dynamo.reset()
    RAN_COMPILING.clear()
    compiled = torch.compile(disabled, backend="eager")
    for _ in range(3):
        compiled(torch.ones(4))
    torch._dynamo.reset()
    graphs, breaks, ran = explained.graph_count, explained.graph_break_count, list(RAN_COMPILING)
    print(f"\na helper under torch.compiler.disable: {graphs} graphs, {breaks} break ({'; '.join(reasons)})")
    for number, gm in enumerate(explained.graphs, 1):
        print(f"  graph {number} runs {targets(gm)}")
    print(f"  over 3 compiled calls the helper ran {len(ran)} times; is_compiling() inside it: {ran}")
    traced = torch._dynamo.explain(calling(sin_cos))(torch.ones(4))
    allowed = torch._dynamo.explain(calling(in_graph_copy()))(torch.ones(4))
    torch._dynamo.reset()
    traced_calls, allowed_calls = targets(traced.graphs[0]), targets(allowed.graphs[0])
    print(f"sin_cos traced into: {traced.graph_count} graph running {traced_calls}")
    print(f"sin_cos under allow_in_graph: {allowed.graph_count} graph running {allowed_calls}")
    claim(
        "torch.compiler.disable breaks the graph at the helper, which runs eagerly on every call",
        held=graphs == 2 and breaks == 1 and ran == [False] * 3,
        detail=f"{graphs} graphs, {breaks} break, the helper ran {len(ran)} times, never compiling",
    )
    claim(
        "allow_in_graph puts the helper in the graph as one call instead of its three operations",
        held=traced.graph_count == allowed.graph_count == 1
        and {"sin", "cos"} <= set(traced_calls)
        and "sin_cos" in allowed_calls
        and not {"sin", "cos"} & set(allowed_calls),
        detail=f"{len(traced_calls)} calls traced, {len(allowed_calls)} with it allowed",
    )


def main() -> None:
    torch._dynamo.reset()
    show_shapes()
    show_limit()
    show_escapes()
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
