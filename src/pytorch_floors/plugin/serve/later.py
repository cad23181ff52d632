"""What a serve session's first build leaves to the build after it: the labs' conversion, the API reference.

`make serve` on a cold cache answers after one build that runs no proof and no lab. Converting the
sixteen labs' notebooks to HTML (nbconvert, through mkdocs-jupyter) was still about a third of that
build, for pages that show "running…" until the background build has run them, and rendering the API
reference from the package's docstrings (mkdocstrings) a seventh. So the session's first build gives
a lab whose conversion is not cached, and each API reference page, a placeholder ("converting…",
"rendering…") and remembers the page (`ServeSession.later`); as soon as the server watches the
session's signal folder, `nudge` writes a file there, live reload starts the next build, and that
build renders those pages (`ServeSession.start_build`), as every serve build rendered them before. A
page is never shown stale: a placeholder holds none of what it stands for.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.livereload import LiveReloadServer
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from pytorch_floors.labs.kernel import LabRuns
from pytorch_floors.render.templates import render as render_template

__all__ = ["LATER_FILE", "api_later", "nudge", "render_later"]

LATER_FILE = "later"
"""The file `nudge` writes into the session's signal folder (the background build writes `progress`)."""


def render_later(page: Page, lab: str, language: str, runs: LabRuns, remember: Callable[[str], None]) -> None:
    """Give a lab's page a placeholder in place of mkdocs-jupyter's conversion, for this build only.

    mkdocs-jupyter replaces the page's `render` in its `on_pre_page`; this replaces it again (the
    floors plugin's `on_pre_page` comes after). The lab's run is recorded as deferred, as the executor
    records a lab it does not run, so the page is pending and the background build runs the lab.

    Args:
        page: The lab's page.
        lab: The lab's source path from the project root (`docs/labs/3-boundary.py`), for the log.
        language: The page's language code, which the placeholder is written in.
        runs: The build's labs' runs, which record this lab's as deferred.
        remember: Called with the page's source path (relative to `docs/`) when it renders.
    """

    def render(config: Any, files: Any) -> None:
        page.content = render_template("lab_converting.html", language)
        page.toc = get_toc([])
        runs.wait_for_background(lab)
        remember(page.file.src_uri)

    page.render = render  # type: ignore[method-assign]  # per page, as mkdocs-jupyter does


_API_BLOCKS = re.compile(r"^:::[ \t]+\S[^\n]*\n?(?:(?:[ \t]+[^\n]*|[ \t]*)(?:\n|$))*", re.MULTILINE)


def api_later(markdown: str, language: str) -> str:
    """An API reference page's Markdown with a placeholder in place of its `::: module` blocks (mkdocstrings').

    Args:
        markdown: The page's Markdown (front matter already read by MkDocs).
        language: The page's language code, which the placeholder is written in.

    Returns:
        The Markdown: its own prose kept, each block and its indented options gone, the placeholder first.
    """
    kept = _API_BLOCKS.sub("", markdown)
    return render_template("api_rendering.html", language) + "\n\n" + kept


def nudge(server: LiveReloadServer, signal_dir: Path, *, settle: float = 1.0, within: float = 60.0) -> threading.Thread:
    """Start the session's next build as soon as the server watches `signal_dir` (a file written there).

    The server starts watching after the first build, when it starts serving; a file written before
    its watcher has looked at the folder once is no change to it. So the thread waits for the watcher
    to run, then `settle` seconds (its polling interval is half a second), then writes `LATER_FILE`.
    Were the write missed, the pages would render with the build the background build's first page starts.

    Args:
        server: The live reload server.
        signal_dir: The session's signal folder, which the server watches.
        settle: Seconds between the watcher running and the write.
        within: Seconds to wait for the watcher at most.

    Returns:
        The (daemon) thread.
    """

    def write() -> None:
        deadline = time.monotonic() + within
        while not server.observer.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        with contextlib.suppress(OSError):  # the session ended meanwhile, and removed the folder
            (signal_dir / LATER_FILE).write_text(str(time.time()), encoding="utf-8")

    thread = threading.Thread(target=write, name="floors-serve-later", daemon=True)
    thread.start()
    return thread
