"""The labs: a percent-format notebook per floor, executed, rendered, trimmed and downloadable."""

from __future__ import annotations

import ast
import copy
import itertools
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
from mkdocs_jupyter.nbconvert2 import nb2html  # type: ignore[import-untyped]
from test_execution import start_serve
from test_hardening import ANCESTOR_WALK

from conftest import LAB_CONFIG, ROOT, Build, FixtureSite, run_mkdocs
from pytorch_floors.errors import FloorsError
from pytorch_floors.floors import LABS, Lab
from pytorch_floors.i18n.outputs import english_runs, translate_line
from pytorch_floors.labs import checker, notebooks
from pytorch_floors.labs.cells import CHECKER, checker_source, lab_language, lab_name, lab_text, with_checker
from pytorch_floors.labs.cells import read_lab as read_checked_lab
from pytorch_floors.labs.install import install_line, pins
from pytorch_floors.labs.kernel import kernel_environment
from pytorch_floors.labs.launch import Launch, notebook_names
from pytorch_floors.labs.notebooks import jupyter_environment, labs_fingerprint, publish_notebooks

DOCS: Path = Path(ROOT) / "docs"
HEADING = re.compile(r"^(#{2,4}) (?P<text>.+?) <a id=\"(?P<id>[^\"]+)\"></a>$")
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SOLUTION_FOLD = re.compile(r"<summary(?: data-search-exclude)?>Solution</summary>")
OUTPUT_FOLD = re.compile(r"<summary(?: data-search-exclude)?>Output: open it after you have predicted</summary>")
"""A solution's and an output's folds as the project's nbconvert template writes them (`render.search_scope`
keeps their labels out of the search index)."""

# Page weight bound, in bytes. mkdocs-jupyter's own template inlines about 600 KB of CSS into every
# lab page. The project's template (jupyter/nbconvert/templates/mkdocs_html/notebook.html.j2) inlines
# none: a page is Material's frame (navigation, header: about 30 KB) plus the notebook markup, each
# code cell's source once, highlighted (50-80 KB for these labs). The frame grew by about 1.5 KB when
# every page's navigation gained How it works and For instructors, and each fold's label its mark that
# keeps it out of the search index (render.search_scope). It grew by about 2 KB again with issues 58 and 59:
# the words the site's scripts show, in the page's language (`#floors-words`), the scroll hint's script, the
# Colab note's wording. The self-check helpers' cell, which every lab page inlined highlighted (44 KB of each;
# lab 8 came to 179.5 KB), is a line that links one published copy per language (`labs/checker.py`): 46 KB
# less on every lab page, lab 8 about 134 KB.
MAX_PAGE_BYTES = 140_000


def lab_path(floor: Lab) -> Path:
    return DOCS / floor.lab


def read_lab(floor: Lab) -> Any:
    return jupytext.read(lab_path(floor))


def markdown_lines(notebook: Any) -> list[str]:
    return [line for cell in notebook.cells if cell.cell_type == "markdown" for line in cell.source.splitlines()]


def test_one_lab_per_floor_named_by_the_registry() -> None:
    expected = {floor.lab for floor in LABS}
    present = {f"labs/{path.name}" for path in (DOCS / "labs").glob("*.py")}
    assert present == expected


@pytest.mark.parametrize("floor", LABS, ids=lambda f: f.key)
def test_lab_title_comes_from_the_registry(floor: Lab) -> None:
    notebook = read_lab(floor)
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.splitlines()[0] == f"# {floor.title}"
    assert notebook.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("floor", LABS, ids=lambda f: f.key)
def test_every_heading_has_a_stable_unique_id(floor: Lab) -> None:
    ids: list[str] = []
    for line in markdown_lines(read_lab(floor)):
        if re.match(r"^#{2,4} ", line):
            match = HEADING.match(line)
            assert match, f"{floor.lab}: heading without an explicit id: {line!r}"
            assert KEBAB.match(match["id"]), match["id"]
            ids.append(match["id"])
    assert len(ids) == len(set(ids)), f"{floor.lab}: duplicate heading ids"
    assert ids[:2] == ["goal", "setup"]


@pytest.mark.parametrize("floor", LABS, ids=lambda f: f.key)
def test_exercises_have_self_checks_and_folded_explanations(floor: Lab) -> None:
    notebook = read_lab(floor)
    exercises = [i for i, c in enumerate(notebook.cells) if c.cell_type == "markdown" and "## Exercise" in c.source]
    assert 3 <= len(exercises) <= 6, (
        f"{floor.lab}: {len(exercises)} exercises; a lab has 3 to 6, each a markdown cell with a '## Exercise N · …' "
        "heading, an answer cell, a solution cell and a '# SELF-CHECK' cell (CONTRIBUTING.md, Add a lab)"
    )
    bounds = [*exercises, len(notebook.cells)]
    for start, end in itertools.pairwise(bounds):
        cells = notebook.cells[start:end]
        text = cells[0].source
        for verb in ("run", "change"):
            assert f"**{verb}**" in text.lower(), f"{floor.lab}: {text.splitlines()[0]} asks the reader to {verb}"
        checks = [c for c in cells if c.cell_type == "code" and c.source.startswith("# SELF-CHECK")]
        assert len(checks) == 1 and "expect(" in checks[0].source, "a check grades through expect(), not a bare assert"
        assert any(c.cell_type == "markdown" and c.source.startswith("<details") for c in cells)


