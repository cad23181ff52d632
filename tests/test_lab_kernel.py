"""Lab kernels: the grading shortcut's (tests/lab_kernel.py), and the build's, which meets a proof's rule on secrets.

`plan` is read on small notebooks made here, with no kernel: each case is one way a variant's cell
can see another value than in the solved run (its source changed, a name it reads is bound by a
changed cell or by another cell, or the kernel holds an earlier variant's value of it). A test
then runs a small lab with a measurement cell in a lab kernel and in fresh kernels, variant by
variant, in the order that makes the kernel bring earlier values back.

The last tests run cells through the build's executor (`pytorch_floors.labs.kernel`) as
`tests/test_hardening.py` runs blocks: a cell whose output holds a secret fails by name, as a block does.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
from lab_kernel import Holder, LabKernel, holders, plan, run_fresh
from nbclient.exceptions import CellExecutionError
from test_hardening import ANCESTOR_WALK, SECRET, linux_only

from conftest import ROOT
from pytorch_floors.labs import kernel
from pytorch_floors.labs.cells import ANSWER, SOLUTION, checker_source, student_notebook, with_answers


def notebook(*cells: str | tuple[str, str]) -> Any:
    """A notebook of code cells; a ("md", text) item is a markdown cell, an ("answer"|"solution", code) a tagged one."""
    made = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    for cell in cells:
        kind, source = cell if isinstance(cell, tuple) else ("code", cell)
        if kind == "md":
            made.cells.append(nbformat.v4.new_markdown_cell(source))  # type: ignore[no-untyped-call]
        else:
            tags = [kind] if kind in (ANSWER, SOLUTION) else []
            made.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags}))  # type: ignore[no-untyped-call]
    return made


def edited(base: Any, **sources: str) -> Any:
    """A copy of `base` with the cells named `c<index>` given new sources."""
    variant = copy.deepcopy(base)
    for name, source in sources.items():
        variant.cells[int(name.removeprefix("c"))].source = source
    return variant


def after_base(base: Any) -> dict[str, Holder]:
    """Who holds each name once `base` ran whole (what a lab kernel starts from)."""
    return holders(base, [i for i, cell in enumerate(base.cells) if cell.cell_type == "code"])


CHAIN = notebook("n = 3", "m = n * 2", "print(m)", "k = 1", "print(k)")


def test_an_unchanged_variant_runs_nothing() -> None:
    assert plan(CHAIN, copy.deepcopy(CHAIN), after_base(CHAIN)) == ()


def test_a_changed_cell_runs_and_so_does_every_cell_that_reads_what_it_binds() -> None:
    assert plan(CHAIN, edited(CHAIN, c0="n = 4"), after_base(CHAIN)) == (0, 1, 2)
    assert plan(CHAIN, edited(CHAIN, c3="k = 2"), after_base(CHAIN)) == (3, 4)


def test_a_cell_runs_where_another_cell_binds_a_name_it_reads() -> None:
    # The variant's cell 3 binds m too: cell 4, which read cell 1's m, now reads cell 3's.
    base = notebook("m = 1", "print(m)", "x = 0", "print(x)", "print(m)")
    variant = edited(base, c3="m = 2")
    assert plan(base, variant, after_base(base)) == (3, 4)


def test_a_name_an_earlier_variant_left_is_bound_again_first() -> None:
    # A variant ran cell 0 as "n = 4" in this kernel; the next variant changes only cell 2, which reads m,
    # which the kernel holds from that run: cells 0 and 1 run again so cell 2 reads the lab's own n and m.
    held = holders(edited(CHAIN, c0="n = 4"), [0, 1], after_base(CHAIN))
    assert plan(CHAIN, edited(CHAIN, c2="print(m + 1)"), held) == (0, 1, 2)


def test_a_name_bound_by_a_failed_run_is_bound_again() -> None:
    failed = edited(CHAIN, c0="n = undefined_name")
    failed.cells[0].outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="x", traceback=[])]  # type: ignore[no-untyped-call]
    held = holders(failed, [0], after_base(CHAIN))
    assert plan(CHAIN, edited(CHAIN, c1="m = n * 3"), held) == (0, 1, 2)


def test_a_functions_globals_count_as_read_where_it_is_called() -> None:
    base = notebook("scale = 2", "def f(x):\n    return x * scale\n", "print(f(1))")
    # f reads scale when it is called: changing scale re-runs the cell that calls f (and the one that defines it).
    assert plan(base, edited(base, c0="scale = 3"), after_base(base)) == (0, 1, 2)


def test_a_variant_keeps_the_labs_cells() -> None:
    with pytest.raises(ValueError, match="keeps the lab's cells"):
        plan(CHAIN, notebook("n = 3"), after_base(CHAIN))


# A small lab: a measurement cell, one exercise with an answer, a solution and a check. The check fails
# with NotFilled until the answer is filled and WrongAnswer when it disagrees with what was measured.
SMALL_LAB = notebook(
    "class NotFilled(Exception):\n    pass\n\nclass WrongAnswer(Exception):\n    pass\n",
    "size = 1000",
    "measured = sum(range(size))",
    ("md", '## Exercise 1 · The sum <a id="the-sum"></a>'),
    (ANSWER, "TOTAL = ..."),
    (SOLUTION, "TOTAL = 499500"),
    "# SELF-CHECK\n"
    "if TOTAL is ...:\n    raise NotFilled('fill in TOTAL')\n"
    "if TOTAL != measured:\n    raise WrongAnswer(f'TOTAL should be {measured}, not {TOTAL}')\n"
    "print('self-check passed')\n",
)


@pytest.mark.slow
def test_a_lab_kernel_grades_each_variant_as_a_fresh_kernel_does() -> None:
    variants = {
        # Changes the measurement cell and the answer: the kernel now holds another size and measured.
        "measured again, answered right": with_answers(
            edited(SMALL_LAB, c1="size = 2000"), {"the-sum": "TOTAL = 1999000"}
        ),
        # Unchanged measurement, which the kernel must bring back from the last variant's size: else it passes.
        "answered wrong": with_answers(SMALL_LAB, {"the-sum": "TOTAL = 1999000"}),
        # The solution blanked: the answer cell's placeholder must be bound again.
        "as shipped": with_answers(SMALL_LAB, {"the-sum": ""}),
        "measured again, left unanswered": with_answers(edited(SMALL_LAB, c1="size = 10"), {"the-sum": ""}),
        "solved": copy.deepcopy(SMALL_LAB),
    }
    expected = {
        "measured again, answered right": "passed",
        "answered wrong": "WrongAnswer",
        "as shipped": "NotFilled",
        "measured again, left unanswered": "NotFilled",
        "solved": "passed",
    }
    # As the lab tests use it: the lab run whole as shipped, then graded solved (the base of later variants).
    kernel = LabKernel(with_answers(SMALL_LAB, {"the-sum": ""}))
    try:
        assert kernel.first.checks["the-sum"][0] == "NotFilled"
        solved = kernel.rebase(copy.deepcopy(SMALL_LAB))
        assert solved.checks == run_fresh(copy.deepcopy(SMALL_LAB)).checks
        assert solved.checks["the-sum"] == ("passed", "self-check passed\n") and solved.rerun == (5, 6)
        ran = kernel.ran
        assert ran.cells[5].source == "TOTAL = 499500" and ran.cells[6].outputs[0].text == "self-check passed\n"
        for name, variant in variants.items():
            in_kernel = kernel.graded(variant)
            fresh = run_fresh(copy.deepcopy(variant))
            assert in_kernel.checks == fresh.checks, name
            assert in_kernel.other_errors == fresh.other_errors == [], name
            assert fresh.checks["the-sum"][0] == expected[name], (name, fresh.checks)
    finally:
        kernel.close()
    assert run_fresh(student_notebook(SMALL_LAB)).checks["the-sum"][0] == "NotFilled"


# --- the build's lab kernel: a proof's rule on secrets -------------------------------------------------


def _lab(*cells: str) -> str:
    """A percent-format lab (Lab 2's title, which names its file) with these code cells."""
    return "# %% [markdown]\n# # Lab 2 · Python\n\n" + "".join(f"# %%\n{cell}\n\n" for cell in cells)


LEAKS = _lab(
    'print("before")',
    'print("the token:", "ghp_fake" + "123floors", "and the rest of its line")',
    'print("AKIA" + "ABCDEFGHIJKLMNOP")',
)
"""A lab whose second and third code cells print a secret (the build's token, a credential's shape)."""


@pytest.mark.waits
@pytest.mark.parametrize("serve", [False, True], ids=["build", "serve"])
def test_a_lab_cell_whose_output_holds_a_secret_fails_by_name(monkeypatch: pytest.MonkeyPatch, serve: bool) -> None:
    # A cell's output was redacted (`<GITHUB_TOKEN withheld>`) and the rest of it published; a block's fails.
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    notebook = jupytext.reads(LEAKS, fmt="py:percent")
    executor = kernel.LabExecutePreprocessor(timeout=60, kernel_name="python3")  # type: ignore[no-untyped-call]
    labs = kernel.LabRuns(keep_going=serve)
    kernel.bind(labs)
    try:
        if serve:
            executor.preprocess(notebook, {"metadata": {"path": str(ROOT)}})
            [run] = labs.take_runs()
            said = [f"cell {error.cell + 1}: {error.error}" for error in run.errors]
        else:
            with pytest.raises(CellExecutionError) as raised:
                executor.preprocess(notebook, {"metadata": {"path": str(ROOT)}})
            said = [str(raised.value)]
    finally:
        kernel.unbind(labs)
    token = "cell 3: SecretInOutput: its output holds the value of the build's environment variable GITHUB_TOKEN"
    assert token in said[0], said
    if serve:
        assert "cell 4: SecretInOutput: its output holds an AWS access key" in said[1], said
    shown = json.dumps([cell.get("outputs", []) for cell in notebook.cells])
    assert SECRET not in shown and "AKIAABCDEFGHIJKLMNOP" not in shown
    assert "the rest of its line" not in shown and "before" in shown


_LAB_IN_A_PROCESS = """\
import json, os, sys
import jupytext
from pytorch_floors.labs import kernel
notebook = jupytext.reads(open(sys.argv[1]).read(), fmt="py:percent")
print("BUILD", os.getpid(), flush=True)
try:
    executor = kernel.LabExecutePreprocessor(timeout=60, kernel_name="python3")
    executor.preprocess(notebook, {"metadata": {"path": sys.argv[2]}})
except Exception as error:
    print("FAILED", error)
print("OUTPUTS", json.dumps([cell.get("outputs", []) for cell in notebook.cells]))
"""

_WITHOUT_CAPABILITIES = """\
import os, sys
from pytorch_floors.execution.process.confine import confine_this_process
confine_this_process()
os.execvp(sys.argv[1], sys.argv[1:])
"""
"""Runs a command holding no capability, as root or not: what an ordinary user's shell holds."""


@linux_only
@pytest.mark.waits
def test_a_lab_cell_that_reads_an_ancestors_environment_as_an_ordinary_user_shows_none_of_it(tmp_path: Path) -> None:
    # As `test_no_ancestor_of_a_block_gives_it_the_builds_secrets`: the build hides itself, the shell above it
    # cannot be hidden. A cell printed the shell's environment: the token withheld, every other variable shown.
    (tmp_path / "lab.py").write_text(_lab(f"show = False\n{ANCESTOR_WALK}", f"show = True\n{ANCESTOR_WALK}"))
    (tmp_path / "build.py").write_text(_LAB_IN_A_PROCESS)
    (tmp_path / "drop.py").write_text(_WITHOUT_CAPABILITIES)
    env = {**os.environ, "GITHUB_TOKEN": SECRET, "FLOORS_TEST_SHELL": "only-in-the-shell"}
    command = f"{sys.executable} {tmp_path / 'build.py'} {tmp_path / 'lab.py'} {tmp_path}; true"
    # Root keeps capabilities that hide its shell from a capability-less kernel: the whole chain gives them up.
    chain = [sys.executable, str(tmp_path / "drop.py"), "sh", "-c", command]
    done = subprocess.run(chain, env=env, capture_output=True, text=True, timeout=240, check=False)
    out = done.stdout
    assert "BUILD" in out, done.stderr[-3000:]
    build = out.split("BUILD ", 1)[1].split()[0]
    assert f"refused {build} environ PermissionError" in out, out[-3000:]
    assert f"refused {build} mem PermissionError" in out, out[-3000:]
    assert re.search(r"environ \d+ True", out), "the shell's environment, as an ordinary user reads it"
    assert "FAILED docs/labs/2-python.py › cell 3: SecretInOutput: its output holds" in out, out[-3000:]
    assert SECRET not in out and "only-in-the-shell" not in out


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.slow
def test_a_self_check_that_fails_shows_its_message_alone() -> None:
    """A student's notebook showed `require`'s frame inside the helpers (`checker.py:43`) above "fill in ..."
    (issue 59). In a Jupyter kernel, NotFilled and WrongAnswer now show their message, nothing else."""
    failing = notebook(checker_source(), "ANSWER = None", "require(ANSWER=ANSWER)", 'expect(1 > 2, "1 is not more")')
    run_fresh(failing)
    shown = ["\n".join(ANSI.sub("", line) for line in cell.outputs[0].traceback) for cell in failing.cells[2:]]
    assert shown == [
        "NotFilled: fill in ANSWER in the answer cell above, run it, then run this check again",
        "WrongAnswer: 1 is not more",
    ], shown
