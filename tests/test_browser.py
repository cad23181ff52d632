"""A reader's smoke test: real Chromium over the strictly built site."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import pytest
from accessibility import NEVER_SERIOUS_JS, SERIOUS, serious_violations, settle
from playwright.sync_api import Browser

from conftest import AXE_CORE_ADDRESS, LocalServer, SiteHandler
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


def test_the_accessibility_check_finds_what_it_must_and_waits_for_a_fade(browser: Browser, axe_core: str) -> None:
    """Every accessibility test reads `serious_violations`: shown here to name a serious contrast failure and a
    critical unlabelled image, and to pass a clean page; `settle` returns only once a transition has ended."""
    page = browser.new_page()
    page.set_content(
        '<html lang="en"><head><title>t</title></head><body><main><h1>Title</h1>'
        '<p style="color:#bbb;background:#fff">faint text</p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
        "</main></body></html>"
    )
    found = serious_violations(page, axe_core, "planted")
    assert any("color-contrast (serious)" in line for line in found), found
    assert any("image-alt (critical)" in line for line in found), found
    page.set_content(
        '<html lang="en"><head><title>t</title></head><body><main><h1>Title</h1><p>plain</p></main></body></html>'
    )
    assert serious_violations(page, axe_core, "clean") == []
    page.set_content('<html><body><p id="p" style="transition: opacity 600ms linear">fading</p></body></html>')
    page.evaluate("() => { document.getElementById('p').style.opacity = '0'; }")
    settle(page)
    assert page.evaluate("getComputedStyle(document.getElementById('p')).opacity") == "0"
    page.close()


PLANTED = (
    '<html lang="en"><head><title>t</title></head><body><main><h1>Title</h1>'
    '<p style="color:#bbb;background:#fff">faint text</p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
    "</main></body></html>"
)


def test_axe_core_served_by_the_test_server_finds_the_same_and_is_fetched_once(
    browser: Browser, axe_core: str, tmp_path: Path
) -> None:
    """The tours' pages fetch axe-core from the test server (`served_from`): the same findings as the script written
    into the page, and the browser asks for it once, then takes it (compiled) from its cache on the next page."""
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.html").write_text(PLANTED, encoding="utf-8")
    server = LocalServer(functools.partial(SiteHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(site + "one/")
        written = serious_violations(page, axe_core, "planted")
        page.goto(site + "one/")
        served = serious_violations(page, axe_core, "planted", served_from=site)
        assert served == written and any("image-alt (critical)" in line for line in served), served
        page.goto(site + "two/")
        assert serious_violations(page, axe_core, "planted", served_from=site) == written
        sizes = page.evaluate(
            "(address) => performance.getEntriesByType('resource').filter(e => e.name === address)"
            ".map(e => e.transferSize)",
            site.rstrip("/") + AXE_CORE_ADDRESS,
        )
        assert sizes == [0], f"the second page fetched axe-core again ({sizes} bytes)"
    finally:
        context.close()
        server.check()


def test_axe_core_runs_only_the_rules_that_can_report_a_serious_violation_and_finds_the_same(
    browser: Browser, axe_core: str
) -> None:
    """`serious_violations` leaves out the rules whose impact, or every check's, is below serious: on a page that
    breaks rules of every impact, it finds what a run of every rule finds of serious and critical impact."""
    page = browser.new_page()
    try:
        page.set_content(
            PLANTED.replace("<h1>Title</h1>", "<h1>Title</h1><h4>skipped levels</h4>")  # heading-order: moderate
            + '<p>outside every landmark</p><a href="#x" style="color:#ccc">faint link</a>'  # region: moderate
        )
        found = serious_violations(page, axe_core, "planted")
        everything = page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => ({id: v.id, impact: v.impact}))"
        )
        assert {v["impact"] for v in everything} >= {"moderate", "serious", "critical"}, everything
        assert sorted(line.split()[1] for line in found) == sorted(
            v["id"] for v in everything if v["impact"] in SERIOUS
        )
        skipped = page.evaluate(NEVER_SERIOUS_JS, list(SERIOUS))
        assert {"region", "heading-order"} <= set(skipped)
        assert not {"color-contrast", "image-alt", "link-name"} & set(skipped)
    finally:
        page.close()
