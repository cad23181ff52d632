"""The root `404.html` of the published site: where an address without a file belongs.

mike publishes one folder per edition (`2026.12/…`) and the alias `latest`, and each
edition's own `404.html` sits inside its folder, where GitHub Pages never looks. GitHub
Pages answers every miss with the branch's root `404.html` (status 404), so that one
page routes a cited address: an unversioned one to the same path under `latest`
(keeping `#anchor` and `?query`), one under a removed page through the redirect maps,
one under an edition that was never published to `latest` with a note, anything else to
the site's own 404 text and the gauge. It is rendered from `overrides/publish/root-404.html`
with everything it needs embedded, so it works from any static host, without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from pytorch_floors.editions.anchors import page_url
from pytorch_floors.errors import InputError
from pytorch_floors.floors import MAP_PAGE
from pytorch_floors.render.gauge import render_gauge
from pytorch_floors.render.templates import template

__all__ = ["EDITION_PATTERN", "NOTE_KEY", "Layout", "layout_from", "redirect_urls", "render_root_404"]

EDITION_PATTERN = r"^[0-9]{4}\.(0[1-9]|1[0-2])$"
"""An edition's name, `YYYY.MM`: a first path segment of this form names an edition, published or not."""

NOTE_KEY = "floors-edition-note"
"""The `sessionStorage` key under which the 404 leaves its note for `javascripts/edition-note.js`."""

TEMPLATE = "publish/root-404.html"


@dataclass(frozen=True)
class Layout:
    """What the root 404 knows about the published site.

    Attributes:
        site_name: The site's name, for the page title.
        base: The path of `site_url` (`/`, or `/repo/` for a project site), ending in `/`.
        latest: The alias every unversioned address goes to (`latest`).
        latest_version: The edition `latest` points at.
        versions: The published editions, newest first.
        aliases: Every alias of a published edition (`latest` among them).
        redirects: Old page URLs mapped to new ones, relative to an edition's root (or absolute).
    """

    site_name: str
    base: str
    latest: str
    latest_version: str
    versions: tuple[str, ...]
    aliases: tuple[str, ...]
    redirects: Mapping[str, str]


def _url(path: str, entry: str) -> str:
    if "://" in path:
        return path
    page, hash_, fragment = path.partition("#")
    if not page.endswith(".md"):
        raise InputError(f"redirect_maps entry {entry}: expected a Markdown page or an absolute URL, got {path!r}")
    url = page_url(page)
    return ("" if url == "./" else url) + hash_ + fragment


def redirect_urls(redirect_maps: Mapping[str, str]) -> dict[str, str]:
    """Turn mkdocs-redirects' `redirect_maps` (source paths) into the URLs a reader follows.

    Args:
        redirect_maps: Old page source paths mapped to new ones (`floors/index.md: index.md`).

    Returns:
        Old page URLs mapped to new page URLs (`{"floors/": ""}`), relative to an edition's root.

    Raises:
        InputError: On an entry that is neither a Markdown page nor an absolute URL.
    """
    return {_url(old, f"{old}: {new}"): _url(new, f"{old}: {new}") for old, new in redirect_maps.items()}


def layout_from(
    *,
    site_name: str,
    site_url: str,
    latest: str,
    versions_json: Sequence[Mapping[str, Any]],
    redirects: Mapping[str, str],
) -> Layout:
    """Describe the published site from its config and mike's `versions.json`.

    Args:
        site_name: `site_name` of `mkdocs.yml`.
        site_url: `site_url` of `mkdocs.yml`.
        latest: The alias unversioned addresses go to.
        versions_json: mike's `versions.json`, parsed.
        redirects: Page URLs from `redirect_urls`.

    Returns:
        The layout.

    Raises:
        InputError: If no published edition carries the alias `latest`.
    """
    versions = tuple(str(entry["version"]) for entry in versions_json)
    aliases = tuple(str(alias) for entry in versions_json for alias in entry["aliases"])
    carrying = [str(entry["version"]) for entry in versions_json if latest in entry["aliases"]]
    if len(carrying) != 1:
        raise InputError(f"versions.json: expected exactly one edition with the alias {latest!r}, found {carrying}")
    base = urlsplit(site_url).path.rstrip("/") + "/"
    return Layout(site_name, base, latest, carrying[0], versions, aliases, dict(redirects))


def render_root_404(layout: Layout, overrides: Path) -> str:
    """Render the root `404.html` for a layout.

    Args:
        layout: The published site.
        overrides: The theme's `overrides/` folder (holds the template and the site's 404 text).

    Returns:
        The page's HTML.
    """
    latest_root = f"{layout.base}{layout.latest}/"

    def href(src: str) -> str:
        url = page_url(src)
        return latest_root if url == "./" else f"{latest_root}{url}"

    embedded = {
        "base": layout.base,
        "latest": layout.latest,
        "latest_version": layout.latest_version,
        "editions": [*layout.versions, *layout.aliases],
        "redirects": dict(layout.redirects),
        "edition_pattern": EDITION_PATTERN,
        "note_key": NOTE_KEY,
    }
    return template(TEMPLATE, overrides).render(
        site_name=layout.site_name,
        latest_root=latest_root,
        latest_version=layout.latest_version,
        versions=layout.versions,
        gauge=Markup(render_gauge(None, lambda floor: href(floor.page), map_href=href(MAP_PAGE), language="en")),
        layout=embedded,
    )
