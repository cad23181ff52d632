"""Calling a kernel unboxed (typed C++ arguments) or boxed (a stack of IValues), and what a boxed fallback costs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch
from torch.library import Library
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds, time_call

# A line of `torch._C._dispatch_dump(op)`: "CPU: registered at <file>:<line> :: (...) [ boxed unboxed ]".
_REGISTRATION = re.compile(r"^(\S+): registered at (.+?):\d+ :: .*\[ ([a-z ]+) \]$")
# One line of `torch._C._dispatch_dump_table(op)`: "Python: registered at <file>:<line> [backend fallback]".
_SLOT = re.compile(r"^(\w+): (fallthrough )?registered at (.+?:\d+) \[(.+)\]$")

OPS = ["aten::add.Tensor", "aten::sin", "aten::addmm", "floors_boxing::twice"]
"""Three aten operators and one defined below a moment before it is looked up."""

FALLBACK_KEYS = ["Python", "PythonTLSSnapshot", "ADInplaceOrView", "BackendSelect", "AutocastCPU"]

_LIBRARY: list[Library] = []  # keeps the new operator registered for as long as the process lives


def _short(path: str) -> str:
    """A file name without the directory of the machine that built or ran it ("this proof" for a block's code)."""
    return "this proof" if path.startswith("<") else path.rsplit("/", 1)[-1]


def define_python_operator() -> None:
    """Define `floors_boxing::twice` with a CPU kernel written in Python (once per process)."""
    if _LIBRARY:
        return
    library = Library("floors_boxing", "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CPU")
    _LIBRARY.append(library)


def registrations(op: str) -> list[tuple[str, str, set[str]]]:
    """`(key, file, calling conventions)` for each kernel registered directly for `op`."""
    rows = []
    for line in torch._C._dispatch_dump(op).splitlines():
        match = _REGISTRATION.match(line.strip())
        if match:
            key, path, kinds = match.groups()
            rows.append((key, _short(path), set(kinds.split())))
    return rows


def second_fallback_refused(key: str) -> str | None:
    """Try to register a Python fallback for `key` for every operator; the error's first line, or None."""
    library = Library("_", "IMPL")
    try:
        library.fallback(lambda op, *args, **kwargs: op(*args, **kwargs), key)
    except RuntimeError as error:
        return str(error).splitlines()[0].split(";")[0]  # without the paths of the two registrations
    finally:
        library._destroy()
    return None


def slots(op: str) -> dict[str, tuple[str, str]]:
    """`key -> (kernel, fallback or fallthrough, registration file:line)` from the computed table of `op`."""
    table = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        match = _SLOT.match(line.strip())
        if match:
            key, fallthrough, where, kind = match.groups()
            label = "fallthrough" if fallthrough else "fallback" if kind == "backend fallback" else kind
            table[key] = (label, _short(where))
    return table


class PassThrough(TorchDispatchMode):
    """A dispatch mode that records each operator it sees and calls it again, unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def timings(rounds: int = 7) -> dict[str, float]:
    """Fastest seconds per call of a one-element add through three doors into the same operator.

    The three are timed in turns, round after round, and each keeps its fastest sample: a burst of
    other work on the machine then slows all three alike instead of whichever ran at that moment.
    """
    a, b = torch.ones(1), torch.ones(1)
    op = torch.ops.aten.add.Tensor
    mode = PassThrough()

    def moded() -> float:
        with mode:
            return time_call(lambda: torch.add(a, b), samples=5).best

    doors: dict[str, Callable[[], float]] = {
        "torch.add(a, b): typed binding, unboxed": lambda: time_call(lambda: torch.add(a, b), samples=5).best,
        "torch.ops.aten.add.Tensor(a, b): a stack": lambda: time_call(lambda: op(a, b), samples=5).best,
        "torch.add(a, b) in a TorchDispatchMode": moded,
    }
    best = dict.fromkeys(doors, float("inf"))
    for _ in range(rounds):
        for label, measure in doors.items():
            best[label] = min(best[label], measure())
    return best


def main() -> None:
    define_python_operator()
    # Printed for a phone's 46 columns: each key on a line, how its kernel can be called and its file under it
    # (the longest key and file are 46 and 52 columns).
    print("Kernels registered for aten::add.Tensor, and how each can be called")
    add = registrations("aten::add.Tensor")
    for key, path, kinds in add:
        print(f"  {key}")
        print(f"    {' and '.join(sorted(kinds))}, {path}")
    twice = registrations("floors_boxing::twice")
    print("\nThe kernel of floors_boxing::twice, a CPU kernel written in Python")
    for key, path, kinds in twice:
        print(f"  {key}")
        print(f"    {' and '.join(sorted(kinds))}, {path}")

    # Printed for a phone's 46 columns: not a table of four 11-column cells, but each key on a line with what it
    # holds and for which of the operators.
    print("\nWhat five keys hold for four operators (the last defined by this script)")
    tables = {op: slots(op) for op in OPS}
    for key in FALLBACK_KEYS:
        held: dict[str, list[str]] = {}
        for op in OPS:
            held.setdefault(tables[op].get(key, ("-", ""))[0], []).append(op.split("::")[1])
        print(f"  {key}: " + "; ".join(f"{what} for {', '.join(ops)}" for what, ops in held.items()))
    print("  where each fallback and fallthrough was registered:")
    for key in FALLBACK_KEYS:
        where = sorted({tables[op][key][1] for op in OPS if tables[op].get(key, ("kernel",))[0] != "kernel"})
        print(f"  {key}: {', '.join(where)}")

    refused = second_fallback_refused("AutocastCPU")
    print(f"\nA second fallback for AutocastCPU, from Python: {refused or 'accepted'}")

    mode = PassThrough()
    with mode:
        torch.sin(torch.ones(2))
        torch.ops.floors_boxing.twice(torch.ones(2))
    print(f"\nA TorchDispatchMode saw: {', '.join(name for name in mode.seen if 'ones' not in name)}")

    times = timings()
    plain = times["torch.add(a, b): typed binding, unboxed"]
    # Printed for a phone's 46 columns: each door on a line, its time and its ratio to the plain call under it.
    print("\nOne-element add, fastest sample of each, timed in turns")
    for label, seconds in times.items():
        print(f"  {label}")
        print(f"    {human_seconds(seconds):>9}  {seconds / plain:5.1f}x")

    cpp = [kinds for _, path, kinds in add if path.endswith(".cpp")]
    python = [kinds for _, path, kinds in add + twice if not path.endswith(".cpp")]
    claim(
        "every kernel of add registered from C++ can be called both boxed and unboxed",
        held=bool(cpp) and all(kinds == {"boxed", "unboxed"} for kinds in cpp),
        detail=f"{len(cpp)} C++ kernels",
    )
    claim(
        "a kernel written in Python can only be called boxed",
        held=bool(python) and all(kinds == {"boxed"} for kinds in python),
        detail=f"{len(python)} Python kernels",
    )
    claim(
        "the Python key holds one and the same boxed fallback for every operator, the new one included",
        held=all(tables[op]["Python"][0] == "fallback" for op in OPS)
        and len({tables[op]["Python"][1] for op in OPS}) == 1,
    )
    claim(
        "ADInplaceOrView, BackendSelect and AutocastCPU are fallthrough fallbacks for an operator with no kernel there",
        held=all(
            tables[op][key][0] == "fallthrough"
            for op in ("aten::add.Tensor", "floors_boxing::twice")
            for key in ("ADInplaceOrView", "BackendSelect", "AutocastCPU")
        ),
    )
    claim(
        "a kernel registered for one operator (addmm's autocast kernel) takes the place of the fallback",
        held=tables["aten::addmm"]["AutocastCPU"][0] == "kernel",
    )
    claim(
        "a key holds one fallback: a second one for AutocastCPU is refused",
        held=refused is not None and "multiple backend fallbacks" in refused,
    )
    claim(
        "the boxed fallback brings every operator to the mode, even one defined a moment ago",
        held="aten.sin.default" in mode.seen and "floors_boxing.twice.default" in mode.seen,
    )
    ops, moded = times["torch.ops.aten.add.Tensor(a, b): a stack"], times["torch.add(a, b) in a TorchDispatchMode"]
    # Both doors parse Python arguments before they reach a kernel, and that costs about what the
    # stack does: torch.ops was clearly slower on the developers' machines and as fast on a CI
    # runner. The pattern is the order of magnitude, not which of the two wins.
    claim(
        "a call with a stack from Python (torch.ops) costs the same order as the typed binding: within 3 times",
        held=1 / 3 < ops / plain < 3,
        detail=f"{ops / plain:.1f}x",
    )
    claim(
        "a call through the boxed Python fallback is clearly slower than the plain call",
        held=moded / plain > 1.5,
        detail=f"{moded / plain:.1f}x",
    )
    claim(
        "the mode's call costs more than a torch.ops call, which it makes inside",
        held=moded / ops > 1.1,
        detail=f"{moded / ops:.1f}x",
    )


if __name__ == "__main__":
    main()
