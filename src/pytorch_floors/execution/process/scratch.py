"""Scratch files and folders in the temporary directory, named after the process that made them.

A build or publish stopped by SIGKILL (or the kernel's OOM killer) runs no `finally`, so the scratch
it made stays behind. Each name carries its maker's process id; the next one to make scratch of the
same kind removes what dead processes left. Standard library only (the engine imports it).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["WORKDIR", "folder", "prefix", "remove", "sweep"]

WORKDIR = "workdir"
"""The kind of the folder a block runs in (its working directory, unless it asks for `workdir=`)."""


def prefix(kind: str) -> str:
    """The name prefix of this process's scratch of one kind (`floors-claims-4242-`).

    Args:
        kind: What the scratch is for, a word (`claims`, `previous`, `handouts`).

    Returns:
        The prefix to give `tempfile`.
    """
    return f"floors-{kind}-{os.getpid()}-"


def folder(kind: str) -> Path:
    """Make a scratch folder of one kind in the temporary directory, named with `prefix`.

    Args:
        kind: As given to `prefix`.

    Returns:
        Its real path (the one `os.getcwd()` returns in it, which the output scrubber looks for).
    """
    return Path(tempfile.mkdtemp(prefix=prefix(kind))).resolve()


def _writable_again(path: Path) -> None:
    """Give the owner back write and search permission on a folder tree (a block may have taken it away)."""
    for root, folders, _ in os.walk(path):
        for name in [".", *folders]:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o700)


def remove(path: Path) -> bool:
    """Remove a scratch file or folder and everything in it; never raise.

    A block can make what it wrote unremovable by its owner (`chmod 0` on a folder): permissions are given
    back and the removal tried once more. What still resists stays, for the next sweep, and is not an error
    of the build that finds it.

    Args:
        path: The file or folder.

    Returns:
        Whether it is gone.
    """
    for attempt in range(2):
        try:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        except FileNotFoundError:
            return True  # another sweeper was first
        except OSError:
            if attempt == 0 and path.is_dir():
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)
                _writable_again(path)
                continue
            return False
        return True
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def sweep(kind: str, directory: Path | None = None) -> list[Path]:
    """Remove the scratch of one kind that processes no longer alive left behind.

    Args:
        kind: As given to `prefix`.
        directory: Where to look (default: the temporary directory).

    Returns:
        What was removed.
    """
    folder = Path(directory or tempfile.gettempdir())
    pattern = re.compile(rf"floors-{re.escape(kind)}-(\d+)-")
    removed = []
    for path in folder.glob(f"floors-{kind}-*"):
        match = pattern.match(path.name)
        if match is None or _alive(int(match[1])):
            continue
        if remove(path):
            removed.append(path)
    return removed
