"""The Chinese edition's glossary (`glossary.yml`): one Chinese term per English term, and the words it rules out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; its stubs are not a dependency

from pytorch_floors.errors import InputError

__all__ = ["GLOSSARY_FILE", "Term", "glossary", "off_glossary"]

GLOSSARY_FILE = Path(__file__).with_name("glossary.yml")
"""The glossary, beside this module (it is package data)."""


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
        InputError: If an entry lacks `en` or `zh`, or a word to avoid is some term's chosen word.
    """
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    terms = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("en"), str) or not isinstance(entry.get("zh"), str):
            raise InputError(f"{path.name}: every entry needs an English `en` and a Chinese `zh`: {entry!r}")
        terms.append(Term(entry["en"], entry["zh"], tuple(str(word) for word in entry.get("avoid", []))))
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
