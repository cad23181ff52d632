"""The child side of proof execution: runs blocks in a fresh process and reports back.

The fork server preloads torch and this module, which imports only the standard library (so
the MkDocs process can import it, for `BlockRequest`, without importing torch). Every block's
process starts from an already-imported, never-used torch: default dtype, grad mode, RNG seed
and thread count are torch's own defaults, and `pytorch_floors`' helpers are imported afresh,
from disk, by the blocks that use them.

Each worker leads its own session (`setsid`), so the processes a block starts belong to
the worker's process group: the parent kills the whole group when the block or session is
over, on time-out and at shutdown, and the worker kills them itself at the end of every
block and if the build process goes away. A process that leaves the group (`setsid`,
`start_new_session=True`) is still the worker's descendant: on Linux the worker is a child
subreaper, so even a double-forked daemon is re-parented to it rather than to init, and every
descendant is killed with the group.

A subreaper that dies hands its orphans on to init, so the process the build started does not run
blocks itself: it is a keeper, a subreaper too, that forks the worker and waits. When the worker
dies (`os._exit`, a segfault, a signal), its orphans are re-parented to the keeper, which kills
them, then ends as the worker ended, so the build still names the exit code or the signal.

A block's output is bounded while it is written: a watchdog thread stops a block whose
output passes the limit, so a runaway `print` loop never fills the disk. A block's threads
are waited for before its output is read, so a thread's late `print` never lands in the next
block of its session.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import ctypes.util
import errno
import io
import linecache
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from pytorch_floors.execution.process.confine import ConfinementError, confine_this_process, hide_this_process
from pytorch_floors.execution.process.fresh_source import import_project_modules_from_source

__all__ = [
    "MAX_FILE_SIZE",
    "BlockError",
    "BlockReply",
    "BlockRequest",
    "descendants",
    "kill_descendants",
    "print_torch_facts",
    "serve",
]

MAX_FILE_SIZE = 256 * 2**20
"""The most bytes a block, or a process it starts, writes into any one file (`RLIMIT_FSIZE`).

