"""The translations: their pages in the navigation, how each stands against its English page, and the report.

Both languages are pages of one build (`i18n`): a translated page shows its English page's blocks,
the English sections it is behind on, a note on each stale one, and links to the English pages
that have no twin.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markdown.extensions.toc import slugify
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from pytorch_floors.execution.engine import Engine
from pytorch_floors.i18n.catch_up import CaughtUp, catch_up
from pytorch_floors.i18n.glossary import glossary
from pytorch_floors.i18n.languages import DEFAULT, LANGUAGES
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.i18n.search import teach_segmenter_behind
from pytorch_floors.i18n.sections import join_chinese_lines, page_text, sections
from pytorch_floors.i18n.translation import LOCK_FILE, Staleness, staleness
from pytorch_floors.i18n.translation import read_lock as read_translation_lock
from pytorch_floors.page_facts import PageFacts
from pytorch_floors.plugin.languages import (
    LANGUAGE_SECTION,
    STALE_MARKER,
    lab_behind_note,
    link_english_reference,
    link_languages,
    nav_items,
    split_search_index,
    stale_markdown,
    stale_notes,
    title_anchor,
    translated_nav,
    untranslated_links,
)
from pytorch_floors.plugin.pages import fill_markers
from pytorch_floors.plugin.parts.urls import url_from
from pytorch_floors.plugin.serve.changes import Memo
from pytorch_floors.render.templates import page_t as floors_t
from pytorch_floors.render.templates import render as render_in

__all__ = ["Translations"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def _english_text(english: str, path: Path, sources: Mapping[str, str]) -> tuple[str, list[Path]]:
    """An English page's text as its sections are read (a lab's cells as Markdown), and the file it is read from."""
    text = sources.get(english)
    return page_text(english, text if text is not None else path.read_text(encoding="utf-8")), [path]


class Translations:
    """One build's translations: the languages' navigation, each translated page's standing, the report."""

    def __init__(self, config: MkDocsConfig, project_dir: Path) -> None:
        """Put each translation's pages in the navigation; read what the translations recorded (`i18n`).

        Raises:
            FloorsError: If `translations.lock` cannot be read.
        """
        for language in LANGUAGES[1:]:
            translated = translated_nav(config.nav or [], Path(config.docs_dir), language)
            if translated and config.nav is not None:
                config.nav.append({LANGUAGE_SECTION: translated})
        # In a thread, while the build asks torch's facts (`SiteBuild`): waited for in `on_env`, before any page's
        # words are cut for search.
        self.segmenter_taught = teach_segmenter_behind(term.zh for term in glossary())
        self.staleness: dict[str, Staleness] = {}
        self.caught_up: dict[str, CaughtUp] = {}
        self.untranslated_claims: dict[str, list[str]] = {}
        # Each page's language, named as it starts: the fence renders its blocks, claims included, in it.
        self.page_languages: dict[str, PageLanguage] = {}
        self.translations = read_translation_lock(project_dir / LOCK_FILE)
        self.nav: Navigation | None = None

    def on_files(
        self,
        files: Files,
        docs_dir: Path,
        facts: dict[str, PageFacts],
        sources: dict[str, str],
        memo: Memo | None = None,
    ) -> None:
        """How each translated page (Markdown and labs) stands against its English page (before any page renders).

        A serve session's `memo` keeps an English lab's cells while its file is unchanged: jupytext read every lab
        again for every build.
        """
        memo = memo if memo is not None else Memo()
        for file in files.documentation_pages():
            english = facts[file.src_uri].source
            path = docs_dir / english
            if english == file.src_uri or not path.is_file():
                continue
            source = memo.get(("english text", path), functools.partial(_english_text, english, path, sources))
            recorded = self.translations.get(file.src_uri, {})
            state = staleness(sections(source), recorded)
            if not file.src_uri.endswith(".py"):
                # Where the translation is behind, its page shows the English sections (`i18n.catch_up`).
                behind = catch_up(source, sources[file.src_uri], recorded, lambda _: "")
                self.caught_up[file.src_uri] = behind
            self.staleness[file.src_uri] = state

    def on_nav(self, nav: Navigation) -> None:
        """Link each page to its twins; keep the navigation for each language's menu."""
        link_languages(nav)
        for language in LANGUAGES[1:]:
            link_english_reference(nav, language)
        self.nav = nav

    def on_env(self, env: Environment) -> None:
        """The theme's partials write the site's own words in the page's language, which the page's context names."""
        env.globals["floors_t"] = floors_t
        self.segmenter_taught()

    def on_page_markdown(self, markdown: str, page: Page, facts: PageFacts, files: Files) -> str:
        """Set the page's language first; a translated page shows the English sections it is behind on."""
        claims = page.meta.get("claims") if facts.translated else None
        words = PageLanguage(facts.language.code, claims if isinstance(claims, dict) else {})
        self.page_languages[page.file.src_uri] = words  # the fence renders the page's blocks in it
        self.untranslated_claims[page.file.src_uri] = words.untranslated
        if facts.translated:
            markdown = self._translated_page(join_chinese_lines(markdown), page, facts, files)
        return markdown

    def finish_markdown(self, markdown: str, page: Page, facts: PageFacts, files: Files) -> str:
        """Last: list the stale translations where the page asks; point links without a twin at the English page."""
        markdown = fill_markers(
            markdown,
            {STALE_MARKER: lambda: stale_markdown(self.staleness, page.file.src_uri, files, facts.language.code)},
        )
        if facts.language != DEFAULT:
            markdown = untranslated_links(
                markdown,
                page.file.src_uri,
                lambda src: files.get_file_from_path(src) is not None,
                facts.language.code,
            )
        return markdown

    def _translated_page(self, markdown: str, page: Page, facts: PageFacts, files: Files) -> str:
        """A translated page's Markdown: its links to pages without a twin made English, its stale sections noted."""
        english_file = files.get_file_from_path(facts.source)
        state = self.staleness.get(page.file.src_uri)
        if english_file is None or state is None:
            return markdown
        href = get_relative_url(english_file.url, page.url)
        language = facts.language.code

        def render(link: str, _anchor: str) -> str:
            return render_in("stale_translation.html", language, href=link)

        if page.file.src_uri.endswith(".py"):
            return markdown
        english = Path(english_file.abs_src_path or "").read_text(encoding="utf-8")
        untranslated = render_in("untranslated_section.html", language)
        recorded = self.translations.get(page.file.src_uri, {})
        caught = catch_up(english, markdown, recorded, lambda _anchor: untranslated)
        # A section shown in English has its own note; the others the translation is behind on are marked stale.
        older = Staleness(tuple(a for a in state.stale if a not in caught.in_english), state.untranslated)
        return stale_notes(caught.markdown, older, href, render)

    def on_page_content(self, html: str, page: Page, facts: PageFacts, files: Files) -> str:
        """A translated lab runs its own cells (it is not caught up): a note at its top says what it is behind on."""
        english_lab = files.get_file_from_path(facts.source) if facts.translated and facts.kind == "lab" else None
        if english_lab is None or not english_lab.abs_src_path:
            return html
        recorded, href = self.translations.get(page.file.src_uri, {}), get_relative_url(english_lab.url, page.url)
        english = Path(english_lab.abs_src_path).read_text(encoding="utf-8")
        return lab_behind_note(english, recorded, href, facts.language.code) + html

    def on_page_context(self, context: dict[str, Any], page: Page, facts: PageFacts, files: Files) -> None:
        """The page's language, its menu in that language, and its twins in the others (the language switch)."""
        language = facts.language
        url_of = url_from(files, page)
        context["floors_language"] = language.code
        if self.nav is not None:
            context["floors_nav_items"] = nav_items(self.nav, language)
        context["floors_alternates"] = [
            {"code": other.code, "name": other.name, "href": url_of(facts.twin(other))}
            for other in LANGUAGES
            if other != language and files.get_file_from_path(facts.twin(other)) is not None
        ]

    def on_post_page(self, output: str, facts: PageFacts) -> str:
        """A translated lab's title keeps its English anchor (a Chinese title's slug is not one)."""
        if facts.translated and facts.lab is not None:
            output = title_anchor(output, slugify(facts.lab.lab_title_in(DEFAULT.code), "-"))
        return output

    def on_post_build(self, site_dir: Path, engine: Engine) -> None:
        """`translations.json`: each translated page's stale and untranslated sections, claims and twin blocks."""
        pages: dict[str, dict[str, Any]] = {}
        for page, state in sorted(self.staleness.items()):
            pages[page] = {
                "stale": list(state.stale),
                "untranslated": list(state.untranslated),
                "shown_in_english": list(self.caught_up[page].in_english) if page in self.caught_up else [],
                "left_out": list(self.caught_up[page].dropped) if page in self.caught_up else [],
                "claims_untranslated": self.untranslated_claims.get(page, []),
                "blocks_shown_from_english": len(engine.twin_shown.get(page, [])),
            }
        stale = sum(len(state.stale) for state in self.staleness.values())
        if stale:
            log.info("translations: %d stale sections (listed on the build report and What changed)", stale)
        behind = sum(len(caught.in_english) for caught in self.caught_up.values())
        if behind:
            log.info("translations: %d sections not translated yet, shown in English on their translated pages", behind)
        Path(site_dir, "translations.json").write_text(
            json.dumps(pages, ensure_ascii=False, indent=1), encoding="utf-8"
        )

    def split_search(self, site_dir: Path, memo: Memo | None = None) -> None:
        """One search index per language (after a serve session has merged a partial build's; `memo`: its)."""
        counts = split_search_index(site_dir, memo)
        if counts:
            log.info("search: %s", ", ".join(f"{n} sections in {code}" for code, n in counts.items()))
