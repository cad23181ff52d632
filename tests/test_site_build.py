"""The real site, built with --strict: gauge, navigation, titles, API pages, page hygiene."""

import collections
import itertools
import json
import pkgutil
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import pytorch_floors
from conftest import ROOT, Build
from pytorch_floors.execution.bundle import bundle
from pytorch_floors.floors import ANNEXES, FLOORS, Floor
from pytorch_floors.recordings.schema import read_recordings
from pytorch_floors.recordings.tabs import LazyOutputs

pytestmark = pytest.mark.slow


def page_dir(src: str) -> str:
    return "" if src == "index.md" else src.removesuffix(".md").removesuffix(".py").removesuffix("/index")


class Collector(HTMLParser):
    """Collect the gauge's links, the nav's links and the meta description of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.in_gauge = 0
        self.gauge_links: list[dict[str, str | None]] = []
        self.meta: dict[str, str | None] = {}
        self.h1: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "nav" and "floors-gauge" in (a.get("class") or ""):
            self.in_gauge += 1
        elif tag == "a" and self.in_gauge:
            self.gauge_links.append(a)
        elif tag == "meta" and a.get("name"):
            self.meta[a["name"] or ""] = a.get("content")
        elif tag == "h1":
            self._in_h1 = True
            self.h1.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self.in_gauge:
            self.in_gauge -= 1
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1[-1] += data


def collect(build: Build, src: str) -> Collector:
    collector = Collector()
    collector.feed(build.page(page_dir(src)))
    return collector


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_every_floor_page_has_the_gauge_with_its_floor_current(built_site: Build, floor: Floor) -> None:
    page = collect(built_site, floor.page)
    # A floor an annex stops at also links the annex's page (the compiler's express elevator, torch.distributed).
    elevator = [a for a in page.gauge_links if any(f"{annex.slug}/" in (a.get("href") or "") for annex in ANNEXES)]
    assert len(elevator) == sum(1 for annex in ANNEXES if annex.stop_at(floor))
    floor_links = [a for a in page.gauge_links if a.get("rel") is None and a not in elevator]
    assert len(floor_links) == len(FLOORS)
    current = [a for a in floor_links if a.get("aria-current") == "page"]
    assert len(current) == 1
    assert floor_links.index(current[0]) == floor.number - 1
    assert page.h1 and page.h1[0].strip().startswith(floor.heading)
    assert page.meta.get("description") == floor.summary


def test_gauge_links_resolve_to_the_floor_pages(built_site: Build) -> None:
    floor = FLOORS[2]
    page = collect(built_site, floor.page)
    base = built_site.site / page_dir(floor.page)
    for link, target in zip([a for a in page.gauge_links if a.get("rel") is None], FLOORS, strict=True):
        resolved = (base / (link["href"] or "")).resolve()
        assert resolved == (built_site.site / page_dir(target.page)).resolve()


def test_map_shows_the_whole_building_in_its_content_not_its_sidebar(built_site: Build) -> None:
    # Part 0 draws the building (snippets/0-map/building.py); its sidebar only links to it.
    page = collect(built_site, "index.md")
    assert page.gauge_links == []
    html = built_site.page("")
    building = html[html.index('<figure class="floors-building"') :]
    building = building[: building.index("</figure>")]
    assert re.findall(r'href="floors/([^/"]+)/"', building) == [f.key for f in FLOORS]
    assert "aria-current" not in building


def test_navigation_order_and_titles_come_from_the_registry(built_site: Build) -> None:
    # Part 0, floor and lab pages show the depth gauge in place of the Floors section; the others keep it.
    html = built_site.page("proofs")
    titles = re.findall(
        r'class="md-nav__link[^"]*"[^>]*>\s*<span class="md-ellipsis">\s*(\d+) · ([^<]+?)\s*</span>', html
    )
    floors_in_nav = [(int(n), t) for n, t in titles]
    assert floors_in_nav[: len(FLOORS)] == [(f.number, f.title) for f in FLOORS]


def test_api_reference_pages_exist_for_every_public_module(built_site: Build) -> None:
    modules = sorted(module.name for module in pkgutil.iter_modules(pytorch_floors.__path__) if module.name[0] != "_")
    for module in modules:
        html = built_site.page(f"reference/{module}")
        assert f"pytorch_floors.{module}" in html
        assert '<div class="floors-proof"' not in html, "reference pages must not execute code"
    package = Path(ROOT / "src/pytorch_floors")
    subpackages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    public = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")} | subpackages
    assert public == set(modules)


def test_every_page_has_a_description_and_no_traceback(built_site: Build) -> None:
    pages = list(built_site.site.rglob("index.html"))
    assert len(pages) >= 12
    for path in pages:
        html = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in html[:3000]:
            continue  # a redirect stub (mkdocs-redirects), not a page
        assert re.search(r'<meta name="description" content="[^"]{20,}"', html), path
        assert "Traceback (most recent call last)" not in html, path
        assert "floors-proof-failure" not in html, path
        assert str(ROOT) not in html, path


def test_no_page_loads_anything_from_another_host(built_site: Build) -> None:
    # A canonical link names the page's public address but loads nothing; everything else must be local.
    loaded = re.compile(
        r'<(script|img|iframe|source)\b[^>]*\bsrc="(?:https?:)?//|<link\b(?![^>]*rel="(?:canonical|alternate)")[^>]*href="(?:https?:)?//'
    )
    for path in built_site.site.rglob("*.html"):
        match = loaded.search(path.read_text(encoding="utf-8"))
        assert match is None, f"{path}: external resource {match.group(0) if match else ''}"


def test_proofs_are_downloadable_and_indexed(built_site: Build) -> None:
    for floor in FLOORS:
        for proof in (ROOT / floor.snippets_dir).glob("*.py"):
            rel = proof.relative_to(ROOT).as_posix()
            # the download is the proof with the helpers it imports carried inside (tests/test_standalone.py)
            published = (built_site.site / rel).read_text(encoding="utf-8")
            assert published == bundle(proof.read_text(encoding="utf-8"), rel, ROOT / "src" / "pytorch_floors")
    index = built_site.page("proofs")
    assert index.count("<tr>") >= 9


def test_build_report_lists_every_block(built_site: Build) -> None:
    html = built_site.page("build-report")
    assert "floors:build-report" not in html
    assert html.count("<tr><td><code>") >= 9
    assert (built_site.site / "build-report.json").is_file()


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_each_floor_links_its_lab_after_check_yourself(built_site: Build, floor: Floor) -> None:
    html = built_site.page(page_dir(floor.page))
    check = html.index('id="check-yourself"')
    # The navigation lists the labs too; the floor's own link must come after its last section heading.
    assert html.find(f'href="../../labs/{floor.key}/"', check) > check


def test_a_build_without_pdfs_links_no_pdf(built_site: Build) -> None:
    """Only `make pdf` prints the handouts, so only its build may link them: others would send readers to a 404."""
    for src in [floor.page for floor in FLOORS] + ["index.md", "cite.md"]:
        html = built_site.page(page_dir(src))
        assert ".pdf" not in html, src


def test_no_page_skips_a_heading_level(built_site: Build) -> None:
    """The Nu HTML Checker's rule: a heading goes at most one level deeper than the one before it.

    The Proofs page put each floor's `###` right under the page's `# `.
    """
    skipped = []
    for path in sorted(built_site.site.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        start = html.find("<article")
        levels = [int(level) for level in re.findall(r"<h([1-6])\b", html[start : html.find("</article>", start)])]
        skipped += [
            f"{path.relative_to(built_site.site)}: h{a} then h{b}" for a, b in itertools.pairwise(levels) if b > a + 1
        ]
    assert skipped == []


def test_every_id_on_every_page_is_unique(built_site: Build) -> None:
    """The Nu HTML Checker's rule, which `aria-labelledby` needs: a recorded tier that drew a proof's
    figure again repeated its `<title>` and `<desc>` ids (floor 8's `timeline-title`, `ws-title`)."""

    class Ids(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: collections.Counter[str] = collections.Counter()

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.ids.update(value or "" for name, value in attrs if name == "id")

    repeated = []
    for path in sorted(built_site.site.rglob("*.html")):
        parser = Ids()
        parser.feed(path.read_text(encoding="utf-8"))
        ids = parser.ids
        repeated += [f"{path.relative_to(built_site.site)}: {name} ×{n}" for name, n in ids.items() if n > 1]
    assert repeated == []


def test_a_recorded_tabs_differing_lines_are_marked_and_as_many_as_it_says(built_site: Build) -> None:
    # A tab's output is in its page's floors-tiers.json (LazyOutputs); the tab says how many lines differ.
    tab = re.compile(
        r'<div class="tabbed-block" data-tier="[^"]+">(.*?)(?=<div class="tabbed-block"|</div>\n</div>)', re.S
    )
    marked_tabs = 0
    for path in sorted(built_site.site.rglob("*.html")):
        outputs = path.parent / LazyOutputs.FILE
        for body in tab.findall(path.read_text(encoding="utf-8")):
            key = re.search(r'data-floors-tier-output="([^"]+)"', body)
            assert key and outputs.is_file(), f"{path.relative_to(built_site.site)}: a tab's output is in its page"
            output = json.loads(outputs.read_text(encoding="utf-8"))[key[1]]
            said = re.search(r'class="floors-tiers__differs" data-differing="(\d+)"', body)  # in any language
            shown = output.count('<span class="hll">')
            assert shown == (int(said[1]) if said else 0), (path.relative_to(built_site.site), key[1], said, shown)
            marked_tabs += bool(shown)
    assert marked_tabs > 0, "some recorded machine printed other numbers than this build"


def test_every_committed_recording_is_shown_current_or_listed_stale(built_site: Build) -> None:
    # Never stale, never silent: each recorded block is a tab on its page while it is current, and a
    # note on its page and a line of the report once it is not.
    recordings = read_recordings(ROOT / "recordings")
    assert len(recordings) >= 2, "the site ships at least two machines besides the one that builds it"
    report = json.loads((built_site.site / "build-report.json").read_text(encoding="utf-8"))["recordings"]
    assert [t["tier"] for t in report["tiers"]] == [r.tier for r in recordings]
    stale = {(s["tier"], s["page"], s["block_id"]) for s in report["stale"]}
    assert report["orphans"] == [], "make record prunes blocks no page has"
    for recording in recordings:
        for page in sorted({b.page for b in recording.blocks}):
            html = built_site.page(page_dir(page))
            current = [
                b for b in recording.blocks if b.page == page and (recording.tier, page, b.block_id) not in stale
            ]
            if current:
                assert f'data-tier="{recording.tier}"' in html, (recording.tier, page)
            if len(current) < sum(1 for b in recording.blocks if b.page == page):
                assert f'data-tier-stale="{recording.tier}"' in html, (recording.tier, page)
    machines = built_site.page("build-report")
    assert all(f'<th scope="col" data-tier="{r.tier}">' in machines for r in recordings)
    assert 'id="machines"' in machines
