"""What a `--8<-- "file.py:2:9"` include brings into a block: which file, and which of its lines.

pymdownx.snippets lets an include take part of a file: line ranges (`file.py:2:9`, `file.py:5:`,
`file.py:-3:`, several joined by commas: `file.py:1:3,8:9`) or a named section
(`file.py:setup`, the lines between `# --8<-- [start:setup]` and `# --8<-- [end:setup]`). The engine
must know the file (its imports key the cache, its lines name a failure's place) and the lines the
block's code came from. The rules follow pymdownx.snippets' own: a suffix counts only when all of it
is a range list or a section name; anything else is part of the file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SnippetTarget", "has_section", "included_lines", "parse_target"]

_RANGES = re.compile(r"(?P<path>.+?)(?P<ranges>(?::-?[0-9]*){1,2}(?:,(?=[-0-9:])-?[0-9]*(?::-?[0-9]*)?)*)")
_SECTION = re.compile(r"(?i)(?P<path>.+?):(?P<name>[a-z][-_0-9a-z]*)")
_MARKER = re.compile(
    r"(?i)-{1,}8<-{1,}[ \t]+\[[ \t]*(?P<kind>start|end)[ \t]*:[ \t]*(?P<name>[a-z][-_0-9a-z]*)[ \t]*\]"
)


@dataclass(frozen=True)
class SnippetTarget:
    """One include's target.

    Attributes:
        path: The file, relative to the snippets' base path.
        ranges: `(start, end)` per range as written (1-based, `None` open, negative from the end).
        section: The named section, if the include names one.
    """

    path: str
    ranges: tuple[tuple[int | None, int | None], ...] = ()
    section: str | None = None


def parse_target(written: str) -> SnippetTarget:
    """Split an include's target into its file and the part of it it takes."""
    if match := _RANGES.fullmatch(written):
        ranges = []
        for item in match["ranges"][1:].split(","):
            start, _, end = item.partition(":")
            ranges.append((int(start) if start else None, int(end) if end else None))
        return SnippetTarget(match["path"].strip(), tuple(ranges))
    if match := _SECTION.fullmatch(written):
        return SnippetTarget(match["path"].strip(), section=match["name"])
    return SnippetTarget(written.strip())


def has_section(lines: list[str], name: str) -> bool:
    """Whether a file's lines open the named section (`# --8<-- [start:name]`): pymdownx.snippets fails without it."""
    for line in lines:
        marker = _MARKER.search(line)
        if marker and marker["name"] == name and marker["kind"].lower() == "start":
            return True
    return False


def included_lines(target: SnippetTarget, lines: list[str]) -> list[int]:
    """The 1-based numbers of the file's lines the include brings in, in order.

    Args:
        target: The include's target.
        lines: The file's lines.

    Returns:
        The line numbers (section markers left out: pymdownx.snippets drops them from every include).
    """
    total = len(lines)
    if target.section is not None:
        taken, inside = [], False
        for number, line in enumerate(lines, start=1):
            marker = _MARKER.search(line)
            if marker and marker["name"] == target.section:
                inside = marker["kind"].lower() == "start"
            elif inside:
                taken.append(number)
    elif not target.ranges:
        taken = list(range(1, total + 1))
    else:
        taken = []
        for start, end in target.ranges:
            first = 1 if start is None else max(1, total + start + 1 if start < 0 else start)
            last = total if end is None else min(total, total + end + 1 if end < 0 else end)
            taken.extend(range(first, last + 1))
    # pymdownx.snippets drops every section marker from what it includes, whatever the include takes.
    return [number for number in taken if not _MARKER.search(lines[number - 1])]
