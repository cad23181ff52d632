"""The depth gauge: the floors (or their labs) as a vertical scale, the reader's floor marked.

Two renderings of one registry, never on the same screen:

- `render_gauge`: a vertical scale from floor 1 (your program, at the surface) down to
  the last floor. It takes the place of the Floors (or Labs) section of the left
  sidebar, so it *is* the floors' navigation. Floors already passed read differently
  from floors ahead; the reader's floor carries the orange dot and `aria-current`.
- `render_depth_bar`: on a phone, where the sidebar is a drawer, a compact bar of one
  segment per floor with the current floor named; it opens on tap into the same links.
  It is a `<details>` element, so it works without JavaScript.
- `render_elevator` and `render_elevator_bar`: the same two on an elevator's page (`torch.compile`),
  which is no floor: every floor is listed, and the floors the elevator stops at are marked, each with
  the stage that works there linked to its section. A floor page the elevator stops at links the
  elevator's page from its gauge.

Both are plain, accessible HTML; colours come from CSS custom properties
(`docs/stylesheets/floors.css`), so they follow the light and dark palettes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Literal

from pytorch_floors.floors import COMPILER, FLOORS, MAP_PAGE, Elevator, Floor, Stop, floor_for_page

__all__ = ["GaugeKind", "page_gauges", "render_depth_bar", "render_elevator", "render_elevator_bar", "render_gauge"]

GaugeKind = Literal["floor", "lab"]
"""What the gauge's stops are: the floor pages or their labs."""

_NOUN: dict[GaugeKind, str] = {"floor": "Floor", "lab": "Lab"}


@dataclass(frozen=True)
class _Stop:
    floor: Floor
    href: str
    position: Literal["passed", "current", "ahead", "none"]


def _stops(current: Floor | None, href_for: Callable[[Floor], str]) -> list[_Stop]:
    stops = []
    for floor in FLOORS:
        if current is None:
            position: Literal["passed", "current", "ahead", "none"] = "none"
        elif floor.number < current.number:
            position = "passed"
        elif floor.number == current.number:
            position = "current"
        else:
            position = "ahead"
        stops.append(_Stop(floor, href_for(floor), position))
    return stops


def _where(current: Floor, kind: GaugeKind) -> str:
    return f"{_NOUN[kind]} {current.number} of {len(FLOORS)}"


def _stop_link(stop: _Stop, kind: GaugeKind) -> str:
    css = "floors-gauge__floor"
    if stop.position != "none":
        css += f" floors-gauge__floor--{stop.position}"
    current = ' aria-current="page"' if stop.position == "current" else ""
    noun = "" if kind == "floor" else "Lab "
    return (
        f'<li class="{css}"><a href="{escape(stop.href)}"{current}>'
        f'<span class="floors-gauge__mark" aria-hidden="true"></span>'
        f'<span class="floors-gauge__number">{noun}{stop.floor.number}</span> '
        f'<span class="floors-gauge__name">{escape(stop.floor.title)}</span></a></li>'
    )


def _step(href: str, arrow: str, text: str, *, rel: str, css: str) -> str:
    # The arrow is decoration; the accessible name is the words, which start the visible text too.
    return (
        f'<a class="{css}" rel="{rel}" href="{escape(href)}"><span aria-hidden="true">{arrow}</span>{escape(text)}</a>'
    )


def render_gauge(
    current: Floor | None,
    href_for: Callable[[Floor], str],
    *,
    map_href: str | None = None,
    kind: GaugeKind = "floor",
    elevator_href: str | None = None,
) -> str:
    """Render the depth gauge as HTML.

    Args:
        current: The floor of the page being rendered, or `None` where the page belongs
            to no floor (Part 0, the 404 page): then the whole building is shown, no floor
            marked and no up/down links.
        href_for: Returns the link to a floor's page (or its lab's page, for `kind="lab"`),
            relative to the current page.
        map_href: Link to Part 0 (the map), used as "up" from floor 1.
        kind: `"floor"` for the floor pages, `"lab"` for a gauge of the labs.
        elevator_href: Link to the `torch.compile` page; given, a floor the compiler stops at links it,
            naming the stage that works on the floor.

    Returns:
        The gauge's HTML, a single `<nav class="floors-gauge">` element.
    """
    noun = _NOUN[kind]
    if current is not None:
        label = f"Depth gauge: {_where(current, kind).lower()}, {current.title}"
        caption = _where(current, kind)
    else:
        label = f"Depth gauge: the {len(FLOORS)} floors, from your program to the chip"
        caption = f"The {len(FLOORS)} floors"
    items = "".join(_stop_link(stop, kind) for stop in _stops(current, href_for))
    steps = []
    if current is not None:
        index = current.number - 1
        if index > 0:
            above = FLOORS[index - 1]
            text = f"Up: {noun} {above.number} · {above.title}"
            steps.append(_step(href_for(above), "↑", text, rel="prev", css="floors-gauge__up"))
        elif map_href is not None:
            steps.append(_step(map_href, "↑", "Up to the map", rel="prev", css="floors-gauge__up"))
        if index + 1 < len(FLOORS):
            below = FLOORS[index + 1]
            text = f"Down: {noun} {below.number} · {below.title}"
            steps.append(_step(href_for(below), "↓", text, rel="next", css="floors-gauge__down"))
    steps_html = f'<p class="floors-gauge__steps">{"".join(steps)}</p>' if steps else ""
    stop = COMPILER.stop_at(current) if current is not None and elevator_href is not None else None
    if stop is not None and elevator_href is not None:
        text = f"Express elevator: {stop.stage} {stop.work}"
        steps_html += (
            f'<p class="floors-gauge__elevator"><a href="{escape(elevator_href)}#{escape(stop.section)}">'
            f'<span aria-hidden="true">⇅</span>{escape(text)}</a></p>'
        )
    return (
        f'<nav class="floors-gauge floors-gauge--{kind}" aria-label="{escape(label)}">'
        f'<p class="floors-gauge__caption">{escape(caption)}</p>'
        f'<p class="floors-gauge__end floors-gauge__end--top" aria-hidden="true">surface</p>'
        f'<ol class="floors-gauge__floors">{items}</ol>'
        f'<p class="floors-gauge__end floors-gauge__end--bottom" aria-hidden="true">chip</p>'
        f"{steps_html}</nav>"
    )


