"""Where a rendered page's tags are, found by an HTML parser, so a template's fragment can go there.

The build puts a few rendered fragments into pages it did not render itself (the theme's, nbconvert's):
the build's mark after `<head>`, a lab's download box after its title, an alias's target before the
element with its id. The fragments come from templates (`render.templates`); this module only says
where they go. The standard library's `html.parser` reads the page as a browser tokenizes it (a `<head>`
inside a comment, a script or an attribute's value is none), stops at the first match, and the page
is changed at that one offset and nowhere else, byte for byte as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = [
    "Tag",
    "find_end_tag",
    "find_start_tag",
    "find_start_tags",
    "insert_after",
    "insert_before",
    "replace_span",
    "start_tags_in_place",
    "with_attribute",
    "with_attributes",
]

VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
"""Elements that have no end tag: they open nothing a later tag could be inside."""


@dataclass(frozen=True)
class Tag:
    """One tag of a page, as written.

    Attributes:
        name: The tag's name, lower case (`article`).
        start: The offset of its `<`.
        end: The offset just past its `>`.
        attributes: Its attributes, as the parser reads them (`None` for one without a value).
    """

    name: str
    start: int
    end: int
    attributes: dict[str, str | None]


class _Found(Exception):
    def __init__(self, tag: Tag) -> None:
        super().__init__(tag.name)
        self.tag = tag


class _Finder(HTMLParser):
    """Parses until `wanted` accepts a tag, then stops (`_Found`); or, given a list, puts every one in it."""

    def __init__(
        self,
        html: str,
        wanted: Callable[[str, bool, dict[str, str | None]], bool],
        every: list[Tag] | None = None,
    ) -> None:
        super().__init__(convert_charrefs=True)
        self.html = html
        self.wanted = wanted
        self.every = every
        self.line, self.line_start = 1, 0  # where the last tag found was: lines are counted on from there

    def _offset(self) -> int:
        # The parser says where it is as a line and a column; the lines are counted from the last tag found.
        line, column = self.getpos()
        while self.line < line:
            self.line_start = self.html.index("\n", self.line_start) + 1
            self.line += 1
        return self.line_start + column

    def _found(self, tag: Tag) -> None:
        if self.every is None:
            raise _Found(tag)
        self.every.append(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if self.wanted(tag, True, attributes):
            start = self._offset()
            self._found(Tag(tag, start, start + len(self.get_starttag_text() or ""), attributes))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.wanted(tag, False, {}):
            start = self._offset()
            self._found(Tag(tag, start, self.html.index(">", start) + 1, {}))


def _first(html: str, wanted: Callable[[str, bool, dict[str, str | None]], bool], start: int) -> Tag | None:
    finder = _Finder(html[start:], wanted)
    try:
        finder.feed(html[start:])
        finder.close()
    except _Found as found:
        tag = found.tag
        return Tag(tag.name, tag.start + start, tag.end + start, tag.attributes)
    return None


def find_start_tag(
    html: str, name: str | Collection[str] | None = None, *, start: int = 0, attribute: tuple[str, str] | None = None
) -> Tag | None:
    """The first start tag of a name (or of several, or any, given an attribute), from an offset on.

    Args:
        html: A page, or part of one.
        name: The tag's name (`head`), the names it may have, or `None` for any.
        start: Where to start looking.
        attribute: An attribute and its value the tag must have (`("id", "crossing-cost")`).

    Returns:
        The tag, or `None` where there is none.
    """

    def wanted(tag: str, opening: bool, attributes: dict[str, str | None]) -> bool:
        if not opening or (name is not None and (tag != name if isinstance(name, str) else tag not in name)):
            return False
        return attribute is None or attributes.get(attribute[0]) == attribute[1]

    return _first(html, wanted, start)


def find_start_tags(html: str, names: Collection[str], *, attribute: str | None = None) -> list[Tag]:
    """Every start tag of these names (that has an attribute, given one), in the page's order.

    Args:
        html: A page, or part of one.
        names: The tags' names (`{"h2", "h3", "h4"}`).
        attribute: An attribute the tag must have with a value (`id`).

    Returns:
        The tags.
    """
    every: list[Tag] = []
    finder = _Finder(
        html,
        lambda tag, opening, attrs: opening and tag in names and (attribute is None or bool(attrs.get(attribute))),
        every,
    )
    finder.feed(html)
    finder.close()
    return every


def find_end_tag(html: str, name: str, *, start: int = 0) -> Tag | None:
    """The first end tag of a name (`</h1>`), from an offset on, or `None` where there is none."""
    return _first(html, lambda tag, opening, _: not opening and tag == name, start)


class _Nesting(_Finder):
    """Every start tag, with the elements still open around it (outermost first)."""

    def __init__(self, html: str) -> None:
        super().__init__(html, lambda *_: False)
        self.open: list[Tag] = []
        self.found: list[tuple[Tag, tuple[Tag, ...]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        found = Tag(tag, start, start + len(self.get_starttag_text() or ""), dict(attrs))
        self.found.append((found, tuple(self.open)))
        if tag not in VOID_ELEMENTS:
            self.open.append(found)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_ELEMENTS:
            self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        # An end tag closes the nearest open element of its name and whatever was left open inside it, as a
        # browser does for a `<p>` never closed; a stray end tag closes nothing.
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth].name == tag:
                del self.open[depth:]
                return


def start_tags_in_place(html: str) -> list[tuple[Tag, tuple[Tag, ...]]]:
    """Every start tag of a page, in order, each with the elements it is inside (outermost first).

    Args:
        html: A page, or part of one.

    Returns:
        Each start tag and its ancestors, as the parser nests them (void elements open nothing).
    """
    nesting = _Nesting(html)
    nesting.feed(html)
    nesting.close()
    return nesting.found


def with_attributes(html: str, tags: Collection[Tag], attribute: str) -> str:
    """The page with a valueless attribute added to each of several start tags (see `with_attribute`).

    Args:
        html: The page.
        tags: Start tags found in it; one that has the attribute already is left as it is.
        attribute: The attribute's name: a name, not markup.

    Returns:
        The page.
    """
    marked = {tag.start: tag for tag in tags if attribute not in tag.attributes}
    for start in sorted(marked, reverse=True):
        html = with_attribute(html, marked[start], attribute)
    return html


def replace_span(html: str, start: int, end: int, fragment: str) -> str:
    """The page with the characters from `start` to `end` (offsets of tags found in it) given as `fragment`."""
    return html[:start] + fragment + html[end:]


def insert_after(html: str, tag: Tag | None, fragment: str) -> str:
    """The page with a fragment right after a tag (unchanged where there is no tag)."""
    return html if tag is None else html[: tag.end] + fragment + html[tag.end :]


def insert_before(html: str, tag: Tag | None, fragment: str) -> str:
    """The page with a fragment right before a tag (unchanged where there is no tag)."""
    return html if tag is None else html[: tag.start] + fragment + html[tag.start :]


def with_attribute(html: str, tag: Tag | None, attribute: str) -> str:
    """The page with a valueless attribute added to a start tag, after its name (unchanged where there is none).

    Args:
        html: The page.
        tag: A start tag found in it.
        attribute: The attribute's name (`data-proof-pending`): a name, not markup.

    Returns:
        The page.
    """
    if tag is None:
        return html
    at = tag.start + 1 + len(tag.name)
    return html[:at] + " " + attribute + html[at:]
