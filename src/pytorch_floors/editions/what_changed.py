"""The site's "What changed" page: this build's citable sections compared with a previous edition's.

`docs/what-changed.md` holds a marker that this module replaces. The previous edition's manifest
comes from `FLOORS_PREVIOUS_MANIFEST` (a path to its `manifest.json`); `make publish` sets it to the
newest edition already on `gh-pages`. Without it the page says so: a first edition has nothing to
compare with, and a local build compares only when told what with.

The page compares with the manifest this very build records, so it must render after every
citable page: the plugin moves it to the end of the build's pages.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytorch_floors.editions.manifest import ManifestRecorder, build_manifest, compare, render_markdown
from pytorch_floors.errors import FloorsError
from pytorch_floors.floors import floor_for_page
from pytorch_floors.i18n.languages import DEFAULT, LANGUAGES
from pytorch_floors.i18n.messages import t
from pytorch_floors.i18n.sections import page_text, sections

__all__ = ["MARKER", "PAGE", "fill", "previous_manifest", "section_labels", "site_href", "what_changed_markdown"]

PAGE = "what-changed.md"
"""Source path of the page, relative to `docs/`."""

MARKER = "<!-- floors:what-changed -->"
"""Where the page's generated part goes."""

NO_PREVIOUS = """# What changed { #what-changed }

This build was given no earlier edition to compare with, so it lists no changes. A published
edition compares itself with the newest edition already published (`make publish` does this); the
first edition has none. To compare a local build, set `FLOORS_PREVIOUS_MANIFEST` to an earlier
edition's `manifest.json` (each edition publishes one at its root).
"""


def previous_manifest(path: str | None) -> dict[str, Any] | None:
    """The previous edition's manifest, or `None` when none is named.

    Args:
        path: The manifest `FLOORS_PREVIOUS_MANIFEST` names (read into `Settings`), if any.

    Raises:
        FloorsError: The variable names a file that cannot be read as a manifest.
    """
    if not path:
        return None
    try:
        manifest: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise FloorsError(f"FLOORS_PREVIOUS_MANIFEST={path}: {error}") from None
    return manifest


def site_href(anchor: str) -> str:
    """A section's link from the page, to its Markdown source (`floors/3-boundary.md#crossing-cost`)."""
    url, _, ident = anchor.partition("#")
    source = "index.md" if url in ("", "./") else f"{url.rstrip('/')}.md"
    return f"{source}#{ident}" if ident else source


def section_labels(anchors: Iterable[str], docs_dir: Path, language: str) -> dict[str, str]:
    """Each anchor's label ("page › section") as its page in `language` titles it, where that page has it.

    A manifest records the English page's titles; a translated page's own heading is what its reader
    knows the section by. An anchor whose translated page, or heading, is missing is left out.

    Args:
        anchors: Manifest anchors (`floors/3-boundary/#crossing-cost`).
        docs_dir: The site's pages (`docs/`).
        language: The page's language (`en`, `zh`).

    Returns:
        Anchor → label, for the anchors found in the translated pages.
    """
    folder = next((lang.prefix for lang in LANGUAGES if lang.code == language), DEFAULT.prefix)
    if not folder:
        return {}
    labels: dict[str, str] = {}
    for anchor in anchors:
        source, _, ident = site_href(anchor).partition("#")
        for src_uri in (source, source.removesuffix(".md") + ".py"):
            path = docs_dir / folder / src_uri
            if not path.is_file():
                continue
            found = sections(page_text(src_uri, path.read_text(encoding="utf-8")))
            titles = {section.anchor: section.title for section in found if section.title}
            floor = floor_for_page(src_uri)
            top = next((section.title for section in found if section.level == 1 and section.title), "")
            page = floor.title_in(language) if floor is not None and floor.page == src_uri else top
            if ident in titles and page:
                labels[anchor] = f"{page} › {titles[ident]}"
            break
    return labels


def what_changed_markdown(
    previous: dict[str, Any] | None, current: dict[str, Any], language: str, docs_dir: Path | None = None
) -> str:
    """The page's Markdown, in the page's language: the comparison, or the note that there is nothing to compare with.

    Args:
        previous: The earlier edition's manifest, if any.
        current: This build's manifest.
        language: The page's language.
        docs_dir: The site's pages: a translated page names each section by its own page's heading
            (`section_labels`); without it, by the manifest's English titles.

    Raises:
        ValueError: A manifest of another format.
    """
    if previous is None:
        return t(NO_PREVIOUS, language)
    changes = compare(previous, current)
    if docs_dir is not None:
        changes = dataclasses.replace(
            changes, titles={**changes.titles, **section_labels(changes.titles, docs_dir, language)}
        )
    return render_markdown(changes, href=site_href, language=language)


def fill(
    markdown: str,
    src_uri: str,
    recorder: ManifestRecorder,
    edition: str,
    *,
    previous: str | None,
    language: str,
    docs_dir: Path | None = None,
) -> str:
    """The hook's entry point: on the page, replace the marker with the comparison, in the page's language.

    `previous` is the earlier edition's manifest to compare with (`Settings.previous_manifest`), if any;
    `docs_dir`, the site's pages, where a translated page's section titles are read (`section_labels`).

    Raises:
        FloorsError: An unreadable previous manifest or one of another format.
    """
    if src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise FloorsError(f"docs/{PAGE}: the page must hold {MARKER}")
    try:
        current = build_manifest(edition, recorder.pages, recorder.lock, recorder.aliases)
        page = what_changed_markdown(previous_manifest(previous), current, language, docs_dir)
    except ValueError as error:
        raise FloorsError(f"docs/{PAGE}: {error}") from None
    return markdown.replace(MARKER, page)
