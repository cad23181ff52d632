"""What a page shows while the background build has not run its proofs yet, and what a partial build says of itself."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection

from pytorch_floors.execution.engine import SKIPPED_OUTPUT
from pytorch_floors.i18n.messages import t
from pytorch_floors.render.splice import find_start_tag, with_attribute
from pytorch_floors.render.templates import render

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

PARTIAL_ATTRIBUTE = "data-floors-partial"
"""Marks the build report's note that a serve build rendered only some pages: never in a built site."""


def partial_note(rebuilt: Collection[str] | None, language: str) -> str:
    """The build report page's first paragraph when the build rendered only some pages; empty otherwise.

    Args:
        rebuilt: The pages the build rendered, or `None` for every page.
        language: The report page's language (`en`, `zh`).

    Returns:
        The HTML.
    """
    if rebuilt is None:
        return ""
    return render("serve_partial_note.html", language, attribute=PARTIAL_ATTRIBUTE, pages=sorted(rebuilt))


def partial_report(report: str, rebuilt: Collection[str] | None) -> str:
    """The build report (JSON) saying whether the build rendered every page, and if not, which ones.

    Args:
        report: `execution.report.report_json`'s document.
        rebuilt: The pages the build rendered, or `None` for every page.

    Returns:
        The document with `build.partial` and `build.rebuilt` (`null` for a whole build).
    """
    document = json.loads(report)
    document.setdefault("build", {})["partial"] = rebuilt is not None
    document["build"]["rebuilt"] = None if rebuilt is None else sorted(rebuilt)
    return json.dumps(document, indent=2)


PENDING_ATTRIBUTE = "data-proof-pending"
"""On a page's article while a block or lab of it waits for the background build: never in a built site."""

PENDING_TEXT = "running…"
"""What a block waiting for the background build shows in place of its output (in English; `t` translates it)."""


def pending_page(content: str, *, lab: bool, language: str) -> str:
    """A page's content with each waiting block's placeholder (or, for a lab, a note above the notebook).

    Args:
        content: The page's HTML, as the engine and the fence left it.
        lab: The page is a lab's notebook, rendered without running.
        language: The page's language (`en`, `zh`): the note and the placeholders are written in it.

    Returns:
        The content.
    """
    skipped = t(SKIPPED_OUTPUT, language)  # as the fence wrote it, in the page's language
    waiting = content.count(skipped)
    pending_text = t(PENDING_TEXT, language)
    note = render("serve_pending_note.html", language, lab=lab, waiting=waiting, pending_text=pending_text)
    return note + content.replace(skipped, pending_text)


def mark_pending(output: str) -> str:
    """A rendered page whose article says that it waits for the background build (`PENDING_ATTRIBUTE`)."""
    return with_attribute(output, find_start_tag(output, "article"), PENDING_ATTRIBUTE)