CHECKER_NAMES = (
    "NotFilled",
    "WrongAnswer",
    "_placeholders",
    "require",
    "expect",
    "expect_type",
    "within",
    "best_time",
    "CoreShare",
    "unclear",
)


def test_the_checker_is_one_file_that_no_lab_copies() -> None:
    """The helpers live in `checker.py`; each lab marks, in its setup, the one cell the build puts them in."""
    helpers = checker_source()
    for name in CHECKER_NAMES:
        assert re.search(rf"^(def|class) {name}\b", helpers, re.M), name
        assert callable(getattr(checker, name))
    for floor in LABS:
        notebook = read_lab(floor)
        source = lab_path(floor).read_text(encoding="utf-8")
        defined = [name for name in CHECKER_NAMES if re.search(rf"^(def|class) {name}\b", source, re.M)]
        assert defined == [], f"{floor.lab} defines {defined}: the helpers come from checker.py"
        marked = [i for i, c in enumerate(notebook.cells) if CHECKER in c.metadata.get("tags", [])]
        assert len(marked) == 1, floor.lab
        cell = notebook.cells[marked[0]]
        assert cell.cell_type == "code" and len(cell.source.splitlines()) == 1 and cell.source.startswith("# ")
        # Right after the setup's code, before the first exercise: "Run this first" covers both cells.
        setup = next(i for i, c in enumerate(notebook.cells) if '<a id="setup"></a>' in c.source)
        assert marked[0] == setup + 2 and notebook.cells[setup + 1].cell_type == "code", floor.lab
        checked = read_checked_lab(DOCS, floor)
        assert checked.cells[marked[0]].source == helpers and checked.cells[marked[0]].metadata == cell.metadata
        others = [c.source for i, c in enumerate(checked.cells) if i != marked[0]]
        assert others == [c.source for i, c in enumerate(notebook.cells) if i != marked[0]], "nothing else changes"


def test_the_checker_helpers_grade_as_the_labs_need() -> None:
    with pytest.raises(checker.NotFilled, match=r"^fill in A, B\['x'\] in the answer cell above"):
        checker.require(A=None, B={"x": ..., "y": 1}, C=0)
    checker.require(A=0, B={"x": False})
    with pytest.raises(checker.WrongAnswer, match=r"^too small$"):
        checker.expect(False, "too small")
    with pytest.raises(checker.WrongAnswer, match=r"^N should be a count, not the string '3'$"):
        checker.expect_type("N", "3", int, "a count")
    with pytest.raises(checker.WrongAnswer, match="not the bool True"):
        checker.expect_type("N", True, (int, float), "a number")
    checker.expect_type("FLAG", True, bool, "True or False")
    assert checker.within(3, 2, 2) and not checker.within(5, 2, 2) and not checker.within("2", 2, 2)
    assert 0 < checker.best_time(lambda: sum(range(100)), repeat=3) < 0.01
    with checker.CoreShare() as core:
        time.sleep(0.05)  # waiting uses no CPU: the share a starved process gets
    assert 0 <= core.share < 0.5 and core.wall >= 0.05
    idle, starved = checker.CoreShare(cpu=1, wall=1), checker.CoreShare(cpu=0.1, wall=1)
    assert checker.unclear(50, 10, idle) == "" and checker.unclear(0.002, 0.1, starved) == ""
    assert checker.unclear(15, 10, idle).startswith("not graded on this machine: the ratio, 15, is within 2 times")
    assert "got 10% of a core" in checker.unclear(50, 10, starved), "a tenth of a core: within 20 times is unclear"


def _lab_without_a_marker() -> Any:
    notebook = read_lab(LABS[0])
    notebook.cells = [c for c in notebook.cells if CHECKER not in c.metadata.get("tags", [])]
    return notebook


def test_a_lab_that_does_not_mark_the_checker_cell_is_refused_by_name() -> None:
    unmarked = _lab_without_a_marker()
    assert lab_name(unmarked) == f"docs/{LABS[0].lab}", "the title names the file"
    with pytest.raises(FloorsError, match=rf"^docs/{LABS[0].lab}: 0 code cells tagged 'checker'"):
        with_checker(unmarked, lab_name(unmarked))
    twice = read_lab(LABS[0])
    twice.cells.append(copy.deepcopy(next(c for c in twice.cells if CHECKER in c.metadata.get("tags", []))))
    with pytest.raises(FloorsError, match="2 code cells tagged 'checker'"):
        with_checker(twice, "docs/labs/1-program.py")
    code = read_lab(LABS[0])
    next(c for c in code.cells if CHECKER in c.metadata.get("tags", [])).source = "x = 1  # not only a comment"
    with pytest.raises(FloorsError, match="must hold only a comment"):
        with_checker(code, "docs/labs/1-program.py")
    checked = with_checker(read_lab(LABS[0]), "docs/labs/1-program.py")
    assert with_checker(checked, "docs/labs/1-program.py").cells == checked.cells, "a second pass changes nothing"


