"""Run one function as several ranks of a `torch.distributed` job, each in its own process, on one machine.

A proof about torch.distributed needs several processes that find each other, run the same function,
and hand back what they measured; and a rank that hangs, raises or dies must fail the proof in words,
within a limit, and take every other rank with it, leaving no process and no port behind:

    def measure(rank: int, world_size: int) -> float:
        x = torch.ones(4)
        dist.all_reduce(x)  # the default process group is already up (gloo)
        return float(x[0])

    if __name__ == "__main__":
        print(run_ranks(measure, 2))  # [2.0, 2.0], rank 0's value first

The rank function must be importable by a fresh process: a function defined at the top level of the
proof's own file, whose launching code sits under `if __name__ == "__main__":`. Each rank imports
that file again (as a module named `__floors_rank__`, so the guarded code does not run) and calls the
function by name; this is how it works alike in the build, run as a script and downloaded.

How it runs:

- The ranks start with multiprocessing's fork server (on Linux) or spawn (elsewhere), as the build's
  own proofs do; the build tells a block which one it uses (`START_CHANNEL`), and `start_method=`
  overrides both. Each rank leads a process group of its own, which is killed when the call ends.
- Rendezvous: the caller opens a `torch.distributed.TCPStore` (the master) on a free port of
  127.0.0.1 (port 0: the system picks one, so no other program can take it between choosing and
  binding; a `port=` already in use is not an error: a free one is taken instead). Each rank sets
  `MASTER_ADDR`, `MASTER_PORT`, `RANK`, `WORLD_SIZE` and `LOCAL_RANK` as torchrun does and, with
  `init=True` (the default), joins the default process group through a client of that store before the
  function runs, and leaves it after. With `init=False` the function does the rendezvous itself.
- Each rank runs torch on `threads` threads (default 1, as torchrun sets `OMP_NUM_THREADS=1` for
  several processes per machine): two ranks on two cores, not four threads fighting over them.
- The call has one time limit (`timeout` seconds, from the start of the first rank): in a block of the
  build, by default what is left of the block's own limit (`DEADLINE_CHANNEL`) less a moment to report,
  so that the call, not the block, runs out first and the rank that hung is named; elsewhere 120 s.
  As a block's limit does, it counts the time the ranks ran, slept or waited on each other, not the time
  they stood ready to run with no core free (Linux's schedstat, of the caller's longest-waiting thread or
  process below it), up to `MAX_STRETCH` times the limit in wall time: on a crowded machine a proof that
  is slow is not a proof that hung.
- A rank that raises (its traceback), calls `sys.exit`, exits or is killed early (its exit code or
  signal), returns what pickle cannot carry, or is still running at the limit (where it was, from
  `faulthandler`) fails the call with `RankFailed`, naming the rank and the cause; the first rank to fail
  is the one named, since its peers then fail in turn at their next collective.

Standard library and torch only: a downloaded proof carries this module inside it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing
import os
import pickle
import runpy
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

__all__ = [
    "DEADLINE_CHANNEL",
    "DEFAULT_TIMEOUT",
    "HOST",
    "MAX_STRETCH",
    "RANK_MODULE",
    "START_CHANNEL",
    "RankFailed",
    "run_ranks",
]

HOST = "127.0.0.1"
"""Where the ranks meet: this machine only, never a network interface."""

RANK_MODULE = "__floors_rank__"
"""The module name a rank imports the proof's file under (not `__main__`, so the launching code does not run)."""

START_CHANNEL = "FLOORS_RANKS_START_METHOD"
"""The variable the build sets in a block's environment: the start method its own processes use."""

DEADLINE_CHANNEL = "FLOORS_BLOCK_DEADLINE"
"""The variable the build sets in a block's environment: when the block's limit ends (`time.time()` seconds)."""

DEFAULT_TIMEOUT = 120.0
"""Seconds a call may take where no block's limit is told (a proof run as a script, or downloaded)."""

MAX_STRETCH = 10.0
"""The most wall time a call gets, in multiples of its limit, however crowded the machine (a block's, too)."""

_REPORT = 3.0
"""Seconds at least kept back from a block's limit: to dump the stacks of the ranks that hung, kill them all, and
report before the block itself runs out of time (a tenth of the time left where that is more)."""

_GRACE = 0.3
"""Seconds to wait, after the first failure, for the other ranks' reports (to name the earliest)."""

_DUMP_WAIT = 0.5
"""Seconds a rank still running at the limit is given to write where it is (`faulthandler`)."""

_COLLECTIVE = os.path.join("torch", "distributed", "")
"""Where a rank waiting for its peers is blocked: a frame in torch.distributed."""

