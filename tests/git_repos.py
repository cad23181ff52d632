"""Git for the tests that make repositories of their own (publish's gh-pages, editions): one identity, no config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
"""Who commits, and no user configuration: the same repositories on every machine."""


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    """Run git in `repo` and return what it printed; a failure fails the test with git's words."""
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"git {args}: {done.stderr}"
    return done.stdout
