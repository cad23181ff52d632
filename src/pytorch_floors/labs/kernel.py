"""How a lab's notebook executes: under a proof's policy, a narrow kernel environment and scrubbed outputs.

mkdocs-jupyter executes labs with nbconvert's `ExecutePreprocessor`, whose kernel starts with the
build's whole environment, and shows what a cell printed as it is: a cell printing
`os.environ["GITHUB_TOKEN"]`, `sys.prefix` or `~` put the token and the build machine's paths on the
page. `jupyter/jupyter_nbconvert_config.json` names `LabExecutePreprocessor` in place of nbconvert's:
its kernel starts (`execve`) with only the variables a proof sees (`sandbox.PASSED_THROUGH`), and every
output is scrubbed of machine paths and reordering controls the way a proof's output is.
Before it, the configuration names `LabCheckerPreprocessor`, which puts the self-check helpers into
the lab's `checker` cell (`cells.with_checker`), so the page shows them and the kernel runs them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellExecutionError
from nbconvert.preprocessors import ExecutePreprocessor, Preprocessor
from traitlets import Bool, Type

from pytorch_floors.execution.output import PathScrubber, escape_bidi
from pytorch_floors.execution.process.sandbox import PASSED_THROUGH
from pytorch_floors.labs.cells import lab_name, with_checker

__all__ = [
    "PROJECT_DIR",
    "CellError",
    "LabCheckerPreprocessor",
    "LabExecutePreprocessor",
    "LabRun",
    "NarrowKernelManager",
    "keep_going",
    "kernel_environment",
    "scrub_outputs",
    "take_runs",
]

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
    """

    seconds: float
    errors: tuple[CellError, ...]


_errors: list[CellError] = []
_runs: list[LabRun] = []
_keep_going = False


def keep_going(enabled: bool) -> None:
    """Under `mkdocs serve`, record a failing cell and run on, instead of stopping the build.

    The lab's page then shows the cell's traceback where it failed, and the build records the lab as
    failed (`take_runs`). The rendered notebook's cache key is unchanged, so serve and build share
    cached labs; the build drops an entry made with a failure, so no later build shows it.

    Args:
        enabled: Whether failing cells are recorded rather than raised.
    """
    global _keep_going  # noqa: PLW0603  (one setting for the build process, as nbconvert builds executors itself)
    _keep_going = enabled


def take_runs() -> list[LabRun]:
    """The lab executions since the last call, and forget them (one lab renders at a time).

    The build asks after each lab page: a run means the lab executed in this build, none that
    mkdocs-jupyter took it from its cache.

    Returns:
        The runs, oldest first.
    """
    taken = list(_runs)
    _runs.clear()
    _errors.clear()
    return taken


def kernel_environment(build_env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The whole environment of a lab's kernel: the variables a proof sees, nothing else of the build's.

    Matplotlib's backend is left to ipykernel (inline figures), unlike a proof's `Agg`.

    Args:
        build_env: The build's environment.

    Returns:
        The kernel's environment.
    """
    env = {name: build_env[name] for name in PASSED_THROUGH if name in build_env}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class NarrowKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels start with `kernel_environment`, whatever the caller passes."""

    async def start_kernel(self, **kwargs: Any) -> None:  # type: ignore[override]  # same call, env fixed
        """Start the kernel with the narrow environment.

        Args:
            **kwargs: What nbclient passes (`extra_arguments`, `cwd`); an `env` is replaced.
        """
        kwargs["env"] = kernel_environment(os.environ)
        await super().start_kernel(**kwargs)


def _scrub(value: Any, scrub: PathScrubber) -> Any:
    if isinstance(value, str):
        return escape_bidi(scrub(value))
    if isinstance(value, list):
        return [_scrub(item, scrub) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item, scrub) for key, item in value.items()}
    return value


def scrub_outputs(cell: Any, scrub: PathScrubber) -> None:
    """Replace machine paths and bidirectional controls in a cell's text outputs, in place.

    Text, HTML and tracebacks are scrubbed; images and other binary data are left as they are.

    Args:
        cell: A notebook cell (nbformat node).
        scrub: The build's path scrubber.
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


class LabCheckerPreprocessor(Preprocessor):
    """Put the self-check helpers into the lab's `checker` cell, whether or not the lab then executes.

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
        return with_checker(nb, lab_name(nb)), resources


class LabExecutePreprocessor(ExecutePreprocessor):
    """nbconvert's executor: `NarrowKernelManager` kernels, outputs scrubbed, failing cells recorded under serve.

    Every executed cell's outputs are scrubbed; with `keep_going`, a failing cell is recorded
    (`take_runs`) and the run goes on.
    """

    kernel_manager_class = Type(NarrowKernelManager, config=True)

    def preprocess(self, nb: Any, resources: Any = None, km: Any = None) -> tuple[Any, Any]:
        """Execute the notebook, and record the run (`take_runs`): its time and its failing cells.

        Args:
            nb: The notebook.
            resources: nbconvert's resources.
            km: A kernel manager to use, if any.

        Returns:
            The executed notebook and the resources.
        """
        _errors.clear()
        started = time.perf_counter()
        try:
            return super().preprocess(nb, resources, km)
        finally:
            _runs.append(LabRun(time.perf_counter() - started, tuple(_errors)))
            _errors.clear()

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
        scrub = PathScrubber(Path(project) if project else Path.cwd())
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)  # type: ignore[no-untyped-call]
        except CellExecutionError as error:
            scrub_outputs(cell, scrub)
            if not _keep_going:
                raise
            # The cell's outputs hold its traceback; the build reads the failure and shows it above the lab.
            _errors.append(CellError(index, scrub(f"{error.ename}: {error.evalue}")))
            return cell, self.resources
        scrub_outputs(cell, scrub)
        return cell, resources
