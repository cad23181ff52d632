"""The reader on a phone (390 × 844), each check beside one that the desktop (1280 × 800) keeps its layout.

Real Chromium over the strictly built site (`built_site`), served on 127.0.0.1 (`site_url`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from bs4 import BeautifulSoup
from playwright.sync_api import Browser, Page, ViewportSize
from test_reader import DESKTOP, MOBILE, set_palette, site_pages

from conftest import Build
from pytorch_floors.floors import FLOORS

pytestmark = pytest.mark.browser

FLOOR_PAGES = [f"floors/{f.key}/" for f in FLOORS]
LAB_PAGES = [f"labs/{f.key}/" for f in FLOORS]

TITLE_WITHIN_PX = 170
"""On a phone a page's title starts this high at most: its first screen shows the title and the text under it."""


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=MOBILE, has_touch=True)
    yield context.new_page()
    context.close()


@pytest.fixture
def desktop(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=DESKTOP)
    yield context.new_page()
    context.close()


# ---- 2. the page's table of contents in a phone's drawer ------------------------------------------

SECTION_LINKS_JS = """
(scope) => [...document.querySelectorAll(`${scope} a[href]`)].filter(a => {
  const url = new URL(a.href, location.href);
  const r = a.getBoundingClientRect();
  return url.pathname === location.pathname && url.hash.length > 1
    && document.getElementById(decodeURIComponent(url.hash.slice(1)))
    && r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= innerWidth + 0.5
    && r.top >= 0 && r.bottom <= innerHeight && getComputedStyle(a).visibility !== 'hidden';
}).map(a => a.textContent.trim())
"""
"""The links to the page's own sections that `scope` shows on the screen now."""


def open_drawer(tab: Page) -> None:
    tab.locator("label.md-header__button[for='__drawer']").tap()
    tab.wait_for_function("document.getElementById('__drawer').checked")
    tab.wait_for_timeout(300)  # the drawer slides in


@pytest.mark.parametrize("path", [*FLOOR_PAGES, LAB_PAGES[3]])
def test_a_phones_drawer_keeps_the_gauge_and_offers_the_pages_sections(phone: Page, site_url: str, path: str) -> None:
    phone.goto(site_url + path)
    open_drawer(phone)
    drawer = phone.locator(".md-sidebar--primary")
    assert drawer.locator("nav.floors-gauge").is_visible(), "the gauge stays the floors' navigation in the drawer"
    contents = drawer.locator("label.md-nav__link[for='__toc']")
    assert contents.count() == 1 and contents.is_visible(), "the drawer has no entry for the page's contents"
    contents.tap()
    phone.wait_for_function("document.getElementById('__toc').checked")
    phone.wait_for_timeout(300)
    sections = phone.evaluate(SECTION_LINKS_JS, ".md-sidebar--primary")
    assert len(sections) >= 5, f"{path}: the drawer offers {len(sections)} links to the page's sections: {sections}"
    # A section link leads there and closes the drawer, as Material's own contents do.
    first = drawer.locator("nav.md-nav--secondary a.md-nav__link").nth(1)
    target = first.evaluate("a => new URL(a.href).hash.slice(1)")
    first.tap()
    phone.wait_for_function("!document.getElementById('__drawer').checked")
    box = phone.locator(f"[id='{target}']").bounding_box()
    assert box is not None and 0 <= box["y"] < 300, box


@pytest.mark.parametrize("path", [FLOOR_PAGES[3], LAB_PAGES[3]])
def test_the_desktop_keeps_the_gauge_on_the_left_and_the_contents_on_the_right(
    desktop: Page, site_url: str, path: str
) -> None:
    desktop.goto(site_url + path)
    assert desktop.locator(".md-sidebar--primary nav.floors-gauge").is_visible()
    assert not desktop.locator(".md-sidebar--primary label[for='__toc']").first.is_visible()
    assert desktop.evaluate(SECTION_LINKS_JS, ".md-sidebar--primary") == []
    assert len(desktop.evaluate(SECTION_LINKS_JS, ".md-sidebar--secondary")) >= 5


# ---- 3. the title on the first screen -------------------------------------------------------------

