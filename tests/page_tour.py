"""One tour of the built site per viewport and palette: each page loaded once, every page-level check read from it.

The reader's and the phone's suites (test_reader.py, test_phone.py) checked the same pages again and again:
a floor was loaded by the title test, the legibility test, the chart test, the accessibility test ... in each
viewport and palette, some 600 loads in all. A tour loads each page once per viewport and palette and runs
on it every probe that asks for that page: a probe reads what its test asserts (JSON facts, or the problems
axe-core finds) and the test asserts on them, with the same messages, naming page, viewport and palette.

A tour is made once per test run however many workers ask (`conftest.once_per_run`): its facts are JSON.
A probe that raises on a page is kept as that probe's error there, which fails the tests that read it.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from accessibility import serious_violations, settle
from playwright.sync_api import Browser, Page, Request, Response, ViewportSize

from conftest import ROOT
from pytorch_floors.floors import FLOORS

DESKTOP: ViewportSize = {"width": 1280, "height": 800}
MOBILE: ViewportSize = {"width": 390, "height": 844}

FLOOR_PAGES = [f"floors/{f.key}/" for f in FLOORS]
LAB_PAGES = [f"labs/{f.key}/" for f in FLOORS]


def site_pages(site: Path) -> list[str]:
    pages = []
    for index in sorted(site.rglob("index.html")):
        if 'http-equiv="refresh"' in index.read_text(encoding="utf-8", errors="ignore")[:3000]:
            continue  # a redirect stub, tested elsewhere
        relative = index.parent.relative_to(site).as_posix()
        pages.append("" if relative == "." else f"{relative}/")
    return pages


def first_lab(site: Path) -> str:
    labs = sorted(p.parent.relative_to(site).as_posix() + "/" for p in (site / "labs").glob("*/index.html"))
    assert labs, "the site has no lab pages"
    return labs[0]


def set_palette(tab: Page, scheme: str) -> None:
    current = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
    if current != scheme:
        tab.locator("form[data-md-component=palette] label:visible").first.click()
        tab.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'")
    settle(tab)  # Material fades the colours from one palette to the other


@dataclass(frozen=True)
class Tour:
    """A viewport and a palette that pages are toured in."""

    name: str
    viewport: ViewportSize
    scheme: str
    touch: bool = False
    every_page: bool = False
    """It loads every page of the site, whether a probe reads it or not (the check that every page loads cleanly)."""

    @property
    def where(self) -> str:
        return f"{self.viewport['width']} px ({self.scheme})"


TOURS = {
    tour.name: tour
    for tour in (
        Tour("desktop-default", DESKTOP, "default", every_page=True),
        Tour("desktop-slate", DESKTOP, "slate"),
        # A phone has touch: the phone's suite always toured with it, the reader's mobile checks (title, plot text)
        # without; one phone tour now serves both.
        Tour("phone-default", MOBILE, "default", touch=True),
        Tour("phone-slate", MOBILE, "slate", touch=True),
    )
}


@dataclass(frozen=True)
class Visit:
    """What a probe is given: the tab, on the page, in the tour's viewport and palette."""

    tab: Page
    path: str
    tour: Tour
    axe_core: str
    output_dir: Path | None
    """Where the screenshots for a person to look at go (`make screenshots`); None: none are taken."""
    site_url: str
    """The test server's root, which serves the page (and axe-core's script: `conftest.AXE_CORE_ADDRESS`)."""

    def screenshot(self, name: str, *, full_page: bool = False) -> None:
        """The page as the tab shows it, into `output_dir` as `name` (a JPEG if it ends so), if screenshots are wanted.

        A full page is also what Material's lazy code blocks see (`draw_whole_page`), taken or not.
        """
        if self.output_dir is None:
            if full_page:
                draw_whole_page(self.tab)
            return
        path = self.output_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".jpg"):
            # A JPEG, since PNG-encoding a page some 20,000 px tall took about a second a floor.
            self.tab.screenshot(path=str(path), full_page=full_page, type="jpeg", quality=80)
        else:
            self.tab.screenshot(path=str(path), full_page=full_page)


WHOLE_PAGE_JS = "() => ({width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight})"


