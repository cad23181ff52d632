"""Search in Chinese: the segmenter Material's search runs over Chinese text learns the glossary's words.

Material's search plugin cuts Chinese text into words with jieba when it is installed. jieba's own
dictionary splits some of the site's terms (a query for one term then matched none of its pieces), so
each glossary word is added to it as one word before the pages are indexed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.glossary import MAX_TERM

__all__ = ["teach_segmenter", "teach_segmenter_behind"]


def _checked(words: Iterable[str]) -> list[str]:
    """The words, if each is short enough (`teach_segmenter`).

    Raises:
        InputError: If one is longer than the glossary allows.
    """
    words = list(words)
    long = next((word for word in words if len(word) > MAX_TERM), None)
    if long is not None:
        raise InputError(
            f"search: a word of {len(long)} characters for the segmenter ({long[:20]!r}…); at most {MAX_TERM}"
        )
    return words


def teach_segmenter(words: Iterable[str]) -> bool:
    """Add words to jieba's dictionary, if jieba is installed (Material's search uses it then).

    Returns:
        Whether jieba was there to learn them.

    Raises:
        InputError: If a word is longer than the glossary allows (`glossary.MAX_TERM`): jieba keeps
            every prefix of a word it learns, so one long word takes memory as its length squared.
    """
    words = _checked(words)
    try:
        import jieba  # type: ignore[import-untyped]  # noqa: PLC0415  (untyped; only Material's search needs it)
    except ImportError:
        return False
    for word in words:
        jieba.add_word(word)
    return True


def teach_segmenter_behind(words: Iterable[str]) -> Callable[[], bool]:
    """`teach_segmenter` in a thread of its own; the words are checked at once.

    Loading jieba's dictionary takes half a second, and a build's start waits a second or more for
    torch's facts (a block's process imports torch): the two now overlap. No page's words may be cut
    before the thread is done: the build waits for it before the first page renders.

    Args:
        words: The words to learn.

    Returns:
        A function that waits for the thread and returns `teach_segmenter`'s answer (or raises its error).

    Raises:
        InputError: If a word is longer than the glossary allows.
    """
    checked = _checked(words)
    # A future carries the thread's answer, or its error, back to the build's thread (`result` raises it).
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="floors-segmenter")
    learned = pool.submit(teach_segmenter, checked)
    pool.shutdown(wait=False)  # the thread ends when the dictionary is loaded; nothing else is sent to it
    return learned.result
