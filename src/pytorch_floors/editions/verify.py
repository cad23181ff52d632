"""A guard against a site built without its proofs: every page marked by the plugin, every block recorded.

A static-site engine that does not know the `floors` plugin (Zensical skips unknown plugins
without a word) would still build every page, with every proof shown as plain code and no output.
`python -m pytorch_floors verify SITE_DIR` fails unless

- the site has the build report the plugin writes (`build-report.json`), of the shape it writes;
- every page the report lists (every page the build wrote) is there;
- every page carries the plugin's mark with that build's id (a page left from another build, or
  rendered by a template the plugin never filled, has none);
- every block and lab the build planned has exactly one record, none failed and none was skipped
  (with `partial=True`, `verify --partial`: none skipped but those the build was told to leave out,
  `FLOORS_EXEC=off` or outside `FLOORS_EXEC_ONLY`, as its report records; the site is then a
  partial build, which `make build` accepts while an author writes one page and an edition never does);
- the report's totals agree with its records, and each page shows the frame of every proof it ran;
- every file of the site a page links or loads is there (`_check_promised`): what its `href`, `src`,
  `srcset`, `poster` and `<object data>` name inside the site (the proofs' and labs' downloads, the
  stylesheets and scripts, images, pages), its language's search index when it has Material's search
  form, and its `floors-tiers.json` when it holds a tab that loads its output from there. A page's
  handout PDFs (`pdf/`) are left out: `python -m pytorch_floors handouts` prints them after the build.

Redirect stubs (`mkdocs-redirects`) are counted apart: no template renders them.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from pytorch_floors.editions.handouts import HANDOUT_DIR
from pytorch_floors.errors import FloorsError
from pytorch_floors.i18n.languages import LANGUAGES, language_of
from pytorch_floors.recordings.tabs import LazyOutputs

__all__ = ["MARK", "SiteCheck", "verify_site"]

MARK = "pytorch-floors-build"
"""The `<meta name=…>` every page of a floors build carries; its content is the build's id."""

_MARK = re.compile(r'<meta name="' + MARK + r'" content="([0-9a-f]+)">')
_REDIRECT = re.compile(r'<meta http-equiv="refresh"')
_FRAME = '<div class="floors-proof"'
_SHOWN = 10


@dataclass
class SiteCheck:
    """What `verify_site` found.

    Attributes:
        pages: HTML pages checked (redirect stubs apart).
        redirects: Redirect stubs.
        blocks: Blocks and labs planned.
        claims: Claims the report lists.
        problems: Each thing that is wrong, in words; none when the site passes.
        left_out: The blocks and labs the build was told to leave out, accepted (`partial`).
        why_left_out: What told it (`FLOORS_EXEC_ONLY='floors/3-*'`).
    """

    pages: int = 0
    redirects: int = 0
    blocks: int = 0
    claims: int = 0
    problems: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    why_left_out: str = ""

    @property
    def passed(self) -> bool:
        """No problem found."""
        return not self.problems

    def summary(self) -> str:
        """One line for a log."""
        counts = (
            f"{self.pages} pages (and {self.redirects} redirects), {self.blocks} planned blocks and labs, "
            f"{self.claims} claims"
        )
        if self.passed and self.left_out:
            return (
                f"verified as a partial build: {counts}; every page marked by the floors plugin, every block "
                f"recorded, {len(self.left_out)} of them left out by {self.why_left_out} (not an edition)"
            )
        if self.passed:
            return (
                f"verified: {counts}; every page marked by the floors plugin, every block recorded, every file "
                "the pages link or load there"
            )
        return f"NOT verified ({len(self.problems)} problems): {counts}"


def _listed(problems: list[str], what: str, items: list[str]) -> None:
    if items:
        shown = ", ".join(items[:_SHOWN]) + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")
        problems.append(f"{len(items)} {what}: {shown}")


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise FloorsError(f"build-report.json: {where} must be text, not {value!r}"[:300])
    return value


