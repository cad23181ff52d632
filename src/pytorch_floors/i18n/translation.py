"""What a translated page says of itself, and which of its sections are stale.

A translation records, per section, the digest of the English section it translated, in
`translations.lock` at the project's root (`python -m pytorch_floors translations stamp` writes it after
a translator has brought a page up to date). A Chinese page's claims are its front matter's `claims`:
each English statement a proof prints, with its Chinese.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; its stubs are not a dependency

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.languages import LANGUAGES
from pytorch_floors.i18n.sections import Section, sections
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = [
    "LOCK_FILE",
    "Behind",
    "Staleness",
    "behind",
    "read_lock",
    "staleness",
    "stamp",
    "translated_pages",
    "write_lock",
]

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


@dataclass(frozen=True)
class Behind:
    """A section of an English page that changed since its translation was stamped.

    Attributes:
        anchor: The section's anchor (`TOP` for the page's opening).
        title: The English heading's words (empty for the opening and for a section the English page lost).
        how: `changed` (its digest is another), `new` (the lock has none) or `removed` (the English page lost it).
    """

    anchor: str
    title: str
    how: str


def behind(english: list[Section], recorded: Mapping[str, str]) -> list[Behind]:
    """Every section a translation is behind on, in the English page's order, the ones it lost last.

    A translated lab is not caught up as a page is (`i18n.catch_up`): it runs its own cells. Its note
    and `translations check` name these instead.

    Args:
        english: The English page's sections now (`sections.sections`).
        recorded: The translation's record, anchor → digest.

    Returns:
        The sections, empty when the translation is up to date.
    """
    found = []
    for section in english:
        # The same rule as `staleness`: a digest of either form (wrapping ignored, or the older raw one) counts.
        how = (
            "new"
            if section.anchor not in recorded
            else ""
            if section.translated_by(recorded[section.anchor])
            else "changed"
        )
        if how:
            found.append(Behind(section.anchor, section.title, how))
    anchors = {section.anchor for section in english}
    return found + [Behind(anchor, "", "removed") for anchor in recorded if anchor not in anchors]


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
