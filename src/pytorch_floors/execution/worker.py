"""The child side of proof execution: runs blocks in a fresh process and reports back.

The fork server preloads torch and this module, which imports only the standard library (so
the MkDocs process can import it, for `BlockRequest`, without importing torch). Every block's
process starts from an already-imported, never-used torch: default dtype, grad mode, RNG seed
and thread count are torch's own defaults, and `pytorch_floors`' helpers are imported afresh,
from disk, by the blocks that use them.

Each worker leads its own session (`setsid`), so the processes a block starts belong to
the worker's process group: the parent kills the whole group when the block or session is
over, on time-out and at shutdown, and the worker kills them itself at the end of every
block and if the build process goes away.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["BlockRequest", "print_torch_facts", "serve"]


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
    """

    code: str
    filename: str
    env: dict[str, str]
    cwd: str
    file: str | None
    max_output: int


def _describe(error: BaseException, filename: str) -> dict[str, Any]:
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    lines = [frame.lineno for frame in frames]
    if isinstance(error, SyntaxError) and error.filename == filename and error.lineno:
        lines.append(error.lineno)
    if isinstance(error, SystemExit):
        message = f"the proof called sys.exit({error.code!r}); proofs must run to the end"
    else:
        message = str(error)
    # The proof's own frames only: the engine's and the standard library's say nothing to its author.
    own = traceback.StackSummary.from_list(frames).format()
    return {
        "type": type(error).__name__,
        "message": message,
        "lines": [line for line in lines if line is not None],
        "traceback": "".join(traceback.format_exception(error)),
        "own_traceback": "".join(own),
    }


def _group_members() -> list[int]:
    """Other live processes of this worker's process group (Linux: read from /proc)."""
    me, members = os.getpid(), []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            # Field 5 of /proc/PID/stat is the process group; the command name (field 2) may hold spaces.
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[2]) == me:
                members.append(int(entry.name))
    return members


def _end_children() -> None:
    """Kill every process the block started (its whole process group but this worker) and reap them."""
    for pid in _group_members():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
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
            os.killpg(0, signal.SIGKILL)
        time.sleep(0.25)


def _capture_fd(fd: int) -> BinaryIO:
    """Point file descriptor `fd` at a fresh temporary file, so the block's writes and its children's land there."""
    sink = tempfile.TemporaryFile()  # noqa: SIM115  (open for the worker's whole life)
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


def _run_one(request: BlockRequest, namespace: dict[str, Any], out: BinaryIO, err: BinaryIO) -> dict[str, Any]:
    os.environ.clear()
    os.environ.update(request.env)
    os.chdir(request.cwd)
    linecache.cache[request.filename] = (len(request.code), None, request.code.splitlines(True), request.filename)
    sys.argv = [request.file or request.filename]
    if request.file is not None:
        namespace["__file__"] = request.file
    error = None
    start = time.perf_counter()
    try:
        compiled = compile(request.code, request.filename, "exec")
        exec(compiled, namespace)
    except BaseException as raised:
        error = _describe(raised, request.filename)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
    seconds = time.perf_counter() - start
    _end_children()
    output, size = _read(out, request.max_output)
    stderr, _ = _read(err, request.max_output)
    if size > request.max_output and error is None:
        error = {
            "type": "OutputTooLarge",
            "message": f"the block printed {size:,} bytes; a page shows at most {request.max_output:,}",
            "lines": [],
            "traceback": "",
            "own_traceback": "",
        }
    return {"output": output[: request.max_output], "stderr": stderr, "seconds": seconds, "error": error}


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


def serve(conn: Connection, build_pid: int) -> None:
    """Run the `BlockRequest`s received on `conn` in one shared namespace until told to stop.

    The reply to each is a dict with what the block wrote to file descriptor 1 (its own
    prints, `os.write(1, ...)` and its subprocesses' output alike), what it wrote to
    descriptor 2 (kept out of the page), its wall time and, when it raised anything at
    all (`SystemExit` included) or printed too much, a description of the error.

    Args:
        conn: The parent's end of a pipe.
        build_pid: The MkDocs process: when it is gone, the worker ends with everything it started.
    """
    os.setsid()
    threading.Thread(target=_watch_build, args=(build_pid,), daemon=True).start()
    out, err = _capture_fd(1), _capture_fd(2)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        conn.send(_run_one(request, namespace, out, err))
