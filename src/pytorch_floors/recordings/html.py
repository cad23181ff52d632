"""A recording's HTML output, taken only as the project's figures write it.

A recording arrives from another machine (a CI artifact, a pull request) as long strings in JSON that
nobody reads line by line, and an `html="1"` block's output goes into the page as HTML. So a recorded
output is parsed and written out again from an allow-list: the elements and attributes that
`pytorch_floors.plot` and the project's own figures write (SVG charts, bar lists, the building),
every text and attribute value escaped, links only relative, inline styles only custom properties and
opacities. Anything else (a `script`, an `on*` handler, a `javascript:` link, a comment, an unknown
element) refuses the recording by name: it is never shown half-cleaned.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

from pytorch_floors.errors import FloorsError

__all__ = ["ALLOWED", "UntrustedHTML", "allowed_html"]

_COMMON = frozenset(
    {"class", "id", "role", "hidden", "aria-hidden", "aria-label", "aria-labelledby", "aria-describedby"}
)
_SHAPE = frozenset({"fill", "fill-opacity", "opacity", "stroke", "stroke-dasharray", "stroke-width", "style"})

ALLOWED: dict[str, frozenset[str]] = {
    "a": frozenset({"href"}),
    "circle": _SHAPE | {"cx", "cy", "r"},
    "code": frozenset(),
    "desc": frozenset(),
    "div": frozenset({"style"}),
    "figcaption": frozenset(),
    "figure": frozenset(),
    "g": _SHAPE | {"transform"},
    "li": frozenset({"style"}),
    "line": _SHAPE | {"x1", "x2", "y1", "y2"},
    "ol": frozenset({"style"}),
    "p": frozenset(),
    "path": _SHAPE | {"d"},
    "polygon": _SHAPE | {"points"},
    "polyline": _SHAPE | {"points"},
    "pre": frozenset(),
    "rect": _SHAPE | {"height", "rx", "width", "x", "y"},
    "span": frozenset({"style"}),
    "strong": frozenset(),
    "svg": frozenset({"focusable", "height", "viewbox", "width", "xmlns"}),
    "text": _SHAPE | {"dominant-baseline", "dy", "font-family", "font-size", "font-weight", "text-anchor", "x", "y"},
    "title": frozenset(),
    "tspan": _SHAPE | {"dy", "x", "y"},
    "ul": frozenset({"style"}),
    "wbr": frozenset(),
}
"""Each element a recorded figure may hold, with the attributes it may carry beyond `_COMMON`."""

_VOID = frozenset({"wbr"})
_SVG_SHAPES = frozenset({"circle", "line", "path", "polygon", "polyline", "rect"})
_SVG_CASE = {"viewbox": "viewBox"}
"""SVG's camel-case attributes, which the parser reads in lower case: written back as SVG spells them."""
_SVG_NAMESPACE = "http://www.w3.org/2000/svg"
# `--floors-bar: 0.25; fill-opacity:0.3`: a custom property or an opacity, a plain value, nothing callable.
_DECLARATION = re.compile(r"\s*(--[a-z][a-z0-9-]*|fill-opacity|opacity)\s*:\s*[-+]?[\w.%# ]{1,40}\s*")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")


class UntrustedHTML(FloorsError, ValueError):
    """A recorded output holds HTML the project's figures never write; the message says what."""


def _style_ok(value: str) -> bool:
    return all(_DECLARATION.fullmatch(part) for part in value.split(";") if part.strip())


def _href_ok(value: str) -> bool:
    r"""Whether a link stays on the site: no scheme, and no host of its own as a browser resolves it.

    A browser reads a link on an `http(s)` page by the WHATWG URL rules: it drops leading and trailing
    C0 controls and spaces and every tab and newline, and takes `\` for `/`; so `/\evil.example` and
    `/<tab>/evil.example` open another host. The link is judged as so read, with every control and space
    dropped (more than a browser drops, so a doubtful link is refused, never let through).
    """
    read = _INVISIBLE.sub("", value).replace("\\", "/")
    return not _SCHEME.match(read) and not read.startswith("//")


class _Writer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], *, close: bool) -> None:
        allowed = ALLOWED.get(tag)
        if allowed is None:
            raise UntrustedHTML(f"<{tag}> is not an element the project's figures write")
        written = []
        for name, value in attrs:
            text = value or ""
            if name not in allowed and name not in _COMMON:
                raise UntrustedHTML(f"<{tag} {name}=…> is not an attribute the project's figures write")
            if name == "style" and not _style_ok(text):
                raise UntrustedHTML(f"<{tag} style={text[:60]!r}> is not a style the project's figures write")
            if name == "href" and not _href_ok(text):
                raise UntrustedHTML(f"<{tag} href={text[:60]!r}> is not a relative link")
            if name == "xmlns" and text != _SVG_NAMESPACE:
                raise UntrustedHTML(f"<{tag} xmlns={text[:60]!r}> is not the SVG namespace")
            spelt = _SVG_CASE.get(name, name)
            written.append(f' {spelt}="{escape(text)}"' if value is not None else f" {spelt}")
        if close and tag in _SVG_SHAPES:
            self.parts.append(f"<{tag}{''.join(written)}/>")  # SVG's own short form, as the figures write it
            return
        self.parts.append(f"<{tag}{''.join(written)}>")
        if close and tag not in _VOID:
            self.parts.append(f"</{tag}>")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, close=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, close=True)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ALLOWED:
            raise UntrustedHTML(f"</{tag}> closes an element the project's figures never write")
        if tag not in _VOID:
            self.parts.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.parts.append(escape(data))

    def handle_comment(self, data: str) -> None:
        raise UntrustedHTML("a comment: the project's figures write none")

    def handle_decl(self, decl: str) -> None:
        raise UntrustedHTML(f"a declaration (<!{decl[:30]}>): the project's figures write none")

    def handle_pi(self, data: str) -> None:
        raise UntrustedHTML("a processing instruction: the project's figures write none")

    def unknown_decl(self, data: str) -> None:
        raise UntrustedHTML(f"a declaration (<![{data[:30]}>): the project's figures write none")


def allowed_html(html: str) -> str:
    """A recorded HTML output, written out again from the allow-list.

    Args:
        html: The output as the recording holds it.

    Returns:
        The same figure: every element and attribute allowed, every text and value escaped (so the text
        that comes out may escape a quote the text that went in did not).

    Raises:
        UntrustedHTML: If it holds anything the project's figures never write.
    """
    writer = _Writer()
    writer.feed(html)
    writer.close()  # what is left unfinished (`<span class="x`) comes out as escaped text
    return "".join(writer.parts)
