"""One citation control per section heading, pinned to the edition being built.

Every h2–h4 that has an id gets one control (rendered from the package's `templates/floors-cite.html`),
which replaces Material's `¶` permalink (`toc.permalink` is off in `mkdocs.yml`). Without
JavaScript the control is a plain link to the section's full address. With it
(`docs/javascripts/copy-link.js`), on the citable pages (Part 0 and the floors) it opens a small
menu: copy the link, a plain-text citation, or a BibTeX entry of that section; on the other pages it
copies the link.

When the build is an edition (`FLOORS_EDITION` is set, as `make publish` does), `pin_to_edition`
moves `site_url` to the edition's root, so copied links, citations, canonical URLs and the sitemap
all name `…/2026.12/…`. mike already builds with that root; pinning it again changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from html import unescape

from jinja2 import Template

from pytorch_floors.errors import InputError
from pytorch_floors.floors import CITABLE_PAGES, MAP_PAGE, MAP_TITLE, MAP_TITLE_ZH, annex_for_page, floor_for_page
from pytorch_floors.i18n.languages import DEFAULT, english_source, language_of
from pytorch_floors.i18n.messages import t
from pytorch_floors.render.citation import SITE_TITLE, edition_url
from pytorch_floors.render.splice import find_end_tag, find_start_tags
from pytorch_floors.render.templates import template, words_in

__all__ = [
    "HEADING",
    "TAGS",
    "SectionCitation",
    "add_section_controls",
    "cited_part",
    "finish_headings",
    "pinned_site_url",
    "section_citation",
]

"""The control's template. It ships with the package, so every site using the hook has it."""

HEADING = re.compile(r'<h([234]) id="(?P<id>[^"]+)"(?P<attrs>[^>]*)>(?P<body>.*?)</h\1>', re.S)
"""A rendered h2–h4 with its id: the sections a reader can cite (`editions.anchors` locks the same ones)."""
SECTION_HEADINGS = frozenset({"h2", "h3", "h4"})
"""The headings a control goes into (those `HEADING` reads)."""
TAGS = re.compile(r"<[^>]+>")
"""Any tag, to read a heading's text."""
# Characters that BibTeX reads as commands or parameters inside a title.
_BIBTEX_SPECIAL = str.maketrans({c: f"\\{c}" for c in "&%$#_"})


@dataclass(frozen=True)
class SectionCitation:
    """What the control offers to copy for one section.

    Attributes:
        url: The section's full address (edition root, page, anchor).
        plain: A one-line citation in plain text.
        bibtex: A BibTeX `@misc` entry.
    """

    url: str
    plain: str
    bibtex: str


def pinned_site_url(site_url: str | None, name: str | None) -> str | None:
    """In an edition build, the edition's root: what the build's `site_url` becomes.

    Everything derived from `site_url` (canonical links, the sitemap, copied links and citations)
    then carries the edition. Other builds keep theirs: they are not published under an edition.

    Args:
        site_url: The site's `site_url`.
        name: The edition this build publishes (`Settings.published`), if any.

    Returns:
        The `site_url` to build with.
    """
    return site_url if name is None else edition_url(site_url or "/", name)


def cited_part(src_uri: str, language: str = "en") -> tuple[str, str]:
    """The part of the site a citable page is, as a citation names it, and its word in BibTeX keys.

    Args:
        src_uri: A citable page's source path (the English page's; a translation is cited as its twin).
        language: The language the citation is in (`en`, `zh`): a Chinese page is named in Chinese.

    Returns:
        Its title (`Floor 3 · The boundary`, `第 3 层 · 边界`) and key part (`floor3`, `part0`, `compile`).

    Raises:
        InputError: If the page is not one whose sections are citable.
    """
    floor = floor_for_page(src_uri)
    if floor is not None and src_uri == floor.page:
        return floor.heading_in(language), f"floor{floor.number}"
    if src_uri == MAP_PAGE:
        return (MAP_TITLE_ZH if language == "zh" else MAP_TITLE), "part0"
    annex = annex_for_page(src_uri)
    if annex is not None:
        return annex.title_in(language), annex.slug
    raise InputError(f"{src_uri} is not a page whose sections are citable")


