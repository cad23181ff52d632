from html.parser import HTMLParser

import pytest

from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.gauge import render_gauge


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
    parser.feed(render_gauge(current, href, map_href="../../"))
    return parser


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_floor_page_gauge(floor: Floor) -> None:
    parser = parse(floor)
    assert len(parser.navs) == 1 and f"floor {floor.number} of 8" in (parser.navs[0]["aria-label"] or "")
    floor_links = [a for a in parser.links if a.get("class") is None]
    assert [a["href"] for a in floor_links] == [href(f) for f in FLOORS]
    current = [a for a in floor_links if a.get("aria-current") == "page"]
    assert len(current) == 1 and current[0]["href"] == href(floor)
    up = [a for a in parser.links if a.get("rel") == "prev"]
    down = [a for a in parser.links if a.get("rel") == "next"]
    if floor.number == 1:
        assert up[0]["href"] == "../../"
    else:
        assert up[0]["href"] == href(FLOORS[floor.number - 2])
        assert FLOORS[floor.number - 2].title in (up[0]["text"] or "")
    if floor.number == 8:
        assert down == []
    else:
        assert down[0]["href"] == href(FLOORS[floor.number])


def test_whole_building_when_no_floor() -> None:
    parser = parse(None)
    assert len(parser.links) == 8
    assert not any(a.get("aria-current") for a in parser.links)
    assert "the 8 floors" in (parser.navs[0]["aria-label"] or "")


def test_titles_are_escaped() -> None:
    odd = Floor(1, "x", "<b>", "A summary that is long enough to pass the checks.")
    assert "<b>" not in render_gauge(odd, lambda f: "a&b")
    assert "a&amp;b" in render_gauge(odd, lambda f: "a&b")
