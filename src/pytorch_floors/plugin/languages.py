"""The plugin's side of the Chinese edition: its navigation, its pages' notes and links, its search index.

Each language's pages are in one build (`i18n`): one engine run, one cache, one report. The Chinese pages
sit in the navigation as one section the theme's `nav.html` shows alone on a Chinese page (and hides on an
English one); each language's pages link to their own language's next and previous page; Material's search
index is split into one per language after it is written.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mkdocs.structure.files import Files
from mkdocs.structure.nav import Link, Navigation, Section

from pytorch_floors.floors import ANNEXES, FLOORS, MAP_TITLE, MAP_TITLE_ZH, lab_for_page
from pytorch_floors.i18n.languages import DEFAULT, LANGUAGES, Language, english_source, language_of
from pytorch_floors.i18n.messages import ZH, t
from pytorch_floors.i18n.sections import TOP, heading_anchor, lab_markdown, page_text, sections
from pytorch_floors.i18n.translation import Staleness, behind
from pytorch_floors.plugin.serve.changes import Memo
from pytorch_floors.render.search_scope import KEYS_BOOST, KEYS_FIELD, land_on_headings, weigh_entries, written_headings
from pytorch_floors.render.splice import find_start_tag
from pytorch_floors.render.templates import render

__all__ = [
    "CHINESE_SEPARATOR",
    "LANGUAGE_SECTION",
    "STALE_MARKER",
    "lab_behind_note",
    "link_english_reference",
    "link_languages",
    "nav_items",
    "split_search_index",
    "stale_markdown",
    "stale_notes",
    "title_anchor",
    "translated_nav",
    "untranslated_links",
]

LANGUAGE_SECTION = "中文"
"""The navigation section holding the Chinese pages (the theme shows it alone on a Chinese page)."""

CHINESE_SEPARATOR = r"[\s\u200b\u3000\-、。，．？！；：（）“”]+"
"""Where the Chinese index splits words: Material's segmenter marks jieba's words with zero-width spaces."""

_TITLES = {MAP_TITLE: MAP_TITLE_ZH, **{annex.title: annex.title_zh for annex in ANNEXES}}

STALE_MARKER = "<!-- floors:stale-translations -->"
"""Where What changed and the build report list the translated sections that are behind the English."""


def _title_zh(title: str, path: str) -> str:
    for floor in FLOORS:
        if path == floor.page:
            return f"{floor.number} · {floor.title_zh}"
    lab = lab_for_page(path)
    if lab is not None:
        return lab.lab_title_in("zh")
    return _TITLES.get(title) or ZH.get(title, title)


def translated_nav(nav: Sequence[Any], docs_dir: Path, language: Language) -> list[Any]:
    """The navigation of a language's pages: the English navigation's entries that have a twin, titles translated.

    Args:
        nav: The English navigation (`mkdocs.yml`'s, its floors and labs filled).
        docs_dir: The `docs/` folder.
        language: The language.

    Returns:
        The language's navigation, as `mkdocs.yml` would write it.
    """
    found: list[Any] = []
    for entry in nav:
        if isinstance(entry, str):
            if (docs_dir / language.prefix / entry).is_file():
                found.append(language.prefix + entry)
            continue
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if isinstance(value, str) and (docs_dir / language.prefix / value).is_file():
                found.append({_title_zh(title, value): language.prefix + value})
            elif isinstance(value, list):
                inner = translated_nav(value, docs_dir, language)
                if inner:
                    found.append({_title_zh(title, ""): inner})
    return found


REFERENCE_PAGE = "reference/index.md"
"""The API reference's first page. Written from the package's English docstrings, the reference has no twin."""


def link_english_reference(nav: Navigation, language: Language) -> None:
    """Give a language's navigation an entry for the API reference, which leads to English and says so.

    `translated_nav` keeps only the pages with a twin, so a Chinese reader's menu had no way to it. The
    entry is a link (not the page itself, whose place in the menu stays the English one's), added
    after MkDocs checked the navigation's links.
    """
    reference = next((page for page in nav.pages if page.file.src_uri == REFERENCE_PAGE), None)
    section = next((item for item in nav.items if isinstance(item, Section) and item.title == LANGUAGE_SECTION), None)
    if language == DEFAULT or reference is None or section is None:
        return
    link = Link(t("API reference (in English)", language.code), reference.url)
    link.parent = section
    section.children.append(link)


def nav_items(nav: Navigation, language: Language) -> list[Any]:
    """The top of the navigation a page in `language` shows: its language's section's items, or all but it."""
    if language == DEFAULT:
        return [item for item in nav.items if not (isinstance(item, Section) and item.title == LANGUAGE_SECTION)]
    for item in nav.items:
        if isinstance(item, Section) and item.title == LANGUAGE_SECTION:
            return list(item.children)
    return list(nav.items)


def link_languages(nav: Navigation) -> None:
    """Link each page's previous and next page within its own language (Material's footer follows them)."""
    for language in LANGUAGES:
        pages = [page for page in nav.pages if language_of(page.file.src_uri) == language]
        for before, after in zip([None, *pages], [*pages, None], strict=False):
            if before is not None:
                before.next_page = after
            if after is not None:
                after.previous_page = before


_LINK = re.compile(r"(\]\()([^)\s#]+\.(?:md|py))((?:#[^)\s]*)?\))")


def untranslated_links(markdown: str, src_uri: str, exists: Callable[[str], bool], language: str) -> str:
    """A translated page's links to pages that have no twin, pointed at the English page instead, and marked so.

    A translation keeps its links' targets (`i18n.check`): they resolve to the twins beside it, except
    where no twin exists (the API reference, written from the package's English docstrings). Such a link
    says, in the page's language, that it leads to English: `hreflang="en"` (attr_list) and a visible
    "(in English)" after it.

    Args:
        markdown: The translated page's Markdown.
        src_uri: Its source path, relative to `docs/`.
        exists: Whether a page's source path is part of the build.
        language: The page's language (the mark's words).
    """
    folder = posixpath.dirname(src_uri)
    mark = t("(in English)", language)

    def point(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith("/"):
            return match.group(0)
        resolved = posixpath.normpath(posixpath.join(folder, target))
        if exists(resolved):
            return match.group(0)
        english = english_source(resolved)
        if english == resolved or not exists(english):
            return match.group(0)
        relative = posixpath.relpath(english, folder or ".")
        # An attribute list the author wrote after the link stays the only one (attr_list reads one).
        written = match.string.startswith("{", match.end())
        attributes = "" if written else '{ hreflang="en" }'
        return f"{match.group(1)}{relative}{match.group(3)}{attributes}{'' if written else mark}"

    return _LINK.sub(point, markdown)


def stale_notes(markdown: str, state: Staleness, english_href: str, note: Callable[[str, str], str]) -> str:
    """A translated page with a note under the heading of each section its English page changed since.

    Args:
        markdown: The translated page's Markdown.
        state: Which sections are stale (`i18n.translation.staleness`).
        english_href: The English page's URL relative to this page.
        note: Renders the note from the English section's link and the section's anchor.

    Returns:
        The Markdown with the notes.
    """
    lines = markdown.splitlines()
    stale = set(state.stale)
    out = []
    for line in lines:
        out.append(line)
        anchor = heading_anchor(line)
        if anchor is not None and anchor in stale:
            out.extend(["", note(f"{english_href}#{anchor}", anchor), ""])
    if TOP in stale:
        out = [note(english_href, TOP), "", *out]
    return "\n".join(out) + "\n"


def lab_behind_note(english_lab: str, recorded: Mapping[str, str], english_href: str, language: str) -> str:
    """The note at the top of a translated lab whose English lab changed since it was stamped; empty if none did.

    A Markdown page catches up (`i18n.catch_up`: the English section, under a note); a lab runs its own
    cells, so its note names each section it is behind on (changed, new or removed), linked to the English lab's.

    Args:
        english_lab: The English lab's source (jupytext's percent format).
        recorded: What the translation recorded it translated (`translations.lock`), anchor → digest.
        english_href: The English lab's URL relative to the translated lab's page.
        language: The translated lab's language code, which the note is written in.

    Returns:
        The note's HTML, or an empty string.
    """
    late = behind(sections(lab_markdown(english_lab)), recorded)
    if not late:
        return ""
    return render("lab_behind.html", language, sections=late, href=english_href, top=TOP)


def split_search_index(site_dir: Path, memo: Memo | None = None) -> dict[str, int]:
    """Give each language its own search index: `search/search_index.json` English, `zh/…` Chinese.

    Material writes one index of every page; a reader's search then offered the other language's
    sections too. The index is split by the pages' URLs; the Chinese one splits words where the
    segmenter marked them (`CHINESE_SEPARATOR`).

    Args:
        site_dir: The built site.
        memo: A serve session's: each written page's headings are read again only once the page was written
            again (a prose edit renders a dozen pages; every page's headings were read for every build).

    Returns:
        How many sections each language's index holds.
    """
    path = site_dir / "search" / "search_index.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    memo = memo if memo is not None else Memo()

    def written(url: str) -> list[tuple[str, str]] | None:
        page = site_dir / url / "index.html"

        def compute() -> tuple[list[tuple[str, str]] | None, list[Path]]:
            return (written_headings(page.read_text(encoding="utf-8")) if page.is_file() else None), [page]

        return memo.get(("written headings", page), compute)

    # Anchors as the pages were written: a lab's headings take their stable ids after it was indexed.
    # The annexes explain at a floor's depth: they weigh as a floor's page does (plugin.build sets 4).
    annex = {f"{language.prefix}{page.page.removesuffix('.md')}/": 4.0 for page in ANNEXES for language in LANGUAGES}
    data["docs"] = weigh_entries(land_on_headings(data["docs"], written), annex)
    counts = {}
    for language in LANGUAGES:
        docs = [doc for doc in data["docs"] if language_of(doc["location"]) == language]
        config = dict(data["config"])
        config["fields"] = {**config.get("fields", {}), KEYS_FIELD: {"boost": KEYS_BOOST}}
        if language != DEFAULT:
            config["separator"] = CHINESE_SEPARATOR
        target = site_dir / language.prefix / "search" / "search_index.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        # UTF-8 as it is: escaped, each Chinese character and each segmenter mark took six bytes instead of three.
        index = json.dumps({"config": config, "docs": docs}, separators=(",", ":"), ensure_ascii=False)
        target.write_text(index, encoding="utf-8")
        counts[language.code] = len(docs)
    return counts


def stale_markdown(states: Mapping[str, Staleness], src_uri: str, files: Files, language: str) -> str:
    """The list of translated sections behind the English, as a section of What changed or the build report.

    Args:
        states: Each translated page's standing (`i18n.translation.staleness`).
        src_uri: The page the list goes on (its links are relative to it).
        files: The build's files, for the sections' pages' titles.
        language: The page's language (`en`, `zh`).

    Returns:
        Markdown: a heading with the count, then one link per stale section (or a line saying there is none).
    """
    folder = posixpath.dirname(src_uri)
    stale = [(page, anchor) for page, state in sorted(states.items()) for anchor in state.stale]
    lines = [
        t("## Translations behind the English ({count})", language, count=len(stale)) + " { #stale-translations }",
        "",
    ]
    if not stale:
        return "\n".join(
            [*lines, t("Every Chinese section translates its English section as it is now.", language), ""]
        )
    lines += [
        t(
            "These Chinese sections were translated before their English section last changed; each says so "
            "where it stands and links the English.",
            language,
        ),
        "",
    ]
    for page, anchor in stale:
        file = files.get_file_from_path(page)
        title = file.page.title if file is not None and file.page is not None and file.page.title else page
        target = posixpath.relpath(page, folder or ".")
        fragment = "" if anchor == TOP else f"#{anchor}"
        # The reader is shown the section's own heading, as the page shows it, not its id.
        section = _section_titles(file.abs_src_path if file is not None else None, page).get(anchor, anchor)
        lines.append(f"- [{title} › {section}]({target}{fragment})" if anchor != TOP else f"- [{title}]({target})")
    return "\n".join([*lines, ""])


def _section_titles(path: str | None, src_uri: str) -> dict[str, str]:
    """A translated page's section headings' words by their ids (empty when its source cannot be read)."""
    if path is None or not Path(path).is_file():
        return {}
    markdown = page_text(src_uri, Path(path).read_text(encoding="utf-8"))
    return {section.anchor: section.title for section in sections(markdown) if section.title}


def title_anchor(html: str, anchor: str) -> str:
    """A page whose title (`<h1>`) and its permalink have the given id instead of their own.

    A translated lab's title keeps the English title's anchor: nbconvert makes one of the title's words,
    and a Chinese title's is a number.
    """
    heading = find_start_tag(html, "h1")
    old = heading.attributes.get("id") if heading is not None else None
    if heading is None or not old:
        return html
    link = find_start_tag(html, "a", start=heading.end, attribute=("href", f"#{old}"))
    if link is None or "headerlink" not in (link.attributes.get("class") or "").split():
        return html
    # Each tag keeps what it was written with; only the attribute's value changes (an id has no quote in it).
    for tag, before, after in (
        (link, f'href="#{old}"', f'href="#{anchor}"'),
        (heading, f'id="{old}"', f'id="{anchor}"'),
    ):
        written = html[tag.start : tag.end]
        html = html[: tag.start] + written.replace(before, after, 1) + html[tag.end :]
    return html
