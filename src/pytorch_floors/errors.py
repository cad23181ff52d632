"""The one exception the domain raises when the site breaks one of its rules."""

from __future__ import annotations

__all__ = ["FloorsError"]


class FloorsError(Exception):
    """A refusal that names what and where (`docs/labs/4-dispatcher.py: ...`).

    The domain packages raise it, and know nothing of MkDocs; the plugin reports it as MkDocs'
    `PluginError` (one line, the build stops), the command line as an error message.
    """
