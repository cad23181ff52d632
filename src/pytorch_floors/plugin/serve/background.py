"""The build that runs a serve session's proofs and labs behind it: started, followed by its events, ended with it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.process.groups import end_group
from pytorch_floors.execution.process.runner import end_all
from pytorch_floors.execution.progress import Progress, parse_progress

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

BACKGROUND_VARIABLE = "FLOORS_SERVE_BACKGROUND"
"""Set, to the serve process's id, in the environment of the build that runs a session's proofs behind it."""

SIGNALS_VARIABLE = "FLOORS_SERVE_SIGNALS"
"""The folder the session watches, named to its background build, which removes it if the session is killed."""

FAILURES_FILE = "failures.jsonl"
"""In the session's signal folder: one JSON line per block that failed in its background build."""

_FAILURE_FIELDS = {
    "key": str,
    "page": str,
    "block": str,
    "file": str,
    "line": int,
    "summary": str,
    "details": str,
    "output": str,
}


def report_background_failure(signal_dir: Path, key: str, failure: ProofFailure) -> None:
    """Tell the session a block failed in its background build (called there, by the engine).

    The line is written with one `write` to a file opened for appending, so the session never reads
    half of it; the folder is watched, so live reload renders the page again with the failure.

    Args:
        signal_dir: The session's signal folder (`SIGNALS_VARIABLE`).
        key: The block's cache key: the session shows this failure while the key is the same.
        failure: The failure.
    """
    line = json.dumps(
        {
            "key": key,
            "page": failure.page,
            "block": failure.block_id,
            "file": failure.location[0],
            "line": failure.location[1],
            "summary": failure.summary,
            "details": failure.details,
            "output": failure.output,
        }
    )
    descriptor = os.open(signal_dir / FAILURES_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, (line + "\n").encode("utf-8"))
    finally:
        os.close(descriptor)


def read_background_failures(signal_dir: Path | None) -> dict[str, ProofFailure]:
    """The blocks that failed in a session's background build so far, by cache key.

    The file comes from another process: a line is taken only if it is complete and every field has
    its type; any other line is named in the log, never shown.

    Args:
        signal_dir: The session's signal folder, or `None` before the background build starts.

    Returns:
        Each failure, by the cache key of the block that failed.
    """
    path = signal_dir / FAILURES_FILE if signal_dir is not None else None
    if path is None or not path.is_file():
        return {}
    failures: dict[str, ProofFailure] = {}
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.split("\n")[:-1], start=1):  # the last piece is unfinished, or empty
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _FAILURE_FIELDS.items()):
            log.warning("serve: line %d of the background build's failures is not one: %.80r", number, line)
            continue
        location = (entry["file"], entry["line"])
        failures[entry["key"]] = ProofFailure(
            entry["page"], entry["block"], location, entry["summary"], entry["details"], output=entry["output"]
        )
    return failures


HEARTBEAT_S = 10.0
"""The longest the session's log stays silent while its background build runs."""

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR}
_LEVEL = re.compile(r"^(?P<level>INFO|WARNING|ERROR|DEBUG)\s+-\s+(?P<message>.*)$")


def emit_progress(event: Progress) -> None:
    """Write one step of the background build on its output, where its session reads it (`Background`)."""
    print(event.line(), flush=True)


STOP_GRACE = 10.0
"""Seconds a background build has to shut down once asked (SIGTERM), before it is killed."""


def watch_parent(parent: int, remove: Sequence[Path] = (), interval: float = 0.5) -> threading.Thread:
    """End this process (and so its block processes, which watch it) once the serve process `parent` is gone.

    Args:
        parent: The serve process's id (`BACKGROUND_VARIABLE`).
        remove: Folders to remove first (the build's site folder, which nobody reads any more); the
            sequence may be added to after the watch starts.
        interval: Seconds between looks.

    Returns:
        The (daemon) thread that watches.
    """

    def watch() -> None:
        while True:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                end_all()
                for folder in list(remove):
                    shutil.rmtree(folder, ignore_errors=True)
                # Stopped as the session stops it (`stopping`): the build shuts down and Python's exit handlers
                # remove multiprocessing's folder; a main thread that does not answer in time is ended anyway.
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(STOP_GRACE)
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(interval)

    thread = threading.Thread(target=watch, name="floors-serve-parent", daemon=True)
    thread.start()
    return thread


