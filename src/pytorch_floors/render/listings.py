"""Collapsed proof sources, lightly highlighted: docstrings and comments keep their colours.

Each proof's source sits in a closed `<details>` under its output. Highlighted like any code
block, it would get one `<span>` per token, punctuation and names included: those spans were most
of a floor page's DOM (4,294 of floor 4's 5,527 elements), which slows every page on a phone, for
code that a reader opens rarely and can download.

So proof sources are highlighted as the language `python-listing`: Python, with the Pygments
filter [`ListingFilter`][pytorch_floors.render.listings.ListingFilter] on its lexer. The plugin adds that
language to `pymdownx.highlight`'s `extend_pygments_lang` option
([`listing_language`][pytorch_floors.render.listings.listing_language]). The filter keeps the token
kinds that carry the prose of the code (docstrings and comments, whose colours Material defines in
both palettes) and turns every other token into plain text; whitespace between two tokens of one
kept kind joins them, and Pygments writes a run of tokens of one kind as one span. Keywords and
strings lost theirs when the pages gained other machines' outputs (`recordings.tabs`): their spans
were a third of a floor page's bytes (36 of floor 4's 266 KB) and half its elements, for a listing
a reader opens rarely and can download.
The text of each listing is unchanged, character for character: only elements go, and no HTML
is parsed again after Pygments wrote it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pygments.filter import Filter
from pygments.lexer import Lexer
from pygments.token import STANDARD_TYPES, Text

__all__ = ["KEPT_TOKEN_CLASSES", "LISTING_LANGUAGE", "ListingFilter", "listing_language"]

LISTING_LANGUAGE = "python-listing"
"""The fence language of a proof source: Python through `ListingFilter`."""

KEPT_TOKEN_CLASSES = frozenset(
    {
        # docstrings: the proof's own words about what it measures
        "sd",
        # comments
        *("c", "c1", "ch", "cm", "cp", "cpf", "cs"),
    }
)
"""Pygments' short class names of the tokens whose spans stay."""


def _kept(ttype: Any) -> bool:  # a token type (Pygments names its class only privately)
    # The class Pygments' HTML formatter gives a token is its own short name, or failing that
    # its nearest ancestor's with a suffix: only a token whose own class is listed keeps its span.
    return STANDARD_TYPES.get(ttype) in KEPT_TOKEN_CLASSES


class ListingFilter(Filter):  # type: ignore[misc]  # Pygments is untyped
    """Keeps docstrings and comments; every other token becomes plain text."""

    def filter(self, lexer: Lexer, stream: Iterator[tuple[Any, str]]) -> Iterator[tuple[Any, str]]:
        """The stream with other tokens as `Text`, and whitespace between two of one kept kind in that kind.

        Args:
            lexer: The lexer the stream comes from (unused).
            stream: `(token type, text)` pairs.

        Yields:
            `(token type, text)` pairs with the same text, in the same order.
        """
        pending: list[str] = []  # whitespace seen since the last kept token
        last: Any = None  # the kind of the last token, if kept and followed only by whitespace
        for ttype, value in stream:
            kind = ttype if _kept(ttype) else None
            if kind is None and not value.strip():
                pending.append(value)
                continue
            if pending:
                yield (kind if kind is not None and kind == last else Text), "".join(pending)
                pending = []
            yield (kind if kind is not None else Text), value
            last = kind
        if pending:
            yield Text, "".join(pending)


def listing_language(mdx_configs: dict[str, Any]) -> None:
    """Add the `python-listing` language to `pymdownx.highlight`'s options (the plugin's `on_config`).

    An entry of that name already there is replaced: the listing's look is this module's to define.

    Args:
        mdx_configs: The Markdown extensions' options (MkDocs' `config.mdx_configs`), changed in place.
    """
    highlight = mdx_configs.setdefault("pymdownx.highlight", {})
    languages = [lang for lang in highlight.get("extend_pygments_lang", []) if lang.get("name") != LISTING_LANGUAGE]
    options = {"filters": [ListingFilter()]}
    highlight["extend_pygments_lang"] = [*languages, {"name": LISTING_LANGUAGE, "lang": "python", "options": options}]