def draw_whole_page(tab: Page) -> None:
    """Draw the whole page at once, as a full-page screenshot does, into a picture 1/64 its size that nobody keeps.

    A full-page screenshot lays the page out whole for a moment (the browser fires `resize`), and Material's code
    blocks change on it: on floor 4 at 1280 px, 20 code blocks gained a tabindex (Material makes them focusable).
    The checks read after it (axe's among them) have always read the page so changed; without the screenshot,
    this keeps them reading the same page in a fraction of the time (drawing and encoding the picture at full
    size was most of a screenshot's). It is the capture Playwright makes for a full page (`Page.captureScreenshot`
    beyond the viewport), only smaller.
    """
    size = tab.evaluate(WHOLE_PAGE_JS)
    session = tab.context.new_cdp_session(tab)
    try:
        clip = {"x": 0, "y": 0, **size, "scale": 1 / 64}
        session.send(
            "Page.captureScreenshot", {"format": "jpeg", "quality": 10, "clip": clip, "captureBeyondViewport": True}
        )
    finally:
        session.detach()


@dataclass(frozen=True)
class Probe:
    """What a test reads from each page it checks, in the tours it checks them in.

    Attributes:
        name: The key its facts are kept under.
        tours: The tours it runs in, each with the pages it reads there (given the built site).
        read: Reads the page as it is now into JSON facts.
        late: It changes the page (opens every fold): it runs after the probes that read the page as loaded.
        remembered: It changes what the browser remembers for the next pages (a machine's tab chosen, which
            Material keeps for every page): no other page loads while it runs.
    """

    name: str
    tours: dict[str, Callable[[Path], Iterable[str]]]
    read: Callable[[Visit], Any]
    late: bool = False
    remembered: bool = False


# ---- the probes' scripts ---------------------------------------------------------------------------

FIRST_SCREEN_JS = """
() => {
  const h1 = document.querySelector('article h1');
  const h2s = [...document.querySelectorAll('article h2')];
  const size = (e) => parseFloat(getComputedStyle(e).fontSize);
  const weight = (e) => parseInt(getComputedStyle(e).fontWeight);
  return {
    top: h1.getBoundingClientRect().top, h1size: size(h1), h1weight: weight(h1),
    h2size: Math.max(0, ...h2s.map(size)), h2weight: Math.max(0, ...h2s.map(weight)),
    width: document.documentElement.scrollWidth,
  };
}
"""

COLOURS_JS = """
(selector) => {
  const parse = (c) => {
    const m = c.match(/[\\d.]+/g).map(Number);
    return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1];
  };
  const blend = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3]));
  return [...document.querySelectorAll(selector)].filter(e => e.getClientRects().length).map(e => {
    const style = getComputedStyle(e);
    const fg = parse(e instanceof SVGElement ? style.fill : style.color);
    let layers = [];
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const bg = parse(getComputedStyle(n).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] === 1) break;
    }
    let bg = [255, 255, 255];
    for (const layer of layers.reverse()) bg = blend(layer, bg);
    return {text: (e.textContent || '').trim().slice(0, 40), fg: blend(fg, bg), bg};
  });
}
"""

LEGIBLE = (
    ("nav.floors-gauge .floors-gauge__name", 4.5),
    ("nav.floors-gauge .floors-gauge__steps a", 4.5),
    (".floors-proof__output code", 4.5),
    ("svg.floors-plot text", 4.5),
)
"""The gauge's, the proofs' and the plots' text, each with the contrast it needs at least."""

PLOT_TEXT_JS = """
() => {
  const measure = root => [...root.querySelectorAll('svg.floors-plot')].filter(svg => svg.getClientRects().length)
    .flatMap(svg => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')].map(t => ({
        text: t.textContent.slice(0, 30), px: parseFloat(getComputedStyle(t).fontSize) * scale}));
    });
  // The charts shown at first, then each other machine's (a tab's chart is laid out once it is open).
  const sizes = measure(document);
  for (const set of document.querySelectorAll('.tabbed-set')) {
    const inputs = [...set.querySelectorAll(':scope > input')];
    for (const input of inputs.slice(1)) {
      input.checked = true;
      sizes.push(...measure(set));
    }
    if (inputs.length) inputs[0].checked = true;
  }
  return sizes;
}
"""

WIDE_OUTPUTS_JS = """
() => [...document.querySelectorAll('.floors-proof__output pre > code, pre.floors-output > code')]
  .filter(c => c.getClientRects().length && c.scrollWidth > c.clientWidth + 1)
  .map(c => c.textContent.split('\\n')[0].slice(0, 60))
"""

