"""How to cite the site: editions and generated BibTeX entries, one per floor, from the registry."""

from __future__ import annotations

from datetime import date

from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.render.templates import template

__all__ = ["bibtex", "cite_page_html", "edition"]

SITE_TITLE = "PyTorch Floors"


def edition(published: str | None, today: date | None = None) -> str:
    """The edition being built: the published one when there is one, else the build's year and month.

    Args:
        published: The edition this build publishes (`FLOORS_EDITION`, read into `Settings`), if any.
        today: The date to use instead of today's (for tests).

    Returns:
        An edition name such as `2026.12`.
    """
    return published if published else (today or date.today()).strftime("%Y.%m")


def edition_url(site_url: str, name: str) -> str:
    """The root URL of a frozen edition, as published with mike (one folder per edition).

    Args:
        site_url: The site's root URL. A build started by mike already ends in the edition
            (mike's plugin sets `site_url` to the edition's root); it is not added twice.
        name: The edition.

    Returns:
        The edition's root URL.
    """
    root = site_url.rstrip("/")
    return f"{root}/" if root.endswith(f"/{name}") else f"{root}/{name}/"


def _cited(floor: Floor | None, site_url: str, name: str) -> tuple[str, str, str]:
    """The BibTeX key, title and address of the whole site (`floor=None`) or one floor."""
    root = edition_url(site_url, name)
    if floor is None:
        return f"pytorchfloors{name.replace('.', '')}", SITE_TITLE, root
    key = f"pytorchfloors{name.replace('.', '')}floor{floor.number}"
    return key, f"{SITE_TITLE}, {floor.heading}", f"{root}{floor.page.removesuffix('.md')}/"


def bibtex(floor: Floor | None, site_url: str, name: str, year: int) -> str:
    """A BibTeX `@misc` entry for the whole site (`floor=None`) or one floor, pinned to an edition.

    Args:
        floor: The floor to cite, or `None` for the whole site.
        site_url: The site's root URL.
        name: The edition.
        year: The edition's year.

    Returns:
        The entry.
    """
    key, title, url = _cited(floor, site_url, name)
    return (
        f"@misc{{{key},\n"
        f"  title        = {{{{{title}}}}},\n"
        f"  author       = {{{{{SITE_TITLE} contributors}}}},\n"
        f"  year         = {{{year}}},\n"
        f"  edition      = {{{name}}},\n"
        f"  howpublished = {{\\url{{{url}}}}},\n"
        f"  note         = {{Edition {name}; every figure printed by the page's proof scripts}}\n"
        "}"
    )


def cite_page_html(site_url: str, name: str, year: int) -> str:
    """The generated part of the "Cite this" page: what can be cited, then every BibTeX entry.

    A table names the whole site and each floor (from the registry) with its BibTeX key, linked to
    its address in the edition; each row keeps the anchor its entry had (`bibtex-site`,
    `bibtex-floor-N`). Below it one block holds all nine entries, to paste into a `.bib` file whole.

    Args:
        site_url: The site's root URL.
        name: The edition.
        year: The edition's year.

    Returns:
        HTML, rendered from `templates/cite_entries.html`.
    """
    cited = [("bibtex-site", None), *((f"bibtex-floor-{floor.number}", floor) for floor in FLOORS)]
    rows = [
        (anchor, floor.heading if floor else "The whole site", *_cited(floor, site_url, name)[::2])
        for anchor, floor in cited
    ]
    entries = "\n\n".join(bibtex(floor, site_url, name, year) for _, floor in cited)
    return template("cite_entries.html").render(rows=rows, entries=entries)
