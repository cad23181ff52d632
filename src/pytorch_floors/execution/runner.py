"""Processes that run proofs: one per page session or per standalone block, with a time limit."""

from __future__ import annotations

import contextlib
import multiprocessing
from multiprocessing.context import ForkServerContext
from typing import Any

from pytorch_floors.execution import worker

__all__ = ["BlockProcess", "BlockTimeout", "WorkerDied"]

_context: ForkServerContext | None = None


def _fork_server() -> ForkServerContext:
    global _context  # noqa: PLW0603  (one fork server per build process, started lazily)
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["pytorch_floors.execution.worker"])
    return _context


class BlockTimeout(Exception):
    """A block ran past its time limit; its process has been killed."""


class WorkerDied(Exception):
    """A block's process ended without answering (a crash, or `os._exit`)."""


class BlockProcess:
    """A fresh process, forked from a server that has imported torch and nothing else.

    Blocks sent to one process share its namespace, the way a page session does.
    """

    def __init__(self, workdir: str) -> None:
        """Start the process.

        Args:
            workdir: Directory the blocks run in.
        """
        context = _fork_server()
        self._conn, child_conn = context.Pipe()
        self._process = context.Process(target=worker.serve, args=(child_conn, workdir), daemon=True)
        self._process.start()
        child_conn.close()

    def run(self, code: str, filename: str, timeout: float, *, html: bool = False) -> dict[str, Any]:
        """Run one block and return the worker's report.

        Args:
            code: Python source of the block.
            filename: Name used in tracebacks, so errors can be mapped to lines.
            timeout: Seconds the block may take.
            html: The page shows the block's output as HTML (a figure) rather than text.

        Returns:
            The report: `output`, `stderr`, `seconds`, and `error` (`None` on success).

        Raises:
            BlockTimeout: If the block did not finish within `timeout` seconds.
            WorkerDied: If the process ended without reporting.
        """
        self._conn.send((code, filename, "html" if html else "text"))
        try:
            if not self._conn.poll(timeout):
                self.kill()
                raise BlockTimeout(f"did not finish within its time limit of {timeout:g} s")
            report: dict[str, Any] = self._conn.recv()
        except (EOFError, ConnectionError, OSError) as error:
            self._process.join(5)
            raise WorkerDied(f"its process ended without reporting (exit code {self._process.exitcode})") from error
        return report

    def kill(self) -> None:
        """End the process at once."""
        self._process.kill()
        self._process.join(5)
        self._conn.close()

    def close(self) -> None:
        """Ask the process to finish, then make sure it has."""
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
        self._conn.close()
