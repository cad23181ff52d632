"""The theme's chrome without its indentation: the header, the navigation and the tables of contents.

Material's templates indent every line they write, and the part of a page before its article (the
header, both sidebars, the gauge's section of the navigation) carried 14 KB of spaces on a floor page,
loaded again with every page a reader opens. A run of spaces or tabs after a line break is only
whitespace between tags or beside words, which a browser shows as one space either way; the line break
stays. The article, and anything whose whitespace is its content (`pre`, `textarea`, `script`, `style`),
is left as it is.
"""

from __future__ import annotations

import re

from pytorch_floors.render.splice import find_start_tag

__all__ = ["squeeze_chrome"]

_KEPT = re.compile(r"<(pre|textarea|script|style)\b.*?</\1>", re.S | re.I)
_INDENT = re.compile(r"\n[ \t]+")


def squeeze_chrome(html: str) -> str:
    """The page with the indentation of the part before its `<article>` removed (a page without one: all of it).

    Args:
        html: A whole page.

    Returns:
        The page, each line of its chrome starting at the margin.
    """
    article = find_start_tag(html, "article")
    chrome, rest = (html, "") if article is None else (html[: article.start], html[article.start :])
    parts, last = [], 0
    for kept in _KEPT.finditer(chrome):
        parts.append(_INDENT.sub("\n", chrome[last : kept.start()]))
        parts.append(kept.group(0))
        last = kept.end()
    parts.append(_INDENT.sub("\n", chrome[last:]))
    return "".join(parts) + rest
