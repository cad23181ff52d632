"""The Chinese edition's glossary (`glossary.yml`): one Chinese term per English term, and the words it rules out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["GLOSSARY_FILE", "MAX_TERM", "Term", "glossary", "off_glossary", "unglossed"]

GLOSSARY_FILE = Path(__file__).with_name("glossary.yml")
"""The glossary, beside this module (it is package data)."""

MAX_TERM = 64
"""The most characters a glossary word may have (the longest today has 24): search's segmenter learns each."""


@dataclass(frozen=True)
class Term:
    """One entry: the English term, the one Chinese word for it, and the Chinese words a page must not use for it.

    Attributes:
        en: The English term.
        zh: The one Chinese rendering every page uses.
        avoid: Words no Chinese page may use (each one another rendering of this term, or a word that would
            make a reader take one term for another: 调度 is scheduling, never the dispatcher).
        allow: Phrases that are not this term, though they hold one of its words (线程被调度 is scheduling,
            存储层次 the memory hierarchy): a word inside one is neither ruled out nor the term's first use.
        gloss: Whether each page glosses the English at the term's first use: `分发器（dispatcher）`.
        anchor: For a section heading's words: the explicit id whose heading must read `zh` on every page.
    """

    en: str
    zh: str
    avoid: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    gloss: bool = False
    anchor: str | None = None


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
        avoid, allow = entry.get("avoid", []), entry.get("allow", [])
        if not isinstance(avoid, list) or not isinstance(allow, list):
            raise InputError(
                f"{path.name}: term {number} ({entry['en'][:MAX_TERM]!r}): `avoid` and `allow` must be lists of words"
            )
        anchor = entry.get("anchor")
        term = Term(
            entry["en"],
            entry["zh"],
            tuple(str(word) for word in avoid),
            tuple(str(phrase) for phrase in allow),
            entry.get("gloss") is True,
            str(anchor) if anchor is not None else None,
        )
        for word in (term.en, term.zh, *term.avoid, *term.allow):
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
    found = []
    for term in terms or glossary():
        # An allowed phrase is blanked out first, so the avoided word inside it is not seen.
        rest = text
        for phrase in term.allow:
            rest = rest.replace(phrase, "\0")
        found += [(term, word) for word in term.avoid if word in rest]
    return found


def unglossed(prose: str, terms: tuple[Term, ...] | None = None) -> list[Term]:
    """The terms marked `gloss` whose first use in a page's prose lacks the English after it.

    A gloss is the English term in full-width (or ASCII) parentheses right after the Chinese word, first
    in them, any case: `分发器（dispatcher）`, `分发键（dispatch key，一个枚举值）`.

    Args:
        prose: The page's prose, code left out (`check.prose`).
        terms: The glossary (the package's by default).

    Returns:
        Each term used but not glossed at its first use, in the glossary's order.
    """
    missing = []
    for term in terms or glossary():
        rest = prose
        for phrase in term.allow:  # blanked to as many characters, so a position in `rest` is one in `prose`
            rest = rest.replace(phrase, "\0" * len(phrase))
        at = rest.find(term.zh) if term.gloss else -1
        if at == -1:
            continue
        after = prose[at + len(term.zh) : at + len(term.zh) + len(term.en) + 1]
        if after[:1] not in {"（", "("} or after[1:].lower() != term.en.lower():
            missing.append(term)
    return missing
