"""Two editions of the real site published into a throwaway repository, for the tests that read them.

`make publish` (`pytorch_floors.editions.publish`) run twice on a copy of the project: measured, as every
edition must be (on the project's own proof cache, never beside another build of the project), pushed to
a bare remote whose `gh-pages` tree is then served the way GitHub Pages serves it (`PagesHandler`). The
publish prints each edition's handouts, so the handout tests read the second edition's PDFs
(`tests/test_handouts.py`) instead of printing the site once more.
"""

from __future__ import annotations

import http.server
import io
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_repos import GIT_ENV, git
from ninth_floor import copy_project

from conftest import ROOT

__all__ = ["FIRST", "MARKER", "REPOSITORY", "SECOND", "PagesHandler", "Published", "publish_two_editions"]

FIRST, SECOND = "2026.11", "2026.12"
REPOSITORY = "https://github.com/a-course/floors"
"""The repository the test editions say they are published to (their Colab links open it)."""
MARKER = "Only the second edition has this sentence."


@dataclass
class Published:
    """A throwaway project with two editions pushed to a bare remote's `gh-pages`, served like GitHub Pages."""

    repo: Path
    tree: Path
    url: str
    log: str


class PagesHandler(http.server.SimpleHTTPRequestHandler):
    """A static server that answers every miss as GitHub Pages does: the root `404.html`, status 404."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code != 404:
            super().send_error(code, message, explain)
            return
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _publish(repo: Path, edition: str, cache: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "publish", edition, "--push"],
        cwd=repo,
        # An edition is measured: the publish builds run every proof and lab, on the project's own cache (the
        # builds of this run share it, one at a time), with claims advisory as for the site build beside tests.
        env={
            **os.environ,
            **GIT_ENV,
            "FLOORS_CACHE_DIR": str(cache),
            "FLOORS_CLAIMS": "advisory",
            "FLOORS_REPOSITORY": REPOSITORY,
            "NO_MKDOCS_2_WARNING": "1",
        },
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    return done.stdout + done.stderr


def publish_two_editions(scratch: Path) -> dict[str, Any]:
    """Publish two editions of a copy of the project into a bare remote; extract what gh-pages holds."""
    repo, remote, tree = (scratch / name for name in ("project", "remote.git", "gh-pages"))
    cache = ROOT / ".cache"
    repo.mkdir(parents=True)
    copy_project(ROOT, repo, None)  # what git would commit, no cache: the publish reads the project's own
    git(scratch, "init", "-q", "--bare", str(remote))
    git(repo, "init", "-q", "-b", "main")
    # The remote is a folder on this machine: searching the editions' PDFs for deltas (which saves bytes on a
    # network) took 2 of each push's 3 s here, for no byte that any test reads.
    git(repo, "config", "pack.window", "0")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "site")
    log = _publish(repo, FIRST, cache)
    # As in a fresh CI checkout: gh-pages only on the remote, so the publish step must fetch it first.
    git(repo, "branch", "-D", "gh-pages")
    git(repo, "update-ref", "-d", "refs/remotes/origin/gh-pages")
    floor_3 = repo / "docs/floors/3-boundary.md"
    floor_3.write_text(floor_3.read_text(encoding="utf-8") + f"\n{MARKER}\n", encoding="utf-8")
    git(repo, "commit", "-qam", "second edition")
    log += _publish(repo, SECOND, cache)
    archive = subprocess.run(["git", "archive", "gh-pages"], cwd=remote, capture_output=True, check=True).stdout
    tree.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="tar")
    return {"repo": str(repo), "tree": str(tree), "log": log}
