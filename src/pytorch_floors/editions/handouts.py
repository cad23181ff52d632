"""Print and PDF handouts: Part 0 and each floor as a PDF, and the whole edition as one PDF with contents.

`make pdf` builds the site, then runs `python -m pytorch_floors handouts`, which serves the
built site on 127.0.0.1 (a free port), opens each page in headless Debian Chromium and
prints it with the site's print stylesheet (`docs/stylesheets/print.css`). Requests to any
other host are refused, so printing needs no network. The PDFs land in the site's `pdf/`
folder; each floor page and the Cite page link them (`handout_context`, `cite_links_html`).
`make publish` prints each deployed edition the same way (`print_and_pack`, called by
`publish.write_edition_handouts`), so every edition carries its own handouts.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytorch_floors.editions.anchors import page_url
from pytorch_floors.editions.course_pack import PACK_DIR, pack_filename, write_packs
from pytorch_floors.errors import ToolError
from pytorch_floors.floors import ANNEXES, FLOORS, MAP_PAGE, MAP_TITLE, MAP_TITLE_ZH, floor_for_page
from pytorch_floors.i18n.languages import DEFAULT, LANGUAGES, Language, english_source, language_of
from pytorch_floors.i18n.messages import t
from pytorch_floors.render.citation import edition as current_edition
from pytorch_floors.render.templates import render

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

__all__ = [
    "CHROMIUM_ARGS",
    "EDITION_PDF",
    "HANDOUT_DIR",
    "Handout",
    "cite_links_html",
    "handout_context",
    "handouts",
    "print_and_pack",
    "print_handouts",
]

HANDOUT_DIR = "pdf"
"""Folder of the PDFs, relative to the site's root."""

EDITION_PDF = "pytorch-floors.pdf"
"""File name of the whole edition in one PDF."""

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
"""Headless Chromium without network chatter, as the handouts and the browser tests launch it."""
# Margins of the printed page; print.css's @page matches them for the browser's own Print.
MARGINS = {"top": "14mm", "bottom": "16mm", "left": "13mm", "right": "13mm"}


@dataclass(frozen=True)
class Handout:
    """One printable page.

    Attributes:
        src: The page's source path, relative to `docs/`.
        title: The title the contents and the Cite page show.
        marker: The small line that stands in for the gauge on paper.
        filename: The PDF's name in `pdf/`.
    """

    src: str
    title: str
    marker: str
    filename: str

    @property
    def url(self) -> str:
        """The page's URL relative to the site root."""
        return page_url(self.src)


def handouts(language: Language = DEFAULT) -> list[Handout]:
    """The handouts of one language, in reading order: Part 0, every floor of the registry, then the elevator.

    Args:
        language: The language whose pages are printed (their titles and markers are in it).

    Returns:
        One handout per page.
    """
    code, prefix = language.code, language.prefix
    map_title = MAP_TITLE_ZH if code == "zh" else MAP_TITLE
    items = [Handout(prefix + MAP_PAGE, map_title, map_title, "part-0-map.pdf")]
    items += [
        Handout(
            prefix + f.page,
            f.heading_in(code),
            t("Floor {number} of {total}", code, number=f.number, total=len(FLOORS)),
            f"floor-{f.key}.pdf",
        )
        for f in FLOORS
    ]
    for annex in ANNEXES:
        stops = ", ".join(str(stop.floor) for stop in annex.stops)
        marker = t("Stops at floors {listed} of {total}", code, listed=stops, total=len(FLOORS))
        items.append(Handout(prefix + annex.page, annex.title_in(code), marker, f"{annex.slug}.pdf"))
    return items


def _relative(target: str, from_url: str) -> str:
    depth = 0 if from_url in ("", "./") else from_url.strip("/").count("/") + 1
    return "../" * depth + target


def handout_context(src_uri: str, from_url: str) -> dict[str, str] | None:
    """What the `floors-handout` partial shows on a page: the paper marker and the PDF links.

    Args:
        src_uri: The page's source path, relative to `docs/`.
        from_url: The page's URL, to make the links relative.

    Returns:
        `marker`, `pdf` (this page's PDF), `edition_pdf` and, on a floor's page, `pack` (its course
        pack, `course_pack`), or `None` for pages without a handout.
    """
    language = language_of(src_uri)
    english = english_source(src_uri)
    floor = floor_for_page(english)
    # Each language's PDFs and packs are in its own folder (`pdf/`, `zh/pdf/`), printed from its own pages.
    folder = language.prefix
    for item in handouts(language):
        if item.src == src_uri:
            context = {
                "marker": item.marker,
                "pdf": _relative(f"{folder}{HANDOUT_DIR}/{item.filename}", from_url),
                "edition_pdf": _relative(f"{folder}{HANDOUT_DIR}/{EDITION_PDF}", from_url),
            }
            if floor is not None and english == floor.page:
                context["pack"] = _relative(f"{folder}{PACK_DIR}/{pack_filename(floor)}", from_url)
            return context
    return None  # a floor's lab page: the lab is not a handout


