"""`mkdocs serve` or `build` stopped by SIGTERM ends as when stopped with Ctrl-C: nothing left in the temp folder.

MkDocs removes the site it serves from (a `mkdocs_*` folder in the temporary directory) and calls the
plugins' `on_shutdown` only when serve ends by an exception, as Ctrl-C's `KeyboardInterrupt` is. SIGTERM
(a process manager, an editor stopping its task, `kill`, `docker stop`) ended the process at once: the
served copy of the site stayed behind, and so did the session's signal folder, at every stop. A build
ended so (a serve session stops its background build with SIGTERM) left multiprocessing's folder of its
fork server's socket (`pymp-*`), which only Python's exit handlers remove.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType


def _interrupt(_signal: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def interrupt_on_terminate() -> Callable[[], None]:
    """From now on, SIGTERM interrupts this process as Ctrl-C does; returns what puts the old handling back.

    Only where SIGTERM ends the process untouched (its default handling), from the main thread (the only
    one that may set a handler): a program that embeds serve and handles SIGTERM itself keeps its handling.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return lambda: None
    signal.signal(signal.SIGTERM, _interrupt)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is _interrupt:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return restore
