import re
from html import escape
from html.parser import HTMLParser

import pytest

from conftest import Build
from pytorch_floors.floors import ANNEXES, COMPILER, FLOORS, MAP_PAGE, Elevator, Floor, Stop
from pytorch_floors.i18n.messages import t
from pytorch_floors.render.gauge import (
    page_gauges,
    render_depth_bar,
    render_elevator,
    render_elevator_bar,
    render_gauge,
)

COUNT = len(FLOORS)
"""How many floors the registry holds: the gauge's count, never typed."""


def floor_id(floor: Floor) -> str:
    return floor.key


def above(floor: Floor) -> Floor | None:
    """The floor above `floor` in the registry (None for the top one)."""
    index = FLOORS.index(floor)
    return FLOORS[index - 1] if index > 0 else None


def below(floor: Floor) -> Floor | None:
    """The floor below `floor` in the registry (None for the bottom one)."""
    index = FLOORS.index(floor)
    return FLOORS[index + 1] if index + 1 < COUNT else None


def expected_positions(floor: Floor) -> list[str]:
    """The positions the gauge gives each floor when the reader is on `floor`: passed, current, ahead."""
    index = FLOORS.index(floor)
    return ["passed"] * index + ["current"] + ["ahead"] * (COUNT - index - 1)


class GaugeParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []
        self.navs: list[dict[str, str | None]] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))
            self._text = []
        if tag == "nav":
            self.navs.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._text is not None:
            self.links[-1]["text"] = "".join(self._text).strip()
            self._text = None


def href(floor: Floor) -> str:
    return f"../{floor.key}/"


def parse(current: Floor | None) -> GaugeParser:
    parser = GaugeParser()
    parser.feed(render_gauge(current, href, map_href="../../", language="en"))
    return parser


@pytest.mark.parametrize("floor", FLOORS, ids=floor_id)
def test_floor_page_gauge(floor: Floor) -> None:
    parser = parse(floor)
    assert len(parser.navs) == 1 and f"floor {floor.number} of {COUNT}" in (parser.navs[0]["aria-label"] or "")
    floor_links = [a for a in parser.links if a.get("class") is None]
    assert [a["href"] for a in floor_links] == [href(f) for f in FLOORS]
    current = [a for a in floor_links if a.get("aria-current") == "page"]
    assert len(current) == 1 and current[0]["href"] == href(floor)
    up = [a for a in parser.links if a.get("rel") == "prev"]
    down = [a for a in parser.links if a.get("rel") == "next"]
    upper, lower = above(floor), below(floor)
    if upper is None:
        assert up[0]["href"] == "../../"
    else:
        assert up[0]["href"] == href(upper)
        assert upper.title in (up[0]["text"] or "")
    if lower is None:
        assert down == []
    else:
        assert down[0]["href"] == href(lower)


def test_whole_building_when_no_floor() -> None:
    parser = parse(None)
    assert len(parser.links) == COUNT
    assert not any(a.get("aria-current") for a in parser.links)
    assert f"the {COUNT} floors" in (parser.navs[0]["aria-label"] or "")


def test_the_whole_buildings_label_runs_from_the_registrys_first_floor_to_its_last() -> None:
    """The label read "from your program to the chip", typed: a floor added below the chip was left out of it."""
    label = parse(None).navs[0]["aria-label"] or ""
    top, bottom = (title[:1].lower() + title[1:] for title in (FLOORS[0].title, FLOORS[-1].title))
    assert label.endswith(f", from {top} to {bottom}"), label


def test_titles_are_escaped() -> None:
    odd = Floor(1, "x", "<b>", "A summary that is long enough to pass the checks.", "<b>", "摘要")
    assert "<b>" not in render_gauge(odd, lambda f: "a&b", language="en")
    assert "a&amp;b" in render_gauge(odd, lambda f: "a&b", language="en")


def positions(html: str) -> list[str]:
    return re.findall(r'class="floors-gauge__floor(?: floors-gauge__floor--(\w+))?"', html)


@pytest.mark.parametrize("floor", FLOORS, ids=floor_id)
def test_floors_passed_current_and_ahead_read_differently(floor: Floor) -> None:
    html = render_gauge(floor, href, language="en")
    assert positions(html) == expected_positions(floor)
    assert f'<p class="floors-gauge__caption">Floor {floor.number} of {COUNT}</p>' in html


