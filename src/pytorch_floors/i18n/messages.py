"""The interface's words in each language: the gauge, a proof's frame and claims, the language switch, notes.

The language is always passed, never read from the context (as mkdocstrings passes its locale to
`render`): `t(message, language)` gives a message in a language, and a template gets `t` bound to the
page's language by `render.templates.render`. Messages are keyed by their English text with `{name}`
fields (`t("Floor {number} of {total}", "zh", number=3, total=8)`); the Chinese catalog (`ZH`, from
`messages.zh.yml`) holds one entry per key, and a test fails on a key used without one. A page's claims
come with the page: its `PageLanguage` holds its front matter's translations, and `claim_text` shows a
statement in the page's language (the English one where the page has none, which the build counts).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["ZH", "PageLanguage", "claim_text", "code_of", "t"]


@dataclass
class PageLanguage:
    """The language of the page being rendered, and its claims' translations.

    Attributes:
        code: `en` or `zh`.
        claims: English statement → its translation, from the page's front matter.
        untranslated: The statements the page showed without a translation (the build report lists them).
    """

    code: str = "en"
    claims: Mapping[str, str] = field(default_factory=dict)
    untranslated: list[str] = field(default_factory=list)


def _catalog(path: Path) -> dict[str, str]:
    """A language's messages: English message → its translation.

    Raises:
        InputError: If the file is not a map of strings to strings (or not UTF-8, not YAML, too large, or
            uses an alias: `yaml_files.read_yaml`).
    """
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"{path.name}: expected a map of English messages to their translations")
    for message, translation in data.items():
        problem = _field_problem(message, translation)
        if problem:
            raise InputError(f"{path.name}: the translation of {message[:80]!r} {problem}")
    return data


def _fields(text: str) -> set[str] | str:
    """The `{name}` fields of a message, or why it is not a message with plain-name fields (`{0.__class__}`)."""
    names = set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        return f"is not a message template: {error}"
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            return f"has the field {{{name}}}: a message's fields are plain names"
        names.add(name)
    return names


def _field_problem(message: str, translation: str) -> str | None:
    """Why a translation cannot be filled as its message is (`t`), or `None`: checked once, when it is read.

    A message without `{name}` fields is never filled (its braces are Markdown's: `{ #anchor }`), nor is its
    translation.
    """
    english = _fields(message)
    if isinstance(english, str) or not english:
        return None
    translated = _fields(translation)
    if isinstance(translated, str):
        return translated
    extra = sorted(translated - english)
    return f"has fields its English message lacks: {', '.join(extra)}" if extra else None


def code_of(language: str | PageLanguage) -> str:
    """A language's code (`en`, `zh`), given the code or a page's `PageLanguage`."""
    return language if isinstance(language, str) else language.code


def t(message: str, language: str | PageLanguage, /, **fields: Any) -> str:
    """A message in a language, its `{name}` fields filled.

    Args:
        message: The English message, the catalog's key.
        language: The language (`en`, `zh`), or the page's `PageLanguage`.
        **fields: Values for its fields.

    Returns:
        The message; the English one when the language has no catalog or the catalog lacks it.
    """
    text = ZH.get(message, message) if code_of(language) == "zh" else message
    return text.format(**fields) if fields else text


def claim_text(statement: str, language: str | PageLanguage, /) -> str:
    """A claim's statement in a page's language (English when the page does not translate it, which it counts).

    Args:
        statement: The statement as the proof prints it.
        language: The page's `PageLanguage` (its claims' translations; it records an untranslated one), or
            a bare code, which translates no claim.

    Returns:
        The statement to show.
    """
    if isinstance(language, str) or language.code == "en":
        return statement
    translated = language.claims.get(statement)
    if translated is None:
        if statement not in language.untranslated:
            language.untranslated.append(statement)
        return statement
    return translated


ZH: dict[str, str] = _catalog(Path(__file__).with_name("messages.zh.yml"))
"""English message → Chinese (one entry per message the interface uses)."""
