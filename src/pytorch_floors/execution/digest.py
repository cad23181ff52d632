"""The digest of a block's inputs: what a recording made on another machine is checked against.

A block's output depends on its inputs (its code with includes expanded, the earlier blocks of its
session, its options as written, the project files they import) and on the machine. The digest
covers the inputs only, so a recording made on a GPU server or a laptop stays comparable with this
build's block until one of those inputs changes; the cache key adds the machine to it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

__all__ = ["UNKEYED", "block_digest", "keyed_options"]

UNKEYED = frozenset({"id", "timeout"})
"""Written options that cannot change a block's output or how it renders."""


def keyed_options(written: Mapping[str, str]) -> dict[str, str]:
    """The options, as the page writes them, that may change a block's output or how it renders.

    Args:
        written: The fence's options as written (`name -> value`), as the page's scan read them.

    Returns:
        All of them but `id` and `timeout`.
    """
    return {name: value for name, value in written.items() if name not in UNKEYED}


def block_digest(code: str, written: Mapping[str, str], history: Sequence[str], sources: str) -> str:
    """The digest of everything a block's output depends on except the machine.

    Args:
        code: The block's code, includes expanded.
        written: Its options as written.
        history: The codes of the earlier blocks of its session, in order.
        sources: The digest of the project files the block and its history import.

    Returns:
        A hex digest, prefixed `sha256:`.
    """
    payload = json.dumps(
        {"code": code, "options": keyed_options(written), "history": list(history), "sources": sources},
        sort_keys=True,
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()
