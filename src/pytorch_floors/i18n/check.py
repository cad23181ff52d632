"""Does a translated page keep its English twin's structure? What the build, the tests and translators ask.

`python -m pytorch_floors.i18n.check docs/zh/floors/4-dispatcher.md` prints every problem of one
translation: a heading (its id, level or place) that differs, a code block that is not the English one
byte for byte (a lab's, its comments left out), a link whose target changed, front matter `claims` that is not
a map of statements to their Chinese, a ruled-out glossary word, a section heading that is not the glossary's
words for its id, a term not glossed at its first use, or prose that is mostly not Chinese.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytorch_floors.errors import InputError
from pytorch_floors.i18n.catch_up import catch_up
from pytorch_floors.i18n.glossary import glossary, off_glossary, unglossed
from pytorch_floors.i18n.languages import english_source
from pytorch_floors.i18n.sections import code_blocks, heading_ids, lab_code_blocks, page_text, sections
from pytorch_floors.i18n.translation import LOCK_FILE, read_lock
from pytorch_floors.i18n.yaml_files import parse_yaml

__all__ = ["CHINESE_SHARE", "chinese_share", "front_matter", "link_targets", "problems"]

CHINESE_SHARE = 0.5
"""The least share of a translated page's prose letters that are Chinese characters (`chinese_share`)."""

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_NOT_PROSE = re.compile(r"`[^`\n]*`|<[^>\n]+>|\]\([^)\n]*\)|\{[^}\n]*\}|https?://\S+")


def front_matter(markdown: str) -> dict[str, Any]:
    """The page's YAML front matter (empty when it has none).

    Raises:
        InputError: If the front matter is not a YAML map (or uses an alias: `yaml_files.parse_yaml`).
    """
    if not markdown.startswith("---\n"):
        return {}
    end = markdown.find("\n---\n", 4)
    if end == -1:
        return {}
    data = parse_yaml(markdown[4:end], "front matter", first_line=2) or {}  # a refusal names the page's line
    if not isinstance(data, dict):
        raise InputError("front matter: not a YAML map")
    return data


def _prose(markdown: str) -> str:
    text = markdown
    for block in code_blocks(markdown):
        text = text.replace(block, " ")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        text = text[end + 5 :] if end != -1 else text
    return _NOT_PROSE.sub(" ", text)


def chinese_share(markdown: str) -> float:
    """Chinese characters as a share of the prose's letters (code, inline code, links' targets and tags left out).

    A Chinese character counts once, a Latin letter a third (an English word averages about five
    letters and carries what one or two Chinese characters do); 0 for a page without prose.
    """
    prose = _prose(markdown)
    han = len(_HAN.findall(prose))
    latin = len(_LATIN.findall(prose)) / 3
    return han / (han + latin) if han + latin else 0.0


def heading_words(markdown: str) -> dict[str, list[str]]:
    """Each explicit id's heading words (`## 深入原理 { #the-full-story }` → the-full-story: [深入原理])."""
    found: dict[str, list[str]] = {}
    for section in sections(markdown):
        if section.title:
            found.setdefault(section.anchor, []).append(section.title)
    return found


def _body_prose(markdown: str) -> str:
    """The prose a reader meets first: `_prose` without heading lines (a title is not where a term is glossed)."""
    return "\n".join(line for line in _prose(markdown).splitlines() if not line.lstrip().startswith("#"))


def link_targets(markdown: str) -> Counter[str]:
    """The targets of the page's Markdown links outside code, with how often each appears."""
    text = markdown
    for block in code_blocks(markdown):
        text = text.replace(block, " ")
    return Counter(_LINK.findall(text))


def _term_problems(source: str, markdown: str) -> list[str]:
    """The glossary's complaints: a ruled-out word, a heading not in its words, a term not glossed at first use.

    Args:
        source: The translated page's source as written (a ruled-out word is wrong in code too).
        markdown: Its Markdown (`page_text`: a lab's cells).
    """
    found = [
        f"uses {word!r} for {term.en!r}: the glossary's word is {term.zh!r}" for term, word in off_glossary(source)
    ]
    headings = heading_words(markdown)
    for term in glossary():
        for words in headings.get(term.anchor, []) if term.anchor else []:
            if words != term.zh:
                found.append(f"heading #{term.anchor} reads {words!r}: the glossary's words are {term.zh!r}")
    for term in unglossed(_body_prose(markdown)):
        found.append(f"the first use of {term.zh!r} is not glossed: write {term.zh}（{term.en}） there")
    return found


