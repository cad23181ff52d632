"""Material's search index of a partial build, merged with the pages the session did not render again."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


def _search_url(url: str) -> str:
    """A page's URL as the search index's locations start with it (the site's root page is `""`, not `./`)."""
    return "" if url in {"", "./"} else url


def merge_search_index(
    path: Path, rebuilt: Collection[str] | None, kept: Mapping[str, list[dict[str, Any]]], order: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Complete the search index of a partial build with the entries of the pages it did not render.

    Material's search plugin writes the entries of the pages this build rendered (the plugin
    clears its own merge, which only knows one page); this rewrites the file with, for every other
    page, its entries from the build that last rendered it, in the site's page order.

    Args:
        path: The built `search/search_index.json`.
        rebuilt: URLs of the pages this build rendered, or `None` if it rendered every page.
        kept: Each page's entries from the last build, by URL.
        order: Every page's URL, in the site's order.

    Returns:
        Each page's entries now, by URL (what the next build keeps).
    """
    index = json.loads(path.read_text(encoding="utf-8"))
    fresh: dict[str, list[dict[str, Any]]] = {}
    for entry in index.get("docs", []):
        fresh.setdefault(_search_url(str(entry.get("location", "")).split("#", 1)[0]), []).append(entry)
    if rebuilt is None:
        return {url: fresh.get(_search_url(url), []) for url in order}
    rebuilt = {_search_url(url) for url in rebuilt}
    merged = {
        url: fresh.get(_search_url(url), []) if _search_url(url) in rebuilt else kept.get(url, []) for url in order
    }
    index["docs"] = [entry for url in order for entry in merged[url]]
    path.write_text(json.dumps(index, separators=(",", ":"), default=str), encoding="utf-8")
    return merged