def test_whole_building_marks_no_floor_as_passed_or_ahead() -> None:
    assert positions(render_gauge(None, href, language="en")) == [""] * COUNT


@pytest.mark.parametrize("floor", FLOORS, ids=floor_id)
def test_lab_gauge_lists_labs_and_steps_between_labs(floor: Floor) -> None:
    parser = GaugeParser()
    parser.feed(render_gauge(floor, lambda f: f"../{f.key}-lab/", kind="lab", language="en"))
    assert f"lab {floor.number} of {COUNT}" in (parser.navs[0]["aria-label"] or "")
    down = [a for a in parser.links if a.get("rel") == "next"]
    lower = below(floor)
    if lower is None:
        assert down == []
    else:
        assert down[0]["href"] == f"../{lower.key}-lab/" and f"Lab {lower.number}" in (down[0]["text"] or "")
    labs = [a for a in parser.links if a.get("rel") is None]
    assert len(labs) == COUNT and (labs[0]["text"] or "").startswith(f"Lab {FLOORS[0].number}")


@pytest.mark.parametrize("floor", FLOORS[1:], ids=floor_id)
def test_step_links_name_themselves_by_their_visible_words(floor: Floor) -> None:
    # The accessible name is the link's text: the arrow is hidden, the words come first.
    upper = above(floor)
    assert upper is not None
    html = render_gauge(floor, href, language="en")
    assert f'<span aria-hidden="true">↑</span>Up: {escape(upper.heading)}</a>' in html


@pytest.mark.parametrize("floor", FLOORS, ids=floor_id)
def test_depth_bar_has_a_segment_per_floor_and_names_the_current_floor(floor: Floor) -> None:
    html = render_depth_bar(floor, href, language="en")
    segments = re.findall(r'<span class="floors-depthbar__segment--(\w+)">', html)
    assert segments == expected_positions(floor)
    assert "<details" in html and "<summary" in html and "<script" not in html
    summary = html[html.index("<summary") : html.index("</summary>")]
    assert f"Floor {floor.number} of {COUNT}" in summary and escape(floor.title) in summary
    parser = GaugeParser()
    parser.feed(html)
    assert [a["href"] for a in parser.links] == [href(f) for f in FLOORS]
    assert [a.get("aria-current") for a in parser.links].count("page") == 1


def url_of(src: str) -> str:
    return f"/{src}"


FLOOR, LOWER = FLOORS[0], FLOORS[1]
"""A floor and the one below it: any two neighbours of the registry would do."""


@pytest.mark.parametrize(
    ("src", "replaces", "bar"),
    [
        (FLOOR.page, "Floors", True),
        (FLOOR.lab, "Labs", True),
        (MAP_PAGE, "Floors", False),
        ("reference/gauge.md", None, False),
        ("proofs.md", None, False),
    ],
)
def test_each_page_gets_the_gauges_it_needs(src: str, replaces: str | None, bar: bool) -> None:
    gauges = page_gauges(src, url_of)
    assert gauges["floors_gauge_replaces"] == replaces
    assert (gauges["floors_gauge"] is not None) == (replaces is not None)
    assert (gauges["floors_depth_bar"] is not None) == bar
    if src == FLOOR.lab:
        assert f'href="/{LOWER.lab}"' in (gauges["floors_gauge"] or "")
        assert f'href="/{LOWER.page}"' not in (gauges["floors_gauge"] or "")


def test_part_0_points_the_sidebar_to_its_building_instead_of_listing_the_floors_again() -> None:
    """Part 0 draws the building (the gauge at full size) in its content; the sidebar only links to it."""
    gauges = page_gauges(MAP_PAGE, url_of)
    assert gauges["floors_building"] == "#the-building"
    assert str(COUNT) in (gauges["floors_building_label"] or "")
    assert all("floors_building" not in page_gauges(src, url_of) for src in (FLOOR.page, FLOOR.lab))


def test_the_built_part_0_lists_the_floors_once(built_site: Build) -> None:
    html = built_site.page("")
    sidebar = html[html.index('class="md-nav md-nav--primary"') : html.index('class="md-content"')]
    content = html[html.index('class="md-content"') :]
    assert 'href="#the-building"' in sidebar
    for floor in FLOORS:
        assert f'href="floors/{floor.key}/"' not in sidebar, floor.key
        assert f'href="floors/{floor.key}/"' in content, floor.key
    assert 'id="the-building"' in content


def section(stop: Stop) -> str:
    return f"#{stop.section}"


