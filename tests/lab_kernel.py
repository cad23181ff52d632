"""Grading a lab's variants without running the whole lab again for each.

A lab runs once, whole, in a fresh kernel (`LabKernel`): as shipped to a student, its solution cells
blank. A variant (solved, planted or mistyped answers, a suggested change) differs from it in a few
cells; `LabKernel.graded` runs, in that same kernel, only the cells whose outcome the variant can
change (`plan`): the changed cells and those that read what they bind. The others keep the outcome
the run the variants are told apart from gave them: the first, or the one `LabKernel.rebase` made
(the solved lab's, which every later variant is then told apart from).

The kernel keeps, for every name, which cell's run last bound it and what that run read (`holders`).
A cell that runs must read each name as a fresh run of the variant would give it to it, from the
last cell before it that binds it, itself run on what a fresh run gives it; where an earlier
variant's run holds the name instead (even by the same cell and source, run on another input), the
cell that binds it in the variant runs again first. What no name records (a compiler's caches, the
RNG, torch's thread count) the labs keep from mattering on a second run, and
`test_a_variant_grades_the_same_in_its_lab_kernel_as_in_a_fresh_one` compares, on every lab, the
solved lab graded this way with the fresh run of it that the site's build made.
"""

from __future__ import annotations

import builtins
import copy
import functools
import hashlib
import symtable
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import nbclient

from conftest import ROOT
from pytorch_floors.labs.cells import exercises

CELL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Graded:
    """What one run of a lab did: per exercise, its self-check's outcome; other cells' errors."""

    checks: dict[str, tuple[str, str]]  # anchor -> ("passed" | exception name, printed text or message)
    other_errors: list[str]
    stderr: str
    seconds: float
    rerun: tuple[int, ...] | None = None  # the cells run in a lab kernel; None: a fresh kernel ran them all


def cell_outcome(cell: Any) -> tuple[str, str]:
    """An executed cell's outcome: ("passed", what it printed), or its first error's name and message."""
    errors = [out for out in cell.outputs if out.output_type == "error"]
    if errors:
        return errors[0].ename, errors[0].evalue
    return "passed", "".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stdout")


def graded(notebook: Any, seconds: float, rerun: tuple[int, ...] | None = None) -> Graded:
    """The outcomes of an executed notebook's cells, by exercise for the self-checks."""
    check_cells = {index: e.anchor for e in exercises(notebook) for index in e.checks}
    checks: dict[str, tuple[str, str]] = {}
    other_errors, stderr = [], ""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        stderr += "".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stderr")
        result, message = cell_outcome(cell)
        if index in check_cells:
            checks[check_cells[index]] = (result, message)
        elif result != "passed":
            other_errors.append(f"cell {index}: {result}: {message}")
    return Graded(checks, other_errors, stderr, seconds, rerun)


def _client(notebook: Any) -> nbclient.NotebookClient:
    return nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(ROOT)}},
    )


def run_fresh(notebook: Any) -> Graded:
    """Run `notebook` whole in a fresh kernel (errors allowed, so every self-check is graded)."""
    start = time.perf_counter()
    _client(notebook).execute(cwd=str(ROOT))
    return graded(notebook, time.perf_counter() - start)


@dataclass(frozen=True)
class _Names:
    binds: frozenset[str]
    reads: frozenset[str]  # names it loads that it does not bind itself


_BUILTINS = frozenset(dir(builtins))


@functools.cache  # the same sources are read for every variant of a lab
def names(source: str) -> _Names:
    """The global names a cell binds, and the ones it reads without binding them (its functions' included)."""
    top = symtable.symtable(source, "<cell>", "exec")
    binds = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    reads = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    nested = list(top.get_children())
    while nested:  # a function's globals are read when it is called, which a later cell may do
        table = nested.pop()
        nested += table.get_children()
        for symbol in table.get_symbols():
            if symbol.is_global() and symbol.is_referenced():
                reads.add(symbol.get_name())
            if symbol.is_declared_global() and symbol.is_assigned():
                binds.add(symbol.get_name())
    return _Names(frozenset(binds), frozenset(reads - binds - _BUILTINS))


Holder = tuple[int, str]
"""The run that last bound a name in a kernel: its cell's index, and a digest of that run ("" where it failed).

The digest is of the cell's source and of the holders of the names it read as it ran: a cell that
ran again with its own source, but read another value (a measurement cell after a variant changed
its input), holds its names as another run does.
"""


def _digest(index: int, source: str, read: dict[str, Holder]) -> str:
    text = "\0".join([str(index), source, *(f"{name}={read[name]}" for name in sorted(read))])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def holders(notebook: Any, indices: list[int], before: dict[str, Holder] | None = None) -> dict[str, Holder]:
    """Who holds each name after the cells at `indices` of `notebook` ran in order, from `before`."""
    held = dict(before or {})
    for index in indices:
        cell = notebook.cells[index]
        failed = any(out.output_type == "error" for out in cell.get("outputs", []))
        found = names(cell.source)
        run = "" if failed else _digest(index, cell.source, {n: held[n] for n in found.reads if n in held})
        for name in found.binds:
            held[name] = (index, run)
    return held


