"""What the floor registry gives the site: the navigation, the pages' reading order, titles, descriptions, gauge.

`floors.FLOORS` is the one list of floors; nothing else lists them. This part also gives every page
the site's own chrome: the search scope and the squeezed header.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from markdown.extensions.toc import slugify
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from pytorch_floors.editions.what_changed import PAGE as WHAT_CHANGED_PAGE
from pytorch_floors.errors import InputError
from pytorch_floors.i18n.languages import DEFAULT
from pytorch_floors.i18n.messages import t
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.pages import fill_nav
from pytorch_floors.plugin.parts.urls import url_from
from pytorch_floors.render.chrome import squeeze_chrome
from pytorch_floors.render.gauge import page_gauges, render_gauge
from pytorch_floors.render.listings import listing_language
from pytorch_floors.render.search_scope import narrow_search

__all__ = ["Registry"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


class Registry:
    """The registry's pages: the floor and lab sections of the navigation, their titles and descriptions."""

    def __init__(self, config: MkDocsConfig) -> None:
        """Fill the navigation's floor and lab sections from the registry."""
        fill_nav(config.nav or [], Path(config.docs_dir))
        listing_language(config.mdx_configs)

    def on_nav(self, nav: Navigation, files: Files) -> None:
        """Render the pages in reading order.

        MkDocs renders pages, and so runs their proofs, in the order of its files: folders after
        files, alphabetically, so the compile page (`compile.md`) came before every floor, and a
        serve session's background build made each floor wait behind its compile-heavy proofs.
        The navigation's order is the reader's; pages outside it follow, and "What changed" stays last.
        """
        ordered = [page.file for page in nav.pages]
        what_changed = files.get_file_from_path(WHAT_CHANGED_PAGE)
        last = [what_changed] if what_changed is not None else []
        rest = [file for file in files.documentation_pages() if file not in ordered and file not in last]
        for moved in [*ordered, *rest, *last]:
            if files.get_file_from_path(moved.src_uri) is moved:
                files.remove(moved)
                files.append(moved)

    def on_page_markdown(self, markdown: str, page: Page, facts: PageFacts, config: MkDocsConfig) -> str:
        """Give floor pages their title and description from the registry, and labs their description.

        Raises:
            FloorsError: If a floor page has its own `# ` title.
        """
        language, floor = facts.language, facts.floor
        if facts.kind == "floor" and floor is not None:
            if markdown.lstrip().startswith("# "):
                raise InputError(
                    f"docs/{floor.page}: floor pages take their title from the registry; remove the '# ' heading"
                )
            page.meta.setdefault("description", floor.summary_in(language.code))
            # A floor outranks its lab (which repeats the floor's words in code) for the floor's own subject.
            page.meta.setdefault("search", {"boost": 4})
            # The English heading's slug is the title's anchor in every language (a Chinese title's slug is not).
            anchor = slugify(floor.heading, "-")
            markdown = f"# {floor.heading_in(language.code)} {{ #{anchor} }}\n\n{markdown}"
            if (Path(config.docs_dir) / language.prefix / floor.lab).is_file():
                # "Check yourself" closes every floor page; its lab follows it there.
                lead = t("Lab {number}.", language.code, number=floor.number)
                practise = t("Practise this floor on your own machine", language.code) + (
                    "：" if language.code == "zh" else ": "
                )
                rest = t(
                    "run, change and measure, with self-checks. Download it as a notebook from the lab's page.",
                    language.code,
                )
                markdown += f"\n\n**{lead}** {practise}[{floor.lab_title_in(language.code)}](../{floor.lab}) — {rest}\n"
        if facts.lab is not None and floor is not None:
            page.meta.setdefault(
                "description",
                t(
                    "Lab {number}, {title}: exercises that measure what the floor explains.",
                    language.code,
                    number=floor.number,
                    title=floor.title_in(language.code),
                ),
            )
        elif facts.lab is not None:
            title = facts.lab.title_in(language.code)
            described = t("{title}: exercises that measure what the annex explains.", language.code, title=title)
            page.meta.setdefault("description", described)
        if not page.meta.get("description"):
            log.warning("docs/%s has no description: add 'description:' to its front matter", page.file.src_uri)
        return markdown

    def on_page_content(self, html: str) -> str:
        """Search finds a page's prose, not its proofs' outputs (`render.search_scope`)."""
        return narrow_search(html)

    def on_page_context(self, context: dict[str, Any], page: Page, files: Files) -> None:
        """The page's gauge, for the `floors-header` partial."""
        context.update(page_gauges(page.file.src_uri, url_from(files, page)))

    def on_template_context(
        self, context: dict[str, Any], template_name: str, config: MkDocsConfig, files: Files
    ) -> dict[str, Any]:
        """Give the 404 page the whole building's gauge, with links that work from any missing URL."""
        if template_name == "404.html":
            context["floors_language"] = DEFAULT.code
            root = urlsplit(config.site_url or "/").path.rstrip("/")

            def absolute(src: str) -> str:
                file = files.get_file_from_path(src)
                return f"{root}/{file.url if file else src}"

            context["floors_building"] = render_gauge(None, lambda f: absolute(f.page), language=DEFAULT.code)
            context["floors_provenance"] = None
        return context

    def on_post_page(self, output: str) -> str:
        """The site's header, squeezed (`render.chrome`)."""
        return squeeze_chrome(output)