def test_the_executor_shows_the_checker_even_where_nothing_executes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The nbconvert configuration puts the helpers in before the executor, so a render-only page shows them too.

    The page shows the helpers' cell as the line that links them (`labs/checker.py`), not their source."""
    for name, value in jupyter_environment(Path(ROOT) / "jupyter", {}).items():
        monkeypatch.setenv(name, value)
    html: str = nb2html(str(lab_path(LABS[0])), execute=False, no_prompt=True)
    assert "celltag_checker" in html and 'class="jp-InputArea-editor floors-checker"' in html
    assert "NotFilled" not in html and "_placeholders" not in html
    marker = next(c.source for c in read_lab(LABS[0]).cells if CHECKER in c.metadata.get("tags", []))
    assert unescape(re.sub(r"<[^>]+>", "", html)).count(marker) == 0, "the marker's comment is replaced"
    unmarked = tmp_path / "1-program.py"
    unmarked.write_text(jupytext.writes(_lab_without_a_marker(), fmt="py:percent"), encoding="utf-8")
    with pytest.raises(FloorsError, match=rf"^docs/{LABS[0].lab}: 0 code cells tagged 'checker'"):
        nb2html(str(unmarked), execute=False, no_prompt=True)


def test_the_checker_is_part_of_what_an_executed_lab_depends_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """No lab imports checker.py, so following the labs' imports missed it: an edit reused stale outputs."""
    before = labs_fingerprint(Path(ROOT), DOCS, facts=None)
    monkeypatch.setattr(notebooks, "checker_source", lambda: checker_source() + "\n# edited")
    assert labs_fingerprint(Path(ROOT), DOCS, facts=None) != before


@pytest.fixture(scope="module")
def lab_site(built_site: Build) -> Build:
    """The lab pages of the session's site build (`built_site`).

    A build of its own (the labs executed, the proofs skipped) was a whole second build of the site
    per test run, for pages the session's build writes alike.
    """
    return built_site


def lab_page(build: Build, floor: Lab) -> str:
    return build.page(floor.lab.removesuffix(".py"))


@pytest.mark.slow
def test_built_lab_pages_are_clean(lab_site: Build) -> None:
    for floor in LABS:
        html = lab_page(lab_site, floor)
        assert "application/vnd.jupyter.stderr" not in html, f"{floor.lab}: stderr output on the page"
        assert "application/vnd.jupyter.error" not in html and "Traceback" not in html, floor.lab
        assert "mathjax" not in html.lower() and "cdnjs" not in html, "no script from a CDN"
        assert not re.search(r'<(?:script|img)[^>]+src="https?:', html), "no external resource"
        assert not re.search(r'<link rel="stylesheet" href="https?:', html), "no external stylesheet"
        notebook = html.split('<div class="jupyter-wrapper">', 1)[1]
        assert "<style" not in html.split("</head>", 1)[1], "no <style> element in the body (invalid HTML)"
        assert "<script" not in notebook.split("</article>", 1)[0], "no script from the notebook"
        assert "<clipboard-copy" not in html and "clipboard-copy-txt" not in html, "Material's copy button only"
        code = r'<div class="highlight hl-python"><pre[^>]*><span></span><code>'
        assert re.search(code, notebook), "Material's markup"
        assert "cell-id=" not in html and 'id="cell-' not in html, "no random cell ids"
        permalinks = re.findall(r'<h[2-4] id="[^"]+">.*?<a class="([^"]+)"', html)
        assert permalinks and set(permalinks) == {"headerlink"}, "h2-h4 permalinks are Material's headerlinks"


@pytest.mark.slow
def test_built_headings_keep_their_ids_and_the_toc_points_at_them(lab_site: Build) -> None:
    for floor in LABS:
        html = lab_page(lab_site, floor)
        wanted = [m["id"] for line in markdown_lines(read_lab(floor)) if (m := HEADING.match(line))]
        built = re.findall(r'<h[2-4] id="([^"]+)"', html)
        assert built == wanted, floor.lab
        toc = re.findall(r'<a href="#([^"]+)" class="md-nav__link">', html)
        assert toc and set(toc) == set(wanted), f"{floor.lab}: table of contents links"
        assert f"<title>{floor.title} - PyTorch Floors</title>" in html


def _solutions_pasted_back(student: Any, full: Any) -> list[tuple[str, str]]:
    """The student's cells with each solution cell of the full notebook put back after its answer cell."""
    solutions = iter(c for c in full.cells if "solution" in c.metadata.get("tags", []))
    cells = []
    for cell in student.cells:
        cells.append((cell.cell_type, cell.source))
        if "answer" in cell.metadata.get("tags", []):
            solution = next(solutions)
            cells.append((solution.cell_type, solution.source))
    assert next(solutions, None) is None, "every solution follows an answer cell"
    return cells


