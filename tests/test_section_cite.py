"""One link-and-cite control per section heading, pinned to the edition being built."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from conftest import ROOT
from pytorch_floors.editions.anchors import CITABLE_PAGES
from pytorch_floors.floors import COMPILER, FLOORS, MAP_TITLE
from pytorch_floors.render.headings import (
    add_section_controls,
    cited_part,
    control_template,
    pinned_site_url,
    section_citation,
)

PAGE = "https://pytorch-floors.github.io/2026.12/floors/3-boundary/"
HEADINGS = (
    '<h2 id="crossing-cost">The fixed cost &amp; its <code>sum_</code></h2><p>text</p>'
    '<h3 id="tiny-add" class="x">A tiny add</h3><h5 id="deep">too deep to cite</h5><h2>no id</h2>'
)


def _controls(html: str) -> list[dict[str, str]]:
    """The attributes of every control, decoded as the browser reads them."""
    return [
        {name: unescape(value) for name, value in re.findall(r'([\w-]+)="([^"]*)"', tag)}
        for tag in re.findall(r'<a class="floors-copy-link"[^>]*>', html)
    ]


def _controls_of(citable: bool) -> list[dict[str, str]]:
    html = add_section_controls(
        HEADINGS,
        src_uri=FLOORS[2].page,
        page_url=PAGE,
        name="2026.12",
        citable=citable,
        template=control_template(),
    )
    return _controls(html)


def test_each_heading_with_an_id_gets_exactly_one_control() -> None:
    controls = _controls_of(citable=True)
    assert [c["href"] for c in controls] == [f"{PAGE}#crossing-cost", f"{PAGE}#tiny-add"]


def test_the_control_offers_the_link_a_citation_and_bibtex_of_its_section() -> None:
    first = _controls_of(citable=True)[0]
    assert first["data-floors-copy"] == f"{PAGE}#crossing-cost"
    plain = first["data-floors-citation"]
    for part in ("The fixed cost & its sum_", FLOORS[2].heading, "edition 2026.12", "(2026)", f"{PAGE}#crossing-cost"):
        assert part in plain, part
    bibtex = first["data-floors-bibtex"]
    assert bibtex.startswith("@misc{pytorchfloors202612-floor3-crossing-cost,\n")
    assert "title        = {{The fixed cost \\& its sum\\_}}" in bibtex
    assert "year         = {2026}" in bibtex and "edition      = {2026.12}" in bibtex
    assert f"\\url{{{PAGE}#crossing-cost}}" in bibtex and FLOORS[2].heading in bibtex
    assert bibtex.endswith("\n}")


def test_the_label_is_the_heading_in_words_and_says_what_the_control_does() -> None:
    cite, link = _controls_of(citable=True)[0], _controls_of(citable=False)[0]
    assert cite["aria-label"] == "Link or cite section: The fixed cost & its sum_"
    assert cite["aria-haspopup"] == "menu"
    assert link["aria-label"] == "Copy link to section: The fixed cost & its sum_"
    assert "data-floors-citation" not in link and "data-floors-bibtex" not in link


def test_part_0_sections_are_cited_as_part_0() -> None:
    cite = section_citation("index.md", "https://s.org/2026.12/", "the-map", "The map", "2026.12")
    assert "Part 0" in cite.plain and cite.bibtex.startswith("@misc{pytorchfloors202612-part0-the-map,")


def test_every_citable_page_is_cited_by_its_own_title_and_key() -> None:
    # The compile page once cited itself as Part 0 (`…-part0-graph-capture`): it was neither floor nor map.
    titles = {cited_part(page) for page in CITABLE_PAGES}
    assert len(titles) == len(CITABLE_PAGES) and len({key for _, key in titles}) == len(CITABLE_PAGES)
    assert cited_part(COMPILER.page) == (COMPILER.title, COMPILER.slug)
    with pytest.raises(ValueError, match="not a page whose sections are citable"):
        cited_part("labs/1-line.md")


def test_each_citable_pages_sections_cite_that_page(built_site: Any) -> None:
    for page in CITABLE_PAGES:
        title, key = cited_part(page)
        html = built_site.page(page.removesuffix(".md").removesuffix("index"))
        controls = [c for c in _controls(html) if "data-floors-citation" in c]
        assert controls, f"{page}: no section offers a citation"
        for control in controls:
            anchor = control["href"].rpartition("#")[2]
            # The citation names an edition only where it links the edition's address (issue 59).
            citation = control["data-floors-citation"]
            pinned = re.search(r"/(\d{4}\.\d{2})/", control["href"])
            said = f", {title}, edition {pinned[1]}. " if pinned else f", {title}, unversioned build of "
            assert said in citation, (page, anchor, citation)
            assert f"-{key}-{anchor}," in control["data-floors-bibtex"], (page, anchor)
    assert cited_part("index.md")[0] == MAP_TITLE


def test_an_edition_build_pins_site_url_to_the_edition() -> None:
    pinned = pinned_site_url("https://pytorch-floors.github.io/", "2026.12")
    assert pinned == "https://pytorch-floors.github.io/2026.12/"
    # mike already builds with the edition's root: pinning it again changes nothing.
    assert pinned_site_url(pinned, "2026.12") == pinned


def test_other_builds_keep_the_site_url() -> None:
    assert pinned_site_url("https://pytorch-floors.github.io/", None) == "https://pytorch-floors.github.io/"


def test_an_edition_build_pins_canonical_links_copies_and_says_its_edition(fixture_site: Any) -> None:
    config = fixture_site.root.joinpath("mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("  font: false\n", f"  font: false\n  custom_dir: {ROOT / 'overrides'}\n")
    fixture_site.write("mkdocs.yml", config)
    fixture_site.page("index.md", "# Home { #home }\n\n## First { #first-section }\n")
    build = fixture_site.build(strict=True, env={"FLOORS_EDITION": "2026.12"})
    assert build.returncode == 0, build.log[-3000:]
    html = build.page(".")
    assert '<link rel="canonical" href="https://example.invalid/2026.12/">' in html
    assert [c["href"] for c in _controls(html)] == ["https://example.invalid/2026.12/#first-section"]
    assert "<loc>https://example.invalid/2026.12/</loc>" in (build.site / "sitemap.xml").read_text()
    # The page says which edition it is, also where it is read under `latest` (a copy of it).
    line = re.search(r'<p class="floors-edition-line">(.*?)</p>', html, re.S)
    assert line is not None and "edition <strong>2026.12</strong>" in line[1]
    assert 'href="https://example.invalid/2026.12/"' in line[1]


@pytest.mark.browser
def test_the_control_copies_a_citation_by_touch_and_by_keyboard(browser: Any, site_url: str) -> None:
    for touch in (True, False):
        context = browser.new_context(
            viewport={"width": 390, "height": 844} if touch else {"width": 1280, "height": 800}, has_touch=touch
        )
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url.rstrip("/"))
        page = context.new_page()
        page.goto(f"{site_url}floors/3-boundary/")
        control = page.locator("#crossing-cost a.floors-copy-link")
        box = control.bounding_box()
        assert box is not None and box["width"] >= 24 and box["height"] >= 24, box
        # Visible without hovering: touch screens have no hover.
        assert float(control.evaluate("e => getComputedStyle(e).opacity")) == 1
        if touch:
            control.tap()
        else:
            control.focus()
            page.keyboard.press("Enter")
        menu = page.get_by_role("menu")
        assert menu.get_by_role("menuitem").all_inner_texts() == ["Copy link", "Copy citation", "Copy BibTeX"]
        wanted = "Copy citation" if touch else "Copy BibTeX"
        if touch:
            menu.get_by_role("menuitem", name=wanted).tap()
        else:
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
        attribute = "data-floors-citation" if touch else "data-floors-bibtex"
        assert page.evaluate("navigator.clipboard.readText()") == control.get_attribute(attribute)
        assert page.get_by_role("menu").count() == 0, "the menu closes once it has copied"
        assert page.evaluate("document.activeElement.closest('h3')?.id") == "crossing-cost"
        assert page.get_by_role("status").inner_text() == f"Copied the {wanted.removeprefix('Copy ')}."
        context.close()
