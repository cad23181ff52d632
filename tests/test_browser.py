"""A reader's smoke test: real Chromium over the strictly built site."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from conftest import Build
from pytorch_floors.floors import FLOORS

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(built_site: Build) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(built_site.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


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
    current = page.locator('nav.floors-gauge a[aria-current="page"]')
    assert below.title in current.inner_text()
    page.close()
