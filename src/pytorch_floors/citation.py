"""How to cite the site: editions and generated BibTeX entries, one per floor, from the registry."""

from __future__ import annotations

import os
from datetime import date
from html import escape

from pytorch_floors.floors import FLOORS, Floor

__all__ = ["bibtex", "cite_page_html", "edition"]

SITE_TITLE = "PyTorch Floors"


def edition(today: date | None = None) -> str:
    """The edition being built: `FLOORS_EDITION` when set (publishing), else the build's year and month.

    Args:
        today: The date to use instead of today's (for tests).

    Returns:
        An edition name such as `2026.12`.
    """
    return os.environ.get("FLOORS_EDITION") or (today or date.today()).strftime("%Y.%m")


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
    root = edition_url(site_url, name)
    if floor is None:
        key, title, url = f"pytorchfloors{name.replace('.', '')}", SITE_TITLE, root
    else:
        key = f"pytorchfloors{name.replace('.', '')}floor{floor.number}"
        title = f"{SITE_TITLE}, {floor.heading}"
        url = f"{root}{floor.page.removesuffix('.md')}/"
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
    """The generated part of the "Cite this" page: one BibTeX block for the site and one per floor.

    Args:
        site_url: The site's root URL.
        name: The edition.
        year: The edition's year.

    Returns:
        HTML.
    """
    parts = [
        f'<h3 id="bibtex-site">The whole site</h3><pre><code class="language-bibtex">'
        f"{escape(bibtex(None, site_url, name, year))}</code></pre>"
    ]
    for floor in FLOORS:
        parts.append(
            f'<h3 id="bibtex-floor-{floor.number}">{escape(floor.heading)}</h3>'
            f'<pre><code class="language-bibtex">{escape(bibtex(floor, site_url, name, year))}</code></pre>'
        )
    return "".join(parts)
