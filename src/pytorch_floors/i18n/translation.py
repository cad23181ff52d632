"""What a translated page says of itself, and which of its sections are stale.

A translation records, per section, the digest of the English section it translated, in
`translations.lock` at the project's root (`python -m pytorch_floors translations stamp` writes it after
a translator has brought a page up to date). A Chinese page's claims are its front matter's `claims`:
each English statement a proof prints, with its Chinese.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; its stubs are not a dependency

from pytorch_floors.errors import FloorsError, InputError
from pytorch_floors.i18n.languages import LANGUAGES, english_source
from pytorch_floors.i18n.sections import Section, page_text, sections
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["LOCK_FILE", "Staleness", "main", "read_lock", "staleness", "stamp", "write_lock"]

LOCK_FILE = "translations.lock"
"""What each translated section translated: page → section anchor → the English section's digest."""


@dataclass(frozen=True)
class Staleness:
    """How a translated page stands against its English page now.

    Attributes:
        stale: Anchors of sections translated from an English section that has changed since.
        untranslated: Anchors of English sections the translation has never recorded (new ones).
    """

    stale: tuple[str, ...]
    untranslated: tuple[str, ...]


def read_lock(path: Path) -> dict[str, dict[str, str]]:
    """The lock's records (empty when the file does not exist).

    Raises:
        InputError: If the file is not a map of pages to maps of anchors to digests (or not UTF-8, not
            YAML, too large, or uses an alias: `yaml_files.read_yaml`).
    """
    if not path.is_file():
        return {}
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not all(
        isinstance(page, str) and isinstance(found, dict) and all(isinstance(v, str) for v in found.values())
        for page, found in data.items()
    ):
        raise InputError(f"{path.name}: expected a map of pages to maps of section anchors to digests")
    return {page: {str(anchor): digest for anchor, digest in found.items()} for page, found in data.items()}


def write_lock(path: Path, records: Mapping[str, Mapping[str, str]]) -> None:
    """Write the lock, pages and their sections in a stable order."""
    header = (
        "# What each translated section translated: the digest of the English section (pytorch_floors.i18n).\n"
        "# Written by `python -m pytorch_floors translations stamp PAGE` once a translation is up to date.\n"
    )
    body = yaml.safe_dump({page: dict(records[page]) for page in sorted(records)}, allow_unicode=True, sort_keys=False)
    path.write_text(header + body, encoding="utf-8")


def staleness(english: list[Section], recorded: Mapping[str, str]) -> Staleness:
    """Compare an English page's sections with what its translation recorded.

    Args:
        english: The English page's sections now (`sections.sections`).
        recorded: The translation's record, anchor → digest.

    Returns:
        The stale and the never-translated sections, in the English page's order.
    """
    stale = tuple(s.anchor for s in english if s.anchor in recorded and not s.translated_by(recorded[s.anchor]))
    new = tuple(s.anchor for s in english if s.anchor not in recorded)
    return Staleness(stale, new)


def stamp(english_markdown: str) -> dict[str, str]:
    """The record a translation of this English page, up to date, makes: anchor → digest."""
    return {section.anchor: section.digest for section in sections(english_markdown)}


def translated_pages(docs_dir: Path) -> list[str]:
    """Every translated page's source path (relative to `docs/`), in order."""
    found = []
    for language in LANGUAGES[1:]:
        folder = docs_dir / language.folder
        found += [p.relative_to(docs_dir).as_posix() for p in folder.rglob("*") if p.suffix in {".md", ".py"}]
    return sorted(found)


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
    from pytorch_floors.i18n.check import problems  # noqa: PLC0415  (check imports this module's neighbours)

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
    print(f"translations: {len(pages)} pages checked", file=sys.stdout if not status else sys.stderr)
    return status


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
