"""The one exception the domain raises when the site breaks one of its rules."""

from __future__ import annotations

__all__ = ["FloorsError", "InputError", "ToolError"]


class FloorsError(Exception):
    """A refusal that names what and where (`docs/labs/4-dispatcher.py: ...`).

    The domain packages raise it, and know nothing of MkDocs; the plugin reports it as MkDocs'
    `PluginError` (one line, the build stops), the command line as an error message.
    """


class InputError(FloorsError, ValueError):
    """A file, page or setting the site reads is not what it must be (`anchors.aliases:3: expected ...`).

    Also a `ValueError`, as it was before it became a refusal of its own: code that catches one still does.
    """


class ToolError(FloorsError, RuntimeError):
    """A tool the site runs on the author's behalf (git, Chromium) failed; the message carries what it said."""
