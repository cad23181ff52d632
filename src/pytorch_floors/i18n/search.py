"""Search in Chinese: the segmenter Material's search runs over Chinese text learns the glossary's words.

Material's search plugin cuts Chinese text into words with jieba when it is installed. jieba's own
dictionary splits some of the site's terms (a query for one term then matched none of its pieces), so
each glossary word is added to it as one word before the pages are indexed.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.glossary import MAX_TERM

__all__ = ["teach_segmenter"]


def teach_segmenter(words: Iterable[str]) -> bool:
    """Add words to jieba's dictionary, if jieba is installed (Material's search uses it then).

    Returns:
        Whether jieba was there to learn them.

    Raises:
        InputError: If a word is longer than the glossary allows (`glossary.MAX_TERM`): jieba keeps
            every prefix of a word it learns, so one long word takes memory as its length squared.
    """
    words = list(words)
    long = next((word for word in words if len(word) > MAX_TERM), None)
    if long is not None:
        raise InputError(
            f"search: a word of {len(long)} characters for the segmenter ({long[:20]!r}…); at most {MAX_TERM}"
        )
    try:
        import jieba  # type: ignore[import-untyped]  # noqa: PLC0415  (untyped; only Material's search needs it)
    except ImportError:
        return False
    for word in words:
        jieba.add_word(word)
    return True
