"""Reader's-weight audit of a built site: page weight, DOM size, search index, charts, Lighthouse.

Run `python bench/reader.py SITE_DIR` on a site built with `make build` (default `site/`). It
serves the site on 127.0.0.1 (an ephemeral port) and, for Part 0, floor 3, floor 4 and lab 4:

- loads the page in headless Chromium (390 x 844) and sums the bytes of every response, as
  transferred uncompressed by the local server, and counts the DOM's elements;
- prints the size of `search/search_index.json`, which a page loads only once its reader starts a
  search (`docs/javascripts/search-on-demand.js`), as it does Material's search worker, so neither
  is part of a page's weight;
- with `--charts`, lays out every chart (a proof's figure) of Part 0, the floors and the labs at
  390 x 844 and 1280 x 800, in the light and the dark palette, and prints how many of their words
  fall outside their chart, how many pairs of them overlap by more than a quarter of the smaller,
  and the smallest text as drawn on the screen (`CHART_LAYOUT_JS`; `tests/test_phone.py` requires
  none outside, none overlapping and 12 px at least);
- with `--vnu JAR`, runs the W3C Nu HTML Checker (npm `vnu-jar`, `build/dist/vnu.jar`; needs java)
  on those pages and prints each page's errors, apart from Material's own `autocomplete` one on
  its drawer and search toggles;
- with `--lighthouse`, runs Lighthouse's mobile audit (performance and accessibility) against
  Debian's chromium, `--runs` times per page (default 5), and prints each score and the median
  (Lighthouse's own advice: one run varies by a tenth on a busy machine). The pages are those four
  and a bare page: a heading and a paragraph, built in a temporary folder with this project's
  `mkdocs.yml` (`build_bare`). Each page's performance is given as a ratio to the bare page's, both
  medians of the same run, so that most of what the machine's load takes from every page cancels;
  the runs go round the pages in turn, so a change of load reaches them all. The medians of the
  metrics the score weighs (FCP, LCP, TBT, CLS, Speed Index) follow. For these runs the sites are
  served gzip-compressed, as GitHub Pages serves HTML, CSS, JavaScript and JSON, so the simulated
  slow network sees the bytes a reader's phone receives. Lighthouse comes from npm, installed
  beforehand (`npm install --no-save --prefix .cache/lighthouse lighthouse@12.8.2`, the last one
  for Node 20; 13 needs Node 22) into the folder `--lighthouse DIR` names (default
  `.cache/lighthouse`); nothing is downloaded at run time. It is not a test.

With `--synthetic-tiers N` it weighs, instead of SITE, a build that shows N recorded machines (the
committed recordings repeated under new names, `build_with_tiers`): what a page would load with three
CI legs, a GPU box and the one-core tier recorded. A tab's output and claims load only when it is
opened (`recordings.tabs.LazyOutputs`), so each recorded machine costs a page its tab labels and lines.

Targets (speed and size targets live here, not in the tests): a floor page at most 600 KB and
2,500 elements; the search index at most 300 KB; no Nu errors but Material's; a floor page's
Lighthouse performance at least 0.93 of the bare page's, and accessibility 1.0.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from playwright.sync_api import Page, Response, sync_playwright

from pytorch_floors.editions.handouts import CHROMIUM_ARGS
from pytorch_floors.floors import COMPILER, FLOORS
from pytorch_floors.recordings.schema import read_recordings, write_recording

PAGES = ["", "floors/3-boundary/", "floors/4-dispatcher/", "labs/4-dispatcher/"]
WEIGHED = [*PAGES, *(p for p in (f"floors/{f.key}/" for f in FLOORS) if p not in PAGES), f"{COMPILER.slug}/"]
"""The pages weighed (every floor, with its recorded tiers, and the compiler's page); the others audit PAGES."""
CHROMIUM = "/usr/bin/chromium"
PAGE_LIMIT_KB = 600
DOM_LIMIT = 2500
INDEX_LIMIT_KB = 300
PROJECT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = PROJECT / ".cache" / "lighthouse"
RATIO_LIMIT = 0.93
BARE = "bare page"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class Compressed(Quiet):
    """Serves text files gzip-compressed to a client that accepts it, as GitHub Pages does."""

    TEXT = (".html", ".css", ".js", ".json", ".xml", ".svg", ".txt")

    def send_head(self) -> BinaryIO | io.BytesIO | None:
        path = Path(self.translate_path(self.path))
        path = path / "index.html" if path.is_dir() else path
        if "gzip" not in self.headers.get("Accept-Encoding", "") or not path.is_file() or path.suffix not in self.TEXT:
            return super().send_head()
        body = gzip.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve(site: Path, handler: type[Quiet] = Quiet) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def weigh(url: str) -> list[tuple[str, int, int]]:
    """(page, bytes loaded, DOM elements) for each page, at a phone's viewport."""
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path in WEIGHED:
            context = browser.new_context(viewport={"width": 390, "height": 844})
            tab = context.new_page()
            sizes: dict[str, int] = {}

            def on_response(response: Response, sizes: dict[str, int] = sizes) -> None:
                if response.ok:
                    sizes[response.url] = len(response.body())

            tab.on("response", on_response)
            tab.goto(url + path, wait_until="networkidle")
            tab.wait_for_timeout(500)
            elements = tab.evaluate("document.getElementsByTagName('*').length")
            rows.append((path or "index", sum(sizes.values()), elements))
            context.close()
        browser.close()
    return rows


CHART_LAYOUT_JS = """
() => {
  // Every chart of the article: a proof's figure, or a drawing that is not in one.
  const charts = [...document.querySelectorAll('article .floors-figure, article svg.floors-plot')]
    .filter(c => !c.parentElement.closest('.floors-figure') && c.getClientRects().length);
  const clip = (r, c) => ({left: Math.max(r.left, c.left), right: Math.min(r.right, c.right),
                           top: Math.max(r.top, c.top), bottom: Math.min(r.bottom, c.bottom)});
  return charts.map(chart => {
    // What the reader sees of the chart: its box, less what a box around it scrolls or clips away.
    let seen = chart.getBoundingClientRect().toJSON();
    for (let n = chart.parentElement; n && n !== document.body; n = n.parentElement) {
      if (getComputedStyle(n).overflowX !== 'visible') seen = clip(seen, n.getBoundingClientRect());
    }
    seen = clip(seen, {left: 0, right: innerWidth, top: -Infinity, bottom: Infinity});
    const words = [];
    for (const text of chart.querySelectorAll('text')) {
      if (!text.getClientRects().length || !text.textContent.trim()) continue;
      const m = text.getScreenCTM();
      words.push({text: text.textContent.trim(), box: text.getBoundingClientRect(),
                  px: parseFloat(getComputedStyle(text).fontSize) * Math.hypot(m.a, m.b)});
    }
    const walker = document.createTreeWalker(chart, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('svg') || !node.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const px = parseFloat(getComputedStyle(node.parentElement).fontSize);
      for (const box of range.getClientRects()) {
        if (box.width > 0) words.push({text: node.textContent.trim(), box, px});
      }
    }
    const short = (w) => w.text.slice(0, 40);
    const outside = words.filter(({box}) => box.left < seen.left - 0.5 || box.right > seen.right + 0.5
        || box.top < seen.top - 0.5 || box.bottom > seen.bottom + 0.5)
      .map(w => `${short(w)} [${Math.round(w.box.left)}..${Math.round(w.box.right)} px; the chart shows `
                + `${Math.round(seen.left)}..${Math.round(seen.right)}]`);
    const overlapping = [];
    words.forEach((a, i) => words.slice(i + 1).forEach(b => {
      const w = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
      const h = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
      const smaller = Math.min(a.box.width * a.box.height, b.box.width * b.box.height);
      if (w > 0 && h > 0 && w * h > 0.25 * smaller) overlapping.push(`${short(a)} / ${short(b)}`);
    }));
    const title = chart.querySelector('figcaption, title');
    return {title: (title ? title.textContent : chart.textContent).trim().slice(0, 60), words: words.length,
            outside, overlapping, smallest: Math.min(...words.map(w => w.px))};
  });
}
"""
"""Each chart on the page: its title, how many words it draws, those that fall outside what the reader
sees of it, the pairs that overlap by more than a quarter of the smaller, and its smallest text in px."""

CHART_VIEWPORTS = {"390": {"width": 390, "height": 844}, "1280": {"width": 1280, "height": 800}}


def chart_pages() -> list[str]:
    """Part 0, every floor and every lab, from the floors' registry."""
    return ["", *(f"floors/{f.key}/" for f in FLOORS), *(f"labs/{f.key}/" for f in FLOORS)]


def use_palette(tab: Page, scheme: str) -> None:
    """Switch Material's palette to `scheme` ("default" or "slate") with its own toggle."""
    if tab.evaluate("document.body.getAttribute('data-md-color-scheme')") != scheme:
        tab.locator("form[data-md-component=palette] label:visible").first.click()
        tab.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'")


def chart_layout(url: str) -> None:
    """Print, per viewport and palette, the charts' words outside them, their overlaps and their smallest text."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, viewport in CHART_VIEWPORTS.items():
            for scheme in ("default", "slate"):
                tab = browser.new_page(viewport=viewport)  # type: ignore[arg-type]
                charts = []
                for path in chart_pages():
                    tab.goto(url + path)
                    use_palette(tab, scheme)
                    charts += [{**chart, "page": path or "index"} for chart in tab.evaluate(CHART_LAYOUT_JS)]
                tab.close()
                smallest = min(charts, key=lambda chart: chart["smallest"])
                print(
                    f"charts {name} {'light' if scheme == 'default' else 'dark'}: {len(charts)} charts, "
                    f"{sum(len(c['outside']) for c in charts)} words outside their chart, "
                    f"{sum(len(c['overlapping']) for c in charts)} overlapping pairs, smallest text "
                    f"{smallest['smallest']:.1f} px ({smallest['page']}: {smallest['title'][:40]})"
                )
                for chart in charts:
                    for problem in chart["outside"][:3] + chart["overlapping"][:3]:
                        print(f"    {chart['page']}: {chart['title'][:40]}: {problem}")
        browser.close()
    print("target: none outside, none overlapping, 12 px at least")


MATERIAL_NU_ERROR = "Attribute “autocomplete” is only allowed when the input type is"
"""Material's own Nu error: `autocomplete="off"` on its checkbox toggles (drawer, search)."""


def nu_errors(jar: Path, site: Path) -> dict[str, list[str]]:
    """The Nu HTML Checker's errors on each audited page, Material's `autocomplete` one left out."""
    # Each audited page and its Chinese twin (docs/zh/): the same templates, other words.
    pages = [site / path / "index.html" for path in [*PAGES, *(f"zh/{path}" for path in PAGES)]]
    done = subprocess.run(
        ["java", "-jar", str(jar), "--errors-only", "--format", "json", *map(str, pages)],
        capture_output=True,
        text=True,
        check=False,  # exits 1 when it finds errors; its report is on stderr either way
        timeout=300,
    )
    found: dict[str, list[str]] = {str(page): [] for page in pages}
    for message in json.loads(done.stderr)["messages"]:
        if MATERIAL_NU_ERROR not in message["message"]:
            page = message["url"].removeprefix("file:")
            found.setdefault(page, []).append(f"{message.get('lastLine', '?')}: {message['message']}")
    return found


METRICS = {
    "FCP": "first-contentful-paint",
    "LCP": "largest-contentful-paint",
    "TBT": "total-blocking-time",
    "CLS": "cumulative-layout-shift",
    "SI": "speed-index",
}
"""The metrics Lighthouse's performance score weighs, by the names it gives them, and their audits."""


def lighthouse(tool: Path, url: str) -> tuple[dict[str, float], dict[str, float]]:
    """Lighthouse's mobile performance and accessibility scores for one page, and its metrics (ms; CLS unitless)."""
    done = subprocess.run(
        [
            str(tool / "node_modules" / ".bin" / "lighthouse"),
            url,
            "--quiet",
            "--output=json",
            "--only-categories=performance,accessibility",
            f"--chrome-flags={' '.join(CHROMIUM_ARGS)}",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "CHROME_PATH": CHROMIUM},
        timeout=300,
    )
    report = json.loads(done.stdout)
    scores = {name: category["score"] for name, category in report["categories"].items()}
    return scores, {name: report["audits"][audit]["numericValue"] for name, audit in METRICS.items()}


BARE_PAGE = """---
description: A bare page, to weigh the site's pages against.
---

# A bare page

One heading and one paragraph: what Material, with this site's theme, plugins, stylesheets and
scripts, costs a page before the page says anything.
"""

BUILD_BARE = """
import logging, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
config = load_config(sys.argv[1], nav=["index.md"], watch=[], strict=True)
config.plugins["redirects"].config["redirect_maps"] = {}
build(config)
"""
"""Builds the bare site strictly: the copied `mkdocs.yml` with its nav replaced, no redirects and nothing watched."""


def build_bare(folder: Path) -> Path:
    """Build the bare page in `folder` with this project's `mkdocs.yml`, and return the site's folder.

    `mkdocs.yml` is copied unchanged, with `overrides/` (its `custom_dir`) and `docs/`'s stylesheets
    and scripts (its `extra_css` and `extra_javascript`, and `search-on-demand.js`, which
    `overrides/main.html` loads); `docs/` holds `index.md` with a heading and a paragraph. Every
    plugin stays. Only three things change, on the loaded configuration: the nav is that one page
    (the site's nav names pages the folder does not have), the `redirects` plugin has no redirects
    (its targets are the site's pages), and `watch` is empty (`mkdocs serve`'s folders, `src/` and
    `snippets/`, which are not copied). The copy is the project the `floors` plugin sees, so it
    checks no `anchors.lock` of the site's and keeps its cache in the folder, which
    `FLOORS_CACHE_DIR` names as well: a build that plans no proof would otherwise prune the site's
    cache.
    """
    shutil.copy(PROJECT / "mkdocs.yml", folder / "mkdocs.yml")
    shutil.copytree(PROJECT / "overrides", folder / "overrides")
    for assets in ("stylesheets", "javascripts"):
        shutil.copytree(PROJECT / "docs" / assets, folder / "docs" / assets)
    (folder / "docs" / "index.md").write_text(BARE_PAGE, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-c", BUILD_BARE, str(folder / "mkdocs.yml")],
        check=True,
        cwd=folder,
        env={**os.environ, "FLOORS_CACHE_DIR": str(folder / ".cache"), "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    return folder / "site"


SYNTHETIC = Path(".cache") / "reader-tiers"
"""Where `--synthetic-tiers` writes its recordings (relative to the project: FLOORS_RECORDINGS's form)."""


def build_with_tiers(count: int, folder: Path) -> Path:
    """Build the site into `folder` as if `count` machines were recorded: the committed recordings, repeated.

    Each synthetic tier is a copy of a committed one under a new name (`synthetic-1`, ...), so it differs
    from this build where the committed one does: a page pays for it as it would for another CPU leg or
    a GPU box. The build reads the proof cache, so it runs what the cache lacks, no more.
    """
    committed = read_recordings(PROJECT / "recordings")
    if not committed:
        raise SystemExit("no committed recordings to repeat: make record TIER=<name> first")
    shutil.rmtree(PROJECT / SYNTHETIC, ignore_errors=True)
    for index in range(count):
        write_recording(replace(committed[index % len(committed)], tier=f"synthetic-{index + 1}"), PROJECT / SYNTHETIC)
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "--site-dir", str(folder)],
        check=True,
        cwd=PROJECT,
        env={**os.environ, "FLOORS_RECORDINGS": str(SYNTHETIC), "NO_MKDOCS_2_WARNING": "1"},
        timeout=1800,
    )
    shutil.rmtree(PROJECT / SYNTHETIC, ignore_errors=True)
    return folder


def load() -> str:
    """The machine's load averages and its CPU count, to print beside the scores."""
    return f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


def lighthouse_ratio(tool: Path, site: Path, runs: int) -> None:
    """Print each page's Lighthouse scores, their medians, and its performance as a ratio to the bare page's."""
    with tempfile.TemporaryDirectory(prefix="reader-bare-") as folder:
        bare = build_bare(Path(folder))
        compressed, url = serve(site, Compressed)
        bare_server, bare_url = serve(bare, Compressed)
        pages = {BARE: bare_url, **{path or "index": url + path for path in PAGES}}
        scores: dict[str, list[dict[str, float]]] = {page: [] for page in pages}
        metrics: dict[str, list[dict[str, float]]] = {page: [] for page in pages}
        print(f"lighthouse: {runs} runs per page, round the pages in turn; before, {load()}")
        try:
            for _ in range(runs):
                for page, address in pages.items():
                    score, metric = lighthouse(tool, address)
                    scores[page].append(score)
                    metrics[page].append(metric)
        finally:
            compressed.shutdown()
            bare_server.shutdown()
    print(f"lighthouse: after, {load()}")
    bare_median = statistics.median(run["performance"] for run in scores[BARE])
    for page, page_runs in scores.items():
        line = "  ".join(
            f"{name} {statistics.median(run[name] for run in page_runs):.2f}"
            f" ({' '.join(f'{run[name]:.2f}' for run in page_runs)})"
            for name in page_runs[0]
        )
        ratio = statistics.median(run["performance"] for run in page_runs) / bare_median
        print(f"lighthouse {page:<24} {line}  ratio {ratio:.3f}")
        median = {name: statistics.median(run[name] for run in metrics[page]) for name in METRICS}
        print(
            f"{'':<35} FCP {median['FCP'] / 1000:.2f} s, LCP {median['LCP'] / 1000:.2f} s, "
            f"TBT {median['TBT']:.0f} ms, CLS {median['CLS']:.3f}, SI {median['SI'] / 1000:.2f} s (medians)"
        )
    print(
        f"targets: a floor page's performance >= {RATIO_LIMIT} of the bare page's, accessibility 1.00"
        " (medians of the same run; gzip-compressed as GitHub Pages serves)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="site", type=Path)
    parser.add_argument(
        "--lighthouse",
        type=Path,
        nargs="?",
        const=LIGHTHOUSE,
        metavar="DIR",
        help="run Lighthouse, installed with npm in this folder (default .cache/lighthouse)",
    )
    parser.add_argument("--vnu", type=Path, help="the Nu HTML Checker's vnu.jar (npm vnu-jar)")
    parser.add_argument("--runs", type=int, default=5, help="Lighthouse runs per page (default 5; the median counts)")
    parser.add_argument("--charts", action="store_true", help="lay out every chart at 390 and 1280 px and report")
    parser.add_argument(
        "--synthetic-tiers",
        type=int,
        metavar="N",
        help="weigh a build that shows N recorded machines (the committed recordings repeated) instead of SITE",
    )
    args = parser.parse_args()
    if args.synthetic_tiers:
        scratch = Path(tempfile.mkdtemp(prefix="floors-reader-"))
        args.site = build_with_tiers(args.synthetic_tiers, scratch / "site")
        print(f"weighing a build with {args.synthetic_tiers} recorded machines (the committed ones repeated)")
    if args.lighthouse and not (args.lighthouse / "node_modules" / ".bin" / "lighthouse").is_file():
        parser.error(
            f"no Lighthouse in {args.lighthouse}: npm install --no-save --prefix {args.lighthouse} lighthouse@12.8.2"
        )
    for folder in ("", "zh/"):  # each language's own index (plugin.languages.split_search_index)
        index = args.site / folder / "search" / "search_index.json"
        if index.is_file():
            print(
                f"search index {folder or 'en/'}: {index.stat().st_size / 1000:.0f} KB (target <= {INDEX_LIMIT_KB} KB)"
            )
    if args.vnu:
        for page, errors in nu_errors(args.vnu, args.site.resolve()).items():
            name = Path(page).parent.relative_to(args.site.resolve()).as_posix()
            print(f"nu {'index' if name == '.' else name + '/':<24} {len(errors)} errors")
            for error in errors[:5]:
                print(f"    {error}")
        print("target: 0 errors besides Material's autocomplete one")
    server, url = serve(args.site)
    try:
        for page, size, elements in weigh(url):
            print(f"{page:<24} {size / 1000:>7.0f} KB {elements:>6} elements")
        print(f"targets for a floor page: <= {PAGE_LIMIT_KB} KB, <= {DOM_LIMIT} elements")
        if args.charts:
            chart_layout(url)
    finally:
        server.shutdown()
    if args.lighthouse:
        lighthouse_ratio(args.lighthouse, args.site, args.runs)


if __name__ == "__main__":
    main()