_TAIL = 4000
"""Characters of a rank's traceback kept in the error message (its end: the innermost frames)."""


class RankFailed(RuntimeError):
    """One rank of a `run_ranks` call failed: it raised, hung past the limit, or exited early.

    Attributes:
        rank: The rank that failed first.
        cause: What happened to it, with its traceback where there is one.
    """

    def __init__(self, rank: int, cause: str) -> None:
        super().__init__(f"rank {rank} {cause}")
        self.rank = rank
        self.cause = cause


@dataclass(frozen=True)
class _Job:
    """What one rank is sent: where its function is, who it is, and how to meet the others."""

    file: str
    name: str
    rank: int
    world_size: int
    port: int
    args: tuple[Any, ...]
    backend: str
    init: bool
    threads: int
    seconds: float
    dump: str


def _start_method(chosen: str | None) -> str:
    """The start method: the caller's, else the build's (`START_CHANNEL`), else this platform's safe default."""
    if chosen:
        return chosen
    # A channel from the build to its blocks, not a reader's setting: read directly (claims.py does the same).
    told = os.environ.get(START_CHANNEL, "").strip()
    if told:
        return told
    linux = sys.platform.startswith("linux")
    return "forkserver" if linux and "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _default_timeout() -> float:
    """The call's limit when the caller gives none: what is left of the block's limit less `_REPORT`, else 120 s.

    At the block's limit the build kills the block with everything it started and can only say that it ran out
    of time; ending first, the call names the rank that hung and where.
    """
    # A channel from the build to its blocks, not a reader's setting: read directly, as `START_CHANNEL` is.
    told = os.environ.get(DEADLINE_CHANNEL, "").strip()
    try:
        left = float(told) - time.time()
    except ValueError:
        return DEFAULT_TIMEOUT
    return max(left - max(_REPORT, 0.1 * left), 1.0)


def _function_file(fn: Callable[..., Any]) -> tuple[str, str]:
    """The file and name a rank imports `fn` from, or a `ValueError` saying why `fn` cannot be imported."""
    name = getattr(fn, "__qualname__", "")
    file = getattr(fn, "__globals__", {}).get("__file__")
    if not name or "<" in name or "." in name or file is None:
        raise ValueError(
            f"run_ranks needs a function defined at the top level of a file, which each rank imports; "
            f"{name or fn!r} is not (a lambda, a nested function or a method cannot be found by name)"
        )
    return str(Path(file).resolve()), name


def _open_store(port: int, world_size: int, seconds: float) -> Any:
    """The master `TCPStore` on `port`, or on a free port when `port` is 0 or already taken."""
    import torch.distributed as dist  # noqa: PLC0415  (the caller imports torch.distributed only when it runs ranks)

    timeout = timedelta(seconds=seconds)
    if port:
        try:
            return dist.TCPStore(  # type: ignore[attr-defined]
                HOST, port, world_size + 1, is_master=True, wait_for_workers=False, timeout=timeout
            )
        except dist.DistNetworkError:
            pass  # in use (EADDRINUSE): not the caller's failure; the system picks a free port below
    return dist.TCPStore(  # type: ignore[attr-defined]
        HOST, 0, world_size + 1, is_master=True, wait_for_workers=False, timeout=timeout
    )


