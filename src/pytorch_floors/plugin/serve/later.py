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

from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from pytorch_floors.labs.kernel import LabRuns
from pytorch_floors.render.templates import render as render_template

__all__ = ["LATER_FILE", "QUIET_S", "api_later", "nudge", "render_later"]

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


QUIET_S = 5.0
"""Seconds without an edit before the session starts the build that renders what was left for later: the
reference's build takes about six seconds on two cores, and an edit saved during it waits for part of it."""


def nudge(
    signal_dir: Path,
    *,
    edits: Callable[[], int],
    watching: Callable[[], bool] = lambda: True,
    settle: float = 1.0,
    quiet: float = QUIET_S,
    within: float = 60.0,
) -> threading.Thread:
    """Start the session's next build (a file written into `signal_dir`) once the author has paused.

    The server starts watching after the first build, when it starts serving; a file written before
    its watcher has looked at the folder once is no change to it. So the thread waits for the watcher
    to run (`watching`, the server's observer), then `settle` seconds (its polling interval is half a
    second), then until `edits` (the session's count of the author's edits) has not moved for `quiet`
    seconds: an author saving edits one after another gets each shown in a build of its own, not
    behind the API reference. It then writes `LATER_FILE`. Were the write missed, the pages would
    render with the build the background build's first page starts.

    Args:
        signal_dir: The session's signal folder, which the server watches.
        edits: How many edits the session has seen so far (`EditWatch.count`).
        watching: Whether the server's watcher runs yet.
        settle: Seconds between the watcher running and the first look at the edits.
        quiet: Seconds without an edit it waits for.
        within: Seconds to wait for the watcher at most.

    Returns:
        The (daemon) thread.
    """

    def write() -> None:
        deadline = time.monotonic() + within
        while not watching() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        seen, since = edits(), time.monotonic()
        while time.monotonic() - since < quiet:
            if not signal_dir.is_dir():
                return  # the session ended meanwhile
            time.sleep(min(0.1, quiet))
            if edits() != seen:
                seen, since = edits(), time.monotonic()
        with contextlib.suppress(OSError):  # the session ended meanwhile, and removed the folder
            (signal_dir / LATER_FILE).write_text(str(time.time()), encoding="utf-8")

    thread = threading.Thread(target=write, name="floors-serve-later", daemon=True)
    thread.start()
    return thread
