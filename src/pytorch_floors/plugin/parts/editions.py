"""The edition: its name and pinned address, citable anchors, the manifest, What changed and the handouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from pytorch_floors.editions.anchors import CITABLE_PAGES, apply_aliases, page_url, read_aliases, read_lock
from pytorch_floors.editions.handouts import cite_links_html, handout_context
from pytorch_floors.editions.manifest import ManifestRecorder
from pytorch_floors.editions.what_changed import PAGE as WHAT_CHANGED_PAGE
from pytorch_floors.editions.what_changed import fill
from pytorch_floors.errors import InputError
from pytorch_floors.i18n.messages import t
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.pages import BIBTEX_MARKER, EDITION_MARKER, HANDOUTS_MARKER, NO_HANDOUTS, fill_markers
from pytorch_floors.render.citation import cite_page_html
from pytorch_floors.render.headings import finish_headings, pinned_site_url

__all__ = ["Editions"]


class Editions:
    """One build's edition: the pages' citable sections, recorded for the manifest, and what cites them."""

    def __init__(self, config: MkDocsConfig, settings: Settings, project_dir: Path) -> None:
        """Pin a published edition's address; read the anchors' lock and aliases.

        Raises:
            FloorsError: If `anchors.aliases` cannot be read.
        """
        self.settings = settings
        name = settings.published
        config.site_url = pinned_site_url(config.site_url, name)
        if name is not None:
            config.extra["floors_edition"] = name
        self.aliases = read_aliases(project_dir / "anchors.aliases")
        self.manifest = ManifestRecorder(read_lock(project_dir / "anchors.lock"), self.aliases)

    def on_files(self, files: Files) -> None:
        """The What changed page renders last: it compares with every citable page this build records."""
        what_changed = files.get_file_from_path(WHAT_CHANGED_PAGE)
        if what_changed is not None:
            files.remove(what_changed)
            files.append(what_changed)

    def on_page_markdown(self, markdown: str, page: Page, facts: PageFacts, config: MkDocsConfig) -> str:
        """The edition's name, its BibTeX entry, What changed and the handouts' links, where the page asks."""
        name = self.settings.edition
        markdown = fill_markers(
            markdown,
            {
                EDITION_MARKER: lambda: name,
                BIBTEX_MARKER: lambda: cite_page_html(config.site_url or "/", name, int(name[:4])),
            },
        )
        markdown = fill(
            markdown,
            facts.source,
            self.manifest,
            self.settings.edition,
            previous=self.settings.previous_manifest,
            language=facts.language.code,
            docs_dir=Path(config.docs_dir),
        )
        return fill_markers(
            markdown,
            {
                HANDOUTS_MARKER: lambda: (
                    cite_links_html(page.url, facts.language)
                    if self.settings.handouts
                    else t(NO_HANDOUTS, facts.language.code)
                )
            },
        )

    def on_page_content(self, html: str, page: Page, facts: PageFacts, config: MkDocsConfig) -> str:
        """Record an English citable page for the manifest; apply its anchors' aliases; cite each heading.

        Raises:
            FloorsError: If the page's anchor aliases do not apply.
        """
        english = facts.source
        if english in CITABLE_PAGES:
            if english == page.file.src_uri:
                self.manifest.record(page.file.src_uri, html)  # editions compare the English text
            try:
                # An anchor kept as an alias lands on the same section in every language.
                html = apply_aliases(html, self.aliases.get(page_url(english), {}))
            except ValueError as error:
                raise InputError(f"docs/{page.file.src_uri}: {error}") from None
        return finish_headings(
            html,
            src_uri=page.file.src_uri,
            page_url=page.url,
            site_url=config.site_url,
            name=self.settings.edition,
            published=self.settings.published,
        )

    def on_page_context(self, context: dict[str, Any], page: Page) -> None:
        """The page's handout, for the header's links."""
        context["floors_handout"] = handout_context(page.file.src_uri, page.url)
        context["floors_handout_links"] = self.settings.handouts

    def on_post_build(self, site_dir: Path) -> None:
        """Write the edition's manifest, and `versions.json` outside a mike deployment.

        Raises:
            FloorsError: If the manifest cannot be written.
        """
        self.manifest.write(site_dir, self.settings.edition)

    def write_versions(self, site_dir: Path) -> None:
        """Material's version selector asks for ../versions.json; outside a mike deployment there is one edition."""
        versions = Path(site_dir, "versions.json")
        if not versions.exists():
            name = self.settings.edition
            versions.write_text(json.dumps([{"version": name, "title": name, "aliases": []}]), encoding="utf-8")