def run_ranks(
    fn: Callable[..., Any],
    world_size: int = 2,
    *,
    args: Sequence[Any] = (),
    timeout: float | None = None,
    init: bool = True,
    backend: str = "gloo",
    threads: int = 1,
    port: int = 0,
    start_method: str | None = None,
) -> list[Any]:
    """Run `fn(rank, world_size, *args)` in `world_size` processes and return what each returned.

    Args:
        fn: A function defined at the top level of the caller's file (each rank imports that file
            under the name `RANK_MODULE` and calls the function by name).
        world_size: How many ranks.
        args: More arguments for `fn` (sent to each rank with pickle).
        timeout: Seconds the whole call may take, ranks' start included, less the time they stood ready to
            run with no core free (at most `MAX_STRETCH` times it in wall time). Default: in a block of the
            build, what is left of the block's limit less a moment to report (the block's limit stretches
            alike, by the time its longest-waiting thread or process below it was crowded out, so the call
            still runs out first); elsewhere `DEFAULT_TIMEOUT`.
        init: Join the default process group (`backend`) before `fn`, and leave it after; with
            False, `fn` meets the others itself (`MASTER_ADDR`/`MASTER_PORT` name the store).
        backend: The process group's backend (`gloo` runs on any CPU).
        threads: Threads each rank's torch uses (`torch.set_num_threads`).
        port: The store's port; 0 (the default), or a port already in use, takes a free one.
        start_method: `forkserver` or `spawn`; default: what the build uses, else the platform's.

    Returns:
        Each rank's return value, in rank order.

    Raises:
        RankFailed: A rank raised, exited early, was killed, returned something pickle cannot send, or
            was still running at the limit; every rank has been killed by then.
        ValueError: `fn` cannot be imported by name, or `world_size` is below 1.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, not {world_size}")
    file, name = _function_file(fn)
    timeout = _default_timeout() if timeout is None else timeout
    context: Any = multiprocessing.get_context(_start_method(start_method))
    if isinstance(context, multiprocessing.context.ForkServerContext):
        # The server imports torch once and each rank is forked from it; `__main__` first, as multiprocessing
        # does by default (a proof run as a script, whose helpers a download carries inside it).
        context.set_forkserver_preload(["__main__", "torch", "torch.distributed", __name__])
    clock = _Crowding(timeout)
    # The ranks' own waits (the store, gloo's collectives) last as long as the call may stretch: the call, not
    # gloo, decides when a rank that keeps its peers waiting has hung, and names it.
    patience = timeout * MAX_STRETCH
    store = _open_store(port, world_size, patience)
    processes: list[Any] = []
    pipes: dict[Connection, int] = {}
    with tempfile.TemporaryDirectory(prefix="floors-ranks-") as folder, _may_start_processes():
        try:
            for rank in range(world_size):
                ours, theirs = context.Pipe(duplex=False)
                dump = os.path.join(folder, f"rank-{rank}.txt")
                job = _Job(
                    file, name, rank, world_size, store.port, tuple(args), backend, init, threads, patience, dump
                )
                process = context.Process(target=_rank_main, args=(job, theirs), name=f"rank-{rank}", daemon=True)
                process.start()
                theirs.close()
                processes.append(process)
                pipes[ours] = rank
            return _collect(processes, pipes, clock, timeout, folder)
        finally:
            _end(processes)
            for pipe in pipes:
                pipe.close()
            del store  # closes the listening socket: no port is left behind


@contextlib.contextmanager
def _may_start_processes() -> Iterator[None]:
    """Let a daemonic process (a build's block runs in one) start the ranks, which it ends itself.

    multiprocessing refuses children to a daemonic process, which it would kill without waiting for them;
    this call kills and waits for every rank it starts, so the refusal protects nothing here.
    """
    me = multiprocessing.current_process()
    daemonic = me.daemon
    me.daemon = False
    try:
        yield
    finally:
        me.daemon = daemonic


def _collect(
    processes: list[Any], pipes: dict[Connection, int], clock: _Crowding, timeout: float, folder: str
) -> list[Any]:
    """Wait for every rank's report; raise `RankFailed` for the earliest failure."""
    results: dict[int, Any] = {}
    # (waited, when, rank, cause): a rank that failed inside torch.distributed, waiting on its peers, is named
    # only when no rank failed otherwise (raised in its own code, or died), whatever the clocks say.
    failures: list[tuple[bool, float, int, str]] = []
    pending = {rank: connection for connection, rank in pipes.items()}
    failed_at: float | None = None
    while pending:
        # After a failure, a moment more for the other ranks' reports: the earliest one is named.
        left = (clock.deadline if failed_at is None else min(clock.deadline, failed_at + _GRACE)) - time.monotonic()
        if left <= 0 and (failed_at is not None or not clock.stretch()):
            break
        left = max(left, 0.0)
        watched = [*pending.values(), *(processes[rank].sentinel for rank in pending)]
        ready = wait(watched, timeout=left)
        for rank, connection in list(pending.items()):
            if connection in ready or (processes[rank].sentinel in ready and connection.poll()):
                kind, when, value = _receive(connection)
            elif processes[rank].sentinel in ready:
                kind, when, value = "gone", time.time(), None
            else:
                continue
            del pending[rank]
            if kind == "ok":
                results[rank] = value
                continue
            if kind == "gone":
                processes[rank].join(1.0)
                value = _exit_cause(processes[rank].exitcode)
            failures.append((kind == "waited", when, rank, value))
            failed_at = failed_at or time.monotonic()
    if failures:
        _, _, rank, cause = min(failures)
        raise RankFailed(rank, cause)
    if pending:
        hung = sorted(pending)
        stacks = {rank: _where(processes[rank].pid, os.path.join(folder, f"rank-{rank}.txt")) for rank in hung}
        # A rank blocked inside torch.distributed waits for a peer; the one that hung is elsewhere (if any is).
        culprit = next((rank for rank in hung if _COLLECTIVE not in _innermost(stacks[rank])), hung[0])
        others = [rank for rank in hung if rank != culprit]
        waiting = [rank for rank in others if _COLLECTIVE in _innermost(stacks[rank])]
        running = [rank for rank in others if rank not in waiting]
        said = [f"rank(s) {_listed(waiting)} waited for it: {_innermost(stacks[waiting[0]])}"] if waiting else []
        said += [f"rank(s) {_listed(running)} still running too"] if running else []
        waited = f" ({'; '.join(said)})" if said else ""
        wall, crowded = time.monotonic() - clock.started, clock.crowded()
        # Said where the limit stretched by a second or more: a reader tells a stuck rank from a crowded machine.
        stretched = (
            f"; it had {_seconds(wall)} s, {_seconds(crowded)} s of them with no core free" if crowded >= 1 else ""
        )
        where = f"; it was at:\n{stacks[culprit]}" if stacks[culprit] else ""
        raise RankFailed(culprit, f"did not finish within the limit of {_seconds(timeout)} s{waited}{stretched}{where}")
    return [results[rank] for rank in range(len(processes))]


class _Crowding:
    """The time the caller's threads, and those of the processes below it, stood ready to run with no core free.

    Read from Linux's `/proc/PID/task/TID/schedstat`, as the build's block limits are; elsewhere nothing is
    known, and the limit stays wall time.
    """

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.started = time.monotonic()
        self.deadline = self.started + limit
        self._before = self._waits()

    @staticmethod
    def _waits() -> dict[str, int]:
        """Nanoseconds each thread of this process and of every process below it has waited for a core."""
        waits = {}
        for pid in [os.getpid(), *_descendants(os.getpid())]:
            with contextlib.suppress(OSError):
                for task in os.scandir(f"/proc/{pid}/task"):
                    with (
                        contextlib.suppress(OSError, ValueError, IndexError),
                        open(os.path.join(task.path, "schedstat")) as stat,
                    ):
                        waits[f"{pid}/{task.name}"] = int(stat.read().split()[1])
        return waits

    def crowded(self) -> float:
        """Seconds the longest-waiting thread stood ready to run with no core free since the clock started."""
        now = self._waits()
        return max((wait - self._before.get(task, 0) for task, wait in now.items()), default=0) / 1e9

    def stretch(self) -> bool:
        """At the deadline: move it on by the time crowded out, while the call is under `MAX_STRETCH` times its limit.

        Returns:
            Whether there is time left.
        """
        wall = time.monotonic() - self.started
        owed = self.limit - (wall - min(self.crowded(), wall))
        if owed <= 0 or wall >= MAX_STRETCH * self.limit:
            return False
        # Look again once it could have used what it is owed (at least a second on: each look reads /proc).
        self.deadline = min(time.monotonic() + max(owed, 1.0), self.started + MAX_STRETCH * self.limit)
        return True


def _descendants(root: int) -> list[int]:
    """The live processes below `root` (Linux: from /proc; elsewhere none are known)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(os.path.join(entry.path, "stat")) as stat:
                        # Field 4 is the parent; the command name (field 2) may hold spaces and parentheses.
                        parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                    children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _listed(ranks: list[int]) -> str:
    """Ranks as a reader lists them: `0, 2`."""
    return ", ".join(map(str, ranks))


def _seconds(value: float) -> str:
    """Seconds to a tenth, without a trailing `.0`: a limit left of a block's is no round number (11.9609...)."""
    return f"{value:.1f}".removesuffix(".0")


def _receive(connection: Connection) -> tuple[str, float, Any]:
    """One rank's report: `("ok", time, value)`, `("error", time, cause)` or `("waited", time, cause)`."""
    try:
        kind, when, payload = connection.recv()
    except EOFError:
        return "gone", time.time(), None  # it died: its exit status says how
    if kind == "ok":
        try:
            return "ok", when, pickle.loads(payload)
        except Exception as error:  # any unpickling error is this rank's, in words
            return "error", when, f"returned a value that could not be read back: {error!r}"
    return kind, when, payload


def _exit_cause(code: int | None) -> str:
    """A dead rank's exit status in words."""
    if code is None:
        return "stopped reporting while still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name} before it returned"
        return f"was killed by signal {-code} before it returned"
    return f"exited with code {code} before it returned"


def _where(pid: int | None, dump: str) -> str:
    """Where a rank still running is: its frames (innermost first) from `faulthandler`, which writes on SIGUSR1."""
    if pid is None or not hasattr(signal, "SIGUSR1"):
        return ""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGUSR1)
    end = time.monotonic() + _DUMP_WAIT
    text = ""
    while time.monotonic() < end and "_rank_main" not in text:  # its last frame but the bootstrap's
        time.sleep(0.05)
        with contextlib.suppress(OSError):
            text = Path(dump).read_text(encoding="utf-8", errors="replace")
    frames = [line.strip() for line in text.splitlines() if line.strip().startswith("File ")]
    return "\n".join(f for f in frames if not _launchers(f))[-_TAIL:]


