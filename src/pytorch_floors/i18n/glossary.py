"""The Chinese edition's glossary (`glossary.yml`): one Chinese term per English term, and the words it rules out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["GLOSSARY_FILE", "MAX_TERM", "Term", "glossary", "off_glossary"]

GLOSSARY_FILE = Path(__file__).with_name("glossary.yml")
"""The glossary, beside this module (it is package data)."""

MAX_TERM = 64
"""The most characters a glossary word may have (the longest today has 24): search's segmenter learns each."""


@dataclass(frozen=True)
class Term:
    """One entry: the English term, the one Chinese word for it, and the Chinese words a page must not use for it."""

    en: str
    zh: str
    avoid: tuple[str, ...] = ()


@cache
def glossary(path: Path = GLOSSARY_FILE) -> tuple[Term, ...]:
    """The glossary's terms, in the file's order.

    Raises:
        InputError: If the file is not a list of entries, an entry lacks `en` or `zh`, a word is longer
            than `MAX_TERM` or empty, or a word to avoid is some term's chosen word.
    """
    entries = read_yaml(path) or []
    if not isinstance(entries, list):
        raise InputError(f"{path.name}: expected a list of terms, each a map with `en`, `zh` and maybe `avoid`")
    terms = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("en"), str) or not isinstance(entry.get("zh"), str):
            raise InputError(f"{path.name}: every entry needs an English `en` and a Chinese `zh`: {entry!r}"[:300])
        avoid = entry.get("avoid", [])
        if not isinstance(avoid, list):
            raise InputError(
                f"{path.name}: term {number} ({entry['en'][:MAX_TERM]!r}): `avoid` must be a list of words"
            )
        term = Term(entry["en"], entry["zh"], tuple(str(word) for word in avoid))
        for word in (term.en, term.zh, *term.avoid):
            # Search's segmenter adds a word's every prefix to its dictionary: a 10 MB term exhausted memory.
            if not 0 < len(word) <= MAX_TERM:
                raise InputError(
                    f"{path.name}: term {number} ({term.en[:MAX_TERM]!r}) has a word of {len(word)} characters; "
                    f"each must have 1 to {MAX_TERM}"
                )
        terms.append(term)
    chosen = {term.zh for term in terms}
    for term in terms:
        clash = chosen.intersection(term.avoid)
        if clash:
            raise InputError(f"{path.name}: {term.en!r} avoids {sorted(clash)}, which another term uses")
    return tuple(terms)


def off_glossary(text: str, terms: tuple[Term, ...] | None = None) -> list[tuple[Term, str]]:
    """The glossary's ruled-out words that a Chinese text uses, with the term each stands for.

    Args:
        text: Chinese prose (code included: a ruled-out word is wrong there too).
        terms: The glossary (the package's by default).

    Returns:
        Each (term, word) found, in the glossary's order.
    """
    return [(term, word) for term in terms or glossary() for word in term.avoid if word in text]
