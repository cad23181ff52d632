"""A translation that is behind its English page, caught up: the English page is the source.

An author edits the English page and nothing else. Where the translation has not followed, its page shows
the English section (its code, so its blocks show what the English blocks printed in the same build) under
a note that the section is not translated yet; a section the English page no longer has is left out. Only a
translation that is wrong, not one that is behind, keeps its own text: a section the translation says it
translated (`translations.lock` holds the English section's digest as it is now) whose code differs.

A section is behind when the lock has no digest for it (new in English) or another one (changed since it
was translated). A behind section whose code blocks are still the English ones keeps its translation, which
the page marks as older than the English (`plugin.languages.stale_notes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytorch_floors.i18n.sections import TOP, Section, code_blocks, sections

__all__ = ["CaughtUp", "catch_up"]


@dataclass(frozen=True)
class CaughtUp:
    """A translated page's Markdown after catching up with its English page.

    Attributes:
        markdown: The page: its own sections where they keep up, the English ones where it is behind.
        in_english: Anchors of the sections shown in English (new ones, and changed ones whose code changed).
        dropped: Anchors of the translation's sections the English page no longer has.
    """

    markdown: str
    in_english: tuple[str, ...]
    dropped: tuple[str, ...]


def _behind(section: Section, recorded: Mapping[str, str]) -> bool:
    return not section.translated_by(recorded.get(section.anchor))


def _with_note(section: Section, note: Callable[[str], str]) -> str:
    """The English section's text with the note under its heading (or above it, for the page's opening)."""
    if section.anchor == TOP:
        return f"{note(TOP)}\n\n{section.text}"
    heading, _, rest = section.text.partition("\n")
    return f"{heading}\n\n{note(section.anchor)}\n{rest}"


def catch_up(english: str, translated: str, recorded: Mapping[str, str], note: Callable[[str], str]) -> CaughtUp:
    """The translated page with the English page's sections in its place wherever it is behind.

    Args:
        english: The English page's Markdown (front matter, if any, is skipped).
        translated: The translated page's Markdown, front matter removed (as MkDocs hands it over).
        recorded: What the translation recorded it translated (`translations.lock`): anchor → digest.
        note: The Markdown of the note under an untranslated section's heading, given its anchor.

    Returns:
        The caught-up page and what was shown in English or left out.
    """
    own = {section.anchor: section for section in sections(translated)}
    theirs = sections(english)
    parts: list[str] = []
    in_english: list[str] = []
    for section in theirs:
        mine = own.get(section.anchor)
        if mine is not None and (code_blocks(mine.text) == code_blocks(section.text) or not _behind(section, recorded)):
            # Up to date, or older prose around the same code (noted as stale); or not behind and yet
            # other code: a wrong translation, kept for the engine and the check to name.
            parts.append(mine.text)
        elif mine is None and section.anchor in recorded and not _behind(section, recorded):
            continue  # it translated this section and then lost it: wrong, left for the check to name
        else:
            parts.append(_with_note(section, note))
            in_english.append(section.anchor)
    anchors = {section.anchor for section in theirs}
    dropped = tuple(anchor for anchor in own if anchor not in anchors)
    if not in_english and not dropped:
        return CaughtUp(translated, (), ())
    return CaughtUp("\n\n".join(part.strip("\n") for part in parts) + "\n", tuple(in_english), dropped)
