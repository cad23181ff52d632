"""Machine tabs say what differs, what a reader chose, and what each machine is; citations agree (issue 59)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from html import unescape

import pytest
from playwright.sync_api import Browser, Page

from conftest import Build
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.recordings.compare import BlockTiers, ShownTier, tiers_for
from pytorch_floors.recordings.schema import RecordedBlock, Recording
from pytorch_floors.recordings.tabs import OWN_LABEL, TierTab, marked_text_parts, tier_tabs_html
from pytorch_floors.render.headings import finish_headings

MACHINE = Provenance("2.11.0", "3.12.3", "Linux x86_64", "a CPU", "AVX2", 2, 2, "none", "2026-12-02")

# A figure's output as `pytorch_floors.plot.show` prints it: its numbers as text, then its chart.
OWN = (
    '<pre class="floors-output"><code>elements   a + b\n       1   925 ns\n      16   951 ns\n'
    "Floor: 925 ns</code></pre>\n"
    '<figure class="floors-figure"><figcaption>Add</figcaption></figure>'
)
RECORDED = (
    '<pre class="floors-output"><code>elements   a + b\n       1   1.2 µs\n      16   1.3 µs\n'
    "Floor: 1.2 µs</code></pre>\n"
    '<figure class="floors-figure"><figcaption>Add</figcaption></figure>'
)


def test_a_figures_numbers_that_differ_are_counted_and_marked() -> None:
    """A figure's output was never compared: 25 of 64 English tabs whose timings all differed marked nothing."""
    marked, count = marked_text_parts(OWN, RECORDED)
    assert count == 3
    assert marked.count('<span class="hll">') == 3
    assert '<span class="hll">       1   1.2 µs</span>' in marked
    assert "elements   a + b\n" in marked, "the line both print is not marked"
    assert marked_text_parts(OWN, OWN) == (OWN, 0)
    chart = '<figure class="floors-figure"></figure>'
    assert marked_text_parts(chart, chart) == (chart, None), "a chart alone has no lines to compare"


def _tabs(differing: int | None, stands_for: str = "a two-vCPU CI runner") -> str:
    block = RecordedBlock("floors/3-boundary.md", "b", "d", True, RECORDED, 1.0, (), MACHINE)
    tiers = BlockTiers((ShownTier("ci-2core", "a CPU + 2 threads", block, stands_for=stands_for),))
    return tier_tabs_html(TierTab(OWN_LABEL, OWN, ""), tiers, {"ci-2core": (RECORDED, "", differing)}, 1, language="en")


def test_a_tab_says_how_many_lines_of_a_figures_text_differ() -> None:
    html = unescape(_tabs(3))
    assert 'data-differing="3"' in html
    assert "3 lines of this output differ from this build's: marked." in html


def test_each_machine_says_what_it_is_where_it_is_chosen() -> None:
    """The labels were the tiers' names alone ("ci-2core"); the machine in words was inside the tab."""
    labels = re.findall(r"<label [^>]*>(.*?)</label>", _tabs(None))
    assert labels[0] == OWN_LABEL
    assert labels[1] == 'ci-2core<span class="floors-tiers__kind">a two-vCPU CI runner</span>'


HEADING = '<h2 id="the-gil">The GIL</h2>'


def _citation(published: str | None) -> tuple[str, str]:
    site = "https://floors.example/2026.12/" if published else "https://floors.example/"
    html = finish_headings(
        HEADING,
        src_uri="floors/3-boundary.md",
        page_url="floors/3-boundary/",
        site_url=site,
        name="2026.12",
        published=published,
    )
    plain = unescape(re.search(r'data-floors-citation="([^"]*)"', html)[1])  # type: ignore[index]
    bibtex = unescape(re.search(r'data-floors-bibtex="([^"]*)"', html)[1])  # type: ignore[index]
    return plain, bibtex