HEAD_JS = """
() => {
  const box = (e) => e && e.getClientRects().length ? e.getBoundingClientRect() : null;
  const h1 = box(document.querySelector('article h1'));
  const building = box(document.querySelector('article .floors-building'));
  return {h1: h1.top, building: building && {top: building.top, middle: building.top + building.height / 2}};
}
"""


def screenshot_name(path: str) -> str:
    """`part-0`, `floor-4-dispatcher`, `lab-4-dispatcher`: the page a screenshot shows."""
    kind, _, key = path.strip("/").partition("/")
    return f"{kind.removesuffix('s')}-{key}" if key else "part-0"


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_a_phone_shows_the_title_high_and_part_0_half_its_building(
    phone: Page, site_url: str, scheme: str, output_dir: Path
) -> None:
    shots = output_dir / "phone"
    shots.mkdir(exist_ok=True)
    late = []
    for path in ["", *FLOOR_PAGES, *LAB_PAGES]:
        phone.goto(site_url + path)
        set_palette(phone, scheme)
        head = phone.evaluate(HEAD_JS)
        if head["h1"] > TITLE_WITHIN_PX:
            late.append(f"{path or 'index'}: the title starts {head['h1']:.0f} px down")
        if path == "":
            assert head["building"] is not None, "Part 0 draws the building"
            if head["building"]["middle"] > MOBILE["height"]:
                late.append(f"index: the building's middle is {head['building']['middle']:.0f} px down")
        if path in ("", FLOOR_PAGES[3], LAB_PAGES[3]):
            phone.screenshot(path=str(shots / f"{screenshot_name(path)}-390-{scheme}.png"))
    assert late == [], "\n".join(late)


def test_the_phones_provenance_is_one_line_that_opens_in_full(phone: Page, site_url: str) -> None:
    phone.goto(site_url + FLOOR_PAGES[3])
    full = phone.locator(".floors-provenance")
    fold = phone.locator(".floors-provenance-fold")
    summary = fold.locator("summary")
    assert not full.is_visible() and summary.is_visible()
    line = phone.evaluate("parseFloat(getComputedStyle(document.querySelector('.floors-provenance-fold')).lineHeight)")
    closed = summary.bounding_box()
    assert closed is not None and closed["height"] < 2 * line, closed
    assert summary.inner_text().startswith("Measured on torch")
    caveat = fold.get_by_text("Your numbers will differ")
    assert not caveat.is_visible()
    summary.tap()
    assert fold.get_attribute("open") is not None and caveat.is_visible()
    opened = summary.bounding_box()
    assert opened is not None and opened["height"] > closed["height"], "opened, the whole line shows"
    # Wrapped within the screen's width (once Material's opening transition has run).
    phone.wait_for_function("(s) => s.scrollWidth <= s.clientWidth", arg=summary.element_handle(), timeout=2000)


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_desktop_keeps_its_header_the_full_provenance_and_no_depth_bar(
    desktop: Page, site_url: str, scheme: str, output_dir: Path
) -> None:
    shots = output_dir / "phone"
    shots.mkdir(exist_ok=True)
    for path in ["", FLOOR_PAGES[3], LAB_PAGES[3]]:
        desktop.goto(site_url + path)
        set_palette(desktop, scheme)
        full = desktop.locator(".floors-provenance")
        assert full.is_visible(), path
        assert re.match(r"Measured on torch .+\. Your numbers will differ; the patterns will not\.$", full.inner_text())
        assert not desktop.locator(".floors-provenance-fold").is_visible()
        assert not desktop.locator("nav.floors-depthbar").is_visible()
        # The sentence sits under the header's usual 1.5rem band, the title right below it.
        assert 90 <= full.bounding_box()["y"] <= 110, full.bounding_box()  # type: ignore[index]
        assert desktop.evaluate(HEAD_JS)["h1"] <= 0.25 * DESKTOP["height"]
        desktop.screenshot(path=str(shots / f"{screenshot_name(path)}-1280-{scheme}.png"))


# ---- 8. tables that fit, and the provenance only where something was measured --------------------