class Background:
    """The build that runs a serve session's proofs and labs behind it, into the cache the session reads.

    It is `mkdocs build` of the same project, in a process of its own (its own session and process
    group), with `BACKGROUND_VARIABLE` set: its plugin then keeps going past a failed proof, as serve
    does, and ends the build if the serve process goes away. Its log says which page's proofs it runs;
    as it moves past a page, that page is done (`done`), `signal_dir` is touched (the session watches it:
    live reload rebuilds), and the proof lines are repeated in the session's log, marked `background:`.
    """

    def __init__(self, config_file: Path, project_dir: Path, signal_dir: Path) -> None:
        """Prepare, without starting.

        Args:
            config_file: The project's `mkdocs.yml`.
            project_dir: Where the build runs.
            signal_dir: The folder the session watches (a file is written into it as each page is done).
        """
        self.config_file, self.project_dir, self.signal_dir = config_file, project_dir, signal_dir
        self.process: subprocess.Popen[str] | None = None
        self._site = Path(tempfile.mkdtemp(prefix="floors-background-"))
        self._done: set[str] = set()
        self._lock = threading.Lock()
        self._said_at = self._doing_since = time.monotonic()
        self._doing = ""
        self._moved = False  # a proof or lab has said where it is
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        """Start the build and the thread that reads its log."""
        env = {
            **os.environ,
            BACKGROUND_VARIABLE: str(os.getpid()),
            SIGNALS_VARIABLE: str(self.signal_dir),
            "NO_MKDOCS_2_WARNING": "1",
        }
        command = [
            *(sys.executable, "-m", "mkdocs", "build", "--config-file", str(self.config_file)),
            *("--site-dir", str(self._site)),
        ]
        self.process = subprocess.Popen(
            command,
            cwd=self.project_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="floors-background-log", daemon=True)
        self._reader.start()
        threading.Thread(target=self._heartbeat, name="floors-background-heartbeat", daemon=True).start()
        log.info(
            "serve: the proofs and labs run in the background, in the navigation's order; pages reload as they are done"
        )

    def _heartbeat(self) -> None:
        """Say what the background build is doing whenever it has said nothing for `HEARTBEAT_S` seconds.

        One proof can run for minutes (a C++ compile); a terminal silent that long looks hung.
        """
        process = self.process
        assert process is not None
        while process.poll() is None:
            time.sleep(1)
            with self._lock:
                quiet = time.monotonic() - self._said_at
            if quiet >= HEARTBEAT_S and process.poll() is None:
                log.info("background: %s", self.doing_words())
                with self._lock:
                    self._said_at = time.monotonic()

    def doing_words(self) -> str:
        """What the build is doing now, as its heartbeat says it: the proof or lab that runs, else the rest of it.

        A proof or lab that has ended is no longer what runs: the heartbeat once said "still running" the last
        proof a quarter of a minute after it ran, while the build rendered the pages.
        """
        with self._lock:
            doing, since, moved = self._doing, self._doing_since, self._moved
        so_far = time.monotonic() - since
        if doing:
            return f"still running {doing} ({so_far:.0f} s so far)"
        if moved:
            return f"still building the pages ({so_far:.0f} s since the last proof or lab ended)"
        return f"still starting ({so_far:.0f} s so far)"

    def _read(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        current: str | None = None
        for raw in process.stdout:
            line = raw.rstrip()
            try:
                event = parse_progress(line)
            except ValueError as error:  # our own child wrote it: a bug to see, not a reason to stop reading
                log.warning("background: %s", error)
                continue
            if event is None:
                matched = _LEVEL.match(line)
                level, message = (matched["level"], matched["message"]) if matched else ("INFO", line)
                if level in {"WARNING", "ERROR"}:
                    log.log(_LEVELS[level], "background: %s", message)
                    with self._lock:
                        self._said_at = time.monotonic()
                continue
            log.info("background: %s", event.words())
            with self._lock:
                self._said_at = time.monotonic()
                self._moved = True
                if event.state == "running":
                    self._doing, self._doing_since = event.where, time.monotonic()
                elif event.where == self._doing:  # it ended: nothing of it runs any more
                    self._doing, self._doing_since = "", time.monotonic()
            if event.page != current:
                if current is not None:
                    self._finish(current)
                current = event.page
        process.wait()
        if current is not None:
            self._finish(current)
        log.info("serve: the background build ended (exit status %s)", process.returncode)
        self._signal("finished")
        shutil.rmtree(self._site, ignore_errors=True)

    def _finish(self, page: str) -> None:
        with self._lock:
            self._done.add(page)
        self._signal(page)

    def _signal(self, what: str) -> None:
        with contextlib.suppress(OSError):
            (self.signal_dir / "progress").write_text(what, encoding="utf-8")

    def done(self) -> set[str]:
        """The pages whose proofs (or lab) the background build has run."""
        with self._lock:
            return set(self._done)

    @property
    def finished(self) -> bool:
        """Whether the build has ended and its log has been read to its end."""
        return (
            self.process is not None
            and self.process.poll() is not None
            and not (self._reader is not None and self._reader.is_alive())
        )

    def stop(self) -> None:
        """End the build with its process group (its block processes end themselves when it is gone)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        end_group(process, grace=STOP_GRACE)
        shutil.rmtree(self._site, ignore_errors=True)
