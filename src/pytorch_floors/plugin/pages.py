"""What the plugin writes into pages from the whole build: the markers, the Proofs page, the navigation's floors.

The build's parts (`plugin/parts/`) call these while MkDocs renders; they read plain data (the
planned blocks, the registry, the project folder) and return Markdown.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown.extensions.toc import slugify

from pytorch_floors.errors import InputError
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.report import claim_rows
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock, ScanError, scan_markdown
from pytorch_floors.floors import (
    ANNEXES,
    FLOORS,
    LABS,
    MAP_PAGE,
    MAP_TITLE,
    MAP_TITLE_ZH,
    annex_for_page,
    floor_for_page,
)
from pytorch_floors.i18n.messages import PageLanguage, t
from pytorch_floors.i18n.outputs import translate_line
from pytorch_floors.plugin.serve.changes import Memo
from pytorch_floors.recordings import torch_changes
from pytorch_floors.render.templates import render

__all__ = [
    "BIBTEX_MARKER",
    "EDITION_MARKER",
    "FIXED_IN_A_SESSION",
    "HANDOUTS_MARKER",
    "MACHINES_MARKER",
    "NO_HANDOUTS",
    "PROOFS_MARKER",
    "REPORT_MARKER",
    "fill_markers",
    "fill_nav",
    "first_docstring_line",
    "marker",
    "marker_contents",
    "proofs_page",
    "report_html",
    "without_missing_includes",
]


def marker(name: str) -> str:
    """Where a page's source asks the build for something of the whole build: `<!-- floors:name -->`.

    A page holding one renders in every build of a dirty serve session (`plugin.serve`'s `SITE_WIDE_MARKER`), unless
    `marker_contents` knows that what each of its markers shows is unchanged.
    """
    return f"<!-- floors:{name} -->"


FIXED_IN_A_SESSION = ("edition", "bibtex", "handouts", torch_changes.MARKER)
"""Markers whose content changes with nothing a serve session can edit but the page itself: the edition's name,
its citation and its PDFs' links come from the settings; What changed inside PyTorch from that page's own proof
and the recordings, which `plugin.serve.changes.inputs_digest` covers (a change of them renders every page)."""

PROOFS_MARKER = marker("proofs")
REPORT_MARKER = marker("build-report")
MACHINES_MARKER = marker("machines")
EDITION_MARKER = marker("edition")
BIBTEX_MARKER = marker("bibtex")
HANDOUTS_MARKER = marker("handouts")
NO_HANDOUTS = "*This build has no PDFs: `make pdf` builds the site with them.*"
_SNIPPET_MARK = re.compile(r"-+8<-+")


def fill_nav(nav: list[Any], docs_dir: Path) -> None:
    """Fill `mkdocs.yml`'s empty Floors and Labs sections from the registry, in place.

    Args:
        nav: The configuration's `nav` (or a section of it).
        docs_dir: The site's `docs/` folder: a lab is listed only when its file exists.
    """
    for entry in nav:
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if title == "Floors" and value == []:
                entry[title] = [{f"{f.number} · {f.title}": f.page} for f in FLOORS]
            elif title == "Labs" and value == []:
                entry[title] = [{lab.title: lab.lab} for lab in LABS if (docs_dir / lab.lab).is_file()]
            elif isinstance(value, list):
                fill_nav(value, docs_dir)


def first_docstring_line(path: Path) -> str:
    """The Proofs page's summary of a proof: its docstring's first line.

    Raises:
        InputError: If the proof cannot be read or parsed (a blank summary would hide it).
    """
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    except (OSError, SyntaxError) as error:
        raise InputError(f"{path.name}: the Proofs page cannot read its docstring: {error}") from None
    return doc.strip().splitlines()[0] if doc else ""


def fill_markers(text: str, fillers: Mapping[str, Callable[[], str]]) -> str:
    """`text` with each marker it holds replaced by what its filler gives, in the mapping's order.

    Args:
        text: A page's Markdown (`on_page_markdown`) or HTML (`on_page_context`).
        fillers: For each marker (`marker`), what writes its content: called only if the marker is there.

    Returns:
        The text, filled.
    """
    for marker, filler in fillers.items():
        if marker in text:
            text = text.replace(marker, filler())
    return text


@dataclass(frozen=True)
class _ProofRow:
    """A proof of the Proofs page: its file's name and path (`None` if it is missing), its block, its summary."""

    name: str
    path: str | None
    block_id: str
    summary: str


@dataclass(frozen=True)
class _ProofsSection:
    """One page's table on the Proofs page, under the page's name."""

    title: str
    page: str
    rows: list[_ProofRow]
    anchor: str


def proofs_page(
    planned: Mapping[str, Sequence[ExecBlock]], project_dir: Path, language: str, memo: Memo | None = None
) -> str:
    """The Proofs page's tables (`render/templates/proofs_page.md`): every planned page's proofs, in reading order.

    The page's language (`en`, `zh`) names the pages and writes the tables' words. A serve session's `memo`
    keeps each proof's summary while its file is unchanged: every proof was parsed again for every build.

    Raises:
        InputError: If a proof cannot be read or parsed (`first_docstring_line`).
    """
    memo = memo if memo is not None else Memo()

    def summary_of(path: Path) -> str:
        return memo.get(("proof summary", path), lambda: (first_docstring_line(path), [path]))

    # What changed inside PyTorch, a page of the site with a proof, comes after the floors and the annexes.
    order = {f.page: f.number for f in FLOORS} | {a.page: len(FLOORS) + 1 + i for i, a in enumerate(ANNEXES)}
    order[torch_changes.PAGE] = len(FLOORS) + 1 + len(ANNEXES)
    sections = []
    for page, blocks in sorted(planned.items(), key=lambda item: (order.get(item[0], 0), item[0])):
        floor, annex = floor_for_page(page), annex_for_page(page)
        where = (
            floor.heading_in(language)
            if floor
            else (MAP_TITLE_ZH if language == "zh" else MAP_TITLE)
            if page == MAP_PAGE
            else annex.title_in(language)
            if annex is not None
            else t(torch_changes.TITLE, language)
            if page == torch_changes.PAGE
            else page
        )
        rows = []
        for block in blocks:
            gone = {path for path, _line in block.missing}
            for proof in block.proofs:
                # A missing one fails its block on its page (and fails a build); the table says why under serve.
                missing = proof in gone
                # The summary is the proof's docstring, English: a Chinese page shows it from the output catalog.
                summary = "" if missing else translate_line(summary_of(project_dir / proof), language)
                rows.append(_ProofRow(Path(proof).name, None if missing else proof, block.block_id, summary))
        # The English heading's slug is the section's anchor in every language (a Chinese heading's is a number).
        english = (
            floor.heading
            if floor
            else MAP_TITLE
            if page == MAP_PAGE
            else annex.title
            if annex is not None
            else torch_changes.TITLE
            if page == torch_changes.PAGE
            else page
        )
        sections.append(_ProofsSection(where, page, rows, slugify(english, "-")))
    return render("proofs_page.md", language, sections=sections)


def marker_contents(planned: Mapping[str, Sequence[ExecBlock]], project_dir: Path) -> dict[str, str]:
    """A digest of what some markers show, by name, for a dirty serve session to leave out pages that show the same.

    A page holding only these markers renders again when a digest changed (`plugin.serve.changes.plan_rebuild`);
    a marker not named here renders with every build.

    The Proofs page's tables (`proofs_page`) read the pages' blocks (ids, proofs, missing includes) and each
    proof's docstring: their digest covers those and each proof file's text. A prose edit changes none of them.

    Args:
        planned: Every page's executed blocks, as the engine planned them.
        project_dir: Where the proofs' paths are relative to.

    Returns:
        The digests.
    """
    digest = hashlib.sha256()
    for page in sorted(planned):
        for block in planned[page]:
            digest.update(repr((page, block.block_id, block.proofs, sorted(p for p, _ in block.missing))).encode())
            for proof in block.proofs:
                try:
                    digest.update((project_dir / proof).read_bytes())
                except OSError:
                    digest.update(b"\0unreadable")
    return dict.fromkeys(FIXED_IN_A_SESSION, "") | {"proofs": digest.hexdigest()}


def without_missing_includes(markdown: str, page: str, project_dir: Path) -> str:
    """The page's Markdown with each include of a missing file, in an executed block, made a comment.

    pymdownx.snippets raises on an include it cannot find, which would stop the build with a traceback
    (and `mkdocs serve` until the file is back); the block reaches the engine instead, which fails it,
    naming the page, the block, the file and the include's line, as any failed proof.
    """
    try:
        blocks = scan_markdown(markdown, page, project_dir)
    except ScanError:
        return markdown  # the page's own file scanned well: what changed it is left to the renderer
    lines = markdown.splitlines(keepends=True)
    for block in blocks:
        for _path, line in block.missing:
            text = lines[line - 1]
            lines[line - 1] = _SNIPPET_MARK.sub("# floors: missing include", text, count=1)
    return "".join(lines)


def report_html(records: Sequence[BlockResult], language: str | PageLanguage) -> str:
    """The build report as an HTML table, slowest block first (`render/templates/build_report.html`).

    Args:
        records: One record per executed block.
        language: The report page's language (`en`, `zh`), with the claims' translations it knows, if any: a claim's
            detail and reason are translated as printed lines are, its statement from those translations.

    Returns:
        A summary paragraph and the table, wrapped as Material wraps a Markdown table.
    """
    ran = [r for r in records if r.status == "ran"]
    rows = [
        {
            "page": record.page,
            "block_id": record.block_id,
            "proof": record.proof,
            "status": record.status,
            "time": format_seconds(record.seconds) if record.seconds is not None else "–",
        }
        for record in sorted(records, key=lambda r: -(r.seconds or 0))
    ]
    rows_of_claims = claim_rows(records)
    # `claims` are those that applied (the partial counts them as held or not); those that could not
    # apply here are passed apart, so a partial that predates them still counts right.
    claims = [c for c in rows_of_claims if c["applies"]]
    return render(
        "build_report.html",
        language,  # the report's words, in the language of the page it is on
        claims=claims,
        claims_held=sum(1 for c in claims if c["held"]),
        claims_not_applicable=[c for c in rows_of_claims if not c["applies"]],
        total=len(records),
        ran=len(ran),
        ran_time=format_seconds(sum(r.seconds or 0 for r in ran)),
        cached=sum(1 for r in records if r.status == "cached"),
        failed=sum(1 for r in records if r.status == "failed"),
        skipped=sum(1 for r in records if r.status == "skipped"),
        rows=rows,
    )