def plan(base: Any, variant: Any, held: dict[str, Holder]) -> tuple[int, ...]:
    """The cells of `variant` to run, in order, in a kernel whose names `held` says who bound.

    A cell whose outcome a fresh run of `variant` could see differ from the one it had in a fresh
    run of `base` is run: one whose source changed, or that reads a name which, in `variant`, a
    changed or re-run cell binds, or another cell than in `base`. Then every cell to run must find
    each name it reads bound by the same run as in a fresh run of `variant` (the last cell before
    it that binds the name, itself having read what a fresh run gives it): where the kernel holds
    that name from another run (an earlier variant's), the cell that binds it there is run again
    too, and so on.
    """
    if len(base.cells) != len(variant.cells):
        raise ValueError("a variant keeps the lab's cells: it changes their sources only")
    code = [i for i, cell in enumerate(variant.cells) if cell.cell_type == "code"]
    ours, theirs = ({i: names(nb.cells[i].source) for i in code} for nb in (variant, base))

    def binder(found: dict[int, _Names], cell: int, name: str) -> int | None:
        return max((i for i in code if i < cell and name in found[i].binds), default=None)

    fresh: dict[int, Holder] = {}

    def fresh_run(cell: int) -> Holder:
        """The holder of what `cell` binds in a fresh run of `variant` (every cell before it passed)."""
        if cell not in fresh:
            read = {}
            for name in ours[cell].reads:
                bound_by = binder(ours, cell, name)
                if bound_by is not None:
                    read[name] = fresh_run(bound_by)
            fresh[cell] = (cell, _digest(cell, variant.cells[cell].source, read))
        return fresh[cell]

    runs: set[int] = set()
    for cell in code:
        if variant.cells[cell].source != base.cells[cell].source or any(
            binder(ours, cell, name) in runs or binder(ours, cell, name) != binder(theirs, cell, name)
            for name in ours[cell].reads
        ):
            runs.add(cell)
    while True:
        now, missing = dict(held), set[int]()
        for cell in sorted(runs):
            for name in ours[cell].reads:
                bound_by = binder(ours, cell, name)
                if bound_by is None or bound_by in runs:
                    continue  # nothing in the lab binds it (a builtin), or a cell that runs before this one does
                if now.get(name) != fresh_run(bound_by):
                    missing.add(bound_by)
            now.update((name, fresh_run(cell)) for name in ours[cell].binds)
        if not missing:
            return tuple(sorted(runs))
        runs |= missing


class LabKernel:
    """One kernel in which a lab ran whole; `graded(variant)` runs only the cells the variant needs."""

    def __init__(self, notebook: Any) -> None:
        scratch = copy.deepcopy(notebook)  # nbclient puts each cell it runs into its notebook
        self._client = _client(scratch)
        self._kernel = ExitStack()
        self._kernel.enter_context(self._client.setup_kernel(cwd=str(ROOT)))
        start = time.perf_counter()
        for index, cell in enumerate(scratch.cells):
            self._client.execute_cell(cell, index)
        self._base = copy.deepcopy(scratch)  # the whole run, as it ended: what every variant is told apart from
        self.first = graded(self._base, time.perf_counter() - start)
        self._held = holders(self._base, [i for i, c in enumerate(self._base.cells) if c.cell_type == "code"])

    @property
    def ran(self) -> Any:
        """The notebook every variant is told apart from, every cell's outputs in it (a copy)."""
        return copy.deepcopy(self._base)

    def close(self) -> None:
        self._kernel.close()

    def graded(self, variant: Any) -> Graded:
        """The variant's outcomes: the cells `plan` names run here, the others as the base run left them."""
        return self._run(variant)[1]

    def rebase(self, variant: Any) -> Graded:
        """Grade `variant` as `graded` does, then tell every later variant apart from it instead.

        Its notebook, every cell's outputs in it, becomes `ran`: the cells that did not run keep the
        outputs the earlier base gave them, which a fresh run of `variant` gives them too (`plan`).
        """
        result, outcomes = self._run(variant)
        self._base = result
        return outcomes

    def _run(self, variant: Any) -> tuple[Any, Graded]:
        runs = plan(self._base, variant, self._held)
        result = copy.deepcopy(self._base)
        start = time.perf_counter()
        for index in runs:
            cell = copy.deepcopy(variant.cells[index])
            cell.outputs = []
            self._client.execute_cell(cell, index)
            result.cells[index] = cell
        seconds = time.perf_counter() - start
        self._held = holders(result, list(runs), self._held)
        return result, graded(result, seconds, runs)
