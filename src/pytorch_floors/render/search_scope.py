"""What the search index leaves out, beyond the proof sources and lab cells that `site_build` excludes.

Material's search plugin indexes a page's whole content and skips the elements marked
`data-search-exclude`. A reader's first search downloads the whole index (pages ask for it only
then: `docs/javascripts/search-on-demand.js`), so it must stay small (at most 300 KB, see
`bench/reader.py`) and hold what a reader searches for.
Left out, because a reader finds them through the prose around them and never searches for their
text:

- proof outputs: measured numbers and machine-specific listings, printed under the prose that
  names what they show (the paragraph before each output, "Look for ...", stays in the index);
- the line under each proof ("Download and run it `python snippets/...` ran in 7 ms");
- BibTeX entries (the Cite page's table of what to cite stays);
- on a lab's page, the folded "What to notice" answers (a markdown cell's `<details class="success">`):
  each answers the prediction above it, and a search excerpt would give it away before the reader
  has predicted. The lab's solutions are code cells, whose `<pre>` the notebook exclusions of
  `site_build` already leave out, with every output.

The API reference pages, written for contributors, leave the index whole: each carries
Material's `search: exclude: true` in its front matter (`reference/index.md` stays in).

Only elements that never nest in their own tag are marked (`<pre>`, `<p>`, a lab's answer
`<details>`): Material's parser compares elements by tag name, so a marked element stops being
skipped at the first closing tag of its own name.
"""

from __future__ import annotations

__all__ = ["EXCLUDED_OPENINGS", "NOTEBOOK_EXCLUDED_OPENINGS", "narrow_search"]

EXCLUDED_OPENINGS: tuple[tuple[str, str], ...] = (
    # (the exact opening that pytorch_floors or Material writes, the element in it to mark)
    ('<div class="floors-proof__output"><div class="highlight"><pre', "<pre"),
    ('<p class="floors-proof__meta"', '<p class="floors-proof__meta"'),
    ('<pre><code class="language-bibtex">', "<pre"),
)

NOTEBOOK_EXCLUDED_OPENINGS: tuple[tuple[str, str], ...] = (
    # A lab's folded answer, as its markdown cell writes it (`docs/labs/*.py`) and nbconvert keeps it. It
    # holds no <details> of its own, so marking it leaves out all of it, and only it.
    ('<details class="success"', '<details class="success"'),
)

_NOTEBOOK_MARK = '<div class="jupyter-wrapper"'


def narrow_search(html: str) -> str:
    """Mark the elements of a page's content that the search index leaves out.

    Args:
        html: A page's rendered content.

    Returns:
        The content, with `data-search-exclude` on each proof output's `<pre>`, each proof's
        download line and each BibTeX `<pre>`, and, on a lab's page, on each folded answer.
    """
    openings = EXCLUDED_OPENINGS + (NOTEBOOK_EXCLUDED_OPENINGS if _NOTEBOOK_MARK in html else ())
    for opening, element in openings:
        marked = opening.replace(element, f"{element} data-search-exclude", 1)
        html = html.replace(opening, marked)
    return html
