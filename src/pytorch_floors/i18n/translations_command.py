"""`python -m pytorch_floors translations check|stamp`: the translators' two verbs.

A module of its own because it stands above both `i18n.translation` (the lock and the sections'
digests) and `i18n.check` (a twin's problems), which imports `i18n.translation`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytorch_floors.errors import FloorsError
from pytorch_floors.i18n.check import problems
from pytorch_floors.i18n.languages import english_source
from pytorch_floors.i18n.sections import page_text, sections
from pytorch_floors.i18n.translation import LOCK_FILE, behind, read_lock, stamp, translated_pages, write_lock

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """`translations check` prints each translated page's problems; `translations stamp` records what they translate."""
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors translations", description=main.__doc__)
    parser.add_argument("action", choices=["check", "stamp"])
    parser.add_argument("pages", nargs="*", help="translated pages, relative to docs/ (default: every one)")
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the project's folder")
    args = parser.parse_args(argv)
    try:
        return _check(args.project, args.pages) if args.action == "check" else _stamp(args.project, args.pages)
    except FloorsError as error:
        # A lock or glossary the build would refuse: one line, as the build says it.
        print(f"translations: {error}", file=sys.stderr)
        return 1


def _check(project: Path, pages: list[str]) -> int:
    """Print each translated page's problems; 1 if any has one.

    Raises:
        FloorsError: If `translations.lock` cannot be read (the build reads it too).
    """
    records = read_lock(project / LOCK_FILE)
    docs = project / "docs"
    pages = pages or translated_pages(docs)
    status = 0
    for page in pages:
        english = docs / english_source(page)
        translated = (docs / page).read_text(encoding="utf-8")
        found = problems(page, english.read_text(encoding="utf-8"), translated, records.get(page, {}))
        for line in found:
            print(f"docs/{page}: {line}", file=sys.stderr)
        status = status or int(bool(found))
        if page.endswith(".py"):
            # Behind is not wrong: said, never failed. A lab runs its own cells, so it is not caught up as a page is.
            late = behind(sections(page_text(page, english.read_text(encoding="utf-8"))), records.get(page, {}))
            if late:
                named = "; ".join(
                    f"{how}: " + ", ".join(f"#{b.anchor}" for b in late if b.how == how)
                    for how in _HOWS
                    if any(b.how == how for b in late)
                )
                print(f"docs/{page}: behind its English lab (not caught up: the lab shows its own cells): {named}")
    print(f"translations: {len(pages)} pages checked", file=sys.stdout if not status else sys.stderr)
    return status


_HOWS = ("changed", "new", "removed")


def _stamp(project: Path, pages: list[str]) -> int:
    """Record in `translations.lock` what each page (every translated page by default) now translates.

    Raises:
        FloorsError: If `translations.lock` cannot be read.
    """
    docs = project / "docs"
    pages = pages or translated_pages(docs)
    lock = project / LOCK_FILE
    records = read_lock(lock)
    for page in pages:
        english = english_source(page)
        records[page] = stamp(page_text(english, (docs / english).read_text(encoding="utf-8")))
    write_lock(lock, records)
    print(f"translations: recorded what {len(pages)} pages translate in {LOCK_FILE}")
    return 0
