"""Build the site render-only twice and say where the two differ, the build id apart: does a change keep behaviour?

    .venv/bin/python tools/compare_builds.py                 # HEAD against the working tree
    .venv/bin/python tools/compare_builds.py --before REV     # REV against the working tree
    .venv/bin/python tools/compare_builds.py --before A --after B
    .venv/bin/python tools/compare_builds.py --before -       # the working tree twice: is the build deterministic?
    .venv/bin/python tools/compare_builds.py --sites OLD NEW  # compare two sites already built

Each side is copied into a scratch folder (a commit with `git archive`; the working tree as git would
commit it: tracked files and new ones it does not ignore), given its own copy of the proof cache
(`.cache/floors-exec`, or `--cache DIR`), and built with `mkdocs build --strict` and `FLOORS_EXEC=off`:
no proof or lab runs, every block the cache holds shows its stored output, the others render as
skipped. The builds run one after the other, each in this Python with the side's own package first on
the path, so a refactor of `src/` is what builds its side. Nothing of this checkout is written.

Then every file of the two sites is compared byte for byte, after one normalisation: each site's build
id (a fresh `uuid4` per build, in every page's `<meta name="pytorch-floors-build">` and in
`build-report.json`'s `build.id`) is replaced by `BUILD-ID`. Nothing else is ignored: a difference in a
date, a timing, an order or a path is reported, since a refactor that keeps behaviour changes none. The
exit status is 0 when the sites are the same, 1 when they differ (each file named, with the first lines
that differ), 2 when a build fails.

A proof whose cache key moved (its code, or a project file it imports, changed) renders as skipped on
that side: the comparison says so as a difference, and each side's count of cached and skipped blocks
is printed before it, so such a difference is told from a change in rendering.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The project this script belongs to (its git repository)."""

BUILD_ID = "BUILD-ID"
"""What each site's build id is replaced by before the comparison."""

REPORT = "build-report.json"
"""The build report, which holds the build's id (`build.id`); every page carries the same id in its mark."""

WORKING_TREE = "-"
"""The name of the working tree as a side (`--before -`, `--after -`)."""

SHOWN_LINES = 12
"""How many lines of a text file's difference are printed."""


@dataclass
class Comparison:
    """Where two sites differ, after each one's build id is replaced by `BUILD_ID`.

    Attributes:
        only_before: Files only the first site has.
        only_after: Files only the second site has.
        differ: Files both have whose normalised contents differ, each with the first lines of the difference
            (or a note for a binary file).
    """

    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    differ: dict[str, list[str]] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        """Whether the two sites are the same but for their build ids."""
        return not (self.only_before or self.only_after or self.differ)

    def lines(self) -> list[str]:
        """The comparison in words, one line each."""
        if self.same:
            return ["the two sites are the same, but for their build ids"]
        lines = [f"only in the first site: {name}" for name in self.only_before]
        lines += [f"only in the second site: {name}" for name in self.only_after]
        for name, diff in self.differ.items():
            lines += [f"differs: {name}", *(f"    {line}" for line in diff)]
        total = len(self.only_before) + len(self.only_after) + len(self.differ)
        return [*lines, f"{total} files differ"]


def build_id(site: Path) -> str | None:
    """The build id a site's report records, or `None` when it has no readable report.

    Args:
        site: A built site.
    """
    try:
        found = json.loads((site / REPORT).read_text(encoding="utf-8"))["build"]["id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if isinstance(found, str) and found else None


def normalised(data: bytes, identifier: str | None) -> bytes:
    """A file's bytes with the build's id replaced by `BUILD_ID` (a file that does not hold it is unchanged).

    Args:
        data: The file's bytes.
        identifier: The site's build id, or `None` (nothing is replaced).
    """
    return data.replace(identifier.encode(), BUILD_ID.encode()) if identifier else data


def _files(site: Path) -> set[str]:
    return {path.relative_to(site).as_posix() for path in site.rglob("*") if path.is_file()}


def _difference(name: str, before: bytes, after: bytes) -> list[str]:
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return [f"binary: {len(before)} bytes, then {len(after)} bytes"]
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"first/{name}", f"second/{name}", n=0, lineterm="")
    lines = [line if len(line) <= 200 else line[:200] + "…" for line in diff]
    return lines[:SHOWN_LINES] + ([f"… {len(lines) - SHOWN_LINES} more lines"] if len(lines) > SHOWN_LINES else [])


