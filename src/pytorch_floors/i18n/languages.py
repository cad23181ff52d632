"""The site's languages and where each page's twin lives.

English is the default and lives at the root of `docs/`; each other language mirrors the tree under
its own folder (`docs/zh/floors/4-dispatcher.md` is the twin of `docs/floors/4-dispatcher.md`), and
its pages' URLs carry the same prefix (`zh/floors/4-dispatcher/`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT", "LANGUAGES", "Language", "english_source", "language_of", "twin_uri"]


@dataclass(frozen=True)
class Language:
    """One language of the site.

    Attributes:
        code: The BCP 47 tag pages carry (`lang="zh"`) and Material's `theme.language` code.
        name: The language's name in itself, as the language switch shows it.
        folder: Where its pages live, relative to `docs/` and to the site's root (`""` for the default).
    """

    code: str
    name: str
    folder: str

    @property
    def prefix(self) -> str:
        """What its pages' source paths and URLs start with: `zh/`, or nothing for the default language."""
        return f"{self.folder}/" if self.folder else ""


DEFAULT = Language("en", "English", "")
"""The language the site is written in; every other language translates it."""

LANGUAGES: tuple[Language, ...] = (DEFAULT, Language("zh", "中文", "zh"))
"""Every language of the site, the default first."""


def language_of(src_uri: str) -> Language:
    """The language of a page, by its source path relative to `docs/` (`zh/index.md` is Chinese).

    Args:
        src_uri: The page's source path, relative to `docs/`.

    Returns:
        Its language.
    """
    for language in LANGUAGES[1:]:
        if src_uri.startswith(language.prefix):
            return language
    return DEFAULT


def english_source(src_uri: str) -> str:
    """The source path of the English page a page translates (itself, for an English page).

    Args:
        src_uri: A page's source path, relative to `docs/`.

    Returns:
        The English page's source path.
    """
    return src_uri.removeprefix(language_of(src_uri).prefix)


def twin_uri(src_uri: str, language: Language) -> str:
    """The source path of a page's twin in `language`.

    Args:
        src_uri: A page's source path, in any language.
        language: The language wanted.

    Returns:
        The twin's source path (which may not exist).
    """
    return language.prefix + english_source(src_uri)
