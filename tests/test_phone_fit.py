"""What a reader sees on a phone (390 × 844): wrapped code keeps its indent, the header its name, the
Build report's folds their counts, and a block that scrolls sideways says so (issue 59)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize

pytestmark = pytest.mark.browser

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE)
    yield context.new_page()
    context.close()


# Where each line of the block's text starts on screen, with whether it follows a line break in the source.
LINE_STARTS = """(code) => {
  const starts = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  let top = null, afterBreak = true;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      if (node.data[i] === "\\n") { afterBreak = true; continue; }
      if (/\\s/.test(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (!box) continue;
      if (top === null || box.top > top + 2) { starts.push([box.left, afterBreak]); top = box.top; }
      afterBreak = false;
    }
  }
  return starts;
}"""


def test_what_you_see_wraps_with_a_hanging_indent(phone: Page, site_url: str) -> None:
    """floors.css set `text-indent: 0` on a phone: a wrapped part of the one-page program's line started at the
    block's edge, where its lines start, and read as a new line of code (floor 7; floors 1, 4, 5, 8)."""
    phone.goto(f"{site_url}floors/7-memory/")
    code = phone.locator("h2#what-you-see ~ .highlight pre > code").first
    starts = code.evaluate(LINE_STARTS)
    lines = [left for left, after_break in starts if after_break]
    wrapped = [left for left, after_break in starts if not after_break]
    assert wrapped, "the line fits the phone: nothing wraps to check"
    assert min(wrapped) >= min(lines) + 10, starts


@pytest.mark.parametrize("page", ["floors/7-memory/", "zh/floors/7-memory/", "build-report/"])
def test_the_header_shows_the_whole_site_name(phone: Page, site_url: str, page: str) -> None:
    """Beside the edition and the language button the name was cut to "PyT…" at 390 px."""
    phone.goto(site_url + page)
    phone.wait_for_selector(".md-version")
    name = phone.locator(".md-header__topic").first.locator(".md-ellipsis")
    assert name.evaluate("el => el.scrollWidth <= el.clientWidth"), name.evaluate(
        "el => [el.scrollWidth, el.clientWidth]"
    )
    assert phone.locator(".md-version__current").is_visible()


def test_a_report_folds_chevron_covers_none_of_its_summary(phone: Page, site_url: str) -> None:
    """The chevron at a fold's right covered "(317)" of a summary that reached the column's edge."""
    phone.goto(f"{site_url}build-report/")
    summaries = phone.locator("details.floors-report__fold > summary")
    assert summaries.count() > 0
    overlaps = summaries.evaluate_all(
        """summaries => summaries.flatMap(summary => {
          const chevron = getComputedStyle(summary, '::after');
          const box = summary.getBoundingClientRect();
          const left = box.right - parseFloat(chevron.right) - parseFloat(chevron.width);
          const range = document.createRange();
          range.selectNodeContents(summary);
          const text = Math.max(...[...range.getClientRects()].map(r => r.right));
          return text > left ? [summary.textContent.trim()] : [];
        })"""
    )
    assert overlaps == []


@pytest.mark.parametrize("page", ["floors/4-dispatcher/", "zh/floors/4-dispatcher/"])
def test_a_block_that_scrolls_sideways_says_so(phone: Page, site_url: str, page: str) -> None:
    """At 390 px 10 of the 11 visible outputs on floor 4 scrolled sideways with nothing but a faint edge shadow."""
    phone.goto(site_url + page)
    blocks = phone.locator(".floors-proof__output pre > code")
    phone.wait_for_function("document.querySelector('pre[data-floors-scrolls]') !== null")
    found = blocks.evaluate_all(
        """codes => codes.filter(c => c.clientWidth > 0).map(c => ({
          scrolls: c.scrollWidth > c.clientWidth + 1,
          hint: getComputedStyle(c.parentElement, '::before').content,
        }))"""
    )
    scrolling = [block for block in found if block["scrolls"]]
    assert scrolling, "no output scrolls here: nothing to check"
    assert all(block["hint"] not in ("none", "normal", "") for block in scrolling), found
    assert all(block["hint"] in ("none", "normal") for block in found if not block["scrolls"]), found