def test_the_elevator_gauge_lists_every_floor_and_marks_only_its_stops() -> None:
    html = render_elevator(COMPILER, href, section, language="en")
    marks = re.findall(r'class="floors-gauge__floor floors-gauge__floor--(\w+)"', html)
    assert marks == ["stop" if COMPILER.stop_at(f) else "skipped" for f in FLOORS]
    parser = GaugeParser()
    parser.feed(html)
    floor_links = [a["href"] for a in parser.links if a.get("class") is None]
    assert floor_links == [href(f) for f in FLOORS]
    stages = [a for a in parser.links if a.get("class") == "floors-gauge__stage"]
    assert [a["href"] for a in stages] == [section(stop) for stop in COMPILER.stops]
    assert [(a["text"] or "").split(":")[0] for a in stages] == [stop.stage for stop in COMPILER.stops]
    assert not any(a.get("aria-current") for a in parser.links)
    caption = f"Stops at floors {', '.join(str(s.floor) for s in COMPILER.stops[:-1])} and {COMPILER.stops[-1].floor}"
    assert f"{caption} of {COUNT}" in html


def test_the_elevator_bar_has_a_segment_per_floor_with_the_stops_marked() -> None:
    html = render_elevator_bar(COMPILER, href, section, language="en")
    segments = re.findall(r'<span class="floors-depthbar__segment--(\w+)">', html)
    assert segments == ["stop" if COMPILER.stop_at(f) else "skipped" for f in FLOORS]
    assert "<details" in html and "<script" not in html


@pytest.mark.parametrize("floor", FLOORS, ids=floor_id)
def test_a_floor_the_elevator_stops_at_links_its_page_and_no_other_floor_does(floor: Floor) -> None:
    html = render_gauge(floor, href, elevators=[(COMPILER, "/compile/")], language="en")
    stop = COMPILER.stop_at(floor)
    if stop is None:
        assert "/compile/" not in html
    else:
        assert f'href="/compile/#{stop.section}"' in html and stop.stage in html
    assert "/compile/" not in render_gauge(floor, href, kind="lab", language="en")


def test_the_elevator_page_gets_its_gauge_in_place_of_the_floors_and_a_phone_bar() -> None:
    gauges = page_gauges(COMPILER.page, url_of)
    assert gauges["floors_gauge_replaces"] == "Floors"
    assert "floors-gauge--elevator" in (gauges["floors_gauge"] or "")
    assert "floors-depthbar--elevator" in (gauges["floors_depth_bar"] or "")
    stop_floor = next(f for f in FLOORS if COMPILER.stop_at(f))
    assert f'href="/{COMPILER.page}#' in (page_gauges(stop_floor.page, url_of)["floors_gauge"] or "")
    assert f"/{COMPILER.page}" not in (page_gauges(stop_floor.lab, url_of)["floors_gauge"] or "")


@pytest.mark.parametrize("annex", ANNEXES, ids=lambda annex: annex.slug)
def test_a_floor_page_links_each_annex_that_stops_there_and_only_those(annex: Elevator) -> None:
    gauges = page_gauges(annex.page, url_of)
    assert "floors-gauge--elevator" in (gauges["floors_gauge"] or "")
    for floor in FLOORS:
        stop = annex.stop_at(floor)
        gauge = page_gauges(floor.page, url_of)["floors_gauge"] or ""
        if stop is None:
            assert f"/{annex.page}#" not in gauge, floor.number
        else:
            assert f'href="/{annex.page}#{stop.section}"' in gauge, floor.number
            assert escape(t(annex.link, "en", stage=stop.stage, work=stop.work)) in gauge


def test_a_chinese_gauge_says_in_chinese_what_each_compiler_stage_does() -> None:
    # The zh message dropped {work} ("直达电梯：Dynamo"), and the compile page's stops read
    # "Dynamo: captures Python frames as FX graphs" on the Chinese page.
    for stop in COMPILER.stops:
        floor = FLOORS[stop.floor - 1]
        html = render_gauge(floor, lambda f: f"../{f.key}/", elevators=[(COMPILER, "../../compile/")], language="zh")
        assert f"直达电梯：{stop.stage} {stop.work_zh}" in html and stop.work not in html
    stops = render_elevator(COMPILER, lambda f: f"floors/{f.key}/", lambda s: f"#{s.section}", language="zh")
    assert all(f"{stop.stage}：{stop.work_zh}" in stops and stop.work not in stops for stop in COMPILER.stops)