def _launchers(frame: str) -> bool:
    """Whether a `faulthandler` frame (`File "PATH", line N in NAME`) is the launcher's, not the proof's.

    The launcher's are this module's (installed, or carried in a download under its own name), multiprocessing's
    and spawn's bootstrap (`<string>`); matched by the frame's whole path, since a proof may well be named
    `ranks.py` or `my_ranks.py`.
    """
    path = frame.split('"')[1] if frame.count('"') >= 2 else ""
    multiprocessing_dir = os.path.join(os.path.dirname(multiprocessing.__file__), "")
    return path in (_launchers.__code__.co_filename, "<string>") or path.startswith(multiprocessing_dir)


def _innermost(stack: str) -> str:
    """The innermost frame of a `_where` stack (its first line), or nothing."""
    return stack.splitlines()[0] if stack else ""


def _end(processes: list[Any]) -> None:
    """Kill every rank with its process group, and wait for each, so none is left."""
    for process in processes:
        if process.pid is None:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)
    for process in processes:
        if process.pid is not None:
            process.join(5.0)


def _import_function(file: str, name: str) -> Callable[..., Any]:
    """The rank function, from the proof's file: a module already loaded from it, or the file run again."""
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and os.path.abspath(path) == file and callable(getattr(module, name, None)):
            return getattr(module, name)  # type: ignore[no-any-return]
    found = runpy.run_path(file, run_name=RANK_MODULE)
    return found[name]  # type: ignore[no-any-return]