WIDE_JS = """
() => ({
  page: document.documentElement.scrollWidth,
  tables: [...document.querySelectorAll('article table')].filter(t => t.getClientRects().length).flatMap(t => {
    const r = t.getBoundingClientRect();
    const wrap = t.closest('.md-typeset__scrollwrap');
    const scrolls = wrap && wrap.scrollWidth > wrap.clientWidth + 1;
    return r.right > innerWidth + 0.5 || r.left < -0.5 || scrolls
      ? [`${(t.querySelector('caption, th') || t).textContent.trim().slice(0, 30)}: ${Math.round(r.width)} px`] : [];
  }),
})
"""


def test_no_page_or_table_is_wider_than_a_phone(phone: Page, site_url: str, built_site: Build) -> None:
    wide = []
    pages = site_pages(built_site.site)
    assert "build-report/" in pages and "reference/measure/" in pages
    for path in pages:
        phone.goto(site_url + path)
        found = phone.evaluate(WIDE_JS)
        if found["page"] > MOBILE["width"]:
            wide.append(f"{path or 'index'}: the page is {found['page']} px wide")
        wide += [f"{path}: table {table}" for table in found["tables"]]
    assert wide == [], "\n".join(wide[:20])


def test_a_phone_reads_each_report_row_with_its_column_names(phone: Page, site_url: str) -> None:
    phone.goto(site_url + "build-report/")
    for table in phone.locator("table.floors-report").all():
        headers = [text.strip() for text in table.locator("thead th").all_text_contents()]
        assert len(headers) == 5, headers
        # Still a table to a screen reader: the header row is there, out of sight.
        box = table.locator("thead").bounding_box()
        assert box is not None and box["width"] <= 1 and box["height"] <= 1, box
        row = table.locator("tbody tr").first
        labels = row.locator("td").evaluate_all("tds => tds.map(td => getComputedStyle(td, '::before').content)")
        assert [label.split("/")[0].strip().strip('"') for label in labels] == headers


@pytest.mark.parametrize("path", ["build-report/", "reference/gauge/"])
def test_the_desktop_keeps_its_tables(desktop: Page, site_url: str, path: str) -> None:
    desktop.goto(site_url + path)
    displays = desktop.locator("article table").evaluate_all("ts => ts.map(t => getComputedStyle(t).display)")
    assert displays and set(displays) == {"table"}, displays
    assert desktop.locator("article table thead").first.is_visible()


MEASURED = ["", *FLOOR_PAGES, *LAB_PAGES, "build-report/"]
MEASURED_NOTHING = ["cite/", "what-changed/", "proofs/", "reference/", "reference/measure/", "reference/gauge/"]


@pytest.mark.parametrize("viewport", [MOBILE, DESKTOP], ids=["390", "1280"])
def test_the_provenance_shows_only_where_something_was_measured(
    browser: Browser, site_url: str, viewport: ViewportSize
) -> None:
    context = browser.new_context(viewport=viewport)
    tab = context.new_page()
    visible = ".floors-provenance-fold > summary" if viewport is MOBILE else ".floors-provenance"
    wrong = []
    for path in [*MEASURED, *MEASURED_NOTHING]:
        tab.goto(site_url + path)
        shown = tab.locator(visible).is_visible()
        present = tab.locator(".floors-provenance, .floors-provenance-fold").count()
        if path in MEASURED and not shown:
            wrong.append(f"{path or 'index'} measured, but says not on what")
        if path in MEASURED_NOTHING and present:
            wrong.append(f"{path} measured nothing, but shows a provenance line")
    context.close()
    assert wrong == [], wrong


# ---- 5. file names in links keep their underscores ------------------------------------------------

CODE_LINKS_JS = """
() => [...document.querySelectorAll('article a')].filter(a => a.querySelector(':scope > code')
    && a.getClientRects().length && getComputedStyle(a).textDecorationLine.includes('underline'))
  .map(a => { const s = getComputedStyle(a);
              return {text: a.textContent.trim(), offset: parseFloat(s.textUnderlineOffset),
                      size: parseFloat(s.fontSize)}; })
"""


