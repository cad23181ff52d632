"""How a lab's notebook executes: under a proof's policy, a narrow kernel environment and scrubbed outputs.

mkdocs-jupyter executes labs with nbconvert's `ExecutePreprocessor`, whose kernel starts with the
build's whole environment, and shows what a cell printed as it is: a cell printing
`os.environ["GITHUB_TOKEN"]`, `sys.prefix` or `~` put the token and the build machine's paths on the
page. `jupyter/jupyter_nbconvert_config.json` names `LabExecutePreprocessor` in place of nbconvert's:
its kernel starts (`execve`) with only the variables a proof sees (`sandbox.PASSED_THROUGH`), and every
output is scrubbed of machine paths and reordering controls the way a proof's output is. The kernel is
confined as a proof's process is (`confine`), and a cell meets a proof's rule on secrets: the
processes above the build (a shell, `make`) are not the build's to hide, so a cell whose output
holds a secret of the build's environment, or a credential's shape, fails by name, its outputs
replaced by that failure (a shell's other variables, read with the token, are never shown).
Before it, the configuration names `LabCheckerPreprocessor`, which puts the self-check helpers into
the lab's `checker` cell (`cells.with_checker`), so the page shows them and the kernel runs them; after
it, `LabMessagesPreprocessor`, which shows a translated lab's own messages in its language, once its run
is keyed and its outputs are in place (`messages.translated_messages`).

The build's log says what a lab does as it does it, as it does for proofs (`lab n/N docs/labs/3-boundary.py:
running (cells limited to 300 s each)`, then `ran in 14 s`), numbered among the labs the build planned
(`plan_labs`). The kernel's own warning that it talks to the build over local TCP without encryption is
kept out of that log (`quiet_kernel_stderr`); anything else the kernel writes to its standard error goes through.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellExecutionError
from nbconvert.preprocessors import ExecutePreprocessor, Preprocessor
from traitlets import Bool, Type

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.output import PathScrubber, clean_text, escape_bidi
from pytorch_floors.execution.process.confine import hide_this_process
from pytorch_floors.execution.process.sandbox import PASSED_THROUGH
from pytorch_floors.execution.progress import Progress
from pytorch_floors.execution.secrets import SecretFinder
from pytorch_floors.i18n.messages import t
from pytorch_floors.i18n.sections import without_comments
from pytorch_floors.labs.cells import CHECKER, checker_source, lab_language, lab_name, with_checker
from pytorch_floors.labs.messages import translated_messages

__all__ = [
    "FOLDS",
    "PROJECT_DIR",
    "CellError",
    "LabCheckerPreprocessor",
    "LabExecutePreprocessor",
    "LabMessagesPreprocessor",
    "LabRun",
    "LabRuns",
    "NarrowKernelManager",
    "bind",
    "code_key",
    "fold_labels",
    "kernel_environment",
    "quiet_kernel_stderr",
    "scrub_outputs",
    "secret_in_outputs",
    "unbind",
]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

PROJECT_DIR = "FLOORS_PROJECT_DIR"
"""Set in the build's environment (not the kernel's) by `labs.configure_jupyter`: the path pages must not show."""


@dataclass(frozen=True)
class CellError:
    """A cell of a lab that raised while the lab executed with errors allowed (`mkdocs serve`).

    Attributes:
        cell: The cell's index in the notebook (0-based), as nbconvert numbers it.
        error: The exception's name and message (`WrongAnswer: ...`), scrubbed.
    """

    cell: int
    error: str


@dataclass(frozen=True)
class LabRun:
    """One execution of a lab, as the executor saw it (a lab taken from mkdocs-jupyter's cache has none).

    Attributes:
        seconds: How long the cells took to run, kernel start included.
        errors: The cells that raised, when errors were allowed (`mkdocs serve`).
        deferred: The lab did not run: a serve session's background build runs it (`defer_labs`).
    """

    seconds: float
    errors: tuple[CellError, ...]
    deferred: bool = False


@dataclass
class LabRuns:
    """What the labs' executor needs to know of the build it runs in, and what it leaves for the build.

    Each build makes its own (`SiteBuild.labs`) and binds it for its length (`bind`): nbconvert constructs
    the executors itself, from the project's Jupyter configuration, so the build cannot hand it to them.
    A build's plan, its runs and the outputs of the labs it ran therefore end with it (a serve session's
    earlier build once left its labs' outputs to the next build).

    Attributes:
        errors: The failing cells of the lab being run (serve only: `keep_going`).
        runs: Each lab run since the last `take_runs`.
        keep_going: A failing cell is recorded and the run goes on (serve), instead of failing the build.
        defer: Labs wait for a serve session's background build (`defer_labs`).
        planned: The build's labs, in rendering order (`plan_labs`).
        on_progress: Receives each lab's steps as events (`report_progress`).
        executed: The code cells' outputs of each lab this build ran, by its code (`code_key`): a translated
            lab has its English lab's code, and shows what that run printed instead of running again.
    """

    errors: list[CellError] = field(default_factory=list)
    runs: list[LabRun] = field(default_factory=list)
    keep_going: bool = False
    defer: bool = False
    planned: list[str] = field(default_factory=list)
    on_progress: Callable[[Progress], None] | None = None
    executed: dict[str, list[Any]] = field(default_factory=dict)

    def report_progress(self, callback: Callable[[Progress], None] | None) -> None:
        """Hand each lab's steps to `callback` as events (a serve session's background build), or to no one.

        Args:
            callback: Receives each `Progress`; `None` stops the events.
        """
        self.on_progress = callback

    def lab_progress(self, lab: str, state: str, detail: str) -> None:
        """Hand one step of a lab to the callback `report_progress` set, if any.

        Args:
            lab: The lab's path as `cells.lab_name` gives it (`docs/labs/3-boundary.py`).
            state: One of `execution.progress.STATES`.
            detail: The rest, in words.
        """
        if self.on_progress is None:
            return
        number = self._number(lab)
        self.on_progress(Progress("lab", number, len(self.planned), lab.removeprefix("docs/"), lab, state, detail))

    def _number(self, lab: str) -> int:
        """The lab's place in this build's plan, from 1 (`plan_labs`), or 0 when it is not planned."""
        relative = lab.removeprefix("docs/")
        return self.planned.index(relative) + 1 if relative in self.planned else 0

    def defer_labs(self, enabled: bool) -> None:
        """Render labs without running them, for a serve session whose background build runs them.

        A lab executed earlier still comes from mkdocs-jupyter's cache, outputs and all; one that would
        execute is rendered as it is written, and its run is recorded as deferred (`take_runs`), so the
        build can drop what mkdocs-jupyter cached of it and show the page again once the lab has run.

        Args:
            enabled: Whether labs wait for the background build.
        """
        self.defer = enabled

    def wait_for_background(self, lab: str) -> None:
        """Record a lab's run as deferred (`take_runs`): a serve session's background build runs it.

        The executor records it so when the lab renders without running; a serve session's first build
        records it so for a lab it does not even convert yet (`plugin.serve.later`).

        Args:
            lab: The lab's source path, from the project root (`docs/labs/3-boundary.py`).
        """
        log.info("lab %s: waits for the background build", self.lab_place(lab))
        self.lab_progress(lab, "waits", "for the background build")
        self.runs.append(LabRun(0.0, (), deferred=True))

    def plan_labs(self, labs: Sequence[str]) -> None:
        """Name the labs this build renders, in the order it renders them, so the log numbers each (`lab n/N ...`).

        Args:
            labs: Source paths relative to `docs/` (`labs/3-boundary.py`), as the floor registry lists them.
        """
        self.planned = list(labs)

    def lab_place(self, lab: str) -> str:
        """`n/N docs/labs/...` for a lab of this build's plan (`plan_labs`), or the lab alone if it is not planned.

        Args:
            lab: The lab's path as `cells.lab_name` gives it (`docs/labs/3-boundary.py`).

        Returns:
            How the log names it.
        """
        number = self._number(lab)
        return f"{number}/{len(self.planned)} {lab}" if number else lab

    def keep_going_on(self, enabled: bool) -> None:
        """Under `mkdocs serve`, record a failing cell and run on, instead of stopping the build.

        The lab's page then shows the cell's traceback where it failed, and the build records the lab as
        failed (`take_runs`). The rendered notebook's cache key is unchanged, so serve and build share
        cached labs; the build drops an entry made with a failure, so no later build shows it.

        Args:
            enabled: Whether failing cells are recorded rather than raised.
        """
        self.keep_going = enabled

    def take_runs(self) -> list[LabRun]:
        """The lab executions since the last call, and forget them (one lab renders at a time).

        The build asks after each lab page: a run means the lab executed in this build, none that
        mkdocs-jupyter took it from its cache.

        Returns:
            The runs, oldest first.
        """
        taken = list(self.runs)
        self.runs.clear()
        self.errors.clear()
        return taken


_bound: LabRuns | None = None
"""The `LabRuns` of the build running in this process, for the executors nbconvert constructs (`bind`)."""


def bind(labs: LabRuns) -> None:
    """Name the build now running in this process, whose `LabRuns` the executors record into.

    nbconvert constructs `LabExecutePreprocessor` from the Jupyter configuration and takes no object of
    the build's, so this one slot names the running build's own; it holds no state of its own, and a new
    build binds a new `LabRuns` (nothing of the last build's plan, runs or outputs reaches it).

    Args:
        labs: The build's `LabRuns`.
    """
    global _bound  # noqa: PLW0603  (see tests/test_house_rules.py's BUILD_STATE_SLOTS)
    _bound = labs


def unbind(labs: LabRuns) -> None:
    """At a build's end: the executors no longer record into its `LabRuns` (unless a newer build's is bound).

    Args:
        labs: The ending build's `LabRuns`.
    """
    global _bound  # noqa: PLW0603  (see tests/test_house_rules.py's BUILD_STATE_SLOTS)
    if _bound is labs:
        _bound = None


def _running() -> LabRuns:
    """The running build's `LabRuns`; an executor run outside a build (a test's) gets a fresh one of its own."""
    return _bound if _bound is not None else LabRuns()


def code_key(nb: Any) -> str:
    """What identifies a lab's code: its code cells' sources, in order (a translation's are the same).

    A translation's comments are its own language's (`i18n.sections.without_comments`), and so is the
    language its self-check helpers speak (`cells.with_checker`): neither is part of the key, so a
    translated lab shows its English lab's run.
    """
    code = "\n\0".join(
        CHECKER if CHECKER in cell.metadata.get("tags", []) else without_comments(cell.source)
        for cell in nb.cells
        if cell.cell_type == "code"
    )
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


_TRANSPORT_WARNING = re.compile(r"\bwithout encryption\b|^Warning: .*\binsecure\b", re.IGNORECASE)
"""What the kernel says about its local transport (ipykernel's `IPKernelApp` warns that TCP carries no
encryption): the build starts the kernel on this machine for its own cells, so the line tells an author nothing."""


def quiet_kernel_stderr(stream: IO[bytes], out: IO[str] | None = None) -> threading.Thread:
    """Copy a kernel's standard error to the build's, line by line, without its transport warning.

    Args:
        stream: The kernel process's standard error (a pipe).
        out: Where the other lines go (default: the build's `sys.stderr` at the time of each line).

    Returns:
        The (daemon) thread that copies until the kernel, and whatever it started, closed the pipe.
    """

    def copy() -> None:
        with stream:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", errors="replace")
                if _TRANSPORT_WARNING.search(line):
                    continue
                target = out if out is not None else sys.stderr
                target.write(line)
                target.flush()

    thread = threading.Thread(target=copy, name="lab-kernel-stderr", daemon=True)
    thread.start()
    return thread


def kernel_environment(build_env: Mapping[str, str]) -> dict[str, str]:
    """The whole environment of a lab's kernel: the variables a proof sees, nothing else of the build's.

    Matplotlib's backend is left to ipykernel (inline figures), unlike a proof's `Agg`.

    Args:
        build_env: The build's environment.

    Returns:
        The kernel's environment.
    """
    env = {name: build_env[name] for name in PASSED_THROUGH if name in build_env}
    env["PYTHONUNBUFFERED"] = "1"
    if "PYTHONPATH" in build_env:
        # As the blocks' fork server: the kernel imports the package the build imports (a checkout or a
        # snapshot put first on the path, as `make machines` does), and a search path is no secret.
        env["PYTHONPATH"] = build_env["PYTHONPATH"]
    return env


_SECRET_IN_OUTPUT = "SecretInOutput"
"""The error a cell whose output holds a secret fails with (its outputs are replaced by it)."""

# What a lab's kernel starts through: it confines the process, then runs ipykernel's launcher.
_CONFINE_MODULE = "pytorch_floors.execution.process.confine"


class NarrowKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels start with `kernel_environment`, whatever the caller passes."""

    async def start_kernel(self, **kwargs: Any) -> None:  # type: ignore[override]  # same call, env fixed
        """Start the kernel with the narrow environment.

        Args:
            **kwargs: What nbclient passes (`extra_arguments`, `cwd`); an `env` is replaced.
        """
        kwargs["env"] = kernel_environment(os.environ)
        # The kernel's parent is the build: its environment is hidden before the kernel starts (`confine`).
        hide_this_process()
        # Piped, so the kernel's warning about its local transport stays out of the build's log.
        kwargs["stderr"] = subprocess.PIPE
        await super().start_kernel(**kwargs)
        process = getattr(self.provisioner, "process", None)
        if process is not None and process.stderr is not None:
            quiet_kernel_stderr(process.stderr)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        """The kernel's command line, started through `confine`, so no cell can read the build's memory.

        Args:
            extra_arguments: What nbclient adds.

        Returns:
            The spec's command, its module run through the `confine` module (`python -m … -m ipykernel_launcher`).

        Raises:
            FloorsError: If the kernel is not started as `python -m MODULE` (a kernel spec of another kind).
        """
        command = super().format_kernel_cmd(extra_arguments)
        if len(command) < 3 or command[1] != "-m":
            raise FloorsError(
                f"a lab's kernel must start as 'python -m MODULE', so it can be confined; its spec says {command[:3]}"
            )
        return [command[0], "-m", _CONFINE_MODULE, *command[1:]]


def _scrub(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return escape_bidi(scrub(value))
    if isinstance(value, list):
        return [_scrub(item, scrub) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item, scrub) for key, item in value.items()}
    return value


def scrub_outputs(cell: Any, scrub: Callable[[str], str]) -> None:
    """Replace machine paths, secrets and bidirectional controls in a cell's text outputs, in place.

    Text, HTML and tracebacks are scrubbed; images and other binary data are left as they are.

    Args:
        cell: A notebook cell (nbformat node).
        scrub: What makes a text safe to show (machine paths and secrets replaced).
    """
    for output in cell.get("outputs", []):
        if "text" in output:
            output["text"] = _scrub(output["text"], scrub)
        if "evalue" in output:
            output["evalue"] = _scrub(output["evalue"], scrub)
            output["traceback"] = _scrub(output.get("traceback", []), scrub)
        data = output.get("data", {})
        for mime in [m for m in data if m.startswith("text/") or m.endswith(("+json", "/json"))]:
            data[mime] = _scrub(data[mime], scrub)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


def _shown_texts(cell: Any) -> Iterator[str]:
    """Every text of a cell's outputs a page can show (what `scrub_outputs` scrubs)."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        shown = [data[m] for m in data if m.startswith("text/") or m.endswith(("+json", "/json"))]
        yield from _strings([output.get("text"), output.get("evalue"), output.get("traceback"), shown])


def secret_in_outputs(cell: Any, secrets: SecretFinder) -> str | None:
    """What secret a cell's outputs hold, in words that never repeat it, as a proof's output is checked.

    Each text is read as written and as a page shows it (colour escapes dropped), and all of them as
    one, so a secret printed in pieces, or split by an escape, is found too.

    Args:
        cell: An executed cell (nbformat node).
        secrets: The build's secrets (`SecretFinder`).

    Returns:
        `the value of the build's environment variable GITHUB_TOKEN`, `a GitHub token`, ..., or `None`.
    """
    texts = list(_shown_texts(cell))
    for text in [*texts, "".join(texts)]:
        found = secrets.find(text) or secrets.find(clean_text(text))
        if found is not None:
            return found
    return None


FOLDS = "floors_folds"
"""The resources' entry holding the words of the lab page's folds (`fold_labels`), which its template shows."""


CHECKER_FILE = "checker.py"
"""The self-check helpers as one file per language, beside the lab pages (`labs/checker.py`): the pages link it."""


def fold_labels(language: str) -> dict[str, str]:
    """The words of a lab page that its template shows, in a language.

    `solution` and `output` label its folds (a reference answer, a cell's output); `helpers` and `read`
    stand for the self-check helpers' cell, whose source every lab carries in its downloads but its page
    shows once for all labs, as `CHECKER_FILE` beside them (`notebooks.publish_notebooks`): inlined and
    highlighted, it weighed 44 KB of each lab page. nbconvert's template has no `t`: the lab's language
    (`cells.lab_language`, its notebook's metadata) picks these words before it renders, and they reach it
    as `resources.floors_folds`.
    """
    lines = checker_source(language).count("\n") + 1
    return {
        "solution": t("Solution", language),
        "output": t("Output: open it after you have predicted", language),
        "helpers": t(
            "This cell defines the self-check helpers: {lines} lines of Python, the same in every lab, in full in"
            " the notebooks and the script above.",
            language,
            lines=lines,
        ),
        "read": t("Read them", language),
        "href": f"../{CHECKER_FILE}",
    }


class LabCheckerPreprocessor(Preprocessor):
    """Put the self-check helpers into the lab's `checker` cell, whether or not the lab then executes.

    It also gives the template the words of the page's folds in the lab's language (`fold_labels`).

    Named before `LabExecutePreprocessor` in `jupyter/jupyter_nbconvert_config.json`; enabled
    unless the configuration says otherwise, so a render-only build shows the helpers too.
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        """The notebook with the helpers in its `checker` cell.

        Args:
            nb: The lab, as mkdocs-jupyter read it.
            resources: nbconvert's resources.

        Returns:
            The notebook and the resources.

        Raises:
            FloorsError: The lab does not mark where the helpers go (`cells.with_checker`).
        """
        resources[FOLDS] = fold_labels(lab_language(nb))  # nbconvert's own dict, which answers None for a missing key
        return with_checker(nb, lab_name(nb)), resources


class LabMessagesPreprocessor(Preprocessor):
    """Show a translated lab's own messages (each `expect` message, each `print`) in its language on its page.

    Named after `LabExecutePreprocessor` in `jupyter/jupyter_nbconvert_config.json`: the executor keys the
    lab by its code as written (`code_key`), the English lab's, and gives it that run's outputs; only then is
    the code the page shows translated (`messages.translated_messages`), as its downloads are. Enabled
    unless the configuration says otherwise, so a render-only build shows them too.
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        """The notebook with its code cells' messages in its language (`cells.lab_language`).

        Args:
            nb: The lab, its helpers in place, run or not.
            resources: nbconvert's resources.

        Returns:
            The notebook (a copy, for a translated lab) and the resources.
        """
        return translated_messages(nb, lab_language(nb)), resources


class LabExecutePreprocessor(ExecutePreprocessor):
    """nbconvert's executor: `NarrowKernelManager` kernels, outputs scrubbed, failing cells recorded under serve.

    Every executed cell's outputs are scrubbed; with `keep_going`, a failing cell is recorded
    (`take_runs`) and the run goes on.
    """

    kernel_manager_class = Type(NarrowKernelManager, config=True)
    _labs: LabRuns | None = None

    def preprocess(self, nb: Any, resources: Any = None, km: Any = None) -> tuple[Any, Any]:
        """Execute the notebook, and record the run (`take_runs`): its time and its failing cells.

        Args:
            nb: The notebook.
            resources: nbconvert's resources.
            km: A kernel manager to use, if any.

        Returns:
            The executed notebook and the resources.
        """
        # The running build's (`bind`), kept for this lab's cells: they record into the same.
        labs = self._labs = _running()
        labs.errors.clear()
        where = f"lab {labs.lab_place(lab_name(nb))}"
        if labs.defer:
            labs.wait_for_background(lab_name(nb))
            return nb, resources
        key = code_key(nb)
        if key in labs.executed:
            # A translation of a lab this build ran: the same code, so the same outputs, shown once more.
            for cell, outputs in zip((c for c in nb.cells if c.cell_type == "code"), labs.executed[key], strict=True):
                cell.outputs, cell.execution_count = copy.deepcopy(outputs[0]), outputs[1]
            log.info("%s: shows what its English lab printed in this build (the same code)", where)
            return nb, resources
        limit = f"cells limited to {self.timeout} s each" if self.timeout and self.timeout > 0 else "no cell limit"
        log.info("%s: running (%s)", where, limit)
        labs.lab_progress(lab_name(nb), "running", limit)
        started = time.perf_counter()
        ended = "failed after"
        try:
            executed = super().preprocess(nb, resources, km)
            ended = "ran in" if not labs.errors else f"{len(labs.errors)} cell(s) failed; ran in"
            if not labs.errors:
                code_cells = [c for c in executed[0].cells if c.cell_type == "code"]
                labs.executed[key] = [(copy.deepcopy(c.outputs), c.get("execution_count")) for c in code_cells]
            return executed
        finally:
            seconds = time.perf_counter() - started
            log.info("%s: %s %s", where, ended, format_seconds(seconds))
            state, said = ("ran", f"in {format_seconds(seconds)}") if ended == "ran in" else ("failed", ended)
            labs.lab_progress(lab_name(nb), state, said if state == "ran" else f"({said} {format_seconds(seconds)})")
            labs.runs.append(LabRun(seconds, tuple(labs.errors)))
            labs.errors.clear()

    def preprocess_cell(self, cell: Any, resources: Any, index: int) -> tuple[Any, Any]:
        """Execute one cell, then scrub what it printed and record an error it raised.

        Args:
            cell: The cell.
            resources: nbconvert's resources.
            index: The cell's index.

        Returns:
            The cell and the resources.
        """
        project = os.environ.get(PROJECT_DIR)
        paths, secrets = PathScrubber(Path(project) if project else Path.cwd()), SecretFinder()

        def scrub(text: str) -> str:
            # What the build names of a failed cell (its message, its traceback) shows a note in a secret's place.
            return secrets.redact(paths(text))

        failed: CellExecutionError | None = None
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)  # type: ignore[no-untyped-call]
        except CellExecutionError as error:
            failed, resources = error, self.resources
        secret = secret_in_outputs(cell, secrets)
        if secret is not None:
            # Redacting would show the rest of what the cell reached (a shell's variables beside its token).
            why = f"its output holds {secret}: a page never shows the build's secrets (was another process's "
            why += "environment or memory read?)"
            said = f"{_SECRET_IN_OUTPUT}: {why}"
            error_output = nbformat.v4.new_output(  # type: ignore[no-untyped-call]
                "error", ename=_SECRET_IN_OUTPUT, evalue=why, traceback=[said]
            )
            cell.outputs = [error_output]
            failed = CellExecutionError(f"{lab_name(self.nb)} › cell {index + 1}: {said}", _SECRET_IN_OUTPUT, why)
        scrub_outputs(cell, scrub)
        if failed is None:
            return cell, resources
        labs = self._labs or _running()
        if not labs.keep_going:
            raise CellExecutionError(scrub(failed.traceback), failed.ename, scrub(failed.evalue))
        # The cell's outputs hold its traceback; the build reads the failure and shows it above the lab.
        labs.errors.append(CellError(index, scrub(f"{failed.ename}: {failed.evalue}")))
        return cell, resources
