"""What the search index leaves out of a page: Material skips the elements marked `data-search-exclude`.

Material's search plugin indexes a page's whole content and skips the elements marked
`data-search-exclude`. A reader's first search downloads the whole index (pages ask for it only
then: `docs/javascripts/search-on-demand.js`), so it must stay small (at most 300 KB, see
`bench/reader.py`) and hold what a reader searches for.
Left out, because a reader finds them through the prose around them and never searches for their
text:

- proof outputs: measured numbers and machine-specific listings, printed under the prose that
  names what they show (the paragraph before each output, "Look for ...", stays in the index), and
  their charts, whose ticks, legends and captions repeat those numbers (a chart never holds a chart,
  so its `<figure>` can be marked);
- the claims under each proof, this build's and each recorded machine's: their verdicts, figures
  and reasons are one machine's, and the prose states each pattern (marked by their templates,
  `render/templates/proof_claims.html` and `tier_claims.html`);
- the line under each proof ("Download and run it `python snippets/...` ran in 7 ms"), marked by the
  proof frame's own template (`render/templates/proof_frame.html`), as its folded source is;
- BibTeX entries (the Cite page's table of what to cite stays);
- the answers to a page's "Check yourself" questions (Material's `??? question` blocks): an excerpt
  would give an answer away before the reader has thought, and would outrank the section that
  teaches it. Each question stays; the block elements after its `<summary>` are marked;
- a proof's folded source: a downloadable script (marked by the proof frame's template);
- on a lab's page, the code and outputs of its cells (every `<pre>`, and nbconvert's notices), whose
  prose stays: otherwise labs outrank the floors with the floors' own words in code, and their
  excerpts open on "Copied!"; the labels of its folds ("Solution", "Output: open it after you have
  predicted", a `<summary>` the project's nbconvert template writes), which filled a lab's page entry
  fourteen times over; and the folded "What to notice" answers (a markdown cell's
  `<details class="success">`): each answers the prediction above it, and a search excerpt would
  give it away before the reader has predicted.

The API reference pages, written for contributors, leave the index whole: each carries
Material's `search: exclude: true` in its front matter (`reference/index.md` stays in).

Only elements that never nest in their own tag are marked (`<pre>`, `<p>`, a chart's `<figure>`,
a lab's answer `<details>`): Material's parser compares elements by tag name, so a marked element stops being
skipped at the first closing tag of its own name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from typing import Any

from pytorch_floors.render.splice import Tag, start_tags_in_place, with_attributes

__all__ = [
    "KEYS_BOOST",
    "KEYS_FIELD",
    "PAGE_WEIGHT",
    "SEARCH_EXCLUDE",
    "land_on_headings",
    "narrow_search",
    "page_key_words",
    "weigh_entries",
    "written_headings",
]

SEARCH_EXCLUDE = "data-search-exclude"
"""The attribute Material's search parser skips an element by."""

_NOTEBOOK = ("div", "jupyter-wrapper")
# The block elements a "Check yourself" answer is written in; none of them nests in its own tag in an answer.
_ANSWER_BLOCKS = frozenset({"p", "ul", "ol", "pre", "table", "div", "blockquote"})


def _classes(tag: Tag) -> list[str]:
    return (tag.attributes.get("class") or "").split()


def _is(tag: Tag | None, name: str, css_class: str) -> bool:
    return tag is not None and tag.name == name and css_class in _classes(tag)


def _left_out(tag: Tag, around: tuple[Tag, ...], notebook: bool) -> Tag | None:
    """The element to mark for `tag` (itself, or the `<pre>` it opens), or `None` where search keeps it."""
    parent = around[-1] if around else None
    if tag.name == "pre" and (
        notebook  # a lab's code and outputs, as the project's nbconvert template and nbconvert write them
        or any(_is(outer, "div", "floors-proof__output") for outer in around)  # a proof's output, either shape
    ):
        return tag
    if tag.name == "figure" and (tag.attributes.get("class") or "").startswith("floors-figure"):
        return tag  # a proof's chart: its ticks, legend and caption repeat the numbers above it
    if _is(tag, "code", "language-bibtex") and parent is not None and parent.name == "pre":
        return parent
    if tag.name in _ANSWER_BLOCKS and any(_is(outer, "details", "question") for outer in around):
        # An answer to a "Check yourself" question: what its <details> holds after (never inside) its summary.
        return None if any(outer.name == "summary" for outer in around) else tag
    if notebook and (
        _is(tag, "span", "notice")  # nbconvert's "Copied!"
        # A lab's folded answer, as its markdown cell writes it (`docs/labs/*.py`) and nbconvert keeps it: it
        # holds no <details> of its own, so marking it leaves out all of it, and only it.
        or (tag.name == "details" and _classes(tag) == ["success"])
        # A fold's label (jupyter/nbconvert/templates/mkdocs_html/notebook.html.j2): folds nest, labels never do.
        or (tag.name == "summary" and _is(parent, "details", "floors-fold"))
    ):
        return tag
    return None