def problems(src_uri: str, english: str, translated: str, recorded: Mapping[str, str] | None = None) -> list[str]:
    """What keeps a translation from being its English page's twin: what is wrong, never what is behind.

    Args:
        src_uri: The translated page's source path, relative to `docs/` (`zh/labs/3-boundary.py`).
        english: The English page's source.
        translated: The translated page's source.
        recorded: What the translation recorded it translated (`translations.lock`), anchor → digest: the
            sections it is behind on are read as the build shows them, in English (`i18n.catch_up`).
            `None` compares the translation as it is.

    Returns:
        One line per problem; empty when the translation keeps the page's structure.
    """
    found: list[str] = []
    en_text, zh_text = page_text(src_uri, english), page_text(src_uri, translated)
    own_text = zh_text
    if recorded is not None:
        zh_text = catch_up(en_text, zh_text, recorded, lambda _: "").markdown
    en_ids, zh_ids = heading_ids(en_text), heading_ids(zh_text)
    if en_ids != zh_ids:
        missing = [f"#{a}" for _, a in en_ids if (_, a) not in zh_ids]
        extra = [f"#{a}" for _, a in zh_ids if (_, a) not in en_ids]
        found.append(
            "headings differ from the English page's (ids, levels or order)"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; not in English: {', '.join(extra)}" if extra else "")
        )
    # A lab's comments are prose (`# YOUR ANSWER: 每一对...`): its code, with comments left out, is the English lab's.
    blocks = lab_code_blocks if src_uri.endswith(".py") else code_blocks
    en_blocks, zh_blocks = blocks(en_text), blocks(zh_text)
    if en_blocks != zh_blocks:
        differing = next((i for i, (a, b) in enumerate(zip(en_blocks, zh_blocks, strict=False)) if a != b), None)
        where = (
            f"; the first that differs is block {differing + 1}: {en_blocks[differing].splitlines()[0]}"
            if differing is not None
            else ""
        )
        found.append(f"code blocks differ: {len(en_blocks)} in English, {len(zh_blocks)} here{where}")
    if not src_uri.endswith(".py"):
        lost = link_targets(en_text) - link_targets(zh_text)
        if lost:
            found.append(f"links missing or changed (targets stay as in English): {', '.join(sorted(lost))}")
        try:
            claims = front_matter(translated).get("claims", {})
        except InputError as error:
            found.append(str(error))
            claims = {}
        if not isinstance(claims, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in claims.items()
        ):
            found.append("front matter `claims` must map each English statement to its Chinese")
    found += _term_problems(translated, own_text)
    share = chinese_share(own_text)
    if share < CHINESE_SHARE:
        found.append(f"the prose is mostly not Chinese ({share:.0%} Chinese characters, at least {CHINESE_SHARE:.0%})")
    return found


def main(argv: list[str]) -> int:
    """Print each problem of each translated page named; exit 1 if any."""
    status = 0
    for name in argv:
        path = Path(name)
        docs = next((p for p in path.resolve().parents if p.name == "docs"), None)
        if docs is None:
            print(f"{name}: not under a docs/ folder")
            return 2
        src_uri = path.resolve().relative_to(docs).as_posix()
        english = docs / english_source(src_uri)
        if not english.is_file():
            print(f"{name}: no English page at {english.relative_to(docs.parent)}")
            status = 1
            continue
        recorded = read_lock(docs.parent / LOCK_FILE).get(src_uri, {})
        found = problems(src_uri, english.read_text(encoding="utf-8"), path.read_text(encoding="utf-8"), recorded)
        for line in found:
            print(f"{name}: {line}")
        if not found:
            print(f"{name}: ok")
        status = status or int(bool(found))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