def render_depth_bar(current: Floor, href_for: Callable[[Floor], str], *, kind: GaugeKind = "floor") -> str:
    """Render the phone's compact depth bar: one segment per floor, the current one named.

    Tapping the bar opens the list of floors (or labs); it is a `<details>` element, so it
    needs no JavaScript. Wide screens hide it, because there the gauge sits in the sidebar.

    Args:
        current: The floor of the page being rendered.
        href_for: Returns the link to a floor's page (or lab page), relative to the current page.
        kind: `"floor"` or `"lab"`, as for `render_gauge`.

    Returns:
        The bar's HTML, a single `<nav class="floors-depthbar">` element.
    """
    stops = _stops(current, href_for)
    segments = "".join(f'<span class="floors-depthbar__segment--{stop.position}"></span>' for stop in stops)
    where = _where(current, kind)
    items = "".join(_stop_link(stop, kind) for stop in stops)
    return (
        f'<nav class="floors-depthbar floors-depthbar--{kind}" aria-label="{escape(f"Depth: {where.lower()}")}">'
        f'<details class="floors-depthbar__details"><summary class="floors-depthbar__summary">'
        f'<span class="floors-depthbar__segments" aria-hidden="true">{segments}</span>'
        f'<span class="floors-depthbar__where">{escape(where)}</span> '
        f'<span class="floors-depthbar__name">{escape(current.title)}</span></summary>'
        f'<ol class="floors-gauge__floors">{items}</ol></details></nav>'
    )


def _stops_caption(elevator: Elevator) -> str:
    numbers = [str(stop.floor) for stop in elevator.stops]
    listed = ", ".join(numbers[:-1]) + f" and {numbers[-1]}" if len(numbers) > 1 else numbers[0]
    return f"Stops at floors {listed} of {len(FLOORS)}"


def _elevator_stop(floor: Floor, stop: Stop | None, href: str, section_href: Callable[[Stop], str]) -> str:
    if stop is None:
        return (
            f'<li class="floors-gauge__floor floors-gauge__floor--skipped"><a href="{escape(href)}">'
            f'<span class="floors-gauge__mark" aria-hidden="true"></span>'
            f'<span class="floors-gauge__number">{floor.number}</span> '
            f'<span class="floors-gauge__name">{escape(floor.title)}</span></a></li>'
        )
    return (
        f'<li class="floors-gauge__floor floors-gauge__floor--stop"><a href="{escape(href)}">'
        f'<span class="floors-gauge__mark" aria-hidden="true"></span>'
        f'<span class="floors-gauge__number">{floor.number}</span> '
        f'<span class="floors-gauge__name">{escape(floor.title)}</span></a>'
        f'<a class="floors-gauge__stage" href="{escape(section_href(stop))}">'
        f"{escape(stop.stage)}: {escape(stop.work)}</a></li>"
    )


