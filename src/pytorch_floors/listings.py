"""Collapsed proof sources, lightly highlighted: keywords, strings and comments keep their colours.

Each proof's source sits in a closed `<details>` under its output, highlighted by Pygments like any
code block: one `<span>` per token, punctuation and names included. Those spans were most of a
floor page's DOM (4,294 of floor 4's 5,527 elements), which slows every page on a phone, for code
that a reader opens rarely and can download. `lighten_listings` keeps the spans of the token kinds
that carry the shape of the code (keywords, strings, comments, whose colours Material defines in
both palettes) and turns every other span into its plain text; adjacent spans of one kind, or two
separated only by whitespace, merge. The text of each listing is unchanged, character for
character: only elements go.

The listing is parsed with `html.parser` (it is Pygments' flat output: spans of text in a `<code>`
in a `<pre>`), and only inside the `<details class="floors-proof__source">` elements the proof
engine writes; the rest of the page passes through untouched.
"""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["KEPT_TOKEN_CLASSES", "lighten_listings"]

SOURCE_OPENING = '<details class="floors-proof__source"'
SOURCE_CLOSING = "</details>"

KEPT_TOKEN_CLASSES = frozenset(
    {
        # keywords, and the word operators (`and`, `in`, `is`, `not`, `or`)
        *("k", "kc", "kd", "kn", "kp", "kr", "kt", "ow"),
        # strings, docstrings included, and their escapes
        *("s", "s1", "s2", "sb", "sc", "sd", "se", "sh", "sr", "ss", "sx"),
        # comments
        *("c", "c1", "ch", "cm", "cp", "cpf", "cs"),
    }
)
"""Pygments' short class names of the tokens whose spans stay."""


class _Lightener(HTMLParser):
    """Re-emits a listing, turning the spans of a `<pre><code>` into fewer, merged ones."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.in_pre = False
        self.in_code = False
        self.kind: str | None = None  # the kept class of the span being read, or None
        self.tokens: list[list[str | None]] = []  # [kept class or None, html text]

    def _text(self, text: str) -> None:
        if not self.in_code:
            self.out.append(text)
        elif self.tokens and self.tokens[-1][0] == self.kind:
            self.tokens[-1][1] = f"{self.tokens[-1][1]}{text}"
        else:
            self.tokens.append([self.kind, text])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.in_code and tag == "span":
            kind = dict(attrs).get("class") or ""
            self.kind = kind if kind in KEPT_TOKEN_CLASSES else None
            return
        if self.in_code:
            raise ValueError(f"unexpected <{tag}> in a highlighted listing")
        self.in_pre = self.in_pre or tag == "pre"
        self.in_code = self.in_pre and tag == "code"
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if self.in_code and tag == "span":
            self.kind = None
            return
        if self.in_code and tag == "code":
            self.out.append(_merged(self.tokens))
            self.tokens, self.in_code = [], False
        self.in_pre = self.in_pre and tag != "pre"
        self.out.append(f"</{tag}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")

    def handle_data(self, data: str) -> None:
        self._text(data)

    def handle_entityref(self, name: str) -> None:
        self._text(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._text(f"&#{name};")

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")


def _merged(tokens: list[list[str | None]]) -> str:
    """The tokens as HTML: a kept token in a span, whitespace between two of one kind absorbed."""
    merged: list[list[str | None]] = []
    for kind, text in tokens:
        if merged and merged[-1][0] == kind:
            merged[-1][1] = f"{merged[-1][1]}{text}"
        elif (
            kind is not None
            and len(merged) >= 2
            and merged[-2][0] == kind
            and merged[-1][0] is None
            and not (merged[-1][1] or "").strip()
        ):
            merged[-2][1] = f"{merged[-2][1]}{merged[-1][1]}{text}"
            merged.pop()
        else:
            merged.append([kind, text])
    return "".join(f'<span class="{kind}">{text}</span>' if kind else f"{text}" for kind, text in merged)


def _lighten(listing: str) -> str:
    parser = _Lightener()
    parser.feed(listing)
    parser.close()
    if parser.in_code or parser.in_pre:
        raise ValueError("a highlighted listing is not closed")
    return "".join(parser.out)


def lighten_listings(html: str, page: str) -> str:
    """Lighten the highlighting of every collapsed proof source in a page's content.

    Args:
        html: A page's rendered content.
        page: The page's source path under `docs/`, for the error message.

    Returns:
        The content, each proof source's code with spans only for keywords, strings and comments.

    Raises:
        ValueError: A proof source is not closed, or its code holds other elements than spans.
    """
    parts: list[str] = []
    position = 0
    while (start := html.find(SOURCE_OPENING, position)) >= 0:
        end = html.find(SOURCE_CLOSING, start)
        if end < 0:
            raise ValueError(f"docs/{page}: unclosed proof source at offset {start}")
        end += len(SOURCE_CLOSING)
        try:
            lightened = _lighten(html[start:end])
        except ValueError as error:
            raise ValueError(f"docs/{page}: proof source at offset {start}: {error}") from None
        parts += [html[position:start], lightened]
        position = end
    return "".join(parts) + html[position:]
