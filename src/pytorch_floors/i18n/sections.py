"""A page's sections, by their explicit anchors: what a translation must keep, and what it translated.

A section runs from a heading with an explicit id (`## Title { #id }` in Markdown, `<a id="id"></a>` in a
lab's Markdown cell) to the next such heading. Its digest is what a translated section records: when
the English section's digest differs from the one recorded, the translation predates the change.
Text above the first heading is the section `TOP`. Fenced code is never read for headings.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import jupytext

__all__ = [
    "TOP",
    "Section",
    "code_blocks",
    "digest",
    "heading_anchor",
    "heading_ids",
    "join_chinese_lines",
    "lab_code_blocks",
    "lab_markdown",
    "page_text",
    "raw_digest",
    "sections",
    "without_comments",
]

TOP = "top"
"""The name of the text above a page's first heading (the page's opening)."""

_MARKDOWN_ID = re.compile(r"^(#{1,6})\s.*\{[^}]*#([A-Za-z0-9_:.-]+)[^}]*\}\s*$")
_LAB_ID = re.compile(r"^(#{1,6})\s.*<a id=\"([^\"]+)\"></a>\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_TITLE = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{[^}]*\}|<a id=\"[^\"]*\"></a>)\s*$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")


@dataclass(frozen=True)
class Section:
    """One section of a page.

    Attributes:
        anchor: The heading's explicit id (`TOP` for the page's opening).
        level: The heading's level (1 for `#`), 0 for the opening.
        text: The section's source, its heading line first.
    """

    anchor: str
    level: int
    text: str

    @property
    def digest(self) -> str:
        """A short digest of the section's source (`digest`)."""
        return digest(self.text)

    def translated_by(self, recorded: str | None) -> bool:
        """Whether a translation's recorded digest (`translations.lock`) is of this section as it is now."""
        return recorded is not None and recorded in {self.digest, raw_digest(self.text)}

    @property
    def title(self) -> str:
        """The heading's words, without its id (`## Two { #two }` → Two); empty for the opening."""
        words = _TITLE.match(self.text.split("\n", 1)[0]) if self.anchor != TOP else None
        return words.group(1) if words else ""


def digest(text: str) -> str:
    """Twelve hex digits of SHA-256 over the text's words: how its prose is wrapped does not count.

    Outside fenced code, every run of blanks and line breaks within a paragraph counts as one space and
    paragraphs are kept apart (re-wrapping an English paragraph once made its translation stale); fenced
    code keeps its lines, less their trailing blanks.
    """
    parts = []
    for block, run in itertools.groupby(_fenced(text.strip("\n").splitlines()), key=lambda item: item[1]):
        lines = [line for line, _ in run]
        if block:
            parts.append("\n".join(line.rstrip() for line in lines))
            continue
        paragraphs = _PARAGRAPH_BREAK.split("\n".join(lines))
        parts += [" ".join(paragraph.split()) for paragraph in paragraphs if paragraph.strip()]
    return _sha(("\n\n".join(parts)).strip())


