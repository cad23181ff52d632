"""The depth gauge: the floors (or their labs) as a vertical scale, the reader's floor marked.

Two renderings of one registry, never on the same screen:

- `render_gauge`: a vertical scale from floor 1 (your program, at the surface) down to
  the last floor. It takes the place of the Floors (or Labs) section of the left
  sidebar, so it *is* the floors' navigation. Floors already passed read differently
  from floors ahead; the reader's floor carries the orange dot and `aria-current`.
- `render_depth_bar`: on a phone, where the sidebar is a drawer, a compact bar of one
  segment per floor with the current floor named; it opens on tap into the same links.
  It is a `<details>` element, so it works without JavaScript.
- `render_elevator` and `render_elevator_bar`: the same two on an annex's page (`torch.compile`, `torch.distributed`),
  which is no floor: every floor is listed, and the floors the elevator stops at are marked, each with
  the stage that works there linked to its section. A floor page the elevator stops at links the
  elevator's page from its gauge.

Both are plain, accessible HTML, rendered from the package's templates (`gauge.html`,
`gauge_depth_bar.html` and the floors' list they share, `gauge_floors.html`): this module only chooses
the floors, their places, links and words, and the templates escape them. Colours come from CSS custom
properties (`docs/stylesheets/floors.css`), so they follow the light and dark palettes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytorch_floors.floors import ANNEXES, FLOORS, MAP_PAGE, Elevator, Floor, Stop, annex_for_page, floor_for_page
from pytorch_floors.i18n.languages import english_source, language_of, twin_uri
from pytorch_floors.i18n.messages import t
from pytorch_floors.render.templates import render

__all__ = ["GaugeKind", "page_gauges", "render_depth_bar", "render_elevator", "render_elevator_bar", "render_gauge"]

GaugeKind = Literal["floor", "lab"]
"""What the gauge's stops are: the floor pages or their labs."""


_Position = Literal["passed", "current", "ahead", "none"]
"""A floor's place relative to the reader's; `none` on the whole building, where no floor is the reader's."""


@dataclass(frozen=True)
class _StageLink:
    """On an elevator's page, the link from a floor it stops at to the section of the stage working there."""

    href: str
    stage: str
    work: str


@dataclass(frozen=True)
class _Item:
    """One floor of a gauge's list (`gauge_floors.html`), as plain text: the template escapes it."""

    href: str
    mark: str | None
    current: bool
    number: str
    title: str
    stage: _StageLink | None = None


@dataclass(frozen=True)
class _Step:
    """An up or down link under the gauge (`gauge.html`).

    The arrow is decoration; the accessible name is the words, which start the visible text too.
    """

    href: str
    arrow: str
    text: str
    rel: str
    css: str


@dataclass(frozen=True)
class _ElevatorLink:
    """A floor page's link to the elevator's section on the floor (`gauge.html`)."""

    href: str
    text: str


def _positions(current: Floor | None) -> list[tuple[Floor, _Position]]:
    places: list[tuple[Floor, _Position]] = []
    for floor in FLOORS:
        if current is None:
            position: _Position = "none"
        elif floor.number < current.number:
            position = "passed"
        elif floor.number == current.number:
            position = "current"
        else:
            position = "ahead"
        places.append((floor, position))
    return places


def _items(current: Floor | None, href_for: Callable[[Floor], str], kind: GaugeKind, language: str) -> list[_Item]:
    noun = "" if kind == "floor" else t("Lab ", language)
    return [
        _Item(
            href=href_for(floor),
            mark=None if position == "none" else position,
            current=position == "current",
            number=f"{noun}{floor.number}",
            title=floor.title_in(language),
        )
        for floor, position in _positions(current)
    ]


def _lower(text: str) -> str:
    """A caption inside a longer label: lower case starts it in English; Chinese has no case."""
    return text[:1].lower() + text[1:]


def _name(floor: Floor, kind: GaugeKind, language: str) -> str:
    """A floor's (or its lab's) number and title, as the gauge's up and down links name it."""
    if kind == "lab":
        return floor.lab_title_in(language)
    return floor.heading_in(language)


def _where(current: Floor, kind: GaugeKind, language: str) -> str:
    message = "Floor {number} of {total}" if kind == "floor" else "Lab {number} of {total}"
    return t(message, language, number=current.number, total=len(FLOORS))


