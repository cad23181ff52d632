"""Labs: executed notebooks rendered by mkdocs-jupyter, keyed and limited like the proofs."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from fnmatch import fnmatch
from pathlib import Path

import jupytext
import nbformat
import tinycss2  # type: ignore[import-untyped]
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from pytorch_floors.execution.cache import environment_fingerprint
from pytorch_floors.floors import FLOORS, Floor, floor_for_page
from pytorch_floors.lab_cells import student_notebook
from pytorch_floors.lab_install import install_line
from pytorch_floors.lab_launch import Launch, download_box, notebook_names, with_install_cell
from pytorch_floors.section_cite import published_edition

__all__ = ["configure_jupyter", "finish_lab_page", "fold_answers", "prune_stylesheet", "publish_notebooks"]

PLUGIN = "mkdocs-jupyter"

ASSETS_DIR = "assets/labs"
"""Where the lab pages' shared stylesheet and script are written, relative to the site root."""

LABS_CSS = "stylesheets/labs.css"
"""The project's own lab styles (dark palette, download box), relative to `docs/`."""

_HEADING = re.compile(
    r'<h(?P<level>[2-4]) id="(?P<old>[^"]*)">(?P<text>.*?)<a id="(?P<new>[^"]+)"\s*(?:/>|></a>)\s*'
    r'<a class="anchor-link" href="#(?P=old)">(?P<mark>.*?)</a></h(?P=level)>',
    re.S,
)
_TOC_LINK = re.compile(
    r'<a href="#[^"]*"(?P<between> class="md-nav__link">\s*<span class="md-ellipsis">\s*)'
    r"(?P<label>.*?)(?P<after>\s*</span>)",
    re.S,
)
_STYLE = re.compile(r'<style type="text/css">(.*?)</style>\s*', re.S)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>\s*", re.S)
_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->\s*", re.S)
_MERMAID = re.compile(r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded".*?</script>\s*', re.S)
_CELL_ID = re.compile(r'id="cell-id=[^"]*"')
_CLASS_ATTR = re.compile(r'class="([^"]*)"')
_NEVER_MATCHES = re.compile(r"\S\s+:root")  # `.jupyter-wrapper :root` matches nothing

# Stylesheets written during this build, by path: publish_notebooks prunes them once all lab pages exist.
_written: dict[Path, str] = {}
# The project's requirements.txt, set by configure_jupyter: lab pages take their install line from it.
_requirements: list[Path] = []


def configure_jupyter(config: MkDocsConfig, project_dir: Path, cache_root: Path) -> None:
    """Key mkdocs-jupyter's cache on the environment and give executed cells a time limit.

    mkdocs-jupyter keys its cache on the notebook file and render options only, so a
    torch upgrade or a change in this package would reuse stale outputs. Pointing its
    cache at a directory named after the environment fingerprint (torch, Python, CPU,
    accelerator, this package's source) makes any of those changes a cache miss.
    `FLOORS_EXEC=off` (the render-only build) turns notebook execution off too, and
    `FLOORS_EXEC_ONLY` leaves the labs it does not match unexecuted, as it does proofs.
    The per-cell time limit comes from `jupyter/jupyter_nbconvert_config.json`, which
    nbconvert reads through `JUPYTER_CONFIG_DIR`.

    Args:
        config: The MkDocs configuration (after plugins are loaded).
        project_dir: The project root.
        cache_root: The build's cache directory (`.cache` unless `FLOORS_CACHE_DIR` says otherwise).
    """
    plugin = config.plugins.get(PLUGIN)
    if plugin is None:
        return
    digest = hashlib.sha256(json.dumps(environment_fingerprint(), sort_keys=True).encode()).hexdigest()[:16]
    if os.environ.get("FLOORS_EXEC", "on") == "off":
        plugin.config["execute"] = False
    only = os.environ.get("FLOORS_EXEC_ONLY")
    if only:
        skipped = [floor.lab for floor in FLOORS if not fnmatch(floor.lab, only)]
        plugin.config["execute_ignore"] = [*plugin.config.get("execute_ignore", []), *skipped]
    plugin.config["cache_dir"] = str(cache_root / "mkdocs-jupyter" / digest)
    _requirements[:] = [project_dir / "requirements.txt"]
    os.environ["JUPYTER_CONFIG_DIR"] = str(project_dir / "jupyter")


def _lab_floor(page: Page) -> Floor | None:
    floor = floor_for_page(page.file.src_uri)
    return floor if floor is not None and page.file.src_uri == floor.lab else None


def _site_dir(page: Page) -> Path:
    dest = Path(page.file.abs_dest_path)
    for _ in Path(page.file.dest_uri).parts:
        dest = dest.parent
    return dest


def _write_asset(site_dir: Path, stem: str, suffix: str, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    relative = f"{ASSETS_DIR}/{stem}.{digest}.{suffix}"
    path = site_dir / relative
    if path not in _written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        _written[path] = suffix
    return relative


def _plain(html: str) -> str:
    """A heading's words as mkdocs-jupyter's table of contents shows them (inline code dropped)."""
    text = re.sub(r"<[^>]+>", "", re.sub(r"<code>.*?</code>", "", html, flags=re.S))
    return " ".join(text.split())


def _stable_heading_ids(html: str) -> str:
    headings: dict[str, tuple[str, str]] = {}

    def rename(match: re.Match[str]) -> str:
        level, new, text = match["level"], match["new"], match["text"].rstrip()
        headings[_plain(text)] = (new, text)
        return (
            f'<h{level} id="{new}">{text}'
            f'<a class="anchor-link" href="#{new}" title="Permanent link">{match["mark"]}</a></h{level}>'
        )

    def relink(match: re.Match[str]) -> str:
        found = headings.get(_plain(match["label"]))
        if found is None:
            return match[0]
        return f'<a href="#{found[0]}"{match["between"]}{found[1]}{match["after"]}'

    html = _HEADING.sub(rename, html)
    return _TOC_LINK.sub(relink, html)


def _install_line(page: Page) -> str:
    """The pinned `pip install` line of the packages the lab imports; a loud failure if one is not pinned."""
    if not _requirements:
        raise PluginError("lab pages need configure_jupyter to have run (it finds requirements.txt)")
    try:
        return install_line(
            Path(page.file.abs_src_path or "").read_text(encoding="utf-8"), _requirements[0].read_text(encoding="utf-8")
        )
    except LookupError as error:
        raise PluginError(f"docs/{page.file.src_uri}: {error}") from None


_DIV_TAG = re.compile(r"<div\b|</div>")
_SOLUTION_CELL = re.compile(r'<div class="jp-Cell [^"]*\bcelltag_solution\b[^"]*"')
_OUTPUTS = re.compile(r'<div class="jp-Cell-outputWrapper"')


def _element_end(html: str, start: int) -> int:
    """The index just past the `</div>` that closes the `<div` opening at `start`."""
    depth = 0
    for tag in _DIV_TAG.finditer(html, start):
        depth += 1 if tag[0] == "<div" else -1
        if depth == 0:
            return tag.end()
    raise ValueError(f"unclosed <div> at offset {start}")


def _fold(html: str, opening: re.Pattern[str], summary: str, skip: int = 0) -> str:
    """Wrap each `<div>` element that `opening` finds (after the first `skip`) in a closed `<details>`."""
    parts, position, seen = [], 0, 0
    while match := opening.search(html, position):
        end = _element_end(html, match.start())
        seen += 1
        if seen > skip:
            parts += [html[position : match.start()], f'<details class="floors-fold"><summary>{summary}</summary>']
            parts += [html[match.start() : end], "</details>"]
        else:
            parts.append(html[position:end])
        position = end
    return "".join(parts) + html[position:]


def fold_answers(notebook_html: str) -> str:
    """Fold what would answer a prediction: the solution cells, and every output after the setup cell's."""
    notebook_html = _fold(notebook_html, _SOLUTION_CELL, "Solution")
    return _fold(notebook_html, _OUTPUTS, "Output: open it after you have predicted", skip=1)


def _download_box(floor: Floor, page: Page, launch: Launch) -> str:
    source = Path(page.file.abs_src_path or "").read_text(encoding="utf-8")
    return download_box(floor, _install_line(page), source, published_edition(), launch)


def finish_lab_page(output: str, page: Page, launch: Launch) -> str:
    """Post-process a rendered lab page (called for every page; others pass through).

    On a lab page (a floor's `labs/N-slug.py`), this

    - gives each h2-h4 heading the id of the HTML anchor written in it (`## Goal <a id="goal"></a>`),
      instead of the slug of its words that mkdocs-jupyter assigns, and points the table of contents
      and the heading's permalink at it;
    - moves mkdocs-jupyter's inline `<style>` blocks (about 600 KB on every lab page) and its
      clipboard script into one stylesheet and one script under `assets/labs/`, written once per
      build and linked from each lab page (`publish_notebooks` then drops the unused rules);
    - removes the MathJax and Mermaid loaders, which fetch scripts from a CDN and are unused;
    - replaces the random cell ids of the notebook conversion with stable ones;
    - makes the sideways-scrolling code cells focusable, so they scroll from the keyboard;
    - links `stylesheets/labs.css` (dark palette, download box) unless `extra_css` already does;
    - folds the solution cells and every output after the setup cell's into closed `<details>`, so
      the page does not answer its own "Predict" prompts before the reader opens them;
    - inserts the download links for the `.ipynb` (written by `publish_notebooks`) and the `.py`
      (copied by mkdocs-jupyter), and the pinned install line of what the lab imports, under the
      page title.

    Args:
        output: The page's final HTML.
        page: The page.
        launch: The build's launch settings (repository, kept run times, records).

    Returns:
        The HTML to write.
    """
    floor = _lab_floor(page)
    if floor is None or "jupyter-wrapper" not in output:
        return output
    site_dir = _site_dir(page)

    def href(relative: str) -> str:
        return get_relative_url(relative, page.url)

    start = output.find("<article")
    end = output.find("</article>", start)
    article = output[start:end]
    wrapper = article.find('<div class="jupyter-wrapper">')
    preamble, notebook = article[:wrapper], article[wrapper:]

    styles = "\n".join(m.group(1).strip() for m in _STYLE.finditer(preamble))
    preamble = _MERMAID.sub("", _MATHJAX.sub("", _STYLE.sub("", preamble)))
    scripts = "\n".join(m.group(1).strip() for m in _INLINE_SCRIPT.finditer(preamble))
    preamble = _INLINE_SCRIPT.sub("", preamble)

    cell = iter(range(1, 1_000_000))
    notebook = _CELL_ID.sub(lambda _: f'id="lab-cell-{next(cell)}"', notebook)
    notebook = notebook.replace('<clipboard-copy ,=""', "<clipboard-copy")
    # Code cells scroll sideways; a keyboard user must be able to focus them to scroll (axe rule).
    notebook = notebook.replace('<div class="highlight-ipynb', '<div tabindex="0" class="highlight-ipynb')
    notebook = fold_answers(notebook).replace("</h1>", "</h1>" + _download_box(floor, page, launch), 1)

    head_links = ""
    if styles:
        head_links += f'<link rel="stylesheet" href="{href(_write_asset(site_dir, "notebook", "css", styles))}">'
    if LABS_CSS not in output:
        head_links += f'<link rel="stylesheet" href="{href(LABS_CSS)}">'
    if scripts:
        head_links += f'<script src="{href(_write_asset(site_dir, "notebook", "js", scripts))}" defer></script>'

    output = output[:start] + preamble + notebook + output[end:]
    output = _stable_heading_ids(output)
    return output.replace("</head>", head_links + "</head>", 1)


def _used_classes(site_dir: Path) -> set[str]:
    used: set[str] = set()
    for floor in FLOORS:
        page = site_dir / floor.lab.removesuffix(".py") / "index.html"
        if page.is_file():
            for attribute in _CLASS_ATTR.findall(page.read_text(encoding="utf-8")):
                used.update(attribute.split())
    return used


def _selectors(prelude: list[tinycss2.ast.Node]) -> list[tuple[str, set[str]]]:
    """Split a selector list at its top-level commas; give each selector's top-level class names.

    Classes inside functional pseudo-classes (`:not(.x)`, `:is(.x, .y)`) are not collected: a
    selector may match even when those classes occur nowhere.
    """
    parts: list[list[tinycss2.ast.Node]] = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    selectors = []
    for part in parts:
        classes = {
            after.value
            for before, after in itertools.pairwise(part)
            if before.type == "literal" and before.value == "." and after.type == "ident"
        }
        selectors.append((tinycss2.serialize(part).strip(), classes))
    return selectors


def _prune_rules(rules: list[tinycss2.ast.Node], used: set[str]) -> str:
    kept: list[str] = []
    for rule in rules:
        if rule.type == "qualified-rule":
            selectors = _selectors(rule.prelude)
            alive = [text for text, classes in selectors if classes <= used and not _NEVER_MATCHES.search(text)]
            if alive:
                kept.append(f"{','.join(alive)}{{{tinycss2.serialize(rule.content)}}}")
        elif rule.type == "at-rule":
            keyword = rule.lower_at_keyword
            if keyword in ("media", "supports") and rule.content is not None:
                inner = _prune_rules(tinycss2.parse_rule_list(rule.content), used)
                if inner:
                    kept.append(f"@{keyword}{tinycss2.serialize(rule.prelude)}{{{inner}}}")
            elif keyword != "charset":
                kept.append(tinycss2.serialize([rule]))
    return "".join(kept)


def prune_stylesheet(css: str, used: set[str]) -> str:
    """Drop the rules of `css` whose selectors name a class that no page uses.

    A selector survives only if every class it names is in `used`; a rule survives if one of its
    selectors does (the others are removed from it). Rules inside `@media` and `@supports` are
    pruned the same way; other at-rules are kept, except `@charset`.

    Args:
        css: A stylesheet.
        used: The class names that occur in the pages that link it.

    Returns:
        The smaller stylesheet.
    """
    rules = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    return _prune_rules(rules, used)


def _notebook(source: Path, floor: Floor, *, student: bool, install: str) -> str:
    lab = jupytext.read(source)
    # The student's copy has answers to fill and no solutions; both copies install the pinned versions first.
    notebook = with_install_cell(student_notebook(lab) if student else lab, install)
    for index, cell in enumerate(notebook.cells, start=1):
        cell["id"] = f"{floor.key}-{index}"
        cell.get("metadata", {}).pop("lines_to_next_cell", None)
    notebook.metadata.pop("jupytext", None)
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    nbformat.validate(notebook)
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def publish_notebooks(config: MkDocsConfig) -> None:
    """Write each lab as two downloadable `.ipynb` files into the built site.

    For each floor whose lab exists, the percent-format source is converted with jupytext into
    **un-executed** notebooks (no outputs: the reader's numbers are the point) with stable cell ids,
    a first cell that installs the pinned versions, validated with nbformat, and written next to the
    lab page: the student's copy without solution cells as `labs/N-slug/N-slug.ipynb`, the full one
    as `labs/N-slug/N-slug-solutions.ipynb` (`lab_launch.notebook_names`).
    Then the lab pages' shared stylesheet, written by `finish_lab_page` during this build, is
    pruned of the rules that no lab page uses.

    Args:
        config: The MkDocs configuration.
    """
    site_dir = Path(config.site_dir)
    docs_dir = Path(config.docs_dir)
    for floor in FLOORS:
        source = docs_dir / floor.lab
        if not source.is_file():
            continue
        folder = site_dir / floor.lab.removesuffix(".py")
        folder.mkdir(parents=True, exist_ok=True)
        install = install_line(source.read_text(encoding="utf-8"), _requirements[0].read_text(encoding="utf-8"))
        for name, student in zip(notebook_names(floor), (True, False), strict=True):
            (folder / name).write_text(_notebook(source, floor, student=student, install=install), encoding="utf-8")
    used = _used_classes(site_dir)
    for path, kind in list(_written.items()):
        if kind == "css" and path.is_file() and path.is_relative_to(site_dir):
            path.write_text(prune_stylesheet(path.read_text(encoding="utf-8"), used), encoding="utf-8")
        del _written[path]