def _described(error: BaseException) -> str:
    """What a rank raised, in words, with the end of its traceback."""
    if isinstance(error, SystemExit):
        said = f"called sys.exit({error.code!r}) before it returned"
    else:
        said = f"raised {type(error).__name__}: {error}"
    return f"{said}\n{''.join(traceback.format_exception(error))[-_TAIL:]}"


def _rank_main(job: _Job, pipe: Connection) -> None:
    """A rank's process: lead a process group, meet the others, run the function, report, and exit."""
    os.setpgid(0, 0)  # its own group: the caller kills it with whatever it started
    with contextlib.suppress(OSError, AttributeError, ValueError):
        faulthandler.register(signal.SIGUSR1, file=open(job.dump, "w"), all_threads=False)  # noqa: SIM115
    os.environ.update(
        MASTER_ADDR=HOST,
        MASTER_PORT=str(job.port),
        RANK=str(job.rank),
        WORLD_SIZE=str(job.world_size),
        LOCAL_RANK=str(job.rank),
        LOCAL_WORLD_SIZE=str(job.world_size),
    )
    try:
        import torch  # noqa: PLC0415  (in the rank's process only)
        import torch.distributed as dist  # noqa: PLC0415

        torch.set_num_threads(job.threads)
        fn = _import_function(job.file, job.name)
        if job.init:
            timeout = timedelta(seconds=job.seconds)
            store = dist.TCPStore(  # type: ignore[attr-defined]
                HOST, job.port, job.world_size + 1, is_master=False, timeout=timeout
            )
            dist.init_process_group(job.backend, store=store, rank=job.rank, world_size=job.world_size, timeout=timeout)
        report: tuple[str, float, Any] = ("ok", time.time(), pickle.dumps(fn(job.rank, job.world_size, *job.args)))
    except BaseException as error:  # SystemExit too: an early exit, in words
        # Timed now, before the group is destroyed below: closing it fails the peers, which must come later.
        innermost = traceback.extract_tb(error.__traceback__)[-1:]
        waited = bool(innermost) and _COLLECTIVE in innermost[0].filename
        report = ("waited" if waited else "error", time.time(), _described(error))
    finally:
        distributed = sys.modules.get("torch.distributed")
        with contextlib.suppress(Exception):
            if job.init and distributed is not None and distributed.is_initialized():
                distributed.destroy_process_group()
    try:
        pipe.send(report)
    except Exception as error:  # refused by pickle: say so, not die silently
        pipe.send(("error", time.time(), f"returned a value that could not be sent: {error!r}"))
    pipe.close()
    # No interpreter shutdown: torch's and gloo's threads could hang it; the report is sent.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