def cite_links_html(from_url: str, language: Language = DEFAULT) -> str:
    """The Cite page's list of PDFs: the whole edition, Part 0 and every floor, in the page's language.

    Args:
        from_url: The Cite page's URL, to make the links relative.
        language: The Cite page's language: it lists that language's PDFs.

    Returns:
        HTML.
    """
    folder = language.prefix
    links = [(item.title, _relative(f"{folder}{HANDOUT_DIR}/{item.filename}", from_url)) for item in handouts(language)]
    edition = _relative(f"{folder}{HANDOUT_DIR}/{EDITION_PDF}", from_url)
    return render("handout_links.html", language.code, edition=edition, links=links)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    """Serve a built site on 127.0.0.1 at a free port.

    Args:
        site_dir: The built site.

    Yields:
        The site's root URL.
    """
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _contents_html(edition: str, entries: list[tuple[str, int]], language: str) -> str:
    return render("handout_contents.html", language, edition=edition, entries=entries)


def _browser(chromium: str | None) -> str:
    # FLOORS_CHROMIUM (the command line's default for `chromium`) names another Chromium-based browser where
    # Debian's is not to be had (macOS, Ubuntu's snap).
    executable = chromium or shutil.which("chromium")
    if executable is None:
        raise FileNotFoundError(
            "chromium not found: run `make browser` (apt-get install chromium) or set FLOORS_CHROMIUM"
        )
    return executable


def _print_parts(page: Page, root: str, items: list[Handout], out_dir: Path, options: dict[str, Any]) -> list[Path]:
    """Print each handout's page to its own PDF."""
    written = []
    for item in items:
        response = page.goto(root + item.url, wait_until="load")
        if response is None or not response.ok:
            raise ToolError(f"{item.src}: {root + item.url} did not load for printing")
        page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
        path = out_dir / item.filename
        page.pdf(path=str(path), **options)
        written.append(path)
    return written


def _print_contents(
    page: Page,
    items: list[Handout],
    lengths: list[int],
    *,
    edition: str,
    path: Path,
    options: dict[str, Any],
    language: str,
) -> None:
    """Print the contents page, numbering where each part starts once its own length is known."""
    from pypdf import PdfReader  # noqa: PLC0415  (as in print_handouts)

    # The contents page's own length sets where each part starts; it does not change once known.
    length = 1
    for _ in range(3):
        starts = [length + 1 + sum(lengths[:index]) for index in range(len(items))]
        page.set_content(_contents_html(edition, [(i.title, s) for i, s in zip(items, starts, strict=True)], language))
        page.pdf(path=str(path), **options)
        printed = len(PdfReader(path).pages)
        if printed == length:
            return
        length = printed
    raise ToolError(f"the contents page kept changing length ({length} pages); cannot number the parts")


def _join_edition(contents: Path, items: list[Handout], parts: list[Path], edition: str, whole: Path) -> None:
    """The whole edition as one PDF: the contents, then each part as one bookmark with its headings under it."""
    from pypdf import PdfWriter  # noqa: PLC0415  (as in print_handouts)

    writer = PdfWriter()
    writer.append(str(contents))
    for item, path in zip(items, parts, strict=True):
        writer.append(str(path), outline_item=item.title)
    writer.add_metadata({"/Title": f"PyTorch Floors {edition}".strip()})
    with whole.open("wb") as stream:
        writer.write(stream)


def print_handouts(
    site_dir: Path,
    *,
    paper: str = "A4",
    chromium: str | None = None,
    edition: str = "",
    language: Language = DEFAULT,
) -> list[Path]:
    """Print Part 0 and each floor to PDF, and the whole edition as one PDF with contents.

    Args:
        site_dir: The built site; the PDFs are written to its `pdf/` folder (a language's: `zh/pdf/`).
        paper: Chromium's paper format (`A4`, `Letter`).
        chromium: The browser to drive (default: Debian's `chromium` on the PATH).
        edition: The edition's name, shown on the contents page.
        language: Whose pages to print: a Chinese handout is printed from the Chinese pages, and needs a font
            with Chinese glyphs (`make browser` installs one where fontconfig has none).

    Returns:
        The written PDFs: one per handout, then the whole edition.

    Raises:
        FileNotFoundError: If the site or one of its handout pages is missing, or there is no chromium.
        ToolError: If a page does not load.
    """
    return _print_languages(site_dir, [language], paper=paper, chromium=chromium, edition=edition)[language.code]