OUTPUT_WIDTHS_JS = """
() => [...document.querySelectorAll('.floors-proof__output pre > code')].filter(c => c.getClientRects().length)
  .map(c => {
    const pre = c.parentElement;
    const sign = getComputedStyle(pre, '::before');
    const edge = c.getBoundingClientRect().left + c.clientWidth - parseFloat(getComputedStyle(c).paddingRight);
    const past = (line) => { const r = document.createRange(); r.selectNodeContents(line);
                             return r.getBoundingClientRect().right > edge + 1; };
    return {
      first: c.textContent.split('\\n')[0].slice(0, 50),
      ratio: c.scrollWidth / c.clientWidth,
      wide: c.scrollWidth > c.clientWidth + 1,
      sign: pre.getAttribute('data-floors-scrolls'),
      drawn: sign.content !== 'none' && sign.display !== 'none' && sign.visibility !== 'hidden'
        && parseFloat(sign.fontSize) >= 9,
      tier: pre.closest('.tabbed-block[data-tier]')?.dataset.tier || null,
      marked_past: [...c.querySelectorAll('.hll')].some(past),
    };
  })
"""
"""Each proof output shown now: its width over the column's (`ratio`), whether it scrolls, the sign over it (its
words, and whether it is drawn legibly), the machine's tab it is in, and whether a line marked as differing runs
past the column's edge."""

CHOOSE_TAB_JS = """
async (label) => {
  const chosen = [...document.querySelectorAll('.floors-tiers > .tabbed-labels > label')]
    .find(l => (l.dataset.tier || '') === label);
  if (!chosen) return false;
  chosen.click();
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 50))));
  return true;
}
"""
"""Choose a machine's tab (its tier; '' for this build) on every block of the page (Material links them)."""

TIERS_SHOWN_JS = """
() => [...document.querySelectorAll('.floors-tiers__lazy[data-floors-tier-output]')]
  .filter(lazy => lazy.checkVisibility())
  .every(lazy => ['loaded', 'failed'].includes(lazy.dataset.floorsTierState))
"""
"""Whether every recorded machine's output the page shows now is filled in (or said to have failed)."""


SIGN_OF_JS = """
async (lines) => {
  // A made-up output of `lines` ([text, marked]) added to the page's first proof: the sign the page's script gives it.
  const output = document.createElement('div');
  output.className = 'floors-proof__output';
  output.innerHTML = '<div class="highlight"><pre><code></code></pre></div>';
  const code = output.querySelector('code');
  for (const [text, marked] of lines) {
    const line = document.createElement('span');
    if (marked) line.className = 'hll';
    line.textContent = text + '\\n';
    code.append(marked ? line : line.textContent);
  }
  document.querySelector('article .floors-proof').append(output);
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 50))));
  const sign = output.querySelector('pre').getAttribute('data-floors-scrolls');
  output.remove();
  return sign;
}
"""

SIGN_CASES = {
    "fits": [["a short line", False], ["a short marked line", True]],
    "wide": [["a short marked line", True], ["x" * 200, False]],
    "wide_marked": [["a short line", False], ["x" * 200, True]],
}
"""Made-up outputs: one that fits, one whose unmarked line runs past the edge, one whose marked line does."""


def output_widths(tab: Page) -> list[dict[str, Any]]:
    """The proof outputs `tab` shows now, each as `OUTPUT_WIDTHS_JS` reads it."""
    found: list[dict[str, Any]] = tab.evaluate(OUTPUT_WIDTHS_JS)
    return found


def wide_share(outputs: list[dict[str, Any]]) -> tuple[float, float]:
    """The share of `outputs` wider than the column, and the median of their widths over the column's."""
    ratios = sorted(output["ratio"] for output in outputs)
    middle = len(ratios) // 2
    median = ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2
    return sum(output["wide"] for output in outputs) / len(outputs), median


NAMES_JS = """
() => [...document.querySelectorAll('[aria-label], [title]')]
  .map(e => (e.getAttribute('aria-label') || '') + ' ' + (e.getAttribute('title') || ''))
  .filter(name => /&[a-z]+;|&#\\d+;|¶/.test(name))
"""

HEAD_JS = """
() => {
  const box = (e) => e && e.getClientRects().length ? e.getBoundingClientRect() : null;
  const h1 = box(document.querySelector('article h1'));
  const building = box(document.querySelector('article .floors-building'));
  return {h1: h1.top, building: building && {top: building.top, middle: building.top + building.height / 2}};
}
"""

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

SPLIT_WORDS_JS = """
() => [...document.querySelectorAll('article table:not([class]) td :is(strong, em, b)')]
  .filter(e => !/\\s/.test(e.textContent.trim()) && e.textContent.trim().length > 1)
  .filter(e => e.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(e).lineHeight))
  .map(e => e.textContent.trim())
"""
"""The one-word emphases in a Markdown table's cells that the phone breaks over two lines."""


