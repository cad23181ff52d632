"""Secrets and personal paths in text a page would show: a block's output, a lab cell's, a recording's.

Blocks cannot read the build's own environment (`process.confine`), but the processes above the build
(`make`, a shell, a CI step) hold it too, and a recording arrives from another machine. So what a page
shows is also checked for what a secret looks like: the value of any variable of the build's
environment whose name says it is one (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, ...), and the shapes
of well-known credentials (GitHub, GitLab, AWS, Slack tokens, private keys) wherever they come from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from pytorch_floors.execution.process.sandbox import PASSED_THROUGH

__all__ = ["SECRET_NAME", "SecretFinder", "personal_path"]

SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PRIVATE|CREDENTIAL|API_?KEY|ACCESS_?KEY|AUTH|COOKIE|SESSION", re.IGNORECASE
)
"""A variable whose name matches holds a secret."""

_MIN_SECRET = 8
"""Shorter values (`1`, `true`) are settings, not secrets, and would match everywhere."""

_SHAPES = (
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), "a GitHub token"),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), "a GitHub token"),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), "a GitLab token"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "an AWS access key"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "a Slack token"),
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"), "a private key"),
)

_PERSONAL = re.compile(r"(?<![\w.~-])(/home/[^/\s\"'<>]+|/Users/[^/\s\"'<>]+|/root)(?=/)")


def personal_path(text: str) -> str | None:
    """The first path into somebody's home folder (`/home/alice/...`, `/Users/bob/...`, `/root/...`), if any.

    A build replaces its own machine's paths (`output.PathScrubber`); a recording made elsewhere that
    still holds one was not scrubbed, or names a file of its maker's.

    Args:
        text: Text a page would show.

    Returns:
        The home folder found, or `None`.
    """
    match = _PERSONAL.search(text)
    return match[1] if match else None


class SecretFinder:
    """Finds the build's secrets, and anything shaped like a credential, in text a page would show."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        """Collect the secret values of the build's environment.

        Args:
            environ: The build's environment (default: this process's).
        """
        source = os.environ if environ is None else environ
        self._values = {
            name: value
            for name, value in source.items()
            if SECRET_NAME.search(name) and name not in PASSED_THROUGH and len(value.strip()) >= _MIN_SECRET
        }

    def find(self, text: str) -> str | None:
        """What secret `text` holds, in words that never repeat it.

        Args:
            text: Output, a message, a recording's field.

        Returns:
            `the value of the build's GITHUB_TOKEN`, `a GitHub token`, ..., or `None`.
        """
        for name, value in self._values.items():
            if value in text:
                return f"the value of the build's environment variable {name}"
        for shape, what in _SHAPES:
            if shape.search(text):
                return what
        return None

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by a note that names what was there.

        Args:
            text: A message or an output.

        Returns:
            The text, safe to show and log.
        """
        for name, value in self._values.items():
            text = text.replace(value, f"<{name} withheld>")
        for shape, what in _SHAPES:
            text = shape.sub(f"<{what} withheld>", text)
        return text
