"""The YAML the Chinese edition reads from files (`translations.lock`, the glossary, `messages.zh.yml`, front matter).

Each is small, hand-written data: a map or a list of plain strings. What it may not be is bounded
before it is built: PyYAML expands every alias where it is used, so eight levels of nine aliases
("billion laughs") took half a minute and most of a gigabyte, and nine exhausted memory. Anchors and
aliases are refused at the first one (none of these files needs one), a file is refused above
`MAX_BYTES` before it is read, and text that is not UTF-8 or not YAML is one line that names the file
and line, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; its stubs are not a dependency

from pytorch_floors.errors import InputError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "parse_yaml", "read_yaml"]

MAX_BYTES = 1 << 20
"""The largest YAML file read (1 MiB): the largest today, `messages.zh.yml`, is 13 KB."""


MAX_DEPTH = 32
"""The deepest nesting of maps and lists read: these files nest two or three deep; PyYAML recurses per level."""


class _PlainLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML is untyped
    """PyYAML's safe loader, refusing an anchor, an alias or deep nesting before any node is built from it."""

    def __init__(self, text: str, where: str, first_line: int) -> None:
        super().__init__(text)
        self.where = where
        self.first_line = first_line
        self.depth = 0

    def compose_node(self, parent: object, index: object) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + self.first_line
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise InputError(f"{self.where}:{line}: an anchor or alias (& or *); write the value out where it is used")
        if self.depth >= MAX_DEPTH:
            raise InputError(f"{self.where}:{line}: nested more than {MAX_DEPTH} deep")
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def parse_yaml(text: str, where: str, first_line: int = 1) -> Any:
    """Parse YAML text with no anchor or alias in it.

    Args:
        text: The YAML.
        where: What to name in a refusal (`translations.lock`, `front matter`).
        first_line: The number a refusal gives the text's first line (a page's front matter starts on 2).

    Returns:
        The data (`None` for an empty text).

    Raises:
        InputError: If the text uses an anchor or alias, nests too deep, or is not YAML (naming the line).
    """
    try:
        loader = _PlainLoader(text, where, first_line)  # its reader refuses control characters at once
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + first_line}" if mark is not None else ""
        raise InputError(f"{where}{line}: not YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        # A reader's error (a control character) gives a position, not a line: its words, on one line.
        raise InputError(f"{where}: not YAML: {' '.join(str(error).split())}"[:300]) from None


def read_yaml(path: Path, where: str | None = None) -> Any:
    """Read a YAML file of at most `MAX_BYTES`, UTF-8, with no anchor or alias.

    Args:
        path: The file.
        where: What to name in a refusal (default: the file's name).

    Returns:
        The data (`None` for an empty file).

    Raises:
        InputError: If the file is too large, not UTF-8, not YAML, or uses an anchor or alias.
    """
    name = where or path.name
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise InputError(f"{name}: {size} bytes, more than the {MAX_BYTES} a YAML file of the site may hold")
    data = path.read_bytes()[: MAX_BYTES + 1]  # it may have grown since: never more than the bound
    if len(data) > MAX_BYTES:
        raise InputError(f"{name}: more than the {MAX_BYTES} bytes a YAML file of the site may hold")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(
            f"{name}:{line}: not UTF-8 text (byte {error.start}: {error.reason}); save the file as UTF-8"
        ) from None
    return parse_yaml(text, name)
