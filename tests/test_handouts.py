"""Handouts: the print stylesheet, the PDFs of Part 0 and each floor, and the whole edition with contents."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser
from published_editions import SECOND
from pypdf import PdfReader

from conftest import PUBLIC_URL
from pytorch_floors.editions import handouts as handouts_module
from pytorch_floors.editions.anchors import CITABLE_PAGES
from pytorch_floors.editions.course_pack import PACK_DIR
from pytorch_floors.editions.handouts import (
    EDITION_PDF,
    HANDOUT_DIR,
    MARGINS,
    Handout,
    cite_links_html,
    handout_context,
    handouts,
)
from pytorch_floors.floors import ANNEXES, FLOORS, MAP_PAGE
from pytorch_floors.i18n.languages import LANGUAGES

ITEMS = handouts()


def squash(text: str) -> str:
    """Text without any whitespace, so a line the printer wrapped still matches its source."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def printed_in(line: str, text: str) -> bool:
    """Every word of `line`, in order, in the PDF's squashed text: none cut off at the page edge.

    Word by word, because a line the printer carries over a page break can come back from the PDF
    with that page's printed link addresses between its words.
    """
    position = 0
    for word in line.split():
        found = text.find(squash(word), position)
        if found < 0:
            return False
        position = found + len(squash(word))
    return True


def test_handouts_follow_the_registry() -> None:
    assert [item.src for item in ITEMS] == list(CITABLE_PAGES)
    assert [item.src for item in ITEMS] == [MAP_PAGE, *(f.page for f in FLOORS), *(a.page for a in ANNEXES)]
    assert len({item.filename for item in ITEMS}) == len(ITEMS)
    assert ITEMS[3].marker == f"Floor 3 of {len(FLOORS)}"


def test_floor_pages_link_their_pdf_and_other_pages_do_not() -> None:
    context = handout_context("floors/3-boundary.md", "floors/3-boundary/")
    assert context == {
        "marker": f"Floor 3 of {len(FLOORS)}",
        "pdf": f"../../{HANDOUT_DIR}/floor-3-boundary.pdf",
        "edition_pdf": f"../../{HANDOUT_DIR}/{EDITION_PDF}",
        "pack": f"../../{PACK_DIR}/floor-3-boundary.zip",
    }
    assert handout_context(MAP_PAGE, "")["pdf"] == f"{HANDOUT_DIR}/part-0-map.pdf"  # type: ignore[index]
    assert handout_context("labs/3-boundary.py", "labs/3-boundary/") is None
    assert handout_context("reference/floors.md", "reference/floors/") is None


def test_the_cite_page_lists_every_pdf() -> None:
    html = cite_links_html("cite/")
    assert f'href="../{HANDOUT_DIR}/{EDITION_PDF}"' in html
    for item in ITEMS:
        assert f'href="../{HANDOUT_DIR}/{item.filename}"' in html
        assert item.title in html


class _PageText(HTMLParser):
    """Headings (h2–h4) and the console lines of a built page's proof outputs.

    A figure's words are drawn as paths (matplotlib's SVG), so only console text is compared
    with the PDF's text; the layout test checks that figures show.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self.output_lines: list[str] = []
        self._heading: list[str] | None = None
        self._output_depth = 0
        self._depth = 0
        self._skip = 0
        self._output_text: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("h2", "h3", "h4"):
            self._heading = []
        if tag == "a" and ("headerlink" in classes or "floors-copy-link" in classes):
            self._skip += 1
        if tag == "div":
            self._depth += 1
            if "floors-proof__output" in classes:
                self._output_depth = self._depth
        if tag == "pre" and self._output_depth:
            self._in_pre = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3", "h4") and self._heading is not None:
            self.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None
        if tag == "a" and self._skip:
            self._skip -= 1
        if tag == "pre":
            self._in_pre = False
        if tag == "div":
            if self._depth == self._output_depth:
                self.output_lines += [line for line in "".join(self._output_text).splitlines() if line.strip()]
                self._output_text, self._output_depth = [], 0
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._heading is not None and not self._skip:
            self._heading.append(data)
        if self._output_depth and self._in_pre:
            self._output_text.append(data)


def page_text(site: Path, item: Handout) -> _PageText:
    parser = _PageText()
    parser.feed((site / item.url / "index.html").read_text(encoding="utf-8"))
    return parser


@dataclass(frozen=True)
class Printed:
    """A published edition's site, and the handouts its publish printed into it as `make pdf` prints them."""

    site: Path
    edition: str

    def __getitem__(self, filename: str) -> Path:
        return self.site / HANDOUT_DIR / filename


