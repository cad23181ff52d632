"""The interface's words in each language: the gauge, a proof's frame and claims, the language switch, notes.

The plugin says which language the page being rendered is in (`use`); `t` then gives a message in it.
Messages are keyed by their English text with `{name}` fields (`t("Floor {number} of {total}", number=3,
total=8)`); the Chinese catalog (`ZH`, from `messages.zh.yml`) holds one entry per key, and a test fails on a
key used without one. A page's claims come with the page: `use` takes its front matter's translations,
and `claim_text` shows a statement in the page's language (the English one where the page has none,
which the build counts).
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["ZH", "PageLanguage", "claim_text", "current", "speaking", "t", "use"]


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


_CURRENT: ContextVar[PageLanguage | None] = ContextVar("floors_page_language", default=None)


def use(code: str, claims: Mapping[str, str] | None = None) -> PageLanguage:
    """Render what follows in a language (until the next call): the plugin calls it for each page.

    Returns:
        The page's language state (its `untranslated` fills while the page renders).
    """
    state = PageLanguage(code, dict(claims or {}))
    _CURRENT.set(state)
    return state


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Write messages in a language for a while (a handout, a course pack), then as before."""
    token = _CURRENT.set(PageLanguage(code))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> PageLanguage:
    """The language of the page being rendered (English outside a page)."""
    return _CURRENT.get() or PageLanguage()


def t(message: str, **fields: Any) -> str:
    """A message in the current page's language, its `{name}` fields filled.

    Args:
        message: The English message, the catalog's key.
        **fields: Values for its fields.

    Returns:
        The message; the English one when the language has no catalog or the catalog lacks it.
    """
    text = ZH.get(message, message) if current().code == "zh" else message
    return text.format(**fields) if fields else text


def claim_text(statement: str) -> str:
    """A claim's statement in the current page's language (English when the page does not translate it)."""
    state = current()
    if state.code == "en":
        return statement
    translated = state.claims.get(statement)
    if translated is None:
        if statement not in state.untranslated:
            state.untranslated.append(statement)
        return statement
    return translated


ZH: dict[str, str] = _catalog(Path(__file__).with_name("messages.zh.yml"))
"""English message → Chinese (one entry per message the interface uses)."""