@pytest.mark.slow
def test_each_lab_offers_the_student_and_the_full_notebook(lab_site: Build) -> None:
    for floor in LABS:
        html = lab_page(lab_site, floor)
        student_name, full_name = notebook_names(floor)
        assert re.search(rf'<a class="md-button md-button--primary" href="{student_name}" download>Download', html)
        assert re.search(rf'<a class="md-button" href="{full_name}" download>Download the full notebook', html)
        # This build is not an edition: no copy on GitHub for Colab, and the page says so instead of linking.
        assert "colab.research.google.com" not in html and "Open in Colab: only published editions" in html
        install = re.search(r'<pre class="floors-lab-install"><code>([^<]*)</code>', html)
        assert install is not None
        notebooks = []
        for name in (student_name, full_name):
            path = lab_site.site / floor.lab.removesuffix(".py") / name
            notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)  # type: ignore[no-untyped-call]
            nbformat.validate(notebook)
            # The first cell installs what the page ran with; then the lab itself, its helpers in its checker cell.
            assert notebook.cells[0].source == f"%{unescape(install[1])}", name
            assert notebook.cells[1].source.startswith(f"# {floor.title}")
            helpers = [c for c in notebook.cells if CHECKER in c.metadata.get("tags", [])]
            assert [c.source for c in helpers] == [checker_source()], name
            assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), "un-executed"
            assert [c.id for c in notebook.cells] == [f"{floor.key}-{i}" for i in range(1, len(notebook.cells) + 1)]
            notebooks.append(notebook)
        student, full = notebooks
        assert not [c for c in student.cells if "solution" in c.metadata.get("tags", [])], "the student's copy"
        assert [c for c in student.cells if "answer" in c.metadata.get("tags", [])], "answer cells kept, tagged"
        # Pasting the solutions back gives the full notebook, which is the lab that
        # test_lab_grading runs solved (every self-check passes) plus its install cell.
        assert _solutions_pasted_back(student, full) == [(c.cell_type, c.source) for c in full.cells]
        lab = read_checked_lab(DOCS, floor)
        assert [(c.cell_type, c.source) for c in full.cells[1:]] == [(c.cell_type, c.source) for c in lab.cells]
        # The text version is the same lab, helpers included (not mkdocs-jupyter's copy of the source).
        text = lab_site.site / floor.lab.removesuffix(".py") / Path(floor.lab).name
        assert text.read_text(encoding="utf-8") == lab_text(DOCS, floor)
        assert [(c.cell_type, c.source) for c in jupytext.read(text).cells] == [
            (c.cell_type, c.source) for c in lab.cells
        ]


