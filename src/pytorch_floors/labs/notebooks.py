"""Labs: executed notebooks rendered by mkdocs-jupyter, keyed and limited like the proofs."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
from markupsafe import Markup

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.cache import machine_fingerprint
from pytorch_floors.execution.facts import TorchFacts
from pytorch_floors.execution.imports import local_imports, sources_digest
from pytorch_floors.floors import LABS, Lab, lab_for_page
from pytorch_floors.i18n.languages import LANGUAGES
from pytorch_floors.i18n.outputs import catalog_path, translate_output
from pytorch_floors.labs.cells import checker_source, lab_text, percent_text, published_lab, student_notebook
from pytorch_floors.labs.install import install_line
from pytorch_floors.labs.kernel import CHECKER_FILE, PROJECT_DIR, fold_labels
from pytorch_floors.labs.launch import Launch, download_box, notebook_names, with_install_cell
from pytorch_floors.labs.messages import said_in
from pytorch_floors.render.proof_frame import failure_banner
from pytorch_floors.render.splice import (
    Tag,
    find_end_tag,
    find_start_tag,
    insert_after,
    insert_before,
    replace_span,
    start_tags_in_place,
)
from pytorch_floors.render.templates import template
from pytorch_floors.render.urls import relative_url

__all__ = [
    "NOTEBOOK_WRAPPER",
    "finish_lab_page",
    "jupyter_cache_dir",
    "jupyter_environment",
    "lab_failure_banner",
    "lab_inputs",
    "labs_fingerprint",
    "publish_notebooks",
    "translate_lab_outputs",
]

PLUGIN = "mkdocs-jupyter"

LABS_CSS = "stylesheets/labs.css"
"""The lab pages' styles (notebook cells in both palettes, download box), relative to `docs/`."""

JUPYTER_DIR = "jupyter"
"""The project's Jupyter folder: nbconvert's configuration and the lab pages' notebook template."""


def jupyter_environment(jupyter_dir: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that point nbconvert at the project's Jupyter folder, and name the project for scrubbing.

    `JUPYTER_CONFIG_DIR` makes nbconvert read `jupyter_nbconvert_config.json` from it, and putting it
    first on `JUPYTER_PATH` makes nbconvert find the templates under its `nbconvert/templates/`
    before those of mkdocs-jupyter and nbconvert.

    Args:
        jupyter_dir: The project's `jupyter/` folder.
        environ: The current environment (its `JUPYTER_PATH` entries are kept, after ours).

    Returns:
        The variables to set (in the build's environment; a lab's kernel sees none of them).
    """
    others = [p for p in environ.get("JUPYTER_PATH", "").split(os.pathsep) if p and p != str(jupyter_dir)]
    return {
        "JUPYTER_CONFIG_DIR": str(jupyter_dir),
        "JUPYTER_PATH": os.pathsep.join([str(jupyter_dir), *others]),
        PROJECT_DIR: str(jupyter_dir.parent),
    }


def labs_fingerprint(project_dir: Path, docs_dir: Path, facts: TorchFacts | None = None) -> dict[str, str]:
    """What every lab's executed, rendered notebook depends on beyond its own source.

    The machine (as for proofs), the project files the labs import (followed the way a proof's
    imports are: an edit elsewhere in this package runs no lab again), the self-check helpers every
    lab runs (`checker.py`, which no lab imports: the build puts it into the lab), and
    `requirements.txt`, whose pins fix the versions of nbconvert and the kernel that render and run them.

    Args:
        project_dir: The project root (`src/` and the root are where imports are looked for).
        docs_dir: The documentation folder that holds the labs.
        facts: The build's torch facts, if it has them (asking a block's process again costs a second).

    Returns:
        `machine_fingerprint()` with `imports`, `checker` and `requirements` digests.
    """
    sources = [(docs_dir / entry.lab).read_text(encoding="utf-8") for entry in LABS if (docs_dir / entry.lab).is_file()]
    requirements = project_dir / "requirements.txt"
    pins = requirements.read_bytes() if requirements.is_file() else b""
    return {
        **machine_fingerprint(facts),
        "imports": sources_digest("\n\n".join(sources), (project_dir / "src", project_dir)),
        "checker": hashlib.sha256(checker_source().encode()).hexdigest(),
        "requirements": hashlib.sha256(pins).hexdigest(),
    }


def _twins(docs_dir: Path) -> list[tuple[str, Path]]:
    """Each translated lab's language and file (`docs/zh/labs/4-dispatcher.py`), for the labs that have one."""
    return [
        (language.code, docs_dir / language.folder / entry.lab)
        for language in LANGUAGES
        if language.folder
        for entry in LABS
        if (docs_dir / language.folder / entry.lab).is_file()
    ]