def compare_sites(before: Path, after: Path) -> Comparison:
    """Compare two built sites file by file, each one's build id replaced by `BUILD_ID`.

    Args:
        before: The first site.
        after: The second site.

    Returns:
        Where they differ.
    """
    first, second = _files(before), _files(after)
    ids = build_id(before), build_id(after)
    comparison = Comparison(sorted(first - second), sorted(second - first))
    for name in sorted(first & second):
        old = normalised((before / name).read_bytes(), ids[0])
        new = normalised((after / name).read_bytes(), ids[1])
        if old != new:
            comparison.differ[name] = _difference(name, old, new)
    return comparison


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True).stdout


def export(side: str, dest: Path) -> Path:
    """Write a side's files into `dest`: a commit (`git archive`), or the working tree as git would commit it.

    Args:
        side: A revision, or `WORKING_TREE`.
        dest: The folder to write (made).

    Returns:
        `dest`.
    """
    dest.mkdir(parents=True)
    if side != WORKING_TREE:
        archive = dest.parent / f"{dest.name}.tar"
        archive.write_bytes(_git("archive", "--format=tar", side))
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        archive.unlink()
        return dest
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard").decode()
    for name in sorted(set(listed.split("\0")) - {""}):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():  # deleted, not yet committed: not there
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def copy_cache(cache: Path, project: Path) -> int:
    """Copy a proof cache's entries (`floors-exec/`) to `project/.cache`: what a render-only build reads.

    Entry by entry, each written whole (a build writes by rename): one that another build prunes meanwhile
    is left out. Its locks are not copied.

    Returns:
        How many entries were copied.
    """
    copied = 0
    for entry in sorted(cache.glob("floors-exec/*/*.json")):
        target = project / ".cache" / "floors-exec" / entry.parent.name / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(entry, target)
            copied += 1
    return copied


@dataclass(frozen=True)
class Built:
    """One side's render-only build: its site, and what its report and log say."""

    site: Path
    returncode: int
    log: str
    seconds: float

    def summary(self) -> str:
        """The report's counts of blocks, or the log's last lines when the build failed."""
        if self.returncode != 0:
            return "\n".join(self.log.splitlines()[-30:])
        try:
            totals = json.loads((self.site / REPORT).read_text(encoding="utf-8"))["totals"]
        except (OSError, ValueError, KeyError):
            return "no build report"
        counts = f"{totals['cached']} blocks cached, {totals['skipped']} skipped (of {totals['blocks']})"
        return f"{counts}; built in {self.seconds:.0f} s"


def build(project: Path) -> Built:
    """`mkdocs build --strict` of `project`, render-only, with its own package and proof cache.

    Args:
        project: A side's files (`export`), with its cache (`copy_cache`).
    """
    env = {name: value for name, value in os.environ.items() if not name.startswith("FLOORS_")}
    env |= {
        "PYTHONPATH": str(project / "src"),
        "FLOORS_EXEC": "off",
        "FLOORS_CACHE_DIR": str(project / ".cache"),
        "NO_MKDOCS_2_WARNING": "1",
    }
    site = project / "site"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return Built(site, done.returncode, done.stdout + done.stderr, time.perf_counter() - start)


@contextlib.contextmanager
def _scratch(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="floors-compare-") as folder:
        yield Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: build both sides render-only and compare them (or compare two built sites).

    Args:
        argv: Arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status: 0 the same, 1 different, 2 a build failed.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", default="HEAD", help="a revision, or - for the working tree (default: HEAD)")
    parser.add_argument("--after", default=WORKING_TREE, help="a revision, or - for the working tree (the default)")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache", help="the proof cache to copy (default: .cache)")
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a scratch folder)")
    parser.add_argument("--sites", nargs=2, type=Path, metavar=("FIRST", "SECOND"), help="compare two built sites")
    args = parser.parse_args(argv)
    if args.sites is not None:
        comparison = compare_sites(*args.sites)
        print("\n".join(comparison.lines()))
        return 0 if comparison.same else 1
    with _scratch(args.keep) as scratch:
        sites: list[Path] = []
        for name, side in (("first", args.before), ("second", args.after)):
            project = export(side, scratch / name)
            entries = copy_cache(args.cache, project)
            what = "the working tree" if side == WORKING_TREE else side
            print(f"{name}: {what}, {entries} cached outputs copied", flush=True)
            built = build(project)
            print(f"{name}: {built.summary()}", flush=True)
            if built.returncode != 0:
                return 2
            sites.append(built.site)
        comparison = compare_sites(*sites)
        print("\n".join(comparison.lines()))
        return 0 if comparison.same else 1


if __name__ == "__main__":
    sys.exit(main())