@pytest.fixture(scope="session")
def printed(published: Any) -> Printed:
    # The publish prints each edition's handouts (`print_and_pack`, what `make pdf` runs on `site/`): the tests
    # read the second edition's rather than print the site a third time (about a minute on two cores).
    return Printed(published.tree / SECOND, SECOND)


def test_the_handouts_command_prints_the_site_it_is_given_for_its_edition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make pdf`'s command line: the printing itself is `print_and_pack`, which the publish runs (`printed`)."""
    from pypdf import PdfWriter  # noqa: PLC0415

    done = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "handouts", "--site", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "is not a built site: run `make build` first" in done.stderr
    (tmp_path / "index.html").write_text("<html></html>", encoding="utf-8")
    pdf, pack = tmp_path / "floor.pdf", tmp_path / "pack.zip"
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_blank_page(width=595, height=842)
    with pdf.open("wb") as out:
        writer.write(out)
    pack.write_bytes(b"PK")
    calls: list[tuple[Path, dict[str, Any]]] = []

    def print_and_pack(site: Path, **options: Any) -> tuple[list[Path], list[Path]]:
        calls.append((site, options))
        return [pdf], [pack]

    monkeypatch.setattr(handouts_module, "print_and_pack", print_and_pack)
    arguments = ["--site", str(tmp_path), "--paper", "Letter"]
    assert handouts_module.main(arguments, chromium="/usr/bin/chromium", published="2026.12") == 0
    assert calls == [(tmp_path, {"paper": "Letter", "chromium": "/usr/bin/chromium", "edition": "2026.12"})]
    assert f"{pdf}: 2 pages" in capsys.readouterr().out


def _bare_site(site: Path) -> None:
    """A page of one heading for every handout, in every language: what printing needs of a built site."""
    for language in LANGUAGES:
        for item in handouts(language):
            page = site / item.url / "index.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(
                f'<!doctype html><html lang="{language.code}"><meta charset="utf-8"><h1>{item.title}</h1></html>',
                encoding="utf-8",
            )


PRINT_COUNTING_LAUNCHES = """\
import json, sys
from pathlib import Path
from playwright.sync_api import BrowserType
from pytorch_floors.editions.handouts import print_and_pack

launches, launch = [], BrowserType.launch


def counted(self, **options):
    launches.append(str(options.get("executable_path")))
    return launch(self, **options)


BrowserType.launch = counted
printed, packs = print_and_pack(Path(sys.argv[1]), chromium=sys.argv[2], edition="2026.12")
print(json.dumps({"launches": launches, "printed": [str(p) for p in printed], "packs": [str(p) for p in packs]}))
"""
"""Print a site's handouts in a process of its own (Playwright's sync API runs once per process: this one's tests
hold the `browser` fixture's), counting the browsers it launches."""


@pytest.mark.browser
def test_every_language_is_printed_in_one_browser(tmp_path: Path, chromium_path: str) -> None:
    """Printing started Playwright's driver and a browser for each language (a publish prints two): one browser
    now prints every language, and writes what it wrote before."""
    _bare_site(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", PRINT_COUNTING_LAUNCHES, str(tmp_path), chromium_path],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["launches"] == [chromium_path], "one browser for every language"
    # Each language's parts, then its whole edition, in LANGUAGES' order.
    expected = []
    for language in LANGUAGES:
        expected += [f"{language.folder}/{HANDOUT_DIR}/{item.filename}".lstrip("/") for item in handouts(language)]
        expected.append(f"{language.folder}/{HANDOUT_DIR}/{EDITION_PDF}".lstrip("/"))
    assert [Path(path).relative_to(tmp_path).as_posix() for path in result["printed"]] == expected
    assert result["packs"] == [], "a site without labs has no course packs"
    for language in LANGUAGES:
        whole = PdfReader(tmp_path / language.folder / HANDOUT_DIR / EDITION_PDF)
        assert len(whole.pages) == 1 + len(handouts(language)), "the contents, then a page per part"
        assert "2026.12" in (whole.pages[0].extract_text() or "")
        assert not (tmp_path / language.folder / HANDOUT_DIR / ".contents.pdf").exists()


def pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def pdf_text_until(path: Path, enough: Callable[[str], bool]) -> str:
    """`pdf_text`'s first pages, as many as `enough` needs (all of them if it never has enough).

    For a check that holds of the whole text once it holds of its first pages: its verdict is the same, and
    pypdf reads a Chinese handout's text slowly (its characters are Type3 glyphs: 21.6 s for 11 handouts' 169 pages
    on the AMD EPYC, 4.0 s for their first pages).
    """
    text = ""
    for number, page in enumerate(PdfReader(path).pages):
        text += ("\n" if number else "") + (page.extract_text() or "")
        if enough(text):
            break
    return text


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.filename)
def test_each_pdf_has_every_heading_output_line_and_marker(printed: Printed, item: Handout) -> None:
    path = printed[item.filename]
    assert len(PdfReader(path).pages) >= 1
    text = squash(pdf_text(path))
    page = page_text(printed.site, item)
    assert page.headings, f"{item.src} has no sections"
    missing = [heading for heading in page.headings if squash(heading) not in text]
    assert missing == [], f"{item.filename} lacks headings {missing}"
    cut = [line for line in page.output_lines if not printed_in(line, text)]
    assert cut == [], f"{item.filename} lacks output lines {cut[:5]}"
    assert squash(item.marker).lower() in text.lower()  # print.css sets the marker in capitals
    assert "Measuredon" in text, "the provenance line is printed"
    # The table of contents sidebar and the gauge's steps are chrome: neither belongs on paper.
    assert "Tableofcontents" not in text and "Upafloor" not in text, "no site chrome on paper"


@pytest.mark.slow
@pytest.mark.browser
def test_links_print_their_public_addresses(printed: Printed) -> None:
    floor = FLOORS[2]
    text = squash(pdf_text(printed[f"floor-{floor.key}.pdf"]))
    assert squash(f"<{PUBLIC_URL}{printed.edition}/labs/{floor.key}/>") in text, "the edition's own address"
    assert "127.0.0.1" not in text
    assert "#crossing-cost" in text, "section anchors are printed with their headings"


@pytest.mark.slow
@pytest.mark.browser
def test_the_whole_edition_has_contents_and_every_part(printed: Printed) -> None:
    whole = PdfReader(printed[EDITION_PDF])
    parts = [len(PdfReader(printed[item.filename]).pages) for item in ITEMS]
    contents = len(whole.pages) - sum(parts)
    assert contents >= 1
    first = squash(whole.pages[0].extract_text() or "")
    start = contents + 1
    for item, length in zip(ITEMS, parts, strict=True):
        assert squash(f"{item.title}page{start}") in first, f"contents lists {item.title} at page {start}"
        start += length
    top = [entry.title for entry in whole.outline if not isinstance(entry, list)]
    assert top == ["Contents", *(item.title for item in ITEMS)]


MM_TO_PX = 96 / 25.4


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("paper_mm", [210, 215.9], ids=["A4", "Letter"])
def test_nothing_sticks_out_of_the_printed_page(
    browser: Browser, site_url: str, output_dir: Path, paper_mm: float
) -> None:
    """Laid out for print at the paper's printable width, every figure shows and nothing overflows or is cut."""
    margins = sum(float(MARGINS[side].removesuffix("mm")) for side in ("left", "right"))
    printable = int((paper_mm - margins) * MM_TO_PX)
    page = browser.new_page(viewport={"width": printable, "height": 1000})
    page.emulate_media(media="print")
    problems = {}
    for item in ITEMS:
        page.goto(site_url + item.url)
        found = page.evaluate(
            """(width) => {
              const bad = [];
              for (const figure of document.querySelectorAll('.floors-proof__output :is(svg, img)')) {
                const proof = figure.closest('[data-proof]')?.dataset.proof;
                if (figure.getBoundingClientRect().height === 0) bad.push(`hidden figure in ${proof}`);
              }
              for (const el of document.querySelectorAll('.md-content *')) {
                const box = el.getBoundingClientRect();
                if (box.width === 0) continue;
                const style = getComputedStyle(el);
                const hides = ['auto', 'hidden', 'scroll', 'clip'].includes(style.overflowX);
                if (box.right > width + 1 || (hides && el.scrollWidth > el.clientWidth + 1)) {
                  bad.push(`${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent || '').slice(0, 60)}`);
                }
              }
              return bad;
            }""",
            printable,
        )
        if found:
            problems[item.url] = found[:5]
    page.screenshot(path=str(output_dir / f"print-{paper_mm:.0f}mm-floor-8.png"), full_page=False)
    page.close()
    assert problems == {}


CHINESE = LANGUAGES[1]
CJK_FONT = re.compile(r"CJK|PingFang|Hei|Song|Ming|Noto ?Sans ?SC|WenQuanYi|SourceHan", re.IGNORECASE)


def drawn_glyphs(path: Path) -> tuple[int, set[str]]:
    """How a PDF draws what no embedded text font names: Type3 glyphs (Chromium's for an OpenType CJK collection),
    and the names of its other fonts (a CJK font embedded whole names itself: PingFang on macOS)."""
    glyphs, names = 0, set()
    for page in PdfReader(path).pages:
        resources: Any = page["/Resources"].get_object()
        fonts: Any = resources.get("/Font", {}).get_object()
        for font in (font.get_object() for font in fonts.values()):
            if font.get("/Subtype") == "/Type3":
                glyphs += len(font["/CharProcs"])
            else:
                names.add(str(font.get("/BaseFont", "")))
    return glyphs, names


@pytest.mark.slow
@pytest.mark.browser
def test_the_chinese_handouts_are_printed_from_the_chinese_pages_in_a_chinese_font(printed: Printed) -> None:
    folder = printed.site / CHINESE.folder / HANDOUT_DIR
    items = handouts(CHINESE)

    def chinese(text: str) -> int:
        return len(re.findall(r"[\u4e00-\u9fff]", text))

    def chinese_with(marker: str) -> Callable[[str], bool]:
        return lambda text: chinese(text) > 200 and squash(marker) in squash(text)

    for item in items:
        # Both checks hold of the whole text once they hold of its first pages (of 11 handouts, 10 need only the first).
        text = pdf_text_until(folder / item.filename, chinese_with(item.marker))
        assert chinese(text) > 200, f"{item.filename}: the text is not Chinese"
        assert squash(item.marker) in squash(text), item.filename
    floor = FLOORS[3]
    text = squash(pdf_text(folder / f"floor-{floor.key}.pdf"))
    assert squash(floor.heading_in(CHINESE.code)) in text and "分发器" in text
    # Without a font that has them, Chromium prints each Chinese character as an empty box (.notdef of the
    # Latin font) and draws no glyph of its own for it: each distinct character must be drawn.
    characters = set(re.findall(r"[\u4e00-\u9fff]", text))
    glyphs, names = drawn_glyphs(folder / f"floor-{floor.key}.pdf")
    assert glyphs >= len(characters) or any(CJK_FONT.search(name) for name in names), (
        f"{len(characters)} Chinese characters, {glyphs} glyphs drawn, fonts {sorted(names)}: "
        "no font with Chinese glyphs printed it"
    )
    assert (folder / EDITION_PDF).is_file()
    packs = sorted((printed.site / CHINESE.folder / PACK_DIR).glob("*.zip"))
    assert len(packs) == len(FLOORS), "a course pack per floor in the Chinese edition too"