def translated_messages_digest(docs_dir: Path) -> str:
    """What the translated labs' pages show of their own messages (`messages.said_in`), as a digest.

    A translated lab's page shows its code with its messages in its language, from the catalog of printed
    lines (`LabMessagesPreprocessor`), and mkdocs-jupyter caches the page keyed on the lab's file alone; an
    entry of the catalog that a lab's message matches changes the page, and the rest of the catalog does not.
    """
    said = [
        (language, path.name, said_in(path.read_text(encoding="utf-8"), language))
        for language, path in _twins(docs_dir)
    ]
    return hashlib.sha256(json.dumps(said, ensure_ascii=False).encode()).hexdigest()


def lab_inputs(project_dir: Path, docs_dir: Path) -> list[Path]:
    """The files and folders `jupyter_cache_dir` reads, beside the machine and the package's own checker.

    A serve session keeps the folder while none of these changes (`plugin.serve.changes.Memo`): a folder is
    listed too, so a lab or a Jupyter file added to it counts.

    Args:
        project_dir: The project root.
        docs_dir: The site's pages.

    Returns:
        The labs, the project modules they import, `requirements.txt`, the Jupyter folder's files, and
        what the translated labs' messages are read from (their files, the catalogs of printed lines).
    """
    labs = [docs_dir / entry.lab for entry in LABS]
    twins = _twins(docs_dir)
    catalogs = {path for language, _ in twins if (path := catalog_path(language)) is not None}
    sources = "\n\n".join(path.read_text(encoding="utf-8") for path in labs if path.is_file())
    jupyter_dir = project_dir / JUPYTER_DIR
    return [
        *labs,
        *{lab.parent for lab in labs},
        *local_imports(sources, (project_dir / "src", project_dir)),
        project_dir / "requirements.txt",
        jupyter_dir,
        *sorted(path for path in jupyter_dir.rglob("*")),
        *(path for _, path in twins),
        *sorted(catalogs),
    ]


def jupyter_cache_dir(
    project_dir: Path,
    docs_dir: Path,
    cache_root: Path,
    facts: TorchFacts | None = None,
) -> Path:
    """Where mkdocs-jupyter keeps this environment's executed labs: a folder keyed on the environment.

    mkdocs-jupyter keys its cache on the notebook file and render options only, so a
    torch upgrade or a change in a module a lab imports would reuse stale outputs. Pointing its
    cache at a directory named after [`labs_fingerprint`][pytorch_floors.labs.notebooks.labs_fingerprint]
    (torch, Python, CPU, accelerator, the labs' imports, the pinned versions) makes any of
    those changes a cache miss.
    Labs execute with `lab_kernel.LabExecutePreprocessor` (named in the nbconvert configuration): a
    kernel with a proof's narrow environment, and outputs scrubbed of machine paths.
    The per-cell time limit and the code cells' `<code>` element come from
    `jupyter/jupyter_nbconvert_config.json`, which nbconvert reads through `JUPYTER_CONFIG_DIR`.
    The notebook markup comes from the project's templates under `jupyter/nbconvert/templates/`,
    which nbconvert finds before mkdocs-jupyter's own because `jupyter/` is put first on
    `JUPYTER_PATH`; the rendered pages are cached, so the cache is keyed on that folder too, on the
    words of the folds in each language (`kernel.fold_labels`), and on the translated labs' messages
    (`translated_messages_digest`).

    Args:
        project_dir: The project root.
        docs_dir: The site's pages.
        cache_root: The build's cache directory (`.cache` unless `FLOORS_CACHE_DIR` says otherwise).
        facts: The build's torch facts, if it has them (asking a block's process again costs a second).

    Returns:
        The folder to give mkdocs-jupyter as its `cache_dir`.
    """
    jupyter_dir = project_dir / JUPYTER_DIR
    fingerprint = labs_fingerprint(project_dir, docs_dir, facts)
    key = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode())
    for path in sorted(p for p in jupyter_dir.rglob("*") if p.is_file()):
        key.update(path.relative_to(jupyter_dir).as_posix().encode() + b"\0" + path.read_bytes())
    # The template shows the folds' words, which come from the interface's catalog, not from that folder.
    key.update(json.dumps([fold_labels(language.code) for language in LANGUAGES]).encode())
    key.update(translated_messages_digest(docs_dir).encode())
    return cache_root / "mkdocs-jupyter" / key.hexdigest()[:16]


