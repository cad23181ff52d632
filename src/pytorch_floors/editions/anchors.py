"""Citable anchors: the lock of public URLs and aliases for renamed sections.

Courses cite sections by URL for years. `anchors.lock` lists every public page and
every section anchor of the citable pages (Part 0 and the floors), one
`page-url#anchor` per line, sorted. A test fails when a built site lacks any of them.
Renaming an anchor is allowed only with an alias line in `anchors.aliases`
(`page-url#old-id -> new-id`): the build then places an element with the old id just
before the renamed section, so the old link still lands there without JavaScript.
Removing a page needs a redirect (`redirect_maps` of mkdocs-redirects), which writes
an HTML page at the old URL. Each heading's link-and-cite control lives in `section_cite`.

Run `python -m pytorch_floors anchors update` after a strict build to append new
anchors to the lock, and `python -m pytorch_floors anchors check` to compare.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from pathlib import Path

from pytorch_floors.errors import InputError
from pytorch_floors.floors import CITABLE_PAGES
from pytorch_floors.render.headings import HEADING
from pytorch_floors.render.splice import find_start_tag, insert_before
from pytorch_floors.render.templates import template

__all__ = [
    "CITABLE_PAGES",
    "apply_aliases",
    "read_aliases",
    "read_lock",
    "site_anchors",
    "unresolved",
    "update_lock",
]

_ALIAS_TARGETS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "div", "section", "p"})
"""The elements an alias may land on: a heading, or a block with an id."""

_ANY_ID = re.compile(r'\bid="([^"]+)"')


def page_url(src_path: str) -> str:
    """The directory-style URL of a page, relative to the site root.

    Args:
        src_path: Source path relative to `docs/` (`floors/3-boundary.md`).

    Returns:
        The URL (`floors/3-boundary/`; the site's root page is `./`).
    """
    stem = src_path.rsplit(".", 1)[0]
    if stem == "index":
        return "./"
    if stem.endswith("/index"):
        return stem.removesuffix("index")
    return f"{stem}/"


def read_aliases(path: Path) -> dict[str, dict[str, str]]:
    """Read `anchors.aliases`: for each page URL, old anchor ids mapped to their new ids.

    Args:
        path: The aliases file (lines `page-url#old-id -> new-id`; `#` starts a comment line).

    Returns:
        `{page_url: {old_id: new_id}}`.

    Raises:
        InputError: On a malformed line.
    """
    aliases: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return aliases
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"(?P<page>[^#\s]*)#(?P<old>[\w-]+)\s*->\s*(?P<new>[\w-]+)", line)
        if not match:
            raise InputError(f"{path.name}:{number}: expected 'page-url#old-id -> new-id', got {line!r}")
        aliases.setdefault(match["page"], {})[match["old"]] = match["new"]
    return aliases


def apply_aliases(html: str, aliases: dict[str, str]) -> str:
    """Place an element carrying each old id just before the section that now has the new id.

    Args:
        html: A page's rendered content.
        aliases: Old ids mapped to new ids for this page.

    Returns:
        The content with alias targets inserted.

    Raises:
        InputError: If an alias points at an id the page does not have.
    """
    for old, new in aliases.items():
        marker = find_start_tag(html, _ALIAS_TARGETS, attribute=("id", new))
        if marker is None:
            raise InputError(f"anchor alias #{old} -> #{new}: the page has no element with id {new!r}")
        html = insert_before(html, marker, template("anchor_alias.html").render(old=old, new=new))
    return html


def site_anchors(site_dir: Path, pages: Iterable[str], citable: Iterable[str] = CITABLE_PAGES) -> set[str]:
    """The public URLs of a built site: every page, and every section of the citable pages.

    Args:
        site_dir: The built site.
        pages: Source paths of all pages (relative to `docs/`).
        citable: Source paths of the pages whose h2–h4 anchors are public.

    Returns:
        Entries such as `floors/3-boundary/` and `floors/3-boundary/#crossing-cost`.
    """
    citable_set = set(citable)
    entries: set[str] = set()
    for src in pages:
        url = page_url(src)
        entries.add(url)
        if src in citable_set:
            html = (site_dir / url / "index.html").read_text(encoding="utf-8")
            entries.update(f"{url}#{m['id']}" for m in HEADING.finditer(html))
    return entries


def read_lock(path: Path) -> list[str]:
    """Read the lock file.

    Args:
        path: `anchors.lock`.

    Returns:
        Its entries, in file order.
    """
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def update_lock(path: Path, entries: Iterable[str]) -> list[str]:
    """Append new entries to the lock (never removing one) and keep it sorted.

    Args:
        path: `anchors.lock`.
        entries: The site's current public URLs.

    Returns:
        The entries that were added.
    """
    locked = set(read_lock(path))
    added = sorted(set(entries) - locked)
    path.write_text("\n".join(sorted(locked | set(added))) + "\n", encoding="utf-8")
    return added


def unresolved(site_dir: Path, lock: Iterable[str]) -> list[str]:
    """Locked URLs that the built site no longer serves.

    A page URL resolves when `<url>/index.html` exists (a page or a redirect page); an
    anchor resolves when that page has an element with the id (a section or an alias).

    Args:
        site_dir: The built site.
        lock: Entries of `anchors.lock`.

    Returns:
        The entries that do not resolve.
    """
    missing = []
    ids_of: dict[str, set[str]] = {}
    for entry in lock:
        url, _, anchor = entry.partition("#")
        page = site_dir / url / "index.html"
        if not page.is_file():
            missing.append(entry)
            continue
        if anchor:
            if url not in ids_of:
                ids_of[url] = set(_ANY_ID.findall(page.read_text(encoding="utf-8")))
            if anchor not in ids_of[url]:
                missing.append(entry)
    return missing


def _pages_of(site_dir: Path) -> list[str]:
    pages = []
    for index in sorted(site_dir.rglob("index.html")):
        relative = index.parent.relative_to(site_dir).as_posix()
        text = index.read_text(encoding="utf-8", errors="ignore")
        if 'http-equiv="refresh"' in text[:2000]:
            continue  # a redirect page, not a page of its own
        pages.append("index.md" if relative == "." else f"{relative}.md")
    return pages


def main(argv: list[str] | None = None) -> int:
    """Command line: `update` appends the built site's new anchors to the lock; `check` lists broken ones.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors anchors", description=main.__doc__)
    parser.add_argument("command", choices=["update", "check"])
    parser.add_argument("--site", type=Path, default=Path("site"), help="the built site (default: site)")
    parser.add_argument("--lock", type=Path, default=Path("anchors.lock"), help="the lock file")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site} is not a built site: run `make build` first")
    if args.command == "update":
        added = update_lock(args.lock, site_anchors(args.site, _pages_of(args.site)))
        print(f"{len(added)} new entries added to {args.lock}", *added, sep="\n  ")
        return 0
    missing = unresolved(args.site, read_lock(args.lock))
    for entry in missing:
        print(f"missing: {entry}")
    return 1 if missing else 0
