"""A reader's smoke test: real Chromium over the strictly built site."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

from pytorch_floors.floors import FLOORS

pytestmark = pytest.mark.browser


def test_gauge_is_visible_and_navigates_down_a_floor(browser: Browser, site_url: str, output_dir: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    floor, below = FLOORS[2], FLOORS[3]
    page.goto(f"{site_url}floors/{floor.key}/")
    gauge = page.locator("nav.floors-gauge")
    assert gauge.is_visible()
    assert page.locator('nav.floors-gauge a[aria-current="page"]').inner_text().strip().startswith(str(floor.number))
    page.screenshot(path=str(output_dir / "smoke-floor-3.png"), full_page=False)
    page.locator("nav.floors-gauge a[rel=next]").click()
    page.wait_for_url(f"{site_url}floors/{below.key}/")
    # Instant navigation updates the address first, then swaps the content in.
    current = page.locator('nav.floors-gauge a[aria-current="page"]', has_text=below.title)
    current.wait_for()
    assert page.locator('nav.floors-gauge a[aria-current="page"]').count() == 1
    page.close()
