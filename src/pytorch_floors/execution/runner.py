"""Processes that run proofs: one per page session or per standalone block, with a time limit.

Each process leads its own process group (see `worker`), and ending it always ends the
group: whatever a block started (`subprocess.Popen(["sleep", "300"])`, fifty forked
children) dies with it, at the end of the block, on time-out and at shutdown.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import types
from collections.abc import Iterator
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext
from typing import Any

from pytorch_floors.execution import worker
from pytorch_floors.execution.worker import BlockRequest

__all__ = [
    "BlockProcess",
    "BlockRequest",
    "BlockTimeout",
    "WorkerDied",
    "end_all",
    "fork_server",
    "restart_fork_server",
]

_context: ForkServerContext | None = None
_live: set[BlockProcess] = set()


def fork_server() -> ForkServerContext:
    """The process-wide fork server, started lazily with torch and the worker module preloaded.

    Returns:
        The multiprocessing context whose processes are forked from it.
    """
    global _context  # noqa: PLW0603  (one fork server per build process; a multiprocessing singleton anyway)
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["torch", "pytorch_floors.execution.worker"])
    return _context


def restart_fork_server() -> None:
    """Stop the fork server, so the next block starts a new one that imports the package's files afresh.

    The server keeps the modules it preloaded (the worker and the package's `__init__`): after an
    edit to the package (`mkdocs serve`), blocks forked from the old server would run old code.
    """
    end_all()
    # multiprocessing offers no public way to stop its fork server; `_stop` is what its own tests use.
    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is None:
        raise RuntimeError("this Python's multiprocessing cannot stop its fork server (no ForkServer._stop)")
    stop()


def end_all() -> None:
    """Kill every block process still alive, with its process group (at shutdown, under serve too)."""
    for process in list(_live):
        process.kill()


@contextlib.contextmanager
def _main_not_reimported() -> Iterator[None]:
    """Start a process without it importing this process's main script first.

    multiprocessing re-runs the parent's `__main__` file in every child it starts, unless the parent
    was started as `python -m package`. Started as the `mkdocs` (or `pytest`) console script, every
    block's process would import MkDocs' command line (MkDocs, click, PyYAML) before the block.
    While the process starts, `__main__` is a module with no file to re-run.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class BlockTimeout(Exception):
    """A block ran past its time limit; its process group has been killed."""


class WorkerDied(Exception):
    """A block's process ended without answering (a crash, `os._exit`, a signal)."""


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        hint = " — out of memory?" if -exitcode == signal.SIGKILL else ""
        return f"its process was killed by {name}{hint}"
    return f"its process ended without reporting (exit code {exitcode})"


class BlockProcess:
    """A fresh process, forked from a server that has imported torch and the worker module, and nothing else.

    Blocks sent to one process share its namespace, the way a page session does.
    """

    def __init__(self) -> None:
        """Start the process."""
        context = fork_server()
        self._conn, child_conn = context.Pipe()
        self._process = context.Process(target=worker.serve, args=(child_conn, os.getpid()), daemon=True)
        with _main_not_reimported():
            self._process.start()
        child_conn.close()
        _live.add(self)

    def run(self, request: BlockRequest, timeout: float) -> dict[str, Any]:
        """Run one block and return the worker's report.

        Args:
            request: The block, its environment and directory.
            timeout: Seconds the block may take.

        Returns:
            The report: `output`, `stderr`, `seconds`, and `error` (`None` on success).

        Raises:
            BlockTimeout: If the block did not finish within `timeout` seconds.
            WorkerDied: If the process ended without reporting.
        """
        try:
            self._conn.send(request)
            if not self._conn.poll(timeout):
                self.kill()
                raise BlockTimeout(f"did not finish within its time limit of {timeout:g} s")
            report: dict[str, Any] = self._conn.recv()
        except (EOFError, ConnectionError, OSError) as error:
            self._process.join(5)
            exitcode = self._process.exitcode
            self.kill()
            raise WorkerDied(_death(exitcode)) from error
        return report

    def _kill_group(self) -> None:
        pid = self._process.pid
        if pid is not None:
            # The group outlives its leader while any member lives, so this works after the worker exited too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def kill(self) -> None:
        """End the process and its whole process group at once."""
        self._kill_group()
        self._process.kill()
        self._process.join(5)
        self._conn.close()
        _live.discard(self)

    def close(self) -> None:
        """Ask the process to finish, then end whatever is left of its process group."""
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._process.join(5)
        self.kill()
