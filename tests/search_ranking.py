"""Run queries through Material's search as a reader does: typed into the built site's search, in Chromium.

The results are read from the page Material renders: each page's group in order, each item with its
score (`data-md-score`) and whether it is folded under "N more on this page".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import Page

QUERY_FIELD = "input[data-md-component='search-query']"

READ_RESULTS = """() => [...document.querySelectorAll('.md-search-result__item')].map(group =>
  [...group.querySelectorAll('a.md-search-result__link')].map((link, index) => ({
    href: link.getAttribute('href'),
    score: parseFloat(link.querySelector('article').dataset.mdScore),
    page: index === 0,
    folded: link.closest('details') !== null,
  })))"""


@dataclass(frozen=True)
class Result:
    """One result a reader sees, in the order the search shows them (folded ones left out)."""

    location: str
    """The result's address from the site's root (`compile/#graph-breaks`); a page's top has no anchor."""


def shown(groups: list[list[dict[str, object]]], base: str) -> list[str]:
    """The results a reader sees first, in order: each group's items by score, a page's own only where it matched.

    A group's first link is its page; it leads the group where its score is the highest (Material
    then folds every section of the page under "N more on this page"), and is left out where it did
    not match (score 0: it only titles the group).
    """
    seen = []
    for group in groups:
        items = [item for item in group if not item["folded"] and not (item["page"] and float(str(item["score"])) == 0)]
        items.sort(key=lambda item: -float(str(item["score"])))
        for item in items:
            # Material's link carries the query to highlight (`?h=`) before the anchor.
            address = urlsplit(str(item["href"]))
            path = address.path.removeprefix(urlsplit(base).path)
            seen.append(f"{path}#{address.fragment}" if address.fragment else path)
    return seen


def search(page: Page, query: str, base: str) -> list[str]:
    """Type `query` into the open page's search; the results shown, as addresses from the site's root."""
    field = page.locator(QUERY_FIELD)
    field.fill("")
    field.press("End")  # Material reads the query on `keyup`
    page.wait_for_function("() => !document.querySelector('.md-search-result__item')")
    # Playwright types a character no key makes (Chinese) as inserted text, with no key event: a key after it.
    field.press_sequentially(query)
    field.press("End")
    page.wait_for_function(
        "() => document.querySelector('.md-search-result__item') || "
        "/\\b0\\b|No matching|没有/.test(document.querySelector('.md-search-result__meta').textContent)"
    )
    # Material searches on every key, so the results of a shorter query may show first: read them until they
    # stay the same for a while (the worker answers in order; the last answer is the whole query's).
    results, same = page.evaluate(READ_RESULTS), 0
    for _ in range(40):
        page.wait_for_timeout(150)
        now = page.evaluate(READ_RESULTS)
        same = same + 1 if now == results else 0
        results = now
        if same >= 3:
            break
    return shown(results, base)


def open_search(page: Page, url: str) -> None:
    """Open `url` and its search, and wait until Material's index is ready."""
    page.goto(url)
    page.locator("label.md-search__icon, input.md-search__input").first.click()
    field = page.locator(QUERY_FIELD)
    for _ in range(20):  # a query typed before the worker has built its index is dropped: type it again
        field.fill("")
        field.press_sequentially("tensor")
        field.press("End")
        if page.locator(".md-search-result__item").first.is_visible(timeout=3000):
            return
    page.locator(".md-search-result__item").first.wait_for(timeout=3000)