def section_citation(
    src_uri: str, page_url: str, anchor: str, title: str, name: str, *, edition: bool = True
) -> SectionCitation:
    """The link and the citations of one section of a citable page.

    Args:
        src_uri: The page's source path (`floors/3-boundary.md`), which names its floor.
        page_url: The page's full address (`https://…/2026.12/floors/3-boundary/`).
        anchor: The section's id.
        title: The section's heading, as plain text.
        name: The edition (`2026.12`).
        edition: Whether the build is that edition (its addresses are the edition's). A build that is not
            one links the unversioned address, so its citation names no edition: it said "edition 2026.12"
            beside an address whose text may change tomorrow. It says it is an unversioned build of that month.

    Returns:
        The section's address, plain-text citation and BibTeX entry.
    """
    language = language_of(src_uri)
    part, key_part = cited_part(english_source(src_uri), language.code)
    url = f"{page_url}#{anchor}"
    year = name[:4]
    fields = {"site": SITE_TITLE, "year": year, "title": title, "part": part, "name": name, "url": url}
    if edition:
        plain = t(
            "{site} contributors ({year}). “{title}”. {site}, {part}, edition {name}. {url}", language.code, **fields
        )
        pinned = f"edition {name}"
    else:
        plain = t(
            "{site} contributors ({year}). “{title}”. {site}, {part}, unversioned build of {name}. {url}",
            language.code,
            **fields,
        )
        pinned = f"unversioned build of {name}"
    # A translation's citation has a key of its own: a paper may cite a section in both languages.
    suffix = "" if language == DEFAULT else f"-{language.code}"
    key = f"pytorchfloors{name.replace('.', '')}-{key_part}{suffix}-{anchor}"
    langid = "" if language == DEFAULT else "  langid       = {chinese},\n"
    bibtex = (
        f"@misc{{{key},\n"
        f"  title        = {{{{{title.translate(_BIBTEX_SPECIAL)}}}}},\n"
        f"  author       = {{{{{SITE_TITLE} contributors}}}},\n"
        f"  year         = {{{year}}},\n"
        + (f"  edition      = {{{name}}},\n" if edition else "")
        + f"  howpublished = {{\\url{{{url}}}}},\n"
        f"{langid}"
        f"  note         = {{{SITE_TITLE}, {part}, section \\#{anchor.translate(_BIBTEX_SPECIAL)}; {pinned}}}\n"
        "}"
    )
    return SectionCitation(url=url, plain=plain, bibtex=bibtex)


def heading_text(body: str) -> str:
    """A heading's words, as a reader hears them: tags dropped, entities decoded, no permalink sign."""
    return unescape(TAGS.sub("", body)).replace("¶", "").strip()


def add_section_controls(
    html: str, *, src_uri: str, page_url: str, name: str, citable: bool, template: Template, edition: bool = True
) -> str:
    """Give every h2–h4 heading that has an id its one control.

    Args:
        html: A page's rendered content.
        src_uri: The page's source path.
        page_url: The page's full address (`site_url` plus the page's URL).
        name: The edition the citations name.
        citable: Whether the page's sections are citable (the control then offers citations too).
        template: The `partials/floors-cite.html` template.
        edition: Whether the build is the edition `name` (`section_citation`).

    Returns:
        The content with one control at the end of each heading.
    """
    language = language_of(src_uri).code  # the page's, from its path: the control's words are in it
    pieces, last = [], 0
    for heading in find_start_tags(html, SECTION_HEADINGS, attribute="id"):
        closing = find_end_tag(html, heading.name, start=heading.end)
        if closing is None or heading.start < last:
            continue
        ident = str(heading.attributes["id"])
        title = heading_text(html[heading.end : closing.start])
        if citable:
            cite = section_citation(src_uri, page_url, ident, title, name, edition=edition)
            url = cite.url
        else:
            cite, url = None, f"{page_url}#{ident}"
        control = template.render(url=url, title=title, cite=cite, **words_in(language)).strip()
        # The control goes after the heading's words, before its end tag.
        pieces += [html[last : closing.start], control]
        last = closing.start
    return "".join(pieces) + html[last:]


def finish_headings(
    html: str, *, src_uri: str, page_url: str, site_url: str | None, name: str, published: str | None
) -> str:
    """Give a Markdown page's headings their controls (labs keep nbconvert's own).

    Args:
        html: The page's rendered content.
        src_uri: The page's source, relative to `docs/`.
        page_url: The page's URL, relative to the site.
        site_url: The site's `site_url` (already pinned by `pinned_site_url`).
        name: The edition the build is (`2026.12`), which citations name.
        published: The edition this build publishes (`Settings.published`), if any: only then are its
            addresses the edition's.

    Returns:
        The content with the controls.
    """
    if not src_uri.endswith(".md"):
        return html
    return add_section_controls(
        html,
        src_uri=src_uri,
        page_url=f"{(site_url or '/').rstrip('/')}/{page_url}",
        name=name,
        citable=english_source(src_uri) in CITABLE_PAGES,
        template=control_template(),
        # Only an edition build's addresses are the edition's (`pinned_site_url`).
        edition=published == name,
    )


@cache
def control_template() -> Template:
    """The control's template, autoescaped (its values are headings' words and URLs)."""
    return template("floors-cite.html")
