"""Processes that run proofs: one per page session or per standalone block, with a time limit.

Each process leads its own process group (see `worker`), and ending it always ends the
group and every descendant that left it: whatever a block started (`subprocess.Popen(["sleep",
"300"])`, fifty forked children, a `setsid` daemon) dies with it, at the end of the block, on
time-out and at shutdown.

How the processes start (`FLOORS_START_METHOD`):

- `forkserver` (the default on Linux): a server process imports torch and the worker module once,
  and every block's process is forked from it;
- `spawn` (the default elsewhere, macOS included): every block's process is a new interpreter, which
  imports torch itself (about a second more per block). CPython offers the fork server on macOS too,
  but there it forks from a process that imported torch (Accelerate, libomp), the pattern for which
  CPython made `spawn` macOS's default start method; so the engine uses the fork server only on Linux.

Either way the server or the interpreter is started (`execve`) with a block's narrow environment
(`sandbox.block_environment`), never the build's: `/proc/self/environ` of a block and of its parent
hold no token or path of the build's. `fork` (a copy of the build process) is refused: it would
carry the build's whole environment and imported modules into every block.

A block process prints into a scratch file of the build's (`floors-output-<pid>-…`), which the build
reads back when the block cannot answer: what a block printed before it ran out of time or died is
shown with its failure.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import types
from collections.abc import Iterable, Iterator
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext, SpawnContext
from pathlib import Path

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.process import scratch, worker
from pytorch_floors.execution.process.confine import hide_this_process
from pytorch_floors.execution.process.limits import Usage, UsageClock, stretches, timeout_message
from pytorch_floors.execution.process.sandbox import block_environment
from pytorch_floors.execution.process.worker import BlockError, BlockReply, BlockRequest, kill_descendants
from pytorch_floors.settings import read_text

__all__ = [
    "START_METHOD",
    "BlockError",
    "BlockProcess",
    "BlockReply",
    "BlockRequest",
    "BlockTimeout",
    "StartMethodError",
    "WorkerDied",
    "end",
    "end_all",
    "fork_server",
    "restart_fork_server",
    "start_method",
]

START_METHOD = "FLOORS_START_METHOD"
"""The environment variable that chooses how block processes start: `forkserver` or `spawn`."""

_METHODS = ("forkserver", "spawn")
_OUTPUT = "output"
"""The scratch kind of the file each block process prints into (`scratch.prefix`)."""
_PRINTED = 64 * 1024
"""Bytes of a block's output the build reads back when the block cannot answer (the end is what it shows)."""
_context: ForkServerContext | SpawnContext | None = None
_live: set[BlockProcess] = set()
"""Every block process of this Python process still alive, whoever started it: what `end_all` ends."""


class StartMethodError(FloorsError, ValueError):
    """`FLOORS_START_METHOD` names no method this engine can keep its guarantees under, on this platform."""


def start_method(environ: dict[str, str] | None = None) -> str:
    """How block processes start here: `FLOORS_START_METHOD`, else the fork server where there is one.

    Args:
        environ: The environment to read (default: this process's).

    Returns:
        `forkserver` or `spawn`.

    Raises:
        StartMethodError: On Windows (no process groups to end a block with), for `fork`, or for an
            unknown or unavailable method.
    """
    if sys.platform == "win32":
        raise StartMethodError(
            "proofs cannot run on Windows: the engine ends each block with its process group (os.setsid, "
            "os.killpg), which Windows lacks; build in WSL, or render without running (FLOORS_EXEC=off)"
        )
    source = os.environ if environ is None else environ
    available = multiprocessing.get_all_start_methods()
    default = "forkserver" if "forkserver" in available and sys.platform.startswith("linux") else "spawn"
    chosen = (read_text(START_METHOD, source) or "").strip() or default
    if chosen == "fork":
        raise StartMethodError(
            f"{START_METHOD}=fork is refused: a forked block is a copy of the build, with the build's whole "
            "environment (tokens included) in /proc/self/environ and its imported modules; use forkserver or spawn"
        )
    if chosen not in _METHODS or chosen not in available:
        offered = " or ".join(m for m in _METHODS if m in available)
        raise StartMethodError(f"{START_METHOD}={chosen!r} is not a start method here; use {offered}")
    return chosen


@contextlib.contextmanager
def _narrow_environment() -> Iterator[None]:
    """Start processes with a block's environment: what `execve` gives them is all `/proc/PID/environ` shows.

    multiprocessing starts its fork server and spawned interpreters with this process's environment
    and takes no other; a block narrowing `os.environ` afterwards leaves the original in
    /proc/self/environ. So the build's environment is swapped out for the start only.
    """
    saved = dict(os.environ)
    os.environ.clear()
    # With `PYTHONPATH`, if set: the server imports the package the build imports (a checkout put first on the path).
    os.environ.update(block_environment(html=False, width=None, build_env=saved))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def fork_server() -> ForkServerContext | SpawnContext:
    """The process-wide context block processes start from (see `start_method`).

    Under `forkserver` the server is started lazily with torch and the worker module preloaded.

    Returns:
        The multiprocessing context.
    """
    global _context  # noqa: PLW0603  (one fork server per build process; a multiprocessing singleton anyway)
    if _context is None:
        scratch.sweep(_OUTPUT)  # what the block processes of a killed build left behind
        if start_method() == "forkserver":
            server = multiprocessing.get_context("forkserver")
            server.set_forkserver_preload(["torch", "pytorch_floors.execution.process.worker"])
            _context = server
        else:
            _context = multiprocessing.get_context("spawn")
    return _context


