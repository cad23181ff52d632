"""`EditWatch`: the author's edits a serve session has seen, counted as the server's own watcher sees them.

A dirty session's first build leaves the API reference to a build of its own (`plugin.serve.later`).
That build renders 43 pages from the package's docstrings, about six seconds on two cores, and an edit
saved meanwhile waited for all of it before its page showed. So each build notes how many edits the
session had seen when it began. A build that an edit came before shows the edit alone and leaves those
pages waiting (`ServeSession.start_build`); the reference's build, when an edit comes while it renders,
gives the pages it has not rendered yet their placeholder again (`ServeSession.reference_waits`). The
build that renders them starts once the author has not saved an edit for a few seconds (`later.nudge`).

The counter listens on the live reload server's own observer, to the paths MkDocs watches for edits
(the docs, `mkdocs.yml`, the configuration's `watch` list): an edit is counted when MkDocs sees it, no
sooner. The session's signal folder is not among them: the background build's progress is no edit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import BaseObserver

__all__ = ["EditWatch"]


class EditWatch(FileSystemEventHandler):
    """How many edits (a file written, made, moved or removed) the watched paths have seen."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()  # the observer's thread counts, a build's thread reads
        self._count = 0

    @property
    def count(self) -> int:
        """Edits seen so far."""
        with self._lock:
            return self._count

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Count an event on a file (a folder's own event comes with its files', as MkDocs ignores it)."""
        if event.is_directory:
            return
        with self._lock:
            self._count += 1

    def follow(self, observer: BaseObserver, paths: Iterable[str]) -> None:
        """Count the events `observer` sees under each of `paths` that exists (a folder, or one file)."""
        # As MkDocs names them (`LiveReloadServer.watch`): the observer then polls each path once for both.
        for path in dict.fromkeys(os.path.abspath(p) for p in paths):
            if os.path.exists(path):
                observer.schedule(self, path, recursive=True)