def test_a_citation_names_an_edition_only_where_it_links_the_editions_address() -> None:
    """A build that is not an edition linked the unversioned address under "edition 2026.12"."""
    plain, bibtex = _citation("2026.12")
    assert "edition 2026.12" in plain and "https://floors.example/2026.12/floors/3-boundary/#the-gil" in plain
    assert "edition      = {2026.12}" in bibtex
    plain, bibtex = _citation(None)
    assert "https://floors.example/floors/3-boundary/#the-gil" in plain
    assert "edition 2026.12" not in plain and "unversioned build of 2026.12" in plain
    assert "edition      =" not in bibtex and "unversioned build of 2026.12" in bibtex


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


@pytest.mark.browser
def test_choosing_a_machine_says_where_a_block_has_no_tab_for_it(tab: Page, site_url: str) -> None:
    """Choosing a machine left the sets that lack it on "This build" with no sign (2 of 9 on floor 6)."""
    tab.goto(f"{site_url}floors/6-kernels/")
    sets = tab.locator(".floors-tiers")
    tiers = sets.evaluate_all(
        "sets => sets.map(s => [...s.querySelectorAll('label[data-tier]')].map(l => l.dataset.tier))"
    )
    assert len(tiers) > 1 and tiers[0], tiers
    chosen = tiers[0][0]
    if all(chosen in found for found in tiers):
        # Every block of this build has the machine's tab (which blocks lack one depends on the recordings):
        # the last set is made to lack it, as a block the machine printed the same for does.
        sets.last.evaluate(
            """(set, tier) => { for (const label of set.querySelectorAll(`label[data-tier="${tier}"]`)) {
                 document.getElementById(label.htmlFor).remove(); label.remove(); } }""",
            chosen,
        )
        tiers[-1] = [tier for tier in tiers[-1] if tier != chosen]
    lacking = sum(chosen not in found for found in tiers)
    tab.locator(f".floors-tiers label[data-tier='{chosen}']").first.click()
    notes = tab.locator(".floors-tiers__absent")
    notes.first.wait_for()
    assert notes.count() == lacking
    assert chosen in notes.first.inner_text()
    tab.locator(".floors-tiers > .tabbed-labels > label:not([data-tier])").first.click()
    tab.wait_for_function("document.querySelectorAll('.floors-tiers__absent').length === 0")


def test_every_recorded_tab_on_floor_3_says_its_numbers_differ(built_site: Build) -> None:
    """Floor 3's outputs are figures: none of its recorded tabs said that any number differed."""
    page = (built_site.site / "floors" / "3-boundary" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(
        r'<div class="tabbed-block" data-tier="[^"]+">(.*?)(?=<div class="tabbed-block"|</div>\n</div>)', page, re.S
    )
    assert blocks, "floor 3 shows no recorded tab"
    assert all('class="floors-tiers__differs"' in block for block in blocks), len(blocks)


def test_a_torch_tiers_tab_is_labelled_by_its_torch_version() -> None:
    """Issue 60: a tier run on another torch is chosen by its release, in each language."""
    newer = replace(MACHINE, torch_version="2.15.0+cu130")
    block = RecordedBlock("floors/3-boundary.md", "b", "d", True, RECORDED, 1.0, (), newer)
    recording = Recording(
        "torch-2.15.0", "torch 2.15.0 (PyPI, October 2026)", "2026-12-06", newer, (block,), cpu_share=1.0
    )
    result = BlockResult("floors/3-boundary.md", "b", None, "ran", 1.0, OWN, provenance=MACHINE, digest="d")
    for language, kind in (("en", "torch 2.15.0 (PyPI, October 2026)"), ("zh", "torch 2.15.0（PyPI，2026 年 10 月）")):
        tiers = tiers_for(result, [recording], language)
        html = tier_tabs_html(
            TierTab(OWN_LABEL, OWN, ""), tiers, {"torch-2.15.0": (RECORDED, "", 3)}, 1, language=language
        )
        labels = re.findall(r"<label [^>]*>(.*?)</label>", html)
        assert labels[1] == f'torch-2.15.0<span class="floors-tiers__kind">{kind}</span>'
        machine = re.findall(r'<p class="floors-tiers__machine"[^>]*>(.*?)</p>', html)
        assert "torch 2.15.0+cu130" in unescape(machine[0])