A block runs in the project folder, and `timeout="6"` with a loop writing a file left 9.8 GB there.
Past the limit a write fails (`OSError: [Errno 27] File too large`, or a child killed by SIGXFSZ) and
the block fails, saying so. No proof writes a file near it: a compiled extension or a compiler's
cache is a few MiB.
"""

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_WATCH_INTERVAL = 0.02
_NO_MESSAGE: dict[type[BaseException], str] = {
    MemoryError: "the block ran out of memory (the allocation it asked for was refused)",
    KeyboardInterrupt: "the block was interrupted",
    RecursionError: "the block recursed too deeply",
}


_CHILD_LINES = 3


def _what_the_child_said(error: BaseException) -> str:
    """The end of what a failed child process wrote, for a `CalledProcessError` that captured it.

    `subprocess.run(..., capture_output=True, check=True)` raises with the command and its exit
    status only: the child's traceback, the reason, would vanish with the exception.
    """
    if not isinstance(error, subprocess.CalledProcessError) or (error.stderr is None and error.output is None):
        return ""  # not captured: what the child wrote is in the block's own output already
    said = error.stderr or error.output or ""
    text = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f" Its output ended: {' ⏎ '.join(lines[-_CHILD_LINES:])}" if lines else " It wrote nothing."


@dataclass(frozen=True)
class BlockRequest:
    """One block for a worker to run.

    Attributes:
        code: The block's source, includes expanded.
        filename: Name used in tracebacks, so errors map back to lines.
        env: The complete environment the block sees (nothing else of the build's leaks in).
        cwd: Directory the block runs in.
        file: What `__file__` and `sys.argv[0]` are, as when the proof runs on its own.
        max_output: Bytes the block may print; more is an error.
        limit: Seconds the block may take, threads included (the parent kills it after that anyway).
        max_file_size: Bytes the block and its children may write into any one file (`MAX_FILE_SIZE`).
    """

    code: str
    filename: str
    env: dict[str, str]
    cwd: str
    file: str | None
    max_output: int
    limit: float = 120.0
    max_file_size: int = MAX_FILE_SIZE


@dataclass(frozen=True)
class BlockError:
    """Why a block failed, as its worker saw it.

    Attributes:
        type: The exception's class name (`ZeroDivisionError`), or the worker's own kind
            (`OutputTooLarge`, `ThreadsLeftRunning`).
        message: What went wrong, in one line.
        lines: Lines of the block's code the traceback passes through, innermost last.
        traceback: The whole traceback, for the log.
        own_traceback: The block's own frames only: the engine's and the standard library's say
            nothing to its author.
    """

    type: str
    message: str
    lines: tuple[int, ...] = ()
    traceback: str = ""
    own_traceback: str = ""

    @classmethod
    def of(cls, error: BaseException, filename: str) -> BlockError:
        """Describe what a block raised (`SystemExit` included).

        Args:
            error: The exception.
            filename: The block's filename, which tells its own frames from the others.

        Returns:
            The description.
        """
        frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
        lines = [frame.lineno for frame in frames]
        if isinstance(error, SyntaxError) and error.filename == filename and error.lineno:
            lines.append(error.lineno)
        if isinstance(error, SystemExit):
            message = f"the proof called sys.exit({error.code!r}); proofs must run to the end"
        else:
            # `MemoryError()` and other bare raises have no message: "MemoryError: " said nothing.
            message = str(error) or _NO_MESSAGE.get(type(error), "(raised without a message)")
            message += _what_the_child_said(error)
        return cls(
            type=type(error).__name__,
            message=message,
            lines=tuple(line for line in lines if line is not None),
            traceback="".join(traceback.format_exception(error)),
            own_traceback="".join(traceback.StackSummary.from_list(frames).format()),
        )


@dataclass(frozen=True)
class BlockReply:
    """A worker's answer to one `BlockRequest`.

    Attributes:
        output: What the block wrote to file descriptor 1 (its prints, `os.write(1, ...)` and its
            subprocesses' output alike), cut to the request's `max_output`.
        stderr: What it wrote to descriptor 2 (kept out of the page).
        seconds: Its wall time.
        error: Why it failed (it raised, exited, printed too much or left threads running), or `None`.
    """

    output: str
    stderr: str
    seconds: float
    error: BlockError | None = None


def _parents() -> dict[int, int]:
    """Every live process's parent (Linux: read from /proc; elsewhere nothing is known)."""
    parents = {}
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                # Field 4 of /proc/PID/stat is the parent; the command name (field 2) may hold spaces.
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    return parents


def descendants(root: int) -> list[int]:
    """The live processes below `root`: its children, theirs, and so on.

    Args:
        root: A process id.

    Returns:
        Their ids (empty where /proc is not there).
    """
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def kill_descendants(root: int, *, rounds: int = 5) -> None:
    """Stop, then kill, every process below `root`, including those that left its process group.

    Each round first stops what it finds (so none can fork again), then kills it; a few rounds catch
    processes started between the reading of /proc and the stopping.

    Args:
        root: A process id (a worker).
        rounds: How many times to look again.
    """
    for _ in range(rounds):
        found = descendants(root)
        if not found:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)


def _become_subreaper() -> None:
    """Make orphaned descendants re-parent to this process instead of init (Linux only; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _end_children() -> None:
    """Kill every process the block started (inside its process group or not) and reap them."""
    kill_descendants(os.getpid())
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG) != (0, 0):
            pass


def _watch_build(build_pid: int) -> None:
    """End the whole group once the build process is gone (killed, or stopped with Ctrl-C mid-block).

    The worker's parent is the fork server, which may outlive the build, so the build's own pid is watched.
    """
    while True:
        try:
            os.kill(build_pid, 0)
        except ProcessLookupError:
            kill_descendants(os.getpid())
            os.killpg(0, signal.SIGKILL)
        time.sleep(0.25)


class _OutputLimitReached(BaseException):
    """Raised inside a block, by the output watch, when its output passed the limit."""


class _OutputWatch:
    """Stops a block whose output or stderr grows past its limit while it is still writing.

    Checking only after the block ended let `while True: print(...)` write gigabytes into the
    temporary file first. Every few milliseconds the watch reads both files' sizes; past the limit it
    kills what the block started, raises `_OutputLimitReached` in the block's thread and empties the
    file, again while the block goes on writing, so the disk holds at most a few milliseconds'
    worth beyond the limit. stderr is kept out of the page, but not off the disk: it is bounded alike.
    """

    def __init__(self, sinks: dict[str, BinaryIO]) -> None:
        self._sinks = sinks
        self._limit: int | None = None
        self._target = threading.get_ident()
        self._lock = threading.Lock()
        self.overflowed: str | None = None
        """The stream that passed the limit (`output` or `stderr`), if one did."""
        threading.Thread(target=self._watch, daemon=True, name="floors-output-watch").start()

    def start(self, limit: int) -> None:
        """Watch the output of the block about to run in this thread."""
        with self._lock:
            self.overflowed = None
            self._target = threading.get_ident()
            self._limit = limit

    def stop(self) -> None:
        """Stop watching, and withdraw an interruption the block's thread has not met yet."""
        with self._lock:
            self._limit = None
            _async_raise(self._target, None)

    def _watch(self) -> None:
        while True:
            time.sleep(_WATCH_INTERVAL)
            with self._lock:
                limit = self._limit
                if limit is None:
                    continue
                for name, sink in self._sinks.items():
                    if os.fstat(sink.fileno()).st_size <= limit:
                        continue
                    if self.overflowed is None:
                        _async_raise(self._target, _OutputLimitReached)
                        self.overflowed = name
                    kill_descendants(os.getpid())
                    os.ftruncate(sink.fileno(), 0)


def _async_raise(thread_id: int, exception: type[BaseException] | None) -> None:
    """Raise `exception` in a thread at its next Python instruction (`None` withdraws a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )


def _wait_for_threads(started: list[threading.Thread], deadline: float) -> list[str]:
    """Wait, until `deadline`, for the threads a block started; return the names of those still running."""
    for thread in started:
        thread.join(max(0.0, deadline - time.perf_counter()))
    return [thread.name for thread in started if thread.is_alive()]


def _capture_fd(fd: int, path: str | None = None) -> BinaryIO:
    """Point file descriptor `fd` at a file, so the block's writes and its children's land there.

    Args:
        fd: 1 or 2.
        path: A file the build made, which it reads when the worker cannot answer (a time-out, a
            crash); else a fresh temporary file.
    """
    # Open for the worker's whole life.
    sink = open(path, "r+b") if path else tempfile.TemporaryFile()  # noqa: SIM115
    os.dup2(sink.fileno(), fd)
    return sink


def _read(sink: BinaryIO, limit: int) -> tuple[str, int]:
    """Read what was written to `sink` (at most `limit` + 1 bytes) and empty it for the next block."""
    size = sink.seek(0, os.SEEK_END)
    sink.seek(0)
    data = sink.read(limit + 1)
    sink.seek(0)
    sink.truncate()
    return data.decode("utf-8", errors="replace"), size


def _ended_idle_progress_monitor(thread: threading.Thread) -> bool:
    """End `thread` if it is tqdm's monitor and no progress bar is open; say whether it was ended.

    torch makes a progress bar (disabled) wherever tqdm is installed: fx's interpreter does, under
    `torch.compile`. tqdm starts its monitor thread with the first bar, and a disabled bar never
    ends it. With no bar open it has nothing to print, so it is ended as tqdm ends it when its last
    bar closes; with a bar still open it is left, and reported as any other thread would be.
    """
    std = sys.modules.get("tqdm.std")
    progress = getattr(std, "tqdm", None)
    if progress is None or thread is not getattr(progress, "monitor", None) or len(progress._instances):
        return False
    thread.exit()  # TMonitor.exit: sets its event and joins it
    progress.monitor = None
    return True


def _limit_files(size: int) -> None:
    """Bound every file this process and its children write (`MAX_FILE_SIZE`), and write no core file.

    Both limits pass to every process the block starts. The hard limit goes down too, so a child
    cannot lift it again; a core file (a segfault) of a process that imported torch is gigabytes,
    written into the folder it runs in, which the file size limit does not bound.
    """
    import resource  # noqa: PLC0415  (POSIX only; the build imports this module for `BlockRequest` anywhere)

    _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    size = size if hard == resource.RLIM_INFINITY else min(size, hard)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _file_too_large(error: BaseException, size: int) -> str:
    """What to add to the message of an error that a write past `MAX_FILE_SIZE` caused, or nothing."""
    past = (isinstance(error, OSError) and error.errno == errno.EFBIG) or (
        isinstance(error, subprocess.CalledProcessError) and error.returncode == -signal.SIGXFSZ
    )
    return f" (a block writes at most {size:,} bytes into a file: MAX_FILE_SIZE)" if past else ""


def _run_one(
    request: BlockRequest, namespace: dict[str, Any], out: BinaryIO, err: BinaryIO, watch: _OutputWatch
) -> BlockReply:
    os.environ.clear()
    os.environ.update(request.env)
    os.chdir(request.cwd)
    _limit_files(request.max_file_size)
    linecache.cache[request.filename] = (len(request.code), None, request.code.splitlines(True), request.filename)
    sys.argv = [request.file or request.filename]
    if request.file is not None:
        namespace["__file__"] = request.file
    error: BlockError | None = None
    before = set(threading.enumerate())
    start = time.perf_counter()
    watch.start(request.max_output)
    try:
        try:
            compiled = compile(request.code, request.filename, "exec")
            exec(compiled, namespace)
        except BaseException as raised:
            error = BlockError.of(raised, request.filename)
            error = replace(error, message=error.message + _file_too_large(raised, request.max_file_size))
        finally:
            watch.stop()
    except _OutputLimitReached:
        watch.stop()  # it arrived after the block had ended: the output's size says what happened
    seconds = time.perf_counter() - start
    # The block's threads may still print: wait for them (within its limit) before its output is read.
    started = [t for t in threading.enumerate() if t not in before and not _ended_idle_progress_monitor(t)]
    running = _wait_for_threads(started, start + request.limit - min(2.0, 0.1 * request.limit))
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    _end_children()
    output, size = _read(out, request.max_output)
    stderr, _ = _read(err, request.max_output)
    if watch.overflowed == "stderr":
        message = f"the block wrote more than {request.max_output:,} bytes to stderr and was stopped as it wrote"
        error = BlockError("OutputTooLarge", f"{message}; stderr is kept out of the page, but not off the disk")
    elif watch.overflowed:
        message = f"the block printed more than {request.max_output:,} bytes and was stopped as it wrote"
        error = BlockError("OutputTooLarge", f"{message}; a page shows at most {request.max_output:,}")
    elif size > request.max_output:
        message = f"the block printed {size:,} bytes"
        error = BlockError("OutputTooLarge", f"{message}; a page shows at most {request.max_output:,}")
    elif running and error is None:
        error = BlockError(
            "ThreadsLeftRunning",
            f"the block ended with thread(s) still running ({', '.join(running)}); join the threads a block "
            "starts, or what they print later would land in another block's output",
        )
    return BlockReply(output=output[: request.max_output], stderr=stderr, seconds=seconds, error=error)


def print_torch_facts() -> None:
    """Print, as one JSON object, what torch says about this machine (run as a block by `execution.facts`).

    The build process never imports torch: the versions, kernels, threads and accelerator that
    provenance lines and cache keys state come from here, measured in a block's own environment.
    """
    import json  # noqa: PLC0415  (only this block needs it)

    import torch  # noqa: PLC0415  (in a block's process only, never in the build's)

    if torch.cuda.is_available():
        device = torch.cuda.get_device_name(torch.device("cuda"))
        accelerator = f"cuda: {device}"
    elif torch.backends.mps.is_available():
        device, accelerator = "mps", "mps (Apple GPU)"
    else:
        device, accelerator = "cpu", "none"
    facts = {
        "torch_version": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "accelerator": accelerator,
        "device": device,
    }
    sys.stdout.write(json.dumps(facts) + "\n")


def serve(conn: Connection, build_pid: int, output: str | None = None) -> None:
    """Run the `BlockRequest`s received on `conn` in one shared namespace until told to stop.

    The reply to each is a `BlockReply`: what the block wrote to file descriptor 1 (its own
    prints, `os.write(1, ...)` and its subprocesses' output alike), what it wrote to
    descriptor 2 (kept out of the page), its wall time and, when it raised anything at
    all (`SystemExit` included) or printed too much, a `BlockError`.

    Args:
        conn: The parent's end of a pipe.
        build_pid: The MkDocs process: when it is gone, the worker ends with everything it started.
        output: The file the blocks' descriptor 1 writes to, which the build reads when a block cannot
            answer (it ran out of time, its process died); a temporary file of the worker's if `None`.
    """
    os.setsid()
    _become_subreaper()
    # Before any code it is sent: no reading the build's memory or environment, whatever the user (`confine`).
    try:
        confine_this_process()
    except ConfinementError as error:
        refusal: BlockError | None = BlockError(
            "ConfinementFailed", f"the block's process could not give up reading other processes' memory: {error}"
        )
    else:
        refusal = None
    worker = os.fork()
    if worker:
        conn.close()  # the worker's alone: the build reads its end of file once the worker is gone
        _keep(worker)
    status = 1
    try:
        _become_subreaper()  # not inherited: the worker's own orphans come to it while it lives
        _serve_blocks(conn, build_pid, refusal, output)
        status = 0
    finally:
        # Never back into multiprocessing's bootstrap, which belongs to the keeper: the worker is its copy.
        os._exit(status)


def _keep(worker: int) -> NoReturn:
    """Wait for the worker, reap what is re-parented here meanwhile, then kill what it left and end as it ended.

    The keeper is non-dumpable, like the build: as root without capabilities a block reads no
    ancestor's `/proc` files, and dying of the worker's signal writes no core file.

    Args:
        worker: The worker's process id.
    """
    with contextlib.suppress(ConfinementError):
        hide_this_process()
    while True:
        pid, status = os.waitpid(-1, 0)  # the worker, or an orphan of its that ended here
        if pid == worker:
            break
    _end_children()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's disposition cannot be set, nor need be
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


def _serve_blocks(conn: Connection, build_pid: int, refusal: BlockError | None, output: str | None) -> None:
    """The worker's loop: run each request in one namespace, reply, until the build sends `None` or goes away."""
    threading.Thread(target=_watch_build, args=(build_pid,), daemon=True, name="floors-build-watch").start()
    out, err = _capture_fd(1, output), _capture_fd(2)
    watch = _OutputWatch({"output": out, "stderr": err})
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    # A block runs its helpers as they are now, whatever bytecode Python cached of them (fresh_source says why).
    import_project_modules_from_source()
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        if refusal is not None:
            conn.send(BlockReply(output="", stderr="", seconds=0.0, error=refusal))
            continue
        conn.send(_run_one(request, namespace, out, err, watch))