def _print_languages(
    site_dir: Path, languages: list[Language], *, paper: str, chromium: str | None, edition: str
) -> dict[str, list[Path]]:
    """`print_handouts` for each language, in one browser (started once: the publish prints two languages).

    Returns:
        Each language's written PDFs by its code: one per handout, then the whole edition.
    """
    # Only printing needs a browser driver and a PDF library: a site build imports neither (0.3 s).
    from playwright.sync_api import sync_playwright  # noqa: PLC0415
    from pypdf import PdfReader  # noqa: PLC0415

    executable = _browser(chromium)
    for language in languages:
        for item in handouts(language):
            if not (site_dir / item.url / "index.html").is_file():
                raise FileNotFoundError(f"{site_dir / item.url / 'index.html'} missing: build the site first")
    # A tagged PDF with an outline: each heading becomes a bookmark, and screen readers can read it.
    options = {"format": paper, "margin": MARGINS, "print_background": True, "outline": True, "tagged": True}
    written: dict[str, list[Path]] = {}
    with serve(site_dir) as root, sync_playwright() as playwright:

        def local_only(route: Route) -> None:
            # Printing must not depend on the network: anything not from the local server is refused.
            if route.request.url.startswith(root):
                route.continue_()
            else:
                route.abort()

        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.route("**/*", local_only)
        for language in languages:
            items = handouts(language)
            out_dir = site_dir / language.folder / HANDOUT_DIR
            out_dir.mkdir(parents=True, exist_ok=True)
            contents = out_dir / ".contents.pdf"
            parts = _print_parts(page, root, items, out_dir, options)
            lengths = [len(PdfReader(path).pages) for path in parts]
            _print_contents(
                page, items, lengths, edition=edition, path=contents, options=options, language=language.code
            )
            whole = out_dir / EDITION_PDF
            _join_edition(contents, items, parts, edition, whole)
            contents.unlink()
            written[language.code] = [*parts, whole]
        browser.close()
    return written


def print_and_pack(
    site_dir: Path, *, paper: str = "A4", chromium: str | None = None, edition: str = ""
) -> tuple[list[Path], list[Path]]:
    """Print the handouts of a built site, then write its course packs again with each floor's PDF inside.

    `make pdf` and `make publish` both finish a site this way: the build wrote the packs without PDFs. Every
    language is printed in one browser (`print_handouts` for each, but the browser started once).

    Args:
        site_dir: The built site.
        paper: Chromium's paper format (`A4`, `Letter`).
        chromium: The browser to drive (default: Debian's `chromium` on the PATH).
        edition: The edition's name, shown on the contents page.

    Returns:
        The PDFs written (`print_handouts`, language by language) and the packs written (`course_pack.write_packs`).
    """
    # A site without a translation's pages has no handouts in that language.
    languages = [
        language
        for language in LANGUAGES
        if language == DEFAULT or (site_dir / language.folder / "index.html").is_file()
    ]
    written = _print_languages(site_dir, languages, paper=paper, chromium=chromium, edition=edition)
    printed: list[Path] = []
    packs: list[Path] = []
    for language in languages:
        printed += written[language.code]
        folder = site_dir / language.folder
        pdfs = {
            f.key: folder / HANDOUT_DIR / item.filename
            for item in handouts(language)
            if (f := floor_for_page(english_source(item.src)))
        }
        packs += write_packs(folder, pdfs, proofs_root=site_dir, language=language.code)
    return printed, packs


def main(argv: list[str] | None = None, *, chromium: str | None = None, published: str | None = None) -> int:
    """Command line: print the built site's handouts into its `pdf/` folder and list them.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).
        chromium: The browser when `--chromium` names none (`FLOORS_CHROMIUM`, read by the command line).
        published: The edition being published (`FLOORS_EDITION`, read by the command line), if any.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors handouts", description=main.__doc__)
    parser.add_argument("--site", type=Path, default=Path("site"), help="the built site (default: site)")
    parser.add_argument("--paper", default="A4", choices=["A4", "Letter"], help="paper size (default: A4)")
    parser.add_argument(
        "--chromium", default=chromium, help="the browser (default: FLOORS_CHROMIUM, else chromium on the PATH)"
    )
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site} is not a built site: run `make build` first")
    printed, packs = print_and_pack(
        args.site, paper=args.paper, chromium=args.chromium, edition=current_edition(published)
    )
    from pypdf import PdfReader  # noqa: PLC0415  (as in print_handouts)

    for path in printed:
        size = path.stat().st_size
        print(f"{path}: {len(PdfReader(path).pages)} pages, {size / 1024:.0f} KiB")
    for path in packs:
        print(f"{path}: {path.stat().st_size / 1024:.0f} KiB")
    return 0
