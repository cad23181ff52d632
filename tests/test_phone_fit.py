"""What a reader sees on a phone (390 × 844): wrapped code keeps its indent, the header its name, the
Build report's folds their counts, and a block that scrolls sideways says so (issue 59)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize

from pytorch_floors.render.output_lines import table_rows

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
def test_floor_4s_outputs_fit_a_phone_and_one_that_scrolls_says_so(phone: Page, site_url: str, page: str) -> None:
    """At 390 px 10 of the 11 visible outputs on floor 4 scrolled sideways with nothing but a faint edge shadow.

    Its proofs print for a phone now, so none scrolls; an output that does (a made-up row, added to the page
    as a proof's output is drawn) shows the sign, and those that fit show none."""
    phone.goto(site_url + page)
    phone.wait_for_function("document.querySelector('pre[data-floors-scrolls]') !== null")
    phone.evaluate(
        """() => {
          const output = document.querySelector('article .floors-proof__output').cloneNode(true);
          output.querySelector('pre > code').textContent = 'a row  ' + 'x'.repeat(200) + '\\n';
          output.dataset.madeUp = '';
          document.querySelector('article .floors-proof').append(output);
        }"""
    )
    phone.wait_for_function("getComputedStyle(document.querySelector('[data-made-up] pre'), '::before').content")
    found = phone.locator(".floors-proof__output pre > code").evaluate_all(
        """codes => codes.filter(c => c.clientWidth > 0).map(c => ({
          made_up: c.closest('[data-made-up]') !== null,
          scrolls: c.scrollWidth > c.clientWidth + 1,
          hint: getComputedStyle(c.parentElement, '::before').content,
          first: c.textContent.slice(0, 60),
        }))"""
    )
    made_up = [block for block in found if block["made_up"]]
    assert made_up and made_up[0]["scrolls"] and made_up[0]["hint"] not in ("none", "normal", ""), made_up
    real = [block for block in found if not block["made_up"]]
    assert len(real) >= 8, f"floor 4 shows {len(real)} outputs: fewer than its proofs"
    assert [block["first"] for block in real if block["scrolls"]] == [], "an output of floor 4 scrolls on a phone"
    assert all(block["hint"] in ("none", "normal") for block in real), real


# Each line of a block's text as the reader sees it: where its first character starts, how far right its
# characters reach, and where each of its wrapped parts starts; with the block's visible right edge.
PRINTED_LINES = """(code) => {
  const box = code.getBoundingClientRect();
  const edge = box.left + code.clientWidth - parseFloat(getComputedStyle(code).paddingRight);
  const fresh = () => ({first: null, top: null, right: null, continued: []});
  const lines = [];
  let line = fresh();
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      if (node.data[i] === "\\n") { lines.push(line); line = fresh(); continue; }
      if (/\\s/.test(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      const r = range.getClientRects()[0];
      if (!r) continue;
      if (line.first === null) { line.first = r.left; line.top = r.top; }
      else if (r.top > line.top + 2) { line.continued.push(r.left); line.top = r.top; }
      line.right = Math.max(line.right ?? r.right, r.right);
    }
  }
  lines.push(line);
  return {text: code.textContent, scrolls: code.scrollWidth > code.clientWidth + 1, edge, lines};
}"""

OUTPUTS = ".floors-proof__output pre > code, pre.floors-output > code"


def printed_lines(phone: Page) -> list[dict[str, Any]]:
    """Every visible output of the page, measured (`PRINTED_LINES`)."""
    return [
        code.evaluate(PRINTED_LINES)
        for code in phone.locator(OUTPUTS).all()
        if code.evaluate("c => c.offsetParent !== null && c.clientWidth > 0")
    ]


@pytest.mark.parametrize(
    "page", ["floors/4-dispatcher/", "zh/floors/4-dispatcher/", "floors/7-memory/", "zh/floors/7-memory/"]
)
def test_a_printed_sentence_wraps_under_itself_and_only_a_table_row_scrolls(
    phone: Page, site_url: str, page: str
) -> None:
    """At 390 px 10 of the 11 visible outputs on floor 4 scrolled sideways, sentences and quoted errors with them
    (floor 7's "view size is not compatible …", 156 columns, showed its first 48)."""
    phone.goto(site_url + page)
    blocks = printed_lines(phone)
    assert blocks, "no output to measure"
    prose_past, scrolls_for_no_row, back_at_the_edge, wrapped = [], [], [], 0
    for block in blocks:
        texts = block["text"].split("\n")
        rows = table_rows(texts)
        past = [
            n
            for n, line in enumerate(block["lines"])
            if line["right"] is not None and line["right"] > block["edge"] + 1
        ]
        prose_past += [texts[n] for n in past if not rows[n]]
        if block["scrolls"] and not any(rows[n] for n in past):
            scrolls_for_no_row.append(texts[:3])
        for text, line in zip(texts, block["lines"], strict=True):
            wrapped += bool(line["continued"])
            if any(left <= line["first"] + 1 for left in line["continued"]):
                back_at_the_edge.append(text)
    assert prose_past == [], "a printed line that is no table's row runs past the phone's edge"
    assert scrolls_for_no_row == [], "an output scrolls sideways with no table row past the edge"
    assert back_at_the_edge == [], "a wrapped part starts at or left of its line's first character"
    assert wrapped, "no printed line is longer than the phone's width here: nothing wraps to check"


@pytest.mark.parametrize("page", ["floors/7-memory/", "zh/floors/7-memory/"])
def test_the_copy_button_copies_the_printed_text_of_a_wrapped_output(
    browser: Browser, site_url: str, page: str
) -> None:
    """Wrapped on a phone, an output's lines are boxes; Material copies the code's `innerText`, which a
    line drawn as a block would have given an extra line break."""
    context = browser.new_context(viewport=PHONE)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url.rstrip("/"))
    phone = context.new_page()
    try:
        phone.goto(site_url + page)
        outputs = phone.locator(".floors-proof__output")
        chosen = next(
            (
                output
                for output in outputs.all()
                if output.locator("pre > code").first.evaluate("c => c.offsetParent !== null")
                and any(
                    line["continued"] for line in output.locator("pre > code").first.evaluate(PRINTED_LINES)["lines"]
                )
            ),
            None,
        )
        assert chosen is not None, "no output here has a wrapped line"
        chosen.scroll_into_view_if_needed()
        chosen.locator(".md-code__button[data-md-type=copy]").first.click()
        copied = phone.evaluate("navigator.clipboard.readText()")
        printed = chosen.locator("pre > code").first.evaluate("c => c.textContent")
        assert copied == printed.rstrip()
    finally:
        context.close()