def raw_digest(text: str) -> str:
    """The digest `translations.lock` recorded before `digest` ignored wrapping: the lines as they are.

    A record of either kind still says the section is translated as it is (`Section.translated_by`), so
    the locks written before need no stamp again.
    """
    return _sha("\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def lab_markdown(source: str) -> str:
    """A percent-format lab's cells as one Markdown text: its Markdown cells as written, its code cells fenced.

    Args:
        source: The lab's `.py` source (jupytext's percent format).

    Returns:
        Markdown: what `sections`, `heading_ids` and `code_blocks` read for a lab.
    """
    notebook = jupytext.reads(source, fmt="py:percent")
    parts = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        else:
            tags = cell.metadata.get("tags", [])
            parts.append(f"```python tags={tags}\n{cell.source}\n```")
    return "\n\n".join(parts) + "\n"


def without_comments(code: str) -> str:
    """Python code without its comments: what runs, whatever language its comments are written in.

    A translated lab translates the comments of its code cells (`# YOUR ANSWER: 每一对...`) and nothing
    else of them; the code compares, and runs, as its English lab's. Code that does not tokenize (a
    cell's magics) is returned as it is, so it still has to match byte for byte.

    Args:
        code: A code cell's source.

    Returns:
        The source with each comment removed, and each line's trailing spaces dropped.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    lines = code.splitlines(keepends=True)
    for token in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        row, start = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:start] + line[token.end[1] :]
    return "\n".join(line.rstrip() for line in "".join(lines).splitlines())


def lab_code_blocks(markdown: str) -> list[str]:
    """A lab's code blocks (`code_blocks` of its `lab_markdown`), each without its comments (`without_comments`)."""
    found = []
    for block in code_blocks(markdown):
        fence, _, rest = block.partition("\n")
        body, _, end = rest.rpartition("\n")
        found.append("\n".join((fence, without_comments(body), end)))
    return found


def page_text(src_uri: str, source: str) -> str:
    """A page's Markdown: the file itself, or a lab's cells (`lab_markdown`)."""
    return lab_markdown(source) if src_uri.endswith(".py") else source


def heading_anchor(line: str) -> str | None:
    """The explicit id of a heading line (`## Title { #id }`, or a lab's `## Title <a id="id"></a>`), if it is one."""
    heading = _MARKDOWN_ID.match(line) or _LAB_ID.match(line)
    return heading.group(2) if heading else None


_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CHINESE_BREAK = re.compile(f"(?<=[{_CJK}])\n[ \t]*(?=[{_CJK}])")


def _fenced(lines: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Each line with the number of the fenced block it belongs to (its fence lines included), 0 outside any.

    A block closes at a fence of its own character, at least as long, with nothing after it.
    """
    fence, block = "", 0
    for line in lines:
        opened = _FENCE.match(line)
        if fence:
            yield line, block
            marks = opened.group(1) if opened else ""
            if marks[:1] == fence[0] and len(marks) >= len(fence) and not line.strip()[len(marks) :].strip():
                fence = ""
        elif opened:
            fence, block = opened.group(1), block + 1
            yield line, block
        else:
            yield line, 0


def join_chinese_lines(markdown: str) -> str:
    """Markdown whose paragraphs' line breaks between two Chinese characters are gone (code left as it is).

    A browser shows a paragraph's line break as a space, which Chinese does not put between its
    characters; a break next to a Latin word stays (it is the space the typography wants there).
    """
    parts = []
    for block, run in itertools.groupby(_fenced(markdown.splitlines(keepends=True)), key=lambda item: item[1]):
        text = "".join(line for line, _ in run)
        parts.append(text if block else _CHINESE_BREAK.sub("", text))
    return "".join(parts)


def _body(markdown: str) -> str:
    """The Markdown without its front matter."""
    if markdown.startswith("---\n"):
        end = markdown.find("\n---\n", 4)
        if end != -1:
            return markdown[end + 5 :]
    return markdown


def sections(markdown: str) -> list[Section]:
    """The page's sections in order, the opening first if it has any text.

    Args:
        markdown: A page's Markdown (front matter is skipped).

    Returns:
        Its sections.
    """
    found: list[Section] = []
    anchor, level = TOP, 0
    lines: list[str] = []
    for line, block in _fenced(_body(markdown).splitlines()):
        heading = None if block else _MARKDOWN_ID.match(line) or _LAB_ID.match(line)
        if heading:
            if anchor != TOP or "".join(lines).strip():
                found.append(Section(anchor, level, "\n".join(lines)))
            anchor, level, lines = heading.group(2), len(heading.group(1)), []
        lines.append(line)
    if anchor != TOP or "".join(lines).strip():
        found.append(Section(anchor, level, "\n".join(lines)))
    return found


def heading_ids(markdown: str) -> list[tuple[int, str]]:
    """Each heading's level and explicit id, in order (the opening left out)."""
    return [(s.level, s.anchor) for s in sections(markdown) if s.anchor != TOP]


def code_blocks(markdown: str) -> list[str]:
    """Every fenced block of the page, its fence lines included, in order (front matter skipped)."""
    blocks = itertools.groupby(_fenced(_body(markdown).splitlines()), key=lambda item: item[1])
    return ["\n".join(line for line, _ in run) for block, run in blocks if block]
