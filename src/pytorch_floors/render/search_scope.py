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

import html as html_text
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "EXCLUDED_OPENINGS",
    "KEYS_BOOST",
    "KEYS_FIELD",
    "NOTEBOOK_EXCLUDED_OPENINGS",
    "PAGE_WEIGHT",
    "land_on_headings",
    "narrow_search",
    "weigh_entries",
]

EXCLUDED_OPENINGS: tuple[tuple[str, str], ...] = (
    # (the exact opening that markdown-exec's output or Material writes, the element in it to mark)
    ('<div class="floors-proof__output"><div class="highlight"><pre', "<pre"),
    # The numbers behind a figure, as `pytorch_floors.plot.show` prints them on a page.
    ('<div class="floors-proof__output"><pre class="floors-output">', "<pre"),
    # A proof's chart (`pytorch_floors.plot`): its ticks, legend and caption repeat the numbers above it.
    ('<figure class="floors-figure', "<figure"),
    ('<pre><code class="language-bibtex">', "<pre"),
)

NOTEBOOK_EXCLUDED_OPENINGS: tuple[tuple[str, str], ...] = (
    # A lab's code and outputs, as the project's nbconvert template and nbconvert write them.
    ("<pre", "<pre"),
    ('<span class="notice"', '<span class="notice"'),
    # A lab's folded answer, as its markdown cell writes it (`docs/labs/*.py`) and nbconvert keeps it. It
    # holds no <details> of its own, so marking it leaves out all of it, and only it.
    ('<details class="success"', '<details class="success"'),
    # A fold's label (jupyter/nbconvert/templates/mkdocs_html/notebook.html.j2): folds nest, their labels never do.
    ('<details class="floors-fold"><summary>', "<summary"),
)

_NOTEBOOK_MARK = '<div class="jupyter-wrapper"'

# A "Check yourself" question as Material's admonition extension writes `??? question "…"`: the
# question is the summary; what follows it, up to the block's end, is the answer.
_QUESTION = re.compile(r'(<details class="question">\s*<summary>.*?</summary>)(.*?)(</details>)', re.S)
# The block elements an answer is written in; none of them nests in its own tag in an answer.
_ANSWER_BLOCK = re.compile(r"<(p|ul|ol|pre|table|div|blockquote)(?=[\s>])")


def _without_answers(html: str) -> str:
    def marked(match: re.Match[str]) -> str:
        answer = _ANSWER_BLOCK.sub(r"<\1 data-search-exclude", match[2])
        return f"{match[1]}{answer}{match[3]}"

    return _QUESTION.sub(marked, html)


def narrow_search(html: str) -> str:
    """Mark the elements of a page's content that the search index leaves out.

    Args:
        html: A page's rendered content.

    Returns:
        The content, with `data-search-exclude` on each proof output's `<pre>` and chart, each proof's
        download line, each BibTeX `<pre>` and each answer to a "Check yourself" question, and, on a
        lab's page, on its cells' code and outputs, its folds' labels and each folded answer.
    """
    openings = EXCLUDED_OPENINGS + (NOTEBOOK_EXCLUDED_OPENINGS if _NOTEBOOK_MARK in html else ())
    for opening, element in openings:
        marked = opening.replace(element, f"{element} data-search-exclude", 1)
        html = html.replace(opening, marked)
    return _without_answers(html)


# A heading of a written page, with its id: what a search result's anchor must name.
_FINAL_HEADING = re.compile(r'<h(?P<level>[1-6]) id="(?P<id>[^"]+)"[^>]*>(?P<text>.*?)</h(?P=level)>', re.S)
_PERMALINK = re.compile(r'<a class="headerlink".*?</a>', re.S)
_TAG = re.compile(r"<[^>]+>")


def _words(html: str) -> str:
    """A heading's words as a search entry's title and its page both show them, whatever marks they carry."""
    # The segmenter's marks (U+200B) are the index's own; tags and entities are the page's.
    plain = html_text.unescape(_TAG.sub("", _PERMALINK.sub("", html))).replace("\u200b", "")
    return " ".join(plain.split())


def land_on_headings(entries: list[dict[str, Any]], page_html: Callable[[str], str | None]) -> list[dict[str, Any]]:
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
        page_html: A page's written HTML by its URL (`labs/7-memory/`), or `None` if there is none.

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
            written = page_html(url)
            headings = [(m["id"], _words(m["text"])) for m in _FINAL_HEADING.finditer(written or "")]
            pages[url] = None if written is None else ({i for i, _ in headings}, {w: i for i, w in reversed(headings)})
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
            weighed.append({**entry, "boost": boost * PAGE_WEIGHT})
    return weighed
