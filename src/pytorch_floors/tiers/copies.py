"""The tree a tier builds (a snapshot taken when the run began), and the neighbour that crowds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.process.groups import end_group

_NOT_COPIED_AT_ROOT = {".git", "site", ".cache", "build", "test-output", "node_modules"}
_NOT_COPIED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def _not_copied(root: Path) -> Callable[[str, list[str]], set[str]]:
    """What `shutil.copytree` leaves out of the neighbour's copy of `root`."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        at_root = Path(folder) == root
        return {
            name
            for name in names
            if name in _NOT_COPIED
            or name.endswith(".egg-info")
            or (at_root and (name in _NOT_COPIED_AT_ROOT or name.startswith(".venv")))
        }

    return ignore


def snapshot(project: Path, to: Path) -> Path:
    """A copy of `project` as it is now, to build from while its tree is edited (`make machines`).

    Its environments, caches, site and `.git` are left out; a build from it imports the package from
    the copy when its `src` comes first on `PYTHONPATH` (which the blocks' fork server and the labs'
    kernels keep).

    Args:
        project: The project.
        to: Where the copy goes (must not exist).

    Returns:
        `to`.
    """
    shutil.copytree(project, to, ignore=_not_copied(project), symlinks=True)
    return to


class Neighbour:
    """Another user's build beside the run: a copy of the project built cold, again and again.

    Each round is `mkdocs build` (not strict, claims advisory, a block's default time limit 600 s: the
    neighbour's outcome is not graded, and a round that stopped on a block's time limit would skip the
    rest of the site) of the copy into its own site folder, with its own proof cache emptied first, so
    every round runs every proof and lab again: CPU on every core, memory, disk and many processes. It starts on
    `start()` and stops (its current round's whole process group killed) on `stop()`.

    Args:
        project: The project to copy (its environments, caches, site and `.git` are left out).
        python: The interpreter whose MkDocs builds the copy (default: this one).
    """

    def __init__(self, project: Path, python: str | None = None) -> None:
        self.project = project
        self.python = python or sys.executable
        self.rounds: list[tuple[int, float]] = []  # each finished round's exit code and seconds
        self._scratch = Path(tempfile.mkdtemp(prefix="floors-neighbour-"))
        self.copy = self._scratch / "project"
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}
        self._cut_short = False
        self._thread = threading.Thread(target=self._loop, name="floors-neighbour", daemon=True)

    def command(self) -> list[str]:
        """One round's command line (run in the copy)."""
        return [self.python, "-m", "mkdocs", "build", "--site-dir", str(self.copy / "site")]

    def environment(self) -> dict[str, str]:
        """One round's environment: its own cache in the copy, claims advisory, long time limits."""
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "FLOORS_CLAIMS": "advisory", "FLOORS_EXEC_TIMEOUT": "600"}
        env["FLOORS_CACHE_DIR"] = str(self.copy / ".cache")
        return env

    def start(self) -> None:
        """Copy the project and start building it, round after round."""
        snapshot(self.project, self.copy)
        self._env = self.environment()  # taken now: the run's own tier settings come after
        self._thread.start()

    def _loop(self) -> None:
        log = self._scratch / "neighbour.log"
        while not self._stopping.is_set():
            shutil.rmtree(self.copy / ".cache", ignore_errors=True)  # cold: every proof and lab runs again
            started = time.perf_counter()
            with self._lock:
                if self._stopping.is_set():
                    return
                with log.open("ab") as out:
                    self._process = subprocess.Popen(
                        self.command(),
                        cwd=self.copy,
                        env=self._env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
            code = self._process.wait()
            if self._stopping.is_set():
                self._cut_short = True
                return
            self.rounds.append((code, time.perf_counter() - started))
            if code != 0 and time.perf_counter() - started < 5:
                self._stopping.wait(5)  # a copy that cannot build at all does not spin on starting

    def stop(self) -> None:
        """Stop the current round (its process group) and the loop; remove the copy."""
        with self._lock:
            self._stopping.set()
            process = self._process
        if process is not None:
            end_group(process, grace=15)
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def summary(self) -> str:
        """What the neighbour did, in words."""
        done = [seconds for code, seconds in self.rounds if code == 0]
        failed = len(self.rounds) - len(done)
        said = f"{len(done)} cold builds finished" + (f" ({sum(done) / len(done):.0f} s each)" if done else "")
        return said + (f", {failed} failed" if failed else "") + (", one cut short" if self._cut_short else "")


# ---------------------------------------------------------------------------------------------------
# A tier's own Python
# ---------------------------------------------------------------------------------------------------


def checkout() -> Path:
    """The project this package is checked out in (an editable install), where tiers keep their environments.

    Raises:
        FloorsError: If the package is not running from a checkout (no pyproject.toml above `src/`).
    """
    # src/pytorch_floors/tiers/copies.py: the project is three folders up from this file's own.
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file() or not (root / "requirements.txt").is_file():
        raise FloorsError(f"{root}: not a checkout of PyTorch Floors (no pyproject.toml, requirements.txt)")
    return root