def lab_failure_banner(failure: str, language: str) -> str:
    """The alert a lab's page opens with when a cell failed under `mkdocs serve` (the cell shows its traceback).

    Args:
        failure: Which cells failed, and how.
        language: The page's language.

    Returns:
        The banner's HTML.
    """
    return failure_banner(failure, language, "A cell of this lab failed to run")


class _Words(HTMLParser):
    """A fragment's words as mkdocs-jupyter's table of contents shows a heading's (inline code dropped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.code += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        self.code -= tag == "code" and self.code > 0

    def handle_data(self, data: str) -> None:
        if not self.code:
            self.words.append(data)


def _plain(html: str) -> str:
    parser = _Words()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.words).split())


def _inside(tags: list[tuple[Tag, tuple[Tag, ...]]], outer: Tag) -> list[Tag]:
    return [tag for tag, around in tags if outer in around]


def _stable_heading_ids(html: str) -> str:
    """Each h2-h4 given the id of the anchor written in it, and the table of contents pointed there.

    mkdocs-jupyter gives a heading the slug of its words and keeps the lab's `<a id="...">` inside it;
    the heading is written again (template `lab_heading.html`) with that id, the anchor dropped and its
    permalink's target changed, and each table-of-contents link whose words are a renamed heading's
    points at the new id. The HTML parser (`render.splice`) finds every place; nothing else changes.
    """
    tags = start_tags_in_place(html)
    renamed: dict[str, str] = {}
    changes: list[tuple[int, int, str]] = []
    for heading, _ in tags:
        if heading.name not in {"h2", "h3", "h4"} or "id" not in heading.attributes:  # a Chinese heading's is empty
            continue
        inner = _inside(tags, heading)
        anchor = next((t for t in inner if t.name == "a" and t.attributes.get("id")), None)
        link = next((t for t in inner if t.name == "a" and "headerlink" in (t.attributes.get("class") or "")), None)
        closing = find_end_tag(html, heading.name, start=heading.end)
        if anchor is None or link is None or closing is None or not anchor.start < link.start:
            continue
        anchor_end = find_end_tag(html, "a", start=anchor.end) if not html[: anchor.end].endswith("/>") else anchor
        link_end = find_end_tag(html, "a", start=link.end)
        if anchor_end is None or link_end is None:
            continue
        text = html[heading.end : anchor.start].rstrip()  # mkdocs-jupyter's HTML of the lab's own words
        new = str(anchor.attributes["id"])
        renamed[_plain(text)] = new
        written = template("lab_heading.html").render(
            level=heading.name[1], id=new, text=Markup(text), mark=Markup(html[link.end : link_end.start])
        )
        changes.append((heading.start, closing.end, written))
    for tag, _ in tags:
        if tag.name != "a" or "md-nav__link" not in (tag.attributes.get("class") or "").split():
            continue
        if not str(tag.attributes.get("href") or "").startswith("#"):
            continue
        closing = find_end_tag(html, "a", start=tag.end)
        new_id = renamed.get(_plain(html[tag.end : closing.start])) if closing is not None else None
        if new_id is not None:
            kept = [(name, value) for name, value in tag.attributes.items() if name != "href"]
            changes.append((tag.start, tag.end, template("lab_toc_link.html").render(id=new_id, attributes=kept)))
    for start, end, fragment in sorted(changes, reverse=True):
        html = replace_span(html, start, end, fragment)
    return html


def _install_line(src_uri: str, lab: str, launch: Launch) -> str:
    """The pinned `pip install` line of the packages the lab imports; a loud failure if one is not pinned."""
    try:
        return install_line(lab, launch.requirements.read_text(encoding="utf-8"), launch.owners)
    except LookupError as error:
        raise FloorsError(f"docs/{src_uri}: {error}") from None


def _download_box(entry: Lab, source: Path, launch: Launch, site_folder: str, language: str) -> str:
    lab = source.read_text(encoding="utf-8")
    # What the lab imports includes what its self-check helpers import; the run time is kept under the source's key.
    install = _install_line(entry.lab, lab_text(source.parents[entry.lab.count("/")], entry), launch)
    return download_box(entry, install, lab, launch.published, launch, site_folder=site_folder, language=language)


def translate_lab_outputs(html: str, language: str) -> str:
    """A translated lab's page with what its cells printed shown in its language, line by line.

    A translated lab shows its English lab's run (`kernel.code_key`: the same code), which printed English;
    as a proof's output is (`i18n.outputs`), each line the catalog (`outputs.zh.yml`) has is translated where
    the page renders, and the rest (a table row, a tensor, a quoted error) is shown as printed. A cell's
    printed output is the `<pre>` of an `jp-OutputArea-output` element, found by the HTML parser.

    Args:
        html: The page's content, as mkdocs-jupyter converted the lab.
        language: The page's language.

    Returns:
        The content, its outputs in `language`.
    """
    changes: list[tuple[int, int, str]] = []
    for tag, around in start_tags_in_place(html):
        if tag.name != "pre" or not around or "jp-OutputArea-output" not in _classes(around[-1]):
            continue
        closing = find_end_tag(html, "pre", start=tag.end)
        if closing is not None:
            printed = html[tag.end : closing.start]
            changes.append((tag.end, closing.start, translate_output(printed, language, html=True)))
    for start, end, fragment in sorted(changes, reverse=True):
        html = replace_span(html, start, end, fragment)
    return html


def _classes(tag: Tag) -> list[str]:
    return (tag.attributes.get("class") or "").split()


NOTEBOOK_WRAPPER = ("div", "jupyter-wrapper")
"""The element mkdocs-jupyter's HTML of a notebook starts with (its tag, its class): a page holding it shows a lab."""