def _bench_reader() -> Any:
    """bench/reader.py, whose chart audit the chart test holds to zero."""
    spec = importlib.util.spec_from_file_location("bench_reader", ROOT / "bench" / "reader.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CHART_LAYOUT_JS: str = _bench_reader().CHART_LAYOUT_JS
"""Each chart of a page: its words outside what the reader sees of it, its overlapping pairs, its smallest text."""

OPENED_WIDE_JS = """
async () => {
  for (const details of document.querySelectorAll('article details')) details.open = true;
  await new Promise(done => requestAnimationFrame(() => setTimeout(done, 50)));
  // An element past the screen's edge, unless a box around it that fits the screen scrolls or clips it.
  const fits = (e) => { const r = e.getBoundingClientRect(); return r.left >= -0.5 && r.right <= innerWidth + 0.5; };
  const sticking = [...document.querySelectorAll('article *')].filter(e => {
    if (!e.getClientRects().length || fits(e)) return false;
    for (let n = e.parentElement; n && n !== document.body; n = n.parentElement) {
      if (getComputedStyle(n).overflowX !== 'visible') return !fits(n);
    }
    return true;
  });
  return {
    width: document.documentElement.scrollWidth,
    sticking: sticking.slice(0, 5).map(e => `${e.tagName.toLowerCase()}.${e.getAttribute('class') || ''}: `
      + `${(e.textContent || '').trim().slice(0, 50)} (to ${Math.round(e.getBoundingClientRect().right)} px)`),
  };
}
"""

CODE_ROWS_JS = r"""
async () => {
  for (const details of document.querySelectorAll('article details')) details.open = true;
  await new Promise(done => requestAnimationFrame(() => setTimeout(done, 50)));
  // Each line of each code block and output, as the rows it is drawn on: [{left, top}] per row.
  // The one-page program's opening line wraps on a phone (floors.css): it is read, not scanned by column.
  const opening = 'h2#what-you-see + p + .highlight pre, h2#what-you-see + .highlight pre';
  return [...document.querySelectorAll('article pre')].filter(pre => pre.getClientRects().length)
    .filter(pre => !(matchMedia('(max-width: 44.984375em)').matches && pre.matches(opening))).map(pre => {
    const block = pre.querySelector(':scope > code') || pre;
    const lines = [[]];
    // Whether each line is a printed sentence of an output, which wraps on a phone (render/output_lines.py).
    const prose = [false];
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parts = node.textContent.split('\n');
      let offset = 0;
      parts.forEach((part, index) => {
        if (index) { lines.push([]); prose.push(false); }
        if (part.length && node.parentElement.closest('.floors-line:not(.floors-line--row)')) {
          prose[prose.length - 1] = true;
        }
        if (part.length) {
          const range = document.createRange();
          range.setStart(node, offset);
          range.setEnd(node, offset + part.length);
          const row = lines[lines.length - 1];
          for (const r of range.getClientRects()) if (r.width > 0) row.push({left: r.left, top: r.top});
        }
        offset += part.length + 1;
      });
    }
    const box = pre.getBoundingClientRect();
    const ch = parseFloat(getComputedStyle(block).fontSize) * 0.6;
    const rows = lines.map(boxes => {
      const tops = [...new Set(boxes.map(b => Math.round(b.top)))].sort((a, b) => a - b);
      return tops.map(top => Math.min(...boxes.filter(b => Math.round(b.top) === top).map(b => b.left)));
    });
    const kept = rows.map((r, i) => [r, prose[i]]).filter(([r]) => r.length);
    return {text: block.textContent.slice(0, 40), right: box.right, ch, rows: kept.map(([r]) => r),
            prose: kept.map(([, p]) => p)};
  });
}
"""

CODE_LINKS_JS = """
() => [...document.querySelectorAll('article a')].filter(a => a.querySelector(':scope > code')
    && a.getClientRects().length && getComputedStyle(a).textDecorationLine.includes('underline'))
  .map(a => { const s = getComputedStyle(a);
              return {text: a.textContent.trim(), offset: parseFloat(s.textUnderlineOffset),
                      size: parseFloat(s.fontSize)}; })
"""


# ---- the pages each probe reads ---------------------------------------------------------------------


def reader_pages(site: Path) -> list[str]:
    """The pages a reader opens first: Part 0, the floors, a lab, the proofs, the citation, a reference page."""
    return ["", *FLOOR_PAGES, first_lab(site), "proofs/", "cite/", "reference/measure/"]


def accessibility_targets(site: Path) -> list[str]:
    targets = ["", *FLOOR_PAGES, "reference/measure/", first_lab(site)]
    # The Chinese edition: Part 0, a floor with every kind of block, a lab and the build report.
    return [*targets, "zh/", f"zh/floors/{FLOORS[3].key}/", f"zh/{first_lab(site)}", "zh/build-report/"]


PHONE_AXE_EVERY = [
    "",
    *FLOOR_PAGES,
    *LAB_PAGES,
    "proofs/",
    "cite/",
    "what-changed/",
    "build-report/",
    "reference/",
    "how-it-works/",
    "instructors/",
    "reference/gauge/",
]
"""The pages the phone's accessibility check reads in the light palette: every page of the site's own."""

PHONE_AXE_DARK = ["", FLOOR_PAGES[len(FLOOR_PAGES) // 2], LAB_PAGES[3], "build-report/", "reference/gauge/"]
"""... and in the dark one."""

MEASURED = ["", *FLOOR_PAGES, *LAB_PAGES, "build-report/"]
MEASURED_NOTHING = ["cite/", "what-changed/", "proofs/", "reference/", "reference/measure/", "reference/gauge/"]
CHART_PAGES = ["", *FLOOR_PAGES, *LAB_PAGES]
CODE_PAGES = [FLOOR_PAGES[3], FLOOR_PAGES[6], LAB_PAGES[2], LAB_PAGES[3]]
CODE_LINK_PAGES = ["proofs/", FLOOR_PAGES[3]]
OUTPUT_PAGES = [
    f"{language}floors/{floor.key}/" for language in ("", "zh/") for floor in FLOORS if floor.number in (3, 4, 6, 7, 8)
]
"""The floors whose proofs print the widest outputs, in both languages: their widths on a phone are measured."""


def pages_with_tables(site: Path) -> list[str]:
    return [path for path in site_pages(site) if "<table>" in (site / path / "index.html").read_text(encoding="utf-8")]


def _listed(pages: Iterable[str]) -> Callable[[Path], Iterable[str]]:
    fixed = list(pages)
    return lambda _site: fixed


def screenshot_name(path: str) -> str:
    """`part-0`, `floor-4-dispatcher`, `lab-4-dispatcher`: the page a screenshot shows."""
    kind, _, key = path.strip("/").partition("/")
    return f"{kind.removesuffix('s')}-{key}" if key else "part-0"


# ---- the probes -----------------------------------------------------------------------------------


def _first_screen(visit: Visit) -> Any:
    if visit.path == "floors/4-dispatcher/":
        visit.screenshot(f"floor-4-{visit.tour.viewport['width']}-{visit.tour.scheme}.png")
    return visit.tab.evaluate(FIRST_SCREEN_JS)


def _colours(visit: Visit) -> Any:
    found = {selector: visit.tab.evaluate(COLOURS_JS, selector) for selector, _ in LEGIBLE}
    # The whole page, for a person to look over (drawn whole without it: the probes after this read it so).
    key = visit.path.strip("/").split("/")[-1]
    visit.screenshot(f"floor-{key}-{visit.tour.scheme}.jpg", full_page=True)
    return found


def _head(visit: Visit) -> Any:
    head = visit.tab.evaluate(HEAD_JS)
    if visit.path in ("", FLOOR_PAGES[3], LAB_PAGES[3]):
        visit.screenshot(f"phone/{screenshot_name(visit.path)}-390-{visit.tour.scheme}.png")
    return head


def _axe(visit: Visit) -> list[str]:
    if visit.tour.touch:  # the phone's check, as it always did, once Material has drawn the edition selector
        visit.tab.wait_for_selector(".md-version__current")
    where = f"{visit.path or 'index'} [{visit.tour.scheme}]"
    return serious_violations(visit.tab, visit.axe_core, where, served_from=visit.site_url)


def _opening(visit: Visit) -> Any:
    first = visit.tab.locator("h2#what-you-see ~ .highlight pre > code").first
    found: dict[str, Any] = {"overflow": first.evaluate("c => c.scrollWidth - c.clientWidth")}
    if visit.path == FLOOR_PAGES[3]:
        found["scrolling"] = visit.tab.locator("article pre > code").evaluate_all(
            "cs => cs.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => getComputedStyle(c).backgroundImage)"
        )
    return found


VISIBLE_LINKS_TO = """
(key) => [...document.querySelectorAll('a[href]')].filter(a => {
  const r = a.getBoundingClientRect();
  const url = new URL(a.href);
  return a.closest('nav, .md-sidebar') && !a.rel && !url.hash && url.pathname.endsWith(`/floors/${key}/`)
    && r.width > 0 && r.height > 0
    && r.right > 0 && r.left < innerWidth && r.bottom > 0 && r.top < innerHeight
    && getComputedStyle(a).visibility !== 'hidden'
    // a closed menu's links are laid out but transparent (the header's language selector)
    && a.checkVisibility({opacityProperty: true, visibilityProperty: true});
}).length
"""
"""How many navigation links to a floor (its key) are in view: the floors' list appears once on the screen."""


def _gauge(visit: Visit) -> Any:
    """The desktop's gauge in the primary sidebar, as the reader sees it on a floor."""
    tab = visit.tab
    gauge = tab.locator(".md-sidebar--primary nav.floors-gauge")
    return {
        "count": gauge.count(),
        "visible": gauge.is_visible(),
        "current_marks": tab.locator('nav.floors-gauge [aria-current="page"]').count(),
        "current": tab.locator('nav.floors-gauge a[aria-current="page"]').inner_text(),
        "caption": gauge.locator(".floors-gauge__caption").inner_text(),
        "depthbar_visible": tab.locator("nav.floors-depthbar").is_visible(),
        "links_to_floor_1": tab.evaluate(VISIBLE_LINKS_TO, FLOORS[0].key),
    }


def _depth_bar(visit: Visit) -> Any:
    """The phone's depth bar on a floor: what it says closed, then what a tap on it opens."""
    tab = visit.tab
    bar = tab.locator("nav.floors-depthbar")
    summary = bar.locator("summary")
    links = bar.locator("a")
    found: dict[str, Any] = {
        "visible": bar.is_visible(),
        "summary": summary.inner_text(),
        "segments": bar.locator(".floors-depthbar__segments > span").count(),
        "closed_link_visible": links.first.is_visible(),
    }
    summary.tap()
    found |= {
        "links": links.count(),
        "open_link_visible": links.first.is_visible(),
        "current": bar.locator('a[aria-current="page"]').inner_text(),
        "links_to_floor_1": tab.evaluate(VISIBLE_LINKS_TO, FLOORS[0].key),
    }
    return found


def _output_widths(visit: Visit) -> Any:
    """The outputs as the page opens, then with each recorded machine's tab chosen (its output fetched when lazy)."""
    tab = visit.tab
    found = {"": output_widths(tab)}
    tiers = tab.locator(".floors-tiers > .tabbed-labels > label[data-tier]").evaluate_all(
        "labels => [...new Set(labels.map(l => l.dataset.tier))]"
    )
    for tier in tiers:
        tab.evaluate(CHOOSE_TAB_JS, tier)
        # Until every shown tab's recording is in (or failed): the page fetches its tiers' file once, so waiting
        # for the network to be quiet waited half a second per tab for nothing after the first.
        tab.wait_for_function(TIERS_SHOWN_JS, timeout=5000)
        tab.evaluate(CHOOSE_TAB_JS, tier)  # measured once drawn
        found[tier] = output_widths(tab)
    tab.evaluate(CHOOSE_TAB_JS, "")  # this build again: Material remembers the choice for the next page
    return {"shown": found, "signs": {case: tab.evaluate(SIGN_OF_JS, lines) for case, lines in SIGN_CASES.items()}}


def _provenance(visit: Visit) -> Any:
    return {
        "shown": visit.tab.locator(".floors-provenance-fold > summary").is_visible(),
        "present": visit.tab.locator(".floors-provenance, .floors-provenance-fold").count(),
    }


EVERY_TOUR = tuple(TOURS)

PROBES = (
    # First on a page: it counts the links in view, before anything could scroll.
    Probe("gauge", {"desktop-default": _listed(FLOOR_PAGES)}, _gauge),
    Probe(
        "first_screen",
        dict.fromkeys(EVERY_TOUR, reader_pages),
        _first_screen,
    ),
    Probe(
        "colours",
        dict.fromkeys(("desktop-default", "desktop-slate"), _listed(FLOOR_PAGES)),
        _colours,
    ),
    Probe("plot_text", {"phone-default": _listed(FLOOR_PAGES)}, lambda v: v.tab.evaluate(PLOT_TEXT_JS)),
    Probe("wide_outputs", {"desktop-default": _listed(["", *FLOOR_PAGES])}, lambda v: v.tab.evaluate(WIDE_OUTPUTS_JS)),
    Probe("names", {"desktop-default": _listed(["", *FLOOR_PAGES])}, lambda v: v.tab.evaluate(NAMES_JS)),
    Probe(
        "axe",
        {
            "desktop-default": accessibility_targets,
            "desktop-slate": accessibility_targets,
            "phone-default": _listed(PHONE_AXE_EVERY),
            "phone-slate": _listed(PHONE_AXE_DARK),
        },
        _axe,
    ),
    Probe("head", dict.fromkeys(("phone-default", "phone-slate"), _listed(["", *FLOOR_PAGES, *LAB_PAGES])), _head),
    Probe("wide", {"phone-default": site_pages}, lambda v: v.tab.evaluate(WIDE_JS)),
    Probe("split_words", {"phone-default": pages_with_tables}, lambda v: v.tab.evaluate(SPLIT_WORDS_JS)),
    Probe("charts", dict.fromkeys(EVERY_TOUR, _listed(CHART_PAGES)), lambda v: v.tab.evaluate(CHART_LAYOUT_JS)),
    Probe("opening", dict.fromkeys(("phone-default", "phone-slate"), _listed(FLOOR_PAGES)), _opening),
    Probe(
        "provenance",
        dict.fromkeys(("desktop-default", "phone-default"), _listed([*MEASURED, *MEASURED_NOTHING])),
        _provenance,
    ),
    Probe(
        "code_links",
        dict.fromkeys(("desktop-default", "phone-default"), _listed(CODE_LINK_PAGES)),
        lambda v: v.tab.evaluate(CODE_LINKS_JS),
    ),
    Probe("output_widths", {"phone-default": _listed(OUTPUT_PAGES)}, _output_widths, late=True, remembered=True),
    # Last on a page: these open folds (the depth bar's by a tap, then every fold of the article).
    Probe("depth_bar", {"phone-default": _listed(FLOOR_PAGES)}, _depth_bar, late=True),
    Probe(
        "opened_wide",
        dict.fromkeys(("phone-default", "phone-slate"), _listed(LAB_PAGES)),
        lambda v: v.tab.evaluate(OPENED_WIDE_JS),
        late=True,
    ),
    Probe(
        "code_rows",
        dict.fromkeys(("desktop-default", "phone-default"), _listed(CODE_PAGES)),
        lambda v: v.tab.evaluate(CODE_ROWS_JS),
        late=True,
    ),
)


TABS_AT_ONCE = 4
"""Pages a tour has open at once: each loads, and waits out its network's half second of quiet, while the
pages before it are read."""


def tour_plan(site: Path, tour: Tour) -> dict[str, list[Probe]]:
    """The pages `tour` loads, in the site's order, each with the probes that read it (the late ones last)."""
    wanted: dict[str, list[Probe]] = {}
    for probe in sorted((p for p in PROBES if tour.name in p.tours), key=lambda p: p.late):
        for path in probe.tours[tour.name](site):
            wanted.setdefault(path, []).append(probe)
    every = site_pages(site)
    if tour.every_page:
        for path in every:
            wanted.setdefault(path, [])
    order = {path: index for index, path in enumerate(every)}
    return {path: wanted[path] for path in sorted(wanted, key=lambda path: (order.get(path, len(order)), path))}


@dataclass
class Watch:
    """What the browser met over a whole tour: requests to other hosts, failed requests, console errors, statuses."""

    host: str
    external: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)

    def on_request(self, request: Request) -> None:
        if urlsplit(request.url).netloc not in (self.host, ""):
            self.external.append(request.url)

    def on_failed(self, request: Request) -> None:
        # A request the next navigation cancels (Material's search worker, still loading when the
        # tour moves on) is not a failure of the site; a missing file shows in `statuses`.
        if request.failure != "net::ERR_ABORTED":
            self.failed.append(f"{request.url} {request.failure}")

    def on_response(self, response: Response) -> None:
        self.statuses[response.url] = response.status

    def watched(self, tab: Page) -> Page:
        tab.on(
            "console",
            lambda message: self.console.append(f"{tab.url}: {message.text}") if message.type == "error" else None,
        )
        tab.on("pageerror", lambda error: self.console.append(f"{tab.url}: {error}"))
        return tab


def take_tour(
    browser: Browser, site_url: str, site: Path, tour: Tour, *, axe_core: str, output_dir: Path | None
) -> dict[str, Any]:
    """Load each page that a probe reads in `tour` once, run every such probe on it; what each found, as JSON.

    `output_dir` is where the probes leave screenshots for people to look at; None: they take none.

    Returns:
        `pages`: every page toured, in order; `status`: each page's response status; `facts`: per probe, per
        page, what it read; `errors`: per probe, the pages it raised on, with why; `external`, `failed`,
        `console`, `http_errors`: the requests to other hosts, the requests that failed, the console's
        errors and the responses of 400 and above, over the whole tour; `seconds`: how long it took,
        `probe_seconds` how long each probe took of it, `step_seconds` how long the tour spent navigating,
        waiting for pages to load and settling the palette, and `page_seconds` each page's share.
    """
    start = time.perf_counter()
    wanted = tour_plan(site, tour)
    pages = list(wanted)
    context = browser.new_context(viewport=tour.viewport, has_touch=tour.touch)
    watch = Watch(urlsplit(site_url).netloc)
    context.on("request", watch.on_request)
    context.on("requestfailed", watch.on_failed)
    context.on("response", watch.on_response)
    tabs = [watch.watched(context.new_page()) for _ in range(min(TABS_AT_ONCE, len(pages)) or 1)]
    steps = dict.fromkeys(("navigate", "load", "palette"), 0.0)
    spent: dict[str, float] = {}
    page_seconds: dict[str, float] = {}
    status: dict[str, int | None] = {}
    facts: dict[str, dict[str, Any]] = {}
    errors: dict[str, list[str]] = {}

    def timed(key: str, counts: dict[str, float], step: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        try:
            return step()
        finally:
            counts[key] = counts.get(key, 0.0) + time.perf_counter() - began

    def navigate(index: int) -> None:
        response = timed(
            "navigate", steps, lambda: tabs[index % len(tabs)].goto(site_url + pages[index], wait_until="commit")
        )
        status[pages[index]] = response.status if response is not None else None

    def loaded(index: int) -> None:
        timed("load", steps, lambda: tabs[index % len(tabs)].wait_for_load_state("networkidle"))

    def read(tab: Page, path: str, probe: Probe) -> None:
        try:
            facts.setdefault(probe.name, {})[path] = probe.read(
                Visit(tab, path, tour, axe_core=axe_core, output_dir=output_dir, site_url=site_url)
            )
        except Exception as error:  # kept for the tests that read this probe to fail on
            errors.setdefault(probe.name, []).append(f"{path or 'index'} at {tour.where}: {error}")

    def in_front(tab: Page) -> None:
        tab.bring_to_front()
        set_palette(tab, tour.scheme)

    # The palette is kept per browser: chosen once, every page after opens in it.
    timed("palette", steps, lambda: tabs[0].goto(site_url, wait_until="networkidle"))
    timed("palette", steps, functools.partial(set_palette, tabs[0], tour.scheme))
    # Each tab starts its next page as soon as its page is read, and loads it while the other tabs' pages are
    # read: a page's half second of network quiet is waited out behind the others' probes, not in turn.
    for index in range(len(tabs)):
        navigate(index)
    for index, path in enumerate(pages):
        tab = tabs[index % len(tabs)]
        began = time.perf_counter()
        loaded(index)
        if any(probe.remembered for probe in wanted[path]):
            # It changes what the browser remembers for the pages opened after it: the pages loading in the
            # other tabs have loaded first, and none starts loading until it is done.
            for ahead in range(index + 1, min(index + len(tabs), len(pages))):
                loaded(ahead)
        timed("palette", steps, functools.partial(in_front, tab))
        for probe in wanted[path]:
            timed(probe.name, spent, functools.partial(read, tab, path, probe))
        if index + len(tabs) < len(pages):
            navigate(index + len(tabs))
        page_seconds[path] = time.perf_counter() - began
    context.close()
    return {
        "pages": pages,
        "status": status,
        "facts": facts,
        "errors": errors,
        "external": watch.external,
        "failed": watch.failed,
        "console": watch.console,
        "http_errors": sorted(url for url, code in watch.statuses.items() if code >= 400),
        "seconds": time.perf_counter() - start,
        "probe_seconds": {name: round(seconds, 2) for name, seconds in spent.items()},
        "step_seconds": {name: round(seconds, 2) for name, seconds in steps.items()},
        "page_seconds": {path: round(seconds, 2) for path, seconds in page_seconds.items()},
    }


@dataclass(frozen=True)
class Toured:
    """A tour's record, as the tests read it."""

    tour: Tour
    record: dict[str, Any]

    def facts(self, probe: str) -> dict[str, Any]:
        """What `probe` read on each page of this tour; fails the test if it raised on any."""
        errors = self.record["errors"].get(probe, [])
        assert errors == [], f"the probe '{probe}' failed in the {self.tour.name} tour:\n" + "\n".join(errors)
        found: dict[str, Any] = self.record["facts"].get(probe, {})
        return found
