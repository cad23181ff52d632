"""The depth gauge: all eight floors as a vertical strip, the reader's floor marked.

The gauge is plain, accessible HTML: a `<nav>` landmark holding an ordered list
of links (one per floor, top to bottom), the current floor carrying
`aria-current="page"` and an accent dot, then "up a floor" / "down a floor" links.
Colours come from CSS custom properties, so it follows the light and dark palettes.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from pytorch_floors.floors import FLOORS, Floor

__all__ = ["render_gauge"]


def _link(href: str, text: str, *, rel: str, css: str) -> str:
    return f'<a class="{css}" rel="{rel}" href="{escape(href)}">{escape(text)}</a>'


def render_gauge(
    current: Floor | None,
    href_for: Callable[[Floor], str],
    *,
    map_href: str | None = None,
) -> str:
    """Render the depth gauge as HTML.

    Args:
        current: The floor of the page being rendered, or `None` on pages that
            belong to no floor (the map, the reference): then the whole building
            is shown with no floor marked and no up/down links.
        href_for: Returns the link to a floor's page, relative to the current page.
        map_href: Link to Part 0 (the map), used as "up" from floor 1.

    Returns:
        The gauge's HTML, a single `<nav>` element.
    """
    label = (
        f"Depth gauge: floor {current.number} of {len(FLOORS)}, {current.title}"
        if current
        else f"Depth gauge: the {len(FLOORS)} floors, from your program to the chip"
    )
    items = []
    for floor in FLOORS:
        is_current = current is not None and floor.number == current.number
        attrs = ' aria-current="page"' if is_current else ""
        css = "floors-gauge__floor floors-gauge__floor--current" if is_current else "floors-gauge__floor"
        here = '<span class="floors-gauge__here"> (you are here)</span>' if is_current else ""
        items.append(
            f'<li class="{css}"><a href="{escape(href_for(floor))}"{attrs}>'
            f'<span class="floors-gauge__dot" aria-hidden="true"></span>'
            f'<span class="floors-gauge__number">{floor.number}</span> '
            f'<span class="floors-gauge__name">{escape(floor.title)}</span>{here}</a></li>'
        )
    steps = []
    if current is not None:
        index = current.number - 1
        if index > 0:
            above = FLOORS[index - 1]
            steps.append(_link(href_for(above), f"↑ Up a floor: {above.title}", rel="prev", css="floors-gauge__up"))
        elif map_href is not None:
            steps.append(_link(map_href, "↑ Up to the map", rel="prev", css="floors-gauge__up"))
        if index + 1 < len(FLOORS):
            below = FLOORS[index + 1]
            steps.append(_link(href_for(below), f"↓ Down a floor: {below.title}", rel="next", css="floors-gauge__down"))
    caption = f"Floor {current.number} of {len(FLOORS)}" if current else "The whole building"
    steps_html = f'<p class="floors-gauge__steps">{"".join(steps)}</p>' if steps else ""
    return (
        f'<nav class="floors-gauge" aria-label="{escape(label)}">'
        f'<p class="floors-gauge__caption" aria-hidden="true">{caption}</p>'
        f'<ol class="floors-gauge__floors">{"".join(items)}</ol>'
        f"{steps_html}</nav>"
    )