def shows_notebook(output: str) -> bool:
    """Whether a page holds a converted notebook (mkdocs-jupyter's wrapper element, found by the HTML parser)."""
    name, css_class = NOTEBOOK_WRAPPER
    return find_start_tag(output, name, attribute=("class", css_class)) is not None


def finish_lab_page(
    output: str, *, src_uri: str, source: Path, page_url: str, launch: Launch, site_folder: str = "", language: str
) -> str:
    """Post-process a rendered lab page (called for every page; others pass through).

    On a lab page (a floor's `labs/N-slug.py`, an annex's `labs/slug.py`), this

    - gives each h2-h4 heading the id of the HTML anchor written in it (`## Goal <a id="goal"></a>`),
      instead of the slug of its words that mkdocs-jupyter assigns, and points the table of contents
      and the heading's permalink at it;
    - links `stylesheets/labs.css` (notebook cells in both palettes, download box) unless `extra_css`
      already does;
    - inserts the download links for the `.ipynb` (written by `publish_notebooks`) and the `.py`
      (copied by mkdocs-jupyter, then replaced by `publish_notebooks` with the lab and its helpers),
      and the pinned install line of what the lab and its helpers import, under the page title.

    Args:
        output: The page's final HTML.
        src_uri: The page's source, relative to `docs/` (`labs/4-dispatcher.py`).
        source: The page's source file.
        page_url: The page's URL, relative to the site.
        launch: The build's launch settings (repository, kept run times, records).
        site_folder: The language's folder of the site the page is in (`zh/` for a translated lab, whose
            Colab links open its own notebooks; `src_uri` and `source` are then its English lab's).
        language: The page's language (`en`, `zh`): the download box's words.

    Returns:
        The HTML to write.
    """
    entry = lab_for_page(src_uri)
    # The notebook's own element, not the name: the theme's script names `.jupyter-wrapper` on every page, and a
    # serve session's placeholder for a lab not yet converted (`plugin.serve.later`) got a download box too.
    if entry is None or not shows_notebook(output):
        return output

    # The solutions and the outputs after the setup come folded from the project's nbconvert template.
    article = find_start_tag(output, "article")
    title = find_end_tag(output, "h1", start=article.end) if article is not None else None
    output = insert_after(output, title, _download_box(entry, source, launch, site_folder, language))
    if LABS_CSS not in output:
        stylesheet = template("lab_stylesheet.html").render(href=relative_url(LABS_CSS, page_url))
        output = insert_before(output, find_end_tag(output, "head"), stylesheet)
    return _stable_heading_ids(output)