@pytest.mark.parametrize("viewport", [MOBILE, DESKTOP], ids=["390", "1280"])
def test_linked_file_names_keep_their_underscores(browser: Browser, site_url: str, viewport: ViewportSize) -> None:
    """The underline of a link whose text is code sits below the underscores (0.45em), not on them (0.15em)."""
    context = browser.new_context(viewport=viewport)
    tab = context.new_page()
    links: list[dict[str, Any]] = []
    for path in ["proofs/", FLOOR_PAGES[3]]:
        tab.goto(site_url + path)
        links += [{**link, "page": path} for link in tab.evaluate(CODE_LINKS_JS)]
    context.close()
    assert any(link["text"] == "walk_2_library.py" for link in links), "the Proofs page links walk_2_library.py"
    assert len({link["page"] for link in links}) == 2
    on_the_underscores = [link for link in links if link["offset"] < 0.4 * link["size"]]
    assert on_the_underscores == [], on_the_underscores[:5]


# ---- 4. folded answers stay out of the search index -----------------------------------------------


def plain(html: str) -> str:
    return " ".join(BeautifulSoup(html, "html.parser").get_text(" ").split())


def folded_answers(built_site: Build) -> dict[str, list[str]]:
    """Each lab page's folded answers ("What to notice") and solution cells, as plain text, per page."""
    answers: dict[str, list[str]] = {}
    for floor in FLOORS:
        page = f"labs/{floor.key}/"
        soup = BeautifulSoup((built_site.site / page / "index.html").read_text(encoding="utf-8"), "html.parser")
        found = []
        for details in soup.select("article details.success"):
            if details.summary:
                details.summary.decompose()
            found.append(" ".join(details.get_text(" ").split()))
        found += [" ".join(cell.get_text(" ").split()) for cell in soup.select("article .jp-Cell.celltag_solution")]
        answers[page] = [text for text in found if text]
    return answers


def sentences(text: str, words: int = 8) -> list[str]:
    """An answer's sentences of at least `words` words: a whole one tells the answer from the prompt,
    which may share a phrase with it."""
    return [s for s in re.split(r"(?<=[.!?;:])\s+", text) if len(s.split()) >= words]


def test_no_folded_answer_of_a_lab_is_in_the_search_index(built_site: Build) -> None:
    index = json.loads((built_site.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    indexed: dict[str, str] = {}
    for doc in index["docs"]:
        page = doc["location"].split("#")[0]
        indexed[page] = indexed.get(page, "") + " " + plain(doc["title"]) + " " + plain(doc["text"])
    answers = folded_answers(built_site)
    assert sum(len(a) for a in answers.values()) >= 4 * len(FLOORS), "the labs fold their answers"
    leaks = []
    for page, texts in answers.items():
        assert page in indexed, f"{page} left the index altogether"
        assert "Predict" in indexed[page], f"{page}: the lab's own prose should stay searchable"
        for text in texts:
            leaked = [sentence for sentence in sentences(text) if sentence in indexed[page]]
            if leaked:
                leaks.append(f"{page}: {leaked[0]!r}")
    assert leaks == [], f"{len(leaks)} folded answers are in the search index:\n" + "\n".join(leaks[:10])


# ---- accessibility at a phone's size --------------------------------------------------------------


def test_no_serious_accessibility_violations_on_a_phone(phone: Page, site_url: str) -> None:
    axe = Axe()
    problems = []
    for path in ["", FLOOR_PAGES[3], LAB_PAGES[3], "build-report/", "reference/gauge/"]:
        for scheme in ("default", "slate"):
            phone.goto(site_url + path)
            set_palette(phone, scheme)
            phone.wait_for_timeout(400)  # Material fades the colours between palettes
            if path == FLOOR_PAGES[3]:
                open_drawer(phone)
                phone.locator(".md-sidebar--primary label.md-nav__link[for='__toc']").tap()
                phone.wait_for_timeout(300)
            for violation in axe.run(phone).response["violations"]:
                if violation["impact"] in ("serious", "critical"):
                    nodes = [n["target"] for n in violation["nodes"][:3]]
                    problems.append(f"{path or 'index'} [{scheme}] {violation['id']}: {violation['help']} {nodes}")
    assert problems == [], "\n".join(problems)
