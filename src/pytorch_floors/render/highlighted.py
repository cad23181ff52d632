"""Highlighted code, rendered once per text and settings: a page's twin and a serve session's next build reuse it.

A floor's twin shows its English page's proofs byte for byte: the same outputs, the same listings,
highlighted with the same settings. Highlighting them (Pygments through `pymdownx.highlight`) was
about a sixth of a render-only build, and half of it rendered again what the English page had just
rendered; a serve session rendered every unchanged listing again with each build.

`Highlighted` keeps each result under its full input: the Markdown of the fenced code (the code, its
language, its options such as `hl_lines`) and the highlighting settings it was rendered with
(`settings_key`, which names every option, filters included). The converter is reset before each
rendering, so the HTML depends on nothing else; a change to either is another key, never a stale result.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["HIGHLIGHTED", "Highlighted", "settings_key"]


def _stable(value: Any) -> str:
    """A representation of a setting that is the same for equal settings, objects (a Pygments filter) included."""
    if isinstance(value, Mapping):
        return (
            "{"
            + ",".join(f"{_stable(k)}:{_stable(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
            + "}"
        )
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(map(_stable, value)) if isinstance(value, set | frozenset) else [_stable(v) for v in value]
        return "[" + ",".join(items) + "]"
    if value is None or isinstance(value, str | int | float | bool):
        return repr(value)
    kind = type(value)
    state = getattr(value, "__dict__", None)
    return f"{kind.__module__}.{kind.__qualname__}({_stable(state) if state is not None else repr(value)})"


def settings_key(configs: Mapping[str, Any]) -> str:
    """The key of a converter's settings: each extension's options, objects named by their class and state.

    Args:
        configs: Extension name → its options (what the converter was made with).

    Returns:
        A string equal for equal settings.
    """
    return _stable(configs)


class Highlighted:
    """HTML of fenced code by settings and text, the `limit` most recently used kept."""

    def __init__(self, limit: int = 4096) -> None:
        """Start empty.

        Args:
            limit: How many results to keep (a site's listings and outputs are a few hundred).
        """
        self.limit = limit
        self.rendered = 0  # how many times `render` was called: what the tests count
        self._entries: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, settings: str, markdown: str, render: Callable[[], str]) -> str:
        """The HTML of `markdown` under `settings`: kept, or `render()`'s, which is then kept.

        Args:
            settings: `settings_key` of the converter.
            markdown: The fenced code.
            render: Renders it (only called when nothing is kept for this key).

        Returns:
            The HTML.
        """
        key = (settings, markdown)
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        html = render()
        self.rendered += 1
        self._entries[key] = html
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)
        return html


HIGHLIGHTED = Highlighted()
"""The process's results: a build's pages and a serve session's builds share them (the key is the whole input)."""