def _notebook(lab: Any, entry: Lab, *, student: bool, install: str) -> str:
    # The student's copy has answers to fill and no solutions; both copies install the pinned versions first.
    notebook = with_install_cell(student_notebook(lab) if student else lab, install)
    for index, cell in enumerate(notebook.cells, start=1):
        cell["id"] = f"{entry.key}-{index}"
        cell.get("metadata", {}).pop("lines_to_next_cell", None)
    notebook.metadata.pop("jupytext", None)
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    nbformat.validate(notebook)
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def publish_notebooks(site_dir: Path, docs_dir: Path, launch: Launch, language: str) -> None:
    """Write each lab as two downloadable `.ipynb` files and its text version into the built site.

    For each lab that exists, the percent-format source is read with its self-check helpers
    in its `checker` cell and its own messages in its language (`cells.published_lab`) and converted
    into **un-executed** notebooks (no outputs: the reader's numbers are the point) with stable cell
    ids, a first cell that installs
    the pinned versions, validated with nbformat, and written next to the lab page: the student's
    copy without solution cells as `labs/N-slug/N-slug.ipynb`, the full one as
    `labs/N-slug/N-slug-solutions.ipynb` (`lab_launch.notebook_names`). Where mkdocs-jupyter
    copied the lab's source next to its page (`include_source`, the page's text version
    `labs/N-slug/N-slug.py`), that copy, which would stop at its first self-check, is replaced by
    the lab with the helpers too (`cells.lab_text`); a site that asks for no copy gets none.

    Args:
        site_dir: The built site.
        docs_dir: The site's pages.
        launch: The build's launch settings (where the pinned versions are read).
        language: The labs' language (`en`, `zh`): the published helpers' (`labs/checker.py`) messages speak it.

    Raises:
        FloorsError: A lab that does not mark where the helpers go (`cells.with_checker`).
    """
    published = False
    for entry in LABS:
        source = docs_dir / entry.lab
        if not source.is_file():
            continue
        folder = site_dir / entry.lab.removesuffix(".py")
        folder.mkdir(parents=True, exist_ok=True)
        lab = published_lab(docs_dir, entry)  # once: both copies and the text are made from it; none changes it
        text = percent_text(lab)  # `lab_text`, without reading and translating the lab a second time
        install = _install_line(entry.lab, text, launch)
        for name, student in zip(notebook_names(entry), (True, False), strict=True):
            (folder / name).write_text(_notebook(lab, entry, student=student, install=install), encoding="utf-8")
        copied = folder / Path(entry.lab).name
        if copied.is_file():  # mkdocs-jupyter copied the source (`include_source`): the text version replaces it
            copied.write_text(text, encoding="utf-8")
        published = True
    if published:
        # The helpers once for the language's labs, which their pages link instead of showing (`kernel.fold_labels`).
        (site_dir / "labs" / CHECKER_FILE).write_text(checker_source(language) + "\n", encoding="utf-8")