@pytest.mark.slow
def test_the_text_version_runs_on_its_own(lab_site: Build, tmp_path: Path) -> None:
    """The lab page's `.py` download runs as a plain script, solutions and checks included, in a clean folder."""
    floor = next(floor for floor in LABS if floor.key == "5-autograd")
    script = lab_site.site / floor.lab.removesuffix(".py") / Path(floor.lab).name
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.count("self-check passed") == len(
        [c for c in read_lab(floor).cells if c.source.startswith("# SELF-CHECK")]
    )
    raw = subprocess.run(
        [sys.executable, str(lab_path(floor))], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert raw.returncode != 0 and "NameError: name 'require' is not defined" in raw.stderr, (
        "the source needs the build"
    )


@pytest.mark.slow
def test_each_lab_page_states_its_measured_run_time(lab_site: Build) -> None:
    report = json.loads((lab_site.site / "build-report.json").read_text(encoding="utf-8"))
    rows = {row["page"]: row for row in report["blocks"] if row["block_id"] == "notebook"}
    for floor in LABS:
        html = lab_page(lab_site, floor)
        stated = re.search(r"executed the whole lab in\s+<strong>([\d.]+) s</strong>", html)
        assert stated is not None, floor.lab
        if rows[floor.lab]["seconds"] is not None:  # it ran in this build: the page states that run
            assert abs(float(stated[1]) - rows[floor.lab]["seconds"]) <= 0.5, floor.lab


@pytest.mark.slow
def test_lab_pages_fold_what_answers_a_prediction_and_show_the_install_line(lab_site: Build) -> None:
    for floor in LABS:
        html = lab_page(lab_site, floor)
        assert re.search(r'<pre class="floors-lab-install"><code>pip install [^<]*torch==2\.13\.0', html), floor.lab
        tags = [cell.metadata.get("tags", []) for cell in read_lab(floor).cells]
        assert len(SOLUTION_FOLD.findall(html)) == sum("solution" in t for t in tags) > 0, floor.lab
        outputs = html.count('<div class="jp-Cell-outputWrapper"')
        assert len(OUTPUT_FOLD.findall(html)) == outputs - 1, floor.lab


@pytest.mark.slow
def test_lab_pages_are_light_and_link_only_the_project_stylesheet(lab_site: Build) -> None:
    assert not (lab_site.site / "assets" / "labs").exists(), "no stylesheet or script extracted from the notebooks"
    for floor in LABS:
        html = lab_page(lab_site, floor)
        assert len(html.encode()) < MAX_PAGE_BYTES, f"{floor.lab}: {len(html.encode())} bytes"
        assert html.count("stylesheets/labs.css") == 1, floor.lab


CHECKER_CELL = '# %% tags=["checker"]\n# The self-check helpers go here.\n'
"""The cell every lab marks for the helpers (a fixture lab without it is refused, as the real ones would be)."""


def _lab_fixture(fixture_site: FixtureSite, lab: str) -> None:
    fixture_site.write("mkdocs.yml", LAB_CONFIG)
    config = (Path(ROOT) / "jupyter" / "jupyter_nbconvert_config.json").read_text(encoding="utf-8")
    fixture_site.write("jupyter/jupyter_nbconvert_config.json", config)
    fixture_site.write("requirements.txt", (Path(ROOT) / "requirements.txt").read_text(encoding="utf-8"))
    fixture_site.page("index.md", "# Home\n")
    fixture_site.write("docs/labs/1-program.py", lab)


def test_cell_time_limit_stops_the_build(fixture_site: FixtureSite) -> None:
    fixture_site.write("mkdocs.yml", LAB_CONFIG)
    fixture_site.write("jupyter/jupyter_nbconvert_config.json", json.dumps({"NotebookClient": {"timeout": 3}}))
    fixture_site.page("index.md", "# Home\n")
    fixture_site.write(
        "docs/labs/1-program.py", "# %% [markdown]\n# # Lab 1 · Your program\n\n# %%\nimport time\n\ntime.sleep(60)\n"
    )
    build = run_mkdocs(fixture_site.root, fixture_site.root / "site", timeout=120)
    assert build.returncode != 0
    assert "timed out" in build.log.lower() or "timeout" in build.log.lower(), build.log[-3000:]
    assert build.seconds < 50, "the build stopped at the cell's time limit, not after the sleep"


def test_install_line_pins_what_the_lab_imports() -> None:
    requirements = "torch==2.13.0\nnumpy==2.4.6\nmkdocs==1.6.1\n"
    source = "import math\nimport numpy as np\nfrom torch.utils import benchmark\n"
    assert install_line(source, requirements) == "pip install numpy==2.4.6 torch==2.13.0"
    with pytest.raises(LookupError, match="numpy"):
        install_line(source, "torch==2.13.0\n")


def test_pins_are_read_as_pip_reads_a_requirements_file() -> None:
    """The hand-written parser dropped `name[extra]==1` and `name == 1`, glued a marker's `;` into the version
    (`pip install marked==3.0;` ends the shell command there) and kept pins meant for another platform."""
    requirements = (
        "# a comment==0\n"
        "torch==2.13.0\n"
        "pkg[extra]==1.0\n"
        "spaced == 2.0\n"
        'marked==3.0; python_version >= "3.11"\n'
        'elsewhere==4.0 ; sys_platform == "no-such-platform"\n'
        "commented==5.0  # why this one\n"
        "ranged>=6.0\n"
        "wildcard==7.*\n"
        "hashed==8.0 \\\n    --hash=sha256:0123\n"
        "-r more-requirements.txt\n"
    )
    assert pins(requirements) == {
        "torch": "torch==2.13.0",
        "pkg": "pkg[extra]==1.0",
        "spaced": "spaced==2.0",
        "marked": "marked==3.0",
        "commented": "commented==5.0",
        "hashed": "hashed==8.0",
    }
    owners = {"pkg": ["pkg"], "marked": ["marked"], "torch": ["torch"]}
    line = install_line("import marked\nimport pkg\nimport torch\n", requirements, owners)
    assert line == "pip install marked==3.0 pkg[extra]==1.0 torch==2.13.0"
    assert pins((Path(ROOT) / "requirements.txt").read_text(encoding="utf-8"))["packaging"] == "packaging==26.4"


@pytest.mark.parametrize("floor", LABS, ids=lambda f: f.key)
def test_every_lab_import_is_pinned(floor: Lab) -> None:
    line = install_line(lab_path(floor).read_text(encoding="utf-8"), (Path(ROOT) / "requirements.txt").read_text())
    assert "torch==2.13.0" in line.split()


def test_the_template_folds_solutions_and_outputs_after_the_setup(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The project's nbconvert template folds them, where the cells' tags are visible (it was a regex over its HTML)."""
    for name, value in jupyter_environment(Path(ROOT) / "jupyter", {}).items():
        monkeypatch.setenv(name, value)

    def code(source: str, printed: str | None = None, tags: tuple[str, ...] = ()) -> Any:
        cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})  # type: ignore[no-untyped-call]
        if printed is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]  # type: ignore[no-untyped-call]
        return cell

    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# A lab"),  # type: ignore[no-untyped-call]
        code("x = 1", "setup printed"),
        code("# the helpers go here", tags=(CHECKER,)),
        code("answer = None", tags=("answer",)),
        code("answer = 2", "solution printed", tags=("solution",)),
        code("print(answer)", "measured"),
        code("pass"),
    ]
    path = tmp_path / "lab.ipynb"
    path.write_text(nbformat.writes(notebook), encoding="utf-8")  # type: ignore[no-untyped-call]
    html: str = nb2html(str(path), execute=False, no_prompt=True)
    assert len(SOLUTION_FOLD.findall(html)) == 1
    assert len(OUTPUT_FOLD.findall(html)) == 2, "all outputs but the setup's"
    assert html.index("setup printed") < html.index("<details"), "the setup's output stays open"
    fold = SOLUTION_FOLD.search(html)
    assert fold is not None
    solution = fold.start()
    assert html.index("celltag_solution") > solution and html.index("solution printed") > solution
    assert html.count("<details") == html.count("</details>") == 3
    helpers = html.index("floors-checker")
    assert html.index("setup printed") < helpers < html.index("<details"), "the helpers' line, unfolded"


def test_the_project_template_renders_valid_material_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    """mkdocs-jupyter's conversion, pointed at jupyter/ as the build points it, uses our template.

    Its own template wrote `<clipboard-copy for="cell-1", aria-label=...>` (a stray attribute `,`
    and an ARIA label on a custom element without a role: Nu HTML Checker errors), `<style>` and
    `<script>` elements into the page body, a hidden copy of each cell's source, and random cell ids.
    """
    for name, value in jupyter_environment(Path(ROOT) / "jupyter", {}).items():
        monkeypatch.setenv(name, value)
    html: str = nb2html(str(lab_path(LABS[0])), execute=False, no_prompt=True)
    assert html.startswith('<div class="jupyter-wrapper"><div class="jp-Notebook">')
    for absent in ("<style", "<script", "clipboard-copy", 'aria-label="Copy', 'id="cell-', "mathjax", "mermaid"):
        assert absent not in html.lower(), absent
    # Each code cell but the helpers' (a line that links them: `labs/checker.py`).
    code_cells = [cell for cell in read_lab(LABS[0]).cells if cell.cell_type == "code"]
    cells = len([cell for cell in code_cells if CHECKER not in cell.metadata.get("tags", [])])
    blocks = re.findall(r'<div class="highlight hl-python"><pre><span></span><code>', html)
    assert len(blocks) == cells, "each code cell is one Material code block (<pre><code>)"


@pytest.mark.slow
def test_lab_section_titles_in_the_search_index_carry_no_permalink_mark(lab_site: Build) -> None:
    index = json.loads((lab_site.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    titles = [entry["title"] for entry in index["docs"] if entry["location"].startswith("labs/")]
    assert len(titles) >= 2 * len(LABS), "the labs' sections should be in the index"
    marked = [title for title in titles if "¶" in title]
    assert marked == [], marked[:5]


@pytest.mark.build
def test_a_lab_shows_neither_the_builds_secrets_nor_its_paths(fixture_site: FixtureSite) -> None:
    _lab_fixture(
        fixture_site,
        "# %% [markdown]\n# # Lab 1 · Your program\n\n# %%\nimport os, sys\n\n"
        "print('token', os.environ.get('GITHUB_TOKEN'), sys.prefix, os.path.expanduser('~'), os.getcwd())\n"
        "print(open('/proc/self/environ', 'rb').read().decode(errors='replace'))\n"
        "print('order \\u202e reversed')\n\n"
        # Every ancestor's environment and memory, the build's (the kernel's parent) first; whether each held a
        # token, not what it held: a cell that prints another process's secret fails by name, as a proof does
        # (tests/test_lab_kernel.py).
        "# %%\nprint('kernel-parent', os.getppid())\nshow = False\n" + ANCESTOR_WALK + "\n" + CHECKER_CELL,
    )
    secret = "ghp_fake123floorslab"
    build = run_mkdocs(fixture_site.root, fixture_site.root / "site", env={"GITHUB_TOKEN": secret}, timeout=300)
    assert build.returncode == 0, build.log[-3000:]
    html = unescape((fixture_site.root / "site" / "labs" / "1-program" / "index.html").read_text(encoding="utf-8"))
    assert "token None" in html, "the kernel saw the build's token"
    assert secret not in html
    parent = re.search(r"kernel-parent (\d+)", html)
    assert parent, html[-2000:]
    assert f"refused {parent[1]} environ PermissionError" in html, "a cell read the build's environment"
    assert f"refused {parent[1]} mem PermissionError" in html, "a cell read the build's memory"
    assert "token None <env> ~" in html, "the environment and home directory are named, not shown"
    assert str(fixture_site.root) not in html and str(Path.home()) + "/" not in html
    assert "\u202e" not in html and "\\u202e" in html
    # No `include_source` in this site: mkdocs-jupyter copies no source, and the build writes no text version.
    lab = fixture_site.root / "site" / "labs" / "1-program"
    assert (lab / "1-program.ipynb").is_file() and not (lab / "1-program.py").exists()


FAILING_LAB = (
    "# %% [markdown]\n# # Lab 1 · Your program\n\n# %%\nprint('before')\n\n"
    "# %%\nraise ValueError('a cell that fails')\n\n# %%\nprint('after the failure')\n\n" + CHECKER_CELL
)


@pytest.mark.build
def test_serve_shows_a_failing_lab_cell_on_its_page_and_keeps_serving(fixture_site: FixtureSite) -> None:
    _lab_fixture(fixture_site, FAILING_LAB)
    port, server = start_serve(fixture_site.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/labs/1-program/", timeout=5) as response:
                    page = unescape(response.read().decode())
                break
            except OSError:
                assert server.poll() is None, "mkdocs serve exited"
                assert time.monotonic() < deadline, "mkdocs serve did not answer"
                time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200, "the server keeps serving the other pages"
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert 'class="admonition failure floors-proof-failure" role="alert"' in page
    assert "docs/labs/1-program.py › cell 3: ValueError: a cell that fails" in page
    assert "after the failure" in page, "the cells after the failing one ran too"
    assert "lab failed: docs/labs/1-program.py › cell 3" in log
    assert not list((fixture_site.root / ".cache" / "mkdocs-jupyter").rglob("*.json")), "a failed lab is not cached"


@pytest.mark.build
def test_a_failed_lab_drops_its_own_cache_entry_and_no_other(fixture_site: FixtureSite) -> None:
    # Every cache file new since the page began was dropped: the serve session's background build, which
    # writes its executed labs into the same folder meanwhile, lost them, and the session ran them again.
    other = fixture_site.root / ".cache" / "mkdocs-jupyter" / "elsewhere" / "another-labs-run.json"
    writes = f"# %%\nimport pathlib\np = pathlib.Path({str(other)!r})\np.parent.mkdir(parents=True)\n"
    writes += "p.write_text('{}')\n\n"
    _lab_fixture(fixture_site, FAILING_LAB.replace("# %%\nraise ValueError", writes + "# %%\nraise ValueError", 1))
    port, server = start_serve(fixture_site.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while "a cell that fails" not in _fetch(port, "labs/1-program/"):
            assert server.poll() is None, "mkdocs serve exited"
            assert time.monotonic() < deadline, "mkdocs serve did not show the lab"
            time.sleep(0.5)
    finally:
        server.terminate()
        server.communicate(timeout=30)
    left = list((fixture_site.root / ".cache" / "mkdocs-jupyter").rglob("*.json"))
    assert left == [other], "the failed lab's own entry goes, and only it"


def _fetch(port: int, path: str) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=5) as response:
            return unescape(response.read().decode())
    except OSError:
        return ""


@pytest.mark.build
def test_a_build_still_stops_on_a_failing_lab_cell(fixture_site: FixtureSite) -> None:
    _lab_fixture(fixture_site, FAILING_LAB)
    build = run_mkdocs(fixture_site.root, fixture_site.root / "site", timeout=300)
    assert build.returncode != 0
    assert "a cell that fails" in build.log


@pytest.mark.build
def test_a_build_stops_on_a_lab_that_does_not_mark_the_checker_cell(fixture_site: FixtureSite) -> None:
    _lab_fixture(fixture_site, "# %% [markdown]\n# # Lab 1 · Your program\n\n# %%\nprint('no helpers asked for')\n")
    build = run_mkdocs(fixture_site.root, fixture_site.root / "site", timeout=300)
    assert build.returncode != 0
    assert "docs/labs/1-program.py: 0 code cells tagged 'checker'" in build.log, build.log[-3000:]


def test_a_labs_kernel_imports_the_package_the_build_imports_and_gets_no_secret() -> None:
    # make machines builds a snapshot with its src first on PYTHONPATH: a kernel without it graded the
    # snapshot's lab with the live tree's checker.
    env = kernel_environment({"PYTHONPATH": "/snapshot/src", "GITHUB_TOKEN": "ghp_x", "PATH": "/usr/bin"})
    assert env["PYTHONPATH"] == "/snapshot/src" and "GITHUB_TOKEN" not in env
    assert "PYTHONPATH" not in kernel_environment({"PATH": "/usr/bin"})


# What a self-check prints when it does not grade: its words up to the reason ("not graded on this
# machine: the matmuls used only ..." -> "not graded on this machine").
UNGRADED = re.compile(r"\"(not graded on this machine|not applicable: [^:\"]+):")


def test_the_instructors_page_quotes_what_the_labs_print_when_they_do_not_grade() -> None:
    """docs/instructors.md told teachers that one core gets "not graded on this machine"; the labs print
    "not applicable: one core" there (issue 59). The page, in both languages (the labs print English
    in both), quotes each phrase the labs and their helpers print, and no other."""
    sources = [lab_path(floor).read_text(encoding="utf-8") for floor in LABS]
    sources.append(Path(checker.__file__).read_text(encoding="utf-8"))
    printed = {match for text in sources for match in UNGRADED.findall(text)}
    assert printed == {"not graded on this machine", "not applicable: one core"}, printed
    for page in (DOCS / "instructors.md", DOCS / "zh" / "instructors.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        quoted = set(re.findall(r"[\"“](not (?:graded|applicable)[^\"”]*)[\"”]", text))
        assert quoted == printed, f"{page.relative_to(ROOT)} quotes {sorted(quoted)}; the labs print {sorted(printed)}"


def _helpers(language: str) -> dict[str, Any]:
    """The self-check helpers as a lab in `language` holds them (`with_checker`), run on their own."""
    notebook = read_lab(LABS[0])
    notebook.metadata["floors"] = {"language": language}
    cell = next(c for c in with_checker(notebook, LABS[0].lab).cells if CHECKER in c.metadata.get("tags", []))
    namespace: dict[str, Any] = {}
    exec(compile(cell.source, "checker", "exec"), namespace)
    return namespace


def test_a_chinese_labs_self_checks_speak_chinese() -> None:
    """A Chinese lab's notebook said "fill in ... in the answer cell above" and "not graded on this machine"."""
    chinese = jupytext.read(ROOT / "docs" / "zh" / LABS[0].lab)
    assert chinese.metadata["floors"]["language"] == "zh", "the Chinese lab states its language once, in its header"
    zh, en = _helpers("zh"), _helpers("en")
    assert "本机不评分" not in checker_source(), "an English lab page carries no other language's words"
    with pytest.raises(zh["NotFilled"], match=r"^请在上面的答案单元格中填写 GUESS，运行它，然后再运行这个自检$"):
        zh["require"](GUESS=None)
    with pytest.raises(en["NotFilled"], match=r"^fill in GUESS in the answer cell above"):
        en["require"](GUESS=None)
    with pytest.raises(zh["WrongAnswer"], match=r"^GUESS 应当是一个数，而不是 '3'$"):
        zh["expect_type"]("GUESS", "3", int, "一个数")
    # What the page shows of the English run (`outputs.zh.yml`) is what the Chinese notebook prints itself.
    for what in ("the speed-up", "the ratio", "the factor"):
        core = en["CoreShare"](cpu=0.5, wall=1.0)
        english, chinese_line = en["unclear"](3.0, 5, core, what=what), zh["unclear"](3.0, 5, core, what=what)
        assert english.startswith("not graded on this machine") and "本机不评分" in chinese_line
        assert translate_line(english, "zh") == chinese_line


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.key)
def test_a_translated_lab_states_its_language(lab: Lab) -> None:
    # Its language picks its checker's words and its folds' labels (`cells.lab_language`): a twin that does not
    # state it (the annex lab's, once) speaks English in its self-checks and its published helpers.
    for language in ("zh",):
        twin = ROOT / "docs" / language / lab.lab
        if twin.is_file():
            assert lab_language(jupytext.read(twin)) == language, f"docs/{language}/{lab.lab}: floors.language"


SPOKEN: dict[str, list[tuple[int, int | None, str]]] = {
    "print": [(0, None, "")],
    "expect": [(1, 2, "message")],
    "expect_type": [(0, 1, "name"), (3, 4, "wanted")],
}
"""The calls of a lab that speak to its reader: where among the positional arguments, and the keyword."""


def message_strings(source: str) -> Iterator[str]:
    """Every string in what a cell's `expect` says, `expect_type` wants and `print` writes (a field's words too)."""
    for call in ast.walk(ast.parse(source)):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in SPOKEN:
            spoken = [
                argument
                for start, end, keyword in SPOKEN[call.func.id]
                for argument in [*call.args[start:end], *(k.value for k in call.keywords if k.arg == keyword)]
            ]
            for argument in spoken:
                for node in ast.walk(argument):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        yield node.value


@pytest.fixture(scope="module")
def chinese_downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Chinese labs' downloads as the build publishes them (`publish_notebooks`), no lab run and no site built."""
    site = tmp_path_factory.mktemp("zh-site")
    publish_notebooks(site, ROOT / "docs" / "zh", Launch(None, None, [], ROOT / "requirements.txt"), "zh")
    return site


def _chinese_downloads(site: Path, lab: Lab) -> list[Any]:
    folder = site / lab.lab.removesuffix(".py")
    notebooks = [
        nbformat.reads((folder / name).read_text(encoding="utf-8"), as_version=4)  # type: ignore[no-untyped-call]
        for name in notebook_names(lab)
    ]
    text = lab_text(ROOT / "docs" / "zh", lab)  # what replaces mkdocs-jupyter's copy of the source, where it made one
    return [*notebooks, nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(text)])]  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.key)
def test_a_downloaded_chinese_lab_says_its_own_messages_in_chinese(chinese_downloads: Path, lab: Lab) -> None:
    """Student's notebook, full notebook and text version: no English run in a message, and every cell compiles."""
    left = []
    for notebook in _chinese_downloads(chinese_downloads, lab):
        for cell in notebook.cells:
            if cell.cell_type != "code" or CHECKER in cell.metadata.get("tags", []) or cell.source.startswith("%pip"):
                continue
            compile(cell.source, lab.lab, "exec")
            left += [run for said in message_strings(cell.source) for run in english_runs(said)]
    assert left == []