def restart_fork_server() -> None:
    """Stop the fork server, so the next block starts a new one that imports the package's files afresh.

    The server keeps the modules it preloaded (the worker and the package's `__init__`): after an
    edit to the package (`mkdocs serve`), blocks forked from the old server would run old code.
    """
    end_all()
    if _context is None or _context.get_start_method() != "forkserver":
        return
    # multiprocessing offers no public way to stop its fork server; `_stop` is what its own tests use.
    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is None:
        raise RuntimeError("this Python's multiprocessing cannot stop its fork server (no ForkServer._stop)")
    stop()


def end(processes: Iterable[BlockProcess]) -> None:
    """Kill these block processes, each with its process group.

    Args:
        processes: The processes (a set they leave as they end may be given: it is copied first).
    """
    for process in list(processes):
        process.kill()


def end_all() -> None:
    """Kill every block process of this Python process, whoever started it, with its process group.

    For shutdown only (`mkdocs serve` stopped or restarted, the fork server stopped, a test session's
    end): a build ends its own engine's processes (`Engine.close`), never another build's. At shutdown
    no build may be left to ask, and processes start outside any engine too (`torch_facts`, the tests'
    `proof_claims`), so the process keeps a set of them all.
    """
    end(_live)


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


class _Unanswered(FloorsError):
    """A block that could not answer, with what it had printed by then."""

    def __init__(self, message: str, printed: str = "") -> None:
        """Build the error.

        Args:
            message: What happened, in one line.
            printed: The end of what the block had printed by then (its last 64 KiB at most).
        """
        super().__init__(message)
        self.printed = printed


class BlockTimeout(_Unanswered):
    """A block ran past its time limit; its process group has been killed."""


class WorkerDied(_Unanswered):
    """A block's process ended without answering (a crash, `os._exit`, a signal)."""


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        hint = " — out of memory?" if -exitcode == signal.SIGKILL else ""
        return f"the block's process was killed by {name}{hint}"
    return f"the block's process ended without reporting (exit code {exitcode})"


class BlockProcess:
    """A fresh process that has imported torch and the worker module, and nothing else of the build.

    Blocks sent to one process share its namespace, the way a page session does.
    """

    def __init__(self, owner: set[BlockProcess] | None = None) -> None:
        """Start the process.

        Args:
            owner: The set of processes of whoever starts this one (an engine's): the process is in it
                while it lives, so its owner can end what it started and nothing else (`end`).
        """
        # This process's own environment is the build's: hidden from every block before the first starts.
        hide_this_process()
        context = fork_server()
        self._conn, child_conn = context.Pipe()
        # The blocks print into a file of the build's: what a block printed before it ran out of time or died is there.
        descriptor, self._output = tempfile.mkstemp(prefix=scratch.prefix(_OUTPUT), suffix=".txt")
        os.close(descriptor)
        target, args = worker.serve, (child_conn, os.getpid(), self._output)
        self._process = context.Process(target=target, args=args, daemon=True)
        with _main_not_reimported(), _narrow_environment():
            self._process.start()
        child_conn.close()
        self._timeout_message = ""
        self._owner = owner
        _live.add(self)
        if owner is not None:
            owner.add(self)

    def run(self, request: BlockRequest, timeout: float) -> BlockReply:
        """Run one block and return the worker's reply.

        Args:
            request: The block, its environment and directory.
            timeout: Seconds the block may take.

        Returns:
            The reply: what the block printed, how long it took, and why it failed (`error`, else `None`).

        Raises:
            BlockTimeout: If the block did not finish within `timeout` seconds.
            WorkerDied: If the process ended without reporting.
        """
        try:
            self._conn.send(request)
            if not self._answered_in_time(timeout):
                printed = self._printed()
                self.kill()
                raise BlockTimeout(self._timeout_message, printed)
            reply: BlockReply = self._conn.recv()
        except (EOFError, ConnectionError, OSError) as error:
            self._process.join(5)
            exitcode = self._process.exitcode
            printed = self._printed()
            self.kill()
            raise WorkerDied(_death(exitcode), printed) from error
        return reply

    def _answered_in_time(self, limit: float) -> bool:
        """Wait for the answer: `limit` seconds, stretched by the time the block was crowded out (`limits`)."""
        pid = self._process.pid
        clock = UsageClock(pid) if pid is not None else None
        started = time.monotonic()
        if self._conn.poll(limit):
            return True
        while True:
            usage = clock.usage(time.monotonic() - started) if clock is not None else Usage(limit, None, None)
            if not stretches(limit, usage):
                self._timeout_message = timeout_message(limit, usage)
                return False
            # Crowded out, not stuck: look again once it could have used the time it is still owed.
            if self._conn.poll(max(1.0, limit - usage.charged)):
                return True

    def _kill_group(self) -> None:
        pid = self._process.pid
        if pid is not None:
            # First what left the group (a `setsid` child is still the worker's descendant), then the group.
            kill_descendants(pid)
            # The group outlives its leader while any member lives, so this works after the worker exited too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def kill(self) -> None:
        """End the process and its whole process group at once."""
        self._kill_group()
        self._process.kill()
        self._process.join(5)
        self._conn.close()
        Path(self._output).unlink(missing_ok=True)
        _live.discard(self)
        if self._owner is not None:
            self._owner.discard(self)

    def _printed(self) -> str:
        """The end of what the block running now printed, read from the file the blocks print into."""
        try:
            with open(self._output, "rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(0, size - _PRINTED))
                return file.read(_PRINTED).decode("utf-8", errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Ask the process to finish, then end whatever is left of its process group."""
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._process.join(5)
        self.kill()