def narrow_search(html: str) -> str:
    """Mark the elements of a page's content that the search index leaves out.

    The page is read by an HTML parser (`render.splice`), each element judged by what it is inside,
    and only the marked start tags change, each by the one attribute.

    Args:
        html: A page's rendered content.

    Returns:
        The content, with `data-search-exclude` on each proof output's `<pre>` and chart, each BibTeX
        `<pre>` and each answer to a "Check yourself" question, and, on a lab's page, on its cells'
        code and outputs, its folds' labels and each folded answer.
    """
    tags = start_tags_in_place(html)
    notebook = any(_is(tag, *_NOTEBOOK) for tag, _ in tags)
    marked = [found for tag, around in tags if (found := _left_out(tag, around, notebook)) is not None]
    return with_attributes(html, marked, SEARCH_EXCLUDE)


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class _Headings(HTMLParser):
    """A written page's headings that have an id, each with its words as a search entry's title shows them."""

    def __init__(self, whole: tuple[str, str] | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self.heading: tuple[str, str] | None = whole  # (its tag, its id) while inside one; given: all of it is one
        self.words: list[str] = []
        self.permalink = 0  # inside a heading's permalink (`a.headerlink`): its `¶` is no word of the heading

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in _HEADINGS and attributes.get("id") and self.heading is None:
            self.heading, self.words = (tag, str(attributes["id"])), []
        elif self.heading is not None and (self.permalink or "headerlink" in (attributes.get("class") or "").split()):
            self.permalink += tag == "a"

    def handle_endtag(self, tag: str) -> None:
        if self.permalink and tag == "a":
            self.permalink -= 1
        elif self.heading is not None and tag == self.heading[0]:
            # The segmenter's marks (U+200B) are the index's own, not the page's words.
            self._finish()

    def _finish(self) -> None:
        assert self.heading is not None
        # The segmenter's marks (U+200B) are the index's own, not the page's words.
        self.found.append((self.heading[1], " ".join("".join(self.words).replace("\u200b", "").split())))
        self.heading = None

    def close(self) -> None:
        super().close()
        if self.heading is not None and self.heading[0] == "":  # the words of a fragment, not of a page's heading
            self._finish()

    def handle_data(self, data: str) -> None:
        if self.heading is not None and not self.permalink:
            self.words.append(data)


def written_headings(html: str) -> list[tuple[str, str]]:
    """A written page's headings with an id: (the id, the heading's words), in the page's order."""
    parser = _Headings()
    parser.feed(html)
    parser.close()
    return parser.found


def _words(html: str) -> str:
    """A search entry's title as its heading's words: tags, entities and the segmenter's marks dropped."""
    parser = _Headings(whole=("", ""))
    parser.feed(html)
    parser.close()
    return parser.found[0][1]


def land_on_headings(
    entries: list[dict[str, Any]], page_headings: Callable[[str], list[tuple[str, str]] | None]
) -> list[dict[str, Any]]:
    """Point each search entry at the id its heading has on the written page.

    Material's search plugin indexes a page before the build's last step writes it; a lab's headings
    are given their stable ids only then (`labs.notebooks.finish_lab_page`), so the index named the
    ids mkdocs-jupyter derived from the words (`#exercise-1-strides-are-the-address-formula`, in
    Chinese `#1` or none at all), which the page does not have: a result opened the page at its top,
    and an entry with no anchor (a Chinese heading's slug is empty) was taken for the page itself and
    titled its group. An entry whose anchor the page lacks is given the id of the page's heading with
    the same words; the page's own entry (the first, without an anchor) is left as it is.

    Args:
        entries: The index's entries (`location`, `title`, `text`), in the site's order.
        page_headings: A written page's headings by its URL (`labs/7-memory/`), as `written_headings` reads them,
            or `None` if there is no such page.

    Returns:
        The entries, each anchor one the page has where a heading of its words is there.
    """
    pages: dict[str, tuple[set[str], dict[str, str]] | None] = {}
    seen: set[str] = set()
    landed = []
    for entry in entries:
        url, _, anchor = str(entry.get("location", "")).partition("#")
        first = url not in seen
        seen.add(url)
        if url not in pages:
            headings = page_headings(url)
            pages[url] = None if headings is None else ({i for i, _ in headings}, {w: i for i, w in reversed(headings)})
        found = pages[url]
        if found is None or (first and not anchor) or anchor in found[0]:
            landed.append(entry)
            continue
        heading = found[1].get(_words(str(entry.get("title", ""))))
        landed.append(entry if heading is None else {**entry, "location": f"{url}#{heading}"})
    return landed


PAGE_WEIGHT = 0.6
"""What a page's own entry weighs beside its sections.

Material's search multiplies an entry's score by `1 + boost²`, where `boost` is the share of the
query's words it holds, plus 1 for a page's own entry (its first, without an anchor): a page whose
title held one word of two (3.25×) outranked a section that held both (2×). "graph break" led with
Floor 5 ("Missing: break") above `compile/#graph-breaks`; "pinned memory" led with Floor 7, and
folded Floor 8's sections under "9 more on this page" (a group folds what scores below its first).
At 0.6 a page's entry that holds one word of two (3.25 × 0.6 ≈ 1.95) weighs less than a section that
holds both (2), and one that holds the whole query (5 × 0.6 = 3) still leads for its own subject
("autograd": Floor 5); at 0.4 a section that named AutogradMeta led that query.
"""

KEYS_FIELD = "keys"
"""The index's field of each section's key words: its anchor's (`graph-breaks`, `dispatch-keys`, `the-gil`).

A section's anchor names its subject in a word or two, where its heading may not ("Code that writes
code" is `#generated-bindings`; "Dispatch key sets" lost "dispatch key" to a section that said the
words more often). Material's worker indexes every field the index's configuration names and shows
only the title and text, so the words weigh without showing; in Chinese too, whose readers type
English terms (roofline, meta).
"""

KEYS_BOOST = 5.0
"""The key words' weight: half a heading's (`mkdocs.yml`'s `title` boost 10). At 10 a word of a section's
heading and anchor ("size" in `#bandwidth-vs-size`) outweighed a section whose text held the whole query
("grain size": floor 6's `#kernel-walk`)."""


def weigh_entries(entries: list[dict[str, Any]], boosts: Mapping[str, float]) -> list[dict[str, Any]]:
    """Weigh the index's entries so a section that holds the query leads its page and the site.

    Args:
        entries: The index's entries, each page's own first (its location without an anchor).
        boosts: Pages' boosts by URL, for pages the index holds with none of their own.

    Returns:
        The entries: each with its page's boost, a page's own times `PAGE_WEIGHT`, each section with its
        anchor's words in `KEYS_FIELD`.
    """
    weighed = []
    for entry in entries:
        url, _, anchor = str(entry.get("location", "")).partition("#")
        boost = float(entry.get("boost", boosts.get(url, 1.0)))
        if anchor:
            weighed.append({**entry, "boost": boost, KEYS_FIELD: anchor.replace("-", " ")})
        else:
            weighed.append({**entry, "boost": boost * PAGE_WEIGHT, KEYS_FIELD: page_key_words(url)})
    return weighed


def page_key_words(url: str) -> str:
    """A page's own key words, as a section's are its anchor's: its address's last part, without a floor's number.

    `floors/5-autograd/` is "autograd": a page's entry holds its subject's word as its sections hold theirs, so
    "autograd" leads with Floor 5 however often another page's section names AutogradMeta (a Chinese edit to
    another page's section tipped it to Floor 7's `#tensorimpl`, whose title holds the word as a prefix).
    """
    last = url.rstrip("/").rpartition("/")[2]
    return " ".join(word for word in last.split("-") if not word.isdigit())
