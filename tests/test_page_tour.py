"""The browser tours' bookkeeping (tests/page_tour.py): what a test that reads a tour is told, and how a tour loads and
reads its pages (on a small site of its own)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import page_tour
import pytest
from page_tour import DESKTOP, PROBES, TABS_AT_ONCE, TOURS, Probe, Tour, Toured, Visit, take_tour
from playwright.sync_api import Browser

from conftest import LocalServer, SiteHandler


def test_a_probe_that_raised_fails_every_test_that_reads_it_naming_the_page_and_the_tour() -> None:
    record = {
        "facts": {"head": {"": {"h1": 90}}, "wide": {"": {"page": 390, "tables": []}}},
        "errors": {"head": ["floors/4-dispatcher/ at 390 px (slate): Timeout 30000ms exceeded"]},
    }
    toured = Toured(TOURS["phone-slate"], record)
    assert toured.facts("wide") == {"": {"page": 390, "tables": []}}, "a probe that raised nowhere reads as it found"
    with pytest.raises(AssertionError, match=r"'head' failed in the phone-slate tour:\nfloors/4-dispatcher/ at 390 px"):
        toured.facts("head")


def test_every_probe_runs_in_known_tours_and_each_tour_has_a_probe() -> None:
    names = [probe.name for probe in PROBES]
    assert len(names) == len(set(names)), "two probes would keep their facts under one name"
    unknown = {probe.name: sorted(set(probe.tours) - set(TOURS)) for probe in PROBES if set(probe.tours) - set(TOURS)}
    assert unknown == {}
    assert {tour for probe in PROBES for tour in probe.tours} == set(TOURS)
    assert [tour.name for tour in TOURS.values() if tour.every_page] == ["desktop-default"], "the load check's tour"


# ---- a tour of a small site of its own, with probes of its own ---------------------------------------

PAGE = """<!doctype html><html lang="en"><head><title>{name}</title></head>
<body data-md-color-scheme="default"><h1>{name}</h1>
<div style="height: 5000px"></div><p id="bottom">the bottom</p>
<script>
  // As Material's code blocks, the page changes when a full-page screenshot lays it out whole (it fires a resize);
  // and as the tier tabs' script, a choice the browser remembers is read a while after the page has loaded.
  addEventListener("resize", () => {{ document.getElementById("bottom").dataset.seen = ""; }});
  setTimeout(() => {{ window.remembered = localStorage.getItem("choice") || ""; }}, 300);
</script></body></html>
"""

PAGES = [f"page-{number}/" for number in range(9)]


@pytest.fixture
def small_site(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    for path in PAGES:
        (tmp_path / path).mkdir()
        (tmp_path / path / "index.html").write_text(PAGE.format(name=path), encoding="utf-8")
    (tmp_path / "index.html").write_text(PAGE.format(name="home"), encoding="utf-8")
    server = LocalServer(functools.partial(SiteHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", tmp_path
    server.check()


def tour_with(monkeypatch: pytest.MonkeyPatch, *probes: Probe) -> Tour:
    tour = Tour("small", DESKTOP, "default")
    monkeypatch.setattr(page_tour, "PROBES", probes)
    return tour


def _stamp(visit: Visit) -> Any:
    visit.tab.wait_for_timeout(300)  # a probe that takes a while
    return visit.tab.evaluate("({began: performance.timeOrigin, read: performance.timeOrigin + performance.now()})")


@pytest.mark.browser
def test_a_tour_loads_each_page_while_the_pages_before_it_are_read(
    browser: Browser, small_site: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each tab starts its next page once its own is read: the page after a tab's first was loading while the
    pages of the other tabs were read, instead of after all of them (and each waited out its network's quiet
    in turn)."""
    url, site = small_site
    tour = tour_with(monkeypatch, Probe("stamp", {"small": lambda _site: PAGES}, _stamp))
    record = take_tour(browser, url, site, tour, axe_core="", output_dir=None)
    assert record["errors"] == {}
    stamps = record["facts"]["stamp"]
    assert list(stamps) == PAGES
    late = [
        f"{path} began {stamps[path]['began'] - stamps[before]['read']:.0f} ms after {before} was read"
        for before, path in zip(PAGES[TABS_AT_ONCE - 1 :], PAGES[TABS_AT_ONCE:], strict=False)
        if stamps[path]["began"] >= stamps[before]["read"]
    ]
    assert late == []
    assert set(record["step_seconds"]) == {"navigate", "load", "palette"}
    assert list(record["page_seconds"]) == PAGES


@pytest.mark.browser
def test_no_page_loads_while_a_probe_changes_what_the_browser_remembers(
    browser: Browser, small_site: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe that changes what every page after reads (a machine's tab chosen, which Material keeps) runs with no
    page loading beside it: each page read what it would have read had the pages been loaded one by one."""
    url, site = small_site

    def choose(visit: Visit) -> Any:
        visit.tab.evaluate("localStorage.setItem('choice', 'a machine')")
        visit.tab.wait_for_timeout(600)
        visit.tab.evaluate("localStorage.setItem('choice', '')")  # chosen back, as the probe of the tiers does

    tour = tour_with(
        monkeypatch,
        Probe("remembered", {"small": lambda _site: PAGES}, lambda visit: visit.tab.evaluate("window.remembered")),
        Probe("choose", {"small": lambda _site: [PAGES[2]]}, choose, late=True, remembered=True),
    )
    record = take_tour(browser, url, site, tour, axe_core="", output_dir=None)
    assert record["errors"] == {}
    assert record["facts"]["remembered"] == dict.fromkeys(PAGES, "")


@pytest.mark.browser
@pytest.mark.parametrize("shots", [True, False], ids=["screenshots", "none"])
def test_screenshots_are_taken_when_asked_and_the_page_is_drawn_whole_either_way(
    browser: Browser, small_site: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shots: bool
) -> None:
    """`make screenshots` leaves them in test-output/, `make test` none; a probe after a full-page one reads the
    page as the screenshot left it either way (Material's code blocks change when the page is laid out whole)."""
    url, site = small_site

    def shoot(visit: Visit) -> Any:
        visit.screenshot("first-screen.png")
        before = visit.tab.evaluate("document.getElementById('bottom').dataset.seen !== undefined")
        visit.screenshot("whole/page.jpg", full_page=True)
        return {"before": before, "after": visit.tab.evaluate("document.getElementById('bottom').dataset.seen")}

    tour = tour_with(monkeypatch, Probe("shoot", {"small": lambda _site: [PAGES[0]]}, shoot))
    shots_dir = tmp_path / "shots"
    shots_dir.mkdir()
    record = take_tour(browser, url, site, tour, axe_core="", output_dir=shots_dir if shots else None)
    assert record["errors"] == {}
    assert record["facts"]["shoot"][PAGES[0]] == {"before": False, "after": ""}
    taken = sorted(path.relative_to(shots_dir).as_posix() for path in shots_dir.rglob("*.*"))
    assert taken == (["first-screen.png", "whole/page.jpg"] if shots else [])