def _objects(value: object, where: str, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """A list of objects, each with the text `fields`; a `FloorsError` names the first that is not."""
    if not isinstance(value, list):
        raise FloorsError(f"build-report.json: {where} must be a list, not {value!r}"[:300])
    for number, item in enumerate(value):
        if not isinstance(item, dict):
            raise FloorsError(f"build-report.json: {where}[{number}] must be an object, not {item!r}"[:300])
        for name in fields:
            _text(item.get(name), f"{where}[{number}].{name}")
    return value


def _page_path(value: str, where: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value or path.suffix != ".html":
        raise FloorsError(f"build-report.json: {where} must be an HTML file inside the site, not {value!r}"[:300])
    return value


def _check_shape(report: dict[str, Any]) -> None:
    """Refuse a report that is not of the shape the plugin writes, naming the first field that is wrong.

    Raises:
        FloorsError: If a field the checks read is missing or of another type.
    """
    build = report["build"]
    _text(build.get("id"), "build.id")
    _objects(build.get("planned"), "build.planned", ("page", "block_id"))
    if "pages" not in build:
        raise FloorsError(
            "build-report.json: build.pages is missing: the report lists no page the build wrote "
            "(a report of another version of the plugin); build the site again"
        )
    for number, entry in enumerate(_objects(build["pages"], "build.pages", ("path",))):
        _page_path(entry["path"], f"build.pages[{number}].path")
        if entry.get("page") is not None:
            _text(entry["page"], f"build.pages[{number}].page")
    _objects(report.get("blocks"), "blocks", ("page", "block_id", "status"))
    _objects(report.get("claims"), "claims", ("outcome",))
    if not isinstance(report.get("totals"), dict):
        raise FloorsError(f"build-report.json: totals must be an object, not {report.get('totals')!r}"[:300])


def _report(site: Path, check: SiteCheck) -> dict[str, Any] | None:
    path = site / "build-report.json"
    if not path.is_file():
        check.problems.append(
            "no build-report.json: the floors plugin did not run (an engine that skips unknown plugins builds this way)"
        )
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, RecursionError, ValueError) as error:
        check.problems.append(f"build-report.json cannot be read: {error}")
        return None
    if not isinstance(report, dict) or not isinstance(report.get("build"), dict):
        check.problems.append("build-report.json has no `build` section: a report of another version of the plugin")
        return None
    try:
        _check_shape(report)
    except FloorsError as error:
        check.problems.append(str(error))
        return None
    return report


def _check_marks(site: Path, build_id: str, check: SiteCheck) -> list[Path]:
    """Every page carries this build's mark; returns the pages (redirect stubs apart)."""
    unmarked, foreign, pages = [], [], []
    for path in sorted(site.rglob("*.html")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if _REDIRECT.search(text) and len(text) < 2048:
            check.redirects += 1
            continue
        check.pages += 1
        pages.append(path)
        found = _MARK.search(text)
        name = path.relative_to(site).as_posix()
        if found is None:
            unmarked.append(name)
        elif found[1] != build_id:
            foreign.append(name)
    _listed(check.problems, "pages without the floors plugin's mark", unmarked)
    _listed(check.problems, "pages marked by another build than the report's", foreign)
    return pages


_URL_ATTRIBUTES = {"href", "src", "poster"}
"""Attributes whose value is one URL on any element (`data` is one on `<object>`, `srcset` a list of them)."""


class _References(HTMLParser):
    """What one page names: its URLs, Material's `__config`, whether it searches and whether it loads tier outputs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.lazy_tiers = False
        self.searches = False
        self.config = ""
        self._in_config = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        self.urls += [value for name, value in values.items() if name in _URL_ATTRIBUTES]
        if tag == "object" and "data" in values:
            self.urls.append(values["data"])
        if "srcset" in values:
            self.urls += [item.split()[0] for item in values["srcset"].split(",") if item.split()]
        # tier-tabs.js fetches the page's floors-tiers.json for such a placeholder (`recordings.tabs.LazyOutputs`).
        self.lazy_tiers = self.lazy_tiers or "data-floors-tier-output" in values
        # Material's bundle fetches the search index where the page has its search form (`forms.namedItem("search")`).
        self.searches = self.searches or (tag == "form" and values.get("name") == "search")
        self._in_config = tag == "script" and values.get("id") == "__config"

    def handle_data(self, data: str) -> None:
        if self._in_config:
            self.config += data

    def handle_endtag(self, tag: str) -> None:
        self._in_config = False


def _in_site(url: str, page_dir: str, root: str) -> str | None:
    """The file in the site a URL on a page names (relative to the site), or None for one outside it.

    Args:
        url: The URL as written.
        page_dir: The page's folder in the site (`floors/1-program/`, or `` for the home page).
        root: The path the site's root has on its server, as the page's absolute URLs begin (`/`).
    """
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path:
        return None  # another site, a `javascript:` or `data:` URL, or a link within the page
    path = unquote(parts.path)
    if path.startswith("/"):
        if not path.startswith(root):
            return None
        joined = path[len(root) :]
    else:
        joined = page_dir + path
    resolved = posixpath.normpath(joined) + ("/" if path.endswith("/") else "")
    if resolved in {".", "./"}:
        return ""
    return None if resolved == ".." or resolved.startswith("../") else resolved


def _present(site: Path, target: str) -> bool:
    """Whether the site serves `target`: the file, or a folder's `index.html`."""
    path = site / target
    return path.is_file() or (path / "index.html").is_file()


def _promised(page: Path, site: Path) -> list[str]:
    """Every file of the site the page links or loads (relative to the site, folders as `x/`)."""
    references = _References()
    references.feed(page.read_text(encoding="utf-8", errors="replace"))
    references.close()
    page_dir = page.parent.relative_to(site).as_posix()
    page_dir = "" if page_dir == "." else f"{page_dir}/"
    try:
        config = json.loads(references.config) if references.config else {}
    except ValueError:
        config = {}
    config = config if isinstance(config, dict) else {}
    found_base = config.get("base")
    base = found_base if isinstance(found_base, str) else "."
    # Material writes the 404 page's URLs from the site's root on its server (`/`, or `/2026.01/` for an edition).
    root = base.rstrip("/") + "/" if base.startswith("/") else "/"
    urls = list(references.urls)
    if references.searches:
        # Material fetches `<base>/search/search_index.json`; search-on-demand.js asks for the page's language's,
        # which the plugin writes for the pages under that language's folder (`plugin.languages.split_search_index`).
        prefix = language_of(page.relative_to(site).as_posix()).prefix
        urls.append(f"{base.rstrip('/')}/{prefix}search/search_index.json")
    if references.lazy_tiers:
        urls.append(LazyOutputs.FILE)
    handouts = tuple(f"{language.prefix}{HANDOUT_DIR}/" for language in LANGUAGES)
    found = (_in_site(url, page_dir, root) for url in urls)
    return [target for target in found if target is not None and not target.startswith(handouts)]


def _check_promised(site: Path, pages: list[Path], check: SiteCheck) -> None:
    """Every file of the site a page links or loads is there (each named once, with the first page that needs it)."""
    missing: dict[str, str] = {}
    present: set[str] = set()
    for page in pages:
        for target in _promised(page, site):
            if target in present or target in missing:
                continue
            if _present(site, target):
                present.add(target)
            else:
                missing[target] = page.relative_to(site).as_posix()
    _listed(
        check.problems,
        "files the pages link or load that the site lacks",
        [f"{target or './'} (from {page})" for target, page in missing.items()],
    )


def _check_pages(site: Path, report: dict[str, Any], check: SiteCheck) -> dict[str, Path]:
    """Every page the report lists is in the site; returns each source page's built file."""
    missing, built = [], {}
    for entry in report["build"]["pages"]:
        path = site / entry["path"]
        if entry.get("page") is not None:
            built[entry["page"]] = path
        if not path.is_file():
            missing.append(entry["path"])
    _listed(check.problems, "pages the build wrote that the site lacks", missing)
    return built


def _left_out(runs: object) -> tuple[str, Callable[[str], bool]]:
    """What the build was told to leave out, in words, and whether it left out a page's blocks."""
    if not isinstance(runs, dict):
        return "", lambda _page: False  # a report that says nothing left nothing out on purpose
    if runs.get("execute") is False:
        return "FLOORS_EXEC=off", lambda _page: True
    only = runs.get("only")
    if isinstance(only, str) and only:
        return f"FLOORS_EXEC_ONLY={only!r}", lambda page: not fnmatch(page, only)
    return "", lambda _page: False


def _check_records(site: Path, report: dict[str, Any], check: SiteCheck, *, partial: bool) -> None:
    built = _check_pages(site, report, check)
    planned = Counter((entry["page"], entry["block_id"]) for entry in report["build"]["planned"])
    blocks = report["blocks"]
    recorded = Counter((block["page"], block["block_id"]) for block in blocks)
    check.blocks = sum(planned.values())
    _listed(
        check.problems,
        "planned blocks on pages the report does not list",
        sorted(f"{p} › {b}" for p, b in planned if p not in built),
    )
    _listed(check.problems, "planned blocks without a record", sorted(f"{p} › {b}" for p, b in planned - recorded))
    _listed(check.problems, "records of blocks never planned", sorted(f"{p} › {b}" for p, b in recorded - planned))
    _listed(
        check.problems,
        "blocks recorded more than once",
        sorted(f"{p} › {b}" for (p, b), n in recorded.items() if n > 1),
    )
    skipped = [b for b in blocks if b["status"] == "skipped"]
    if partial:
        check.why_left_out, left_out = _left_out(report["build"].get("runs"))
        check.left_out = [f"{b['page']} › {b['block_id']}" for b in skipped if left_out(str(b["page"]))]
        skipped = [b for b in skipped if not left_out(str(b["page"]))]
    _listed(
        check.problems, "blocks failed", [f"{b['page']} › {b['block_id']}" for b in blocks if b["status"] == "failed"]
    )
    _listed(check.problems, "blocks skipped", [f"{b['page']} › {b['block_id']}" for b in skipped])
    totals = report["totals"]
    statuses = Counter(block["status"] for block in blocks)
    expected = {"blocks": len(blocks), **{s: statuses.get(s, 0) for s in ("ran", "cached", "skipped", "failed")}}
    claims = report["claims"]
    check.claims = len(claims)
    outcomes = Counter(claim["outcome"] for claim in claims)
    expected |= {
        "claims": len(claims),
        "claims_held": outcomes.get("held", 0),
        "claims_not_held": outcomes.get("missed", 0),
        "claims_not_applicable": outcomes.get("not applicable", 0),
    }
    wrong = [
        f"{key} {totals.get(key)!r} (the records count {value})"
        for key, value in expected.items()
        if totals.get(key) != value
    ]
    _listed(check.problems, "totals that disagree with the records", wrong)
    # A block with a proof file is shown in a frame that names it; an inline block shows its output alone.
    frames = Counter(b["page"] for b in blocks if b.get("proof") and b["page"].endswith(".md"))
    shown_wrong = []
    for page, count in sorted(frames.items()):
        html = built.get(page)
        shown = html.read_text(encoding="utf-8").count(_FRAME) if html is not None and html.is_file() else 0
        if shown != count:
            shown_wrong.append(f"{page} shows {shown} of {count}")
    _listed(check.problems, "pages that do not show every proof they planned", shown_wrong)


def verify_site(site: Path, *, partial: bool = False) -> SiteCheck:
    """Check a built site for the marks of a complete floors build.

    Args:
        site: The built site's folder.
        partial: Accept the blocks and labs its build was told to leave out (`FLOORS_EXEC=off`, or
            outside `FLOORS_EXEC_ONLY`), as its report records; an edition is never checked so.

    Returns:
        What was checked and every problem found.
    """
    check = SiteCheck()
    if not (site / "index.html").is_file():
        check.problems.append(f"{site} is not a built site (no index.html)")
        return check
    report = _report(site, check)
    pages = _check_marks(site, report["build"]["id"] if report else "", check)
    if report is not None:
        _check_records(site, report, check, partial=partial)
    _check_promised(site, pages, check)
    return check