def render_gauge(
    current: Floor | None,
    href_for: Callable[[Floor], str],
    *,
    map_href: str | None = None,
    kind: GaugeKind = "floor",
    elevators: Sequence[tuple[Elevator, str]] = (),
    language: str,
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
        elevators: Each annex (`ANNEXES`) with the link to its page; a floor an annex stops at links the
            stop's section, naming the stage that works on the floor.
        language: The page's language (`en`, `zh`).

    Returns:
        The gauge's HTML, a single `<nav class="floors-gauge">` element.
    """
    if current is not None:
        label = t(
            "Depth gauge: {where}, {title}",
            language,
            where=_lower(_where(current, kind, language)),
            title=current.title_in(language),
        )
        caption = _where(current, kind, language)
    else:
        # The registry's first and last floors, not typed: a floor added below the chip is the bottom.
        top, bottom = (_lower(floor.title_in(language)) for floor in (FLOORS[0], FLOORS[-1]))
        label = t(
            "Depth gauge: the {total} floors, from {top} to {bottom}",
            language,
            total=len(FLOORS),
            top=top,
            bottom=bottom,
        )
        caption = t("The {total} floors", language, total=len(FLOORS))
    steps: list[_Step] = []
    if current is not None:
        index = current.number - 1
        if index > 0:
            above = FLOORS[index - 1]
            text = t("Up: {name}", language, name=_name(above, kind, language))
            steps.append(_Step(href_for(above), "↑", text, rel="prev", css="floors-gauge__up"))
        elif map_href is not None:
            steps.append(_Step(map_href, "↑", t("Up to the map", language), rel="prev", css="floors-gauge__up"))
        if index + 1 < len(FLOORS):
            below = FLOORS[index + 1]
            text = t("Down: {name}", language, name=_name(below, kind, language))
            steps.append(_Step(href_for(below), "↓", text, rel="next", css="floors-gauge__down"))
    links = []
    for annex, annex_href in elevators:
        stop = annex.stop_at(current) if current is not None else None
        if stop is not None:
            # The annex's own words: "Express elevator: {stage} {work}", "Annex: {stage} {work}" (messages.zh.yml).
            text = t(annex.link, language, stage=stop.stage, work=stop.work_in(language))
            links.append(_ElevatorLink(href=f"{annex_href}#{stop.section}", text=text))
    return render(
        "gauge.html",
        language,
        kind=kind,
        label=label,
        caption=caption,
        items=_items(current, href_for, kind, language),
        steps=steps,
        elevators=links,
    )


def render_depth_bar(
    current: Floor, href_for: Callable[[Floor], str], *, kind: GaugeKind = "floor", language: str
) -> str:
    """Render the phone's compact depth bar: one segment per floor, the current one named.

    Tapping the bar opens the list of floors (or labs); it is a `<details>` element, so it
    needs no JavaScript. Wide screens hide it, because there the gauge sits in the sidebar.

    Args:
        current: The floor of the page being rendered.
        href_for: Returns the link to a floor's page (or lab page), relative to the current page.
        kind: `"floor"` or `"lab"`, as for `render_gauge`.
        language: The page's language (`en`, `zh`).

    Returns:
        The bar's HTML, a single `<nav class="floors-depthbar">` element.
    """
    where = _where(current, kind, language)
    return render(
        "gauge_depth_bar.html",
        language,
        kind=kind,
        label=t("Depth: {caption}", language, caption=_lower(where)),
        segments=[position for _, position in _positions(current)],
        where=where,
        name=current.title_in(language),
        items=_items(current, href_for, kind, language),
    )


def _stops_caption(elevator: Elevator, language: str) -> str:
    numbers = [str(stop.floor) for stop in elevator.stops]
    listed = (
        t("{first} and {last}", language, first=", ".join(numbers[:-1]), last=numbers[-1])
        if len(numbers) > 1
        else numbers[0]
    )
    return t("Stops at floors {listed} of {total}", language, listed=listed, total=len(FLOORS))


def _elevator_items(
    elevator: Elevator, href_for: Callable[[Floor], str], section_href: Callable[[Stop], str], language: str
) -> list[_Item]:
    items = []
    for floor in FLOORS:
        stop = elevator.stop_at(floor)
        stage = (
            None if stop is None else _StageLink(href=section_href(stop), stage=stop.stage, work=stop.work_in(language))
        )
        mark = "skipped" if stop is None else "stop"
        items.append(
            _Item(
                href_for(floor),
                mark,
                current=False,
                number=str(floor.number),
                title=floor.title_in(language),
                stage=stage,
            )
        )
    return items


def render_elevator(
    elevator: Elevator,
    href_for: Callable[[Floor], str],
    section_href: Callable[[Stop], str],
    *,
    language: str,
) -> str:
    """Render the gauge of an elevator's page: every floor, the floors it stops at marked with their stage.

    Args:
        elevator: The annex (`COMPILER`, `DISTRIBUTED`).
        href_for: Returns the link to a floor's page, relative to the elevator's page.
        section_href: Returns the link to a stop's section on the elevator's page (`#graph-capture`).
        language: The page's language (`en`, `zh`).

    Returns:
        The gauge's HTML, a single `<nav class="floors-gauge floors-gauge--elevator">` element.
    """
    caption = _stops_caption(elevator, language)
    return render(
        "gauge.html",
        language,
        kind="elevator",
        label=t(
            "Depth gauge: {title}, {caption}", language, title=elevator.title_in(language), caption=_lower(caption)
        ),
        caption=caption,
        items=_elevator_items(elevator, href_for, section_href, language),
        steps=[],
        elevators=[],
    )


def render_elevator_bar(
    elevator: Elevator,
    href_for: Callable[[Floor], str],
    section_href: Callable[[Stop], str],
    *,
    language: str,
) -> str:
    """Render the phone's bar on an elevator's page: one segment per floor, the stops marked; opens into the gauge.

    Args:
        elevator: The annex (`COMPILER`, `DISTRIBUTED`).
        href_for: Returns the link to a floor's page, relative to the elevator's page.
        section_href: Returns the link to a stop's section on the elevator's page.
        language: The page's language (`en`, `zh`).

    Returns:
        The bar's HTML, a single `<nav class="floors-depthbar floors-depthbar--elevator">` element.
    """
    caption = _stops_caption(elevator, language)
    return render(
        "gauge_depth_bar.html",
        language,
        kind="elevator",
        label=t("Depth: {caption}", language, caption=_lower(caption)),
        segments=["stop" if elevator.stop_at(floor) else "skipped" for floor in FLOORS],
        where=caption,
        name=None,
        items=_elevator_items(elevator, href_for, section_href, language),
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
    page_language = language_of(src_uri)
    language = page_language.code

    def url(src: str) -> str:  # the twin in the page's language
        return url_of(twin_uri(src, page_language))

    src_uri = english_source(src_uri)
    floor = floor_for_page(src_uri)
    if floor is not None:
        kind: GaugeKind = "floor" if src_uri == floor.page else "lab"

        def href(f: Floor) -> str:
            return url(f.page if kind == "floor" else f.lab)

        elevators = [(annex, url(annex.page)) for annex in ANNEXES] if kind == "floor" else []
        gauges["floors_gauge"] = render_gauge(
            floor, href, map_href=url(MAP_PAGE), kind=kind, elevators=elevators, language=language
        )
        gauges["floors_gauge_replaces"] = t("Floors", language) if kind == "floor" else t("Labs", language)
        gauges["floors_depth_bar"] = render_depth_bar(floor, href, kind=kind, language=language)
    elif (annex := annex_for_page(src_uri)) is not None:

        def floor_href(f: Floor) -> str:
            return url(f.page)

        def section(stop: Stop) -> str:
            return f"#{stop.section}"

        gauges["floors_gauge"] = render_elevator(annex, floor_href, section, language=language)
        gauges["floors_gauge_replaces"] = t("Floors", language)
        gauges["floors_depth_bar"] = render_elevator_bar(annex, floor_href, section, language=language)
    elif src_uri == MAP_PAGE:
        # Part 0 opens with the building, the gauge at full size: the sidebar points to it instead of
        # listing the floors a second time on the same screen.
        gauges["floors_gauge"] = render_gauge(None, lambda f: url(f.page), language=language)
        gauges["floors_gauge_replaces"] = t("Floors", language)
        gauges["floors_building"] = "#the-building"
        gauges["floors_building_label"] = t(
            "The {total} floors: the building, on this page", language, total=len(FLOORS)
        )
    return gauges