def render_elevator(elevator: Elevator, href_for: Callable[[Floor], str], section_href: Callable[[Stop], str]) -> str:
    """Render the gauge of an elevator's page: every floor, the floors it stops at marked with their stage.

    Args:
        elevator: The elevator (`COMPILER`).
        href_for: Returns the link to a floor's page, relative to the elevator's page.
        section_href: Returns the link to a stop's section on the elevator's page (`#graph-capture`).

    Returns:
        The gauge's HTML, a single `<nav class="floors-gauge floors-gauge--elevator">` element.
    """
    caption = _stops_caption(elevator)
    items = "".join(_elevator_stop(floor, elevator.stop_at(floor), href_for(floor), section_href) for floor in FLOORS)
    label = f"Depth gauge: {elevator.title}, {caption.lower()}"
    return (
        f'<nav class="floors-gauge floors-gauge--elevator" aria-label="{escape(label)}">'
        f'<p class="floors-gauge__caption">{escape(caption)}</p>'
        f'<p class="floors-gauge__end floors-gauge__end--top" aria-hidden="true">surface</p>'
        f'<ol class="floors-gauge__floors">{items}</ol>'
        f'<p class="floors-gauge__end floors-gauge__end--bottom" aria-hidden="true">chip</p></nav>'
    )


def render_elevator_bar(
    elevator: Elevator, href_for: Callable[[Floor], str], section_href: Callable[[Stop], str]
) -> str:
    """Render the phone's bar on an elevator's page: one segment per floor, the stops marked; opens into the gauge.

    Args:
        elevator: The elevator (`COMPILER`).
        href_for: Returns the link to a floor's page, relative to the elevator's page.
        section_href: Returns the link to a stop's section on the elevator's page.

    Returns:
        The bar's HTML, a single `<nav class="floors-depthbar floors-depthbar--elevator">` element.
    """
    caption = _stops_caption(elevator)
    segments = "".join(
        f'<span class="floors-depthbar__segment--{"stop" if elevator.stop_at(floor) else "skipped"}"></span>'
        for floor in FLOORS
    )
    items = "".join(_elevator_stop(floor, elevator.stop_at(floor), href_for(floor), section_href) for floor in FLOORS)
    return (
        f'<nav class="floors-depthbar floors-depthbar--elevator" aria-label="{escape(f"Depth: {caption.lower()}")}">'
        f'<details class="floors-depthbar__details"><summary class="floors-depthbar__summary">'
        f'<span class="floors-depthbar__segments" aria-hidden="true">{segments}</span>'
        f'<span class="floors-depthbar__where">{escape(caption)}</span></summary>'
        f'<ol class="floors-gauge__floors">{items}</ol></details></nav>'
    )


def page_gauges(src_uri: str, url_of: Callable[[str], str]) -> dict[str, str | None]:
    """Choose the gauges a page shows, for the theme's partials.

    A floor page gets the floors' gauge in place of the sidebar's Floors section and the
    phone's depth bar (a floor `torch.compile` stops at links its page there); a lab page gets the
    same for the labs, in place of the Labs section; the `torch.compile` page gets the building with
    the compiler's stops marked, in both places; Part 0 gets the whole building in the sidebar; every
    other page gets none, so it stays out of the way (its sidebar keeps the plain Floors section).

    Args:
        src_uri: The page's source path relative to `docs/`.
        url_of: Returns the URL of a source path relative to the page being rendered.

    Returns:
        `floors_gauge` (sidebar gauge HTML), `floors_gauge_replaces` (the title of the nav
        section it replaces), `floors_depth_bar` (phone bar HTML) and `floors_building`
        (Part 0's whole building); each `None` where the page has none.
    """
    gauges: dict[str, str | None] = dict.fromkeys(("floors_gauge", "floors_gauge_replaces", "floors_depth_bar"))
    floor = floor_for_page(src_uri)
    if floor is not None:
        kind: GaugeKind = "floor" if src_uri == floor.page else "lab"

        def href(f: Floor) -> str:
            return url_of(f.page if kind == "floor" else f.lab)

        elevator = url_of(COMPILER.page) if kind == "floor" else None
        gauges["floors_gauge"] = render_gauge(floor, href, map_href=url_of(MAP_PAGE), kind=kind, elevator_href=elevator)
        gauges["floors_gauge_replaces"] = "Floors" if kind == "floor" else "Labs"
        gauges["floors_depth_bar"] = render_depth_bar(floor, href, kind=kind)
    elif src_uri == COMPILER.page:

        def floor_href(f: Floor) -> str:
            return url_of(f.page)

        def section(stop: Stop) -> str:
            return f"#{stop.section}"

        gauges["floors_gauge"] = render_elevator(COMPILER, floor_href, section)
        gauges["floors_gauge_replaces"] = "Floors"
        gauges["floors_depth_bar"] = render_elevator_bar(COMPILER, floor_href, section)
    elif src_uri == MAP_PAGE:
        # Part 0 opens with the building, the gauge at full size: the sidebar points to it instead of
        # listing the floors a second time on the same screen.
        gauges["floors_gauge"] = render_gauge(None, lambda f: url_of(f.page))
        gauges["floors_gauge_replaces"] = "Floors"
        gauges["floors_building"] = "#the-building"
        gauges["floors_building_label"] = f"The {len(FLOORS)} floors: the building, on this page"
    return gauges
