"""Labs a class can launch: the Colab links' form, the notebooks' names and their install cell."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

from conftest import ROOT
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.result import BlockResult, Status
from pytorch_floors.floors import LABS
from pytorch_floors.labs.launch import (
    COLAB,
    INSTALL_CELL_TAG,
    PUBLISH_BRANCH,
    Launch,
    colab_url,
    configure_launch,
    download_box,
    github_repository,
    keep_run_time,
    lab_links,
    notebook_names,
    run_seconds,
    run_times_file,
    with_install_cell,
)
from pytorch_floors.labs.notebooks import NOTEBOOK_WRAPPER, _stable_heading_ids, finish_lab_page

REPO = "https://github.com/pytorch-floors/floors"


def test_the_site_names_a_github_repository() -> None:
    # mkdocs.yml holds Python tags a plain YAML loader refuses; only the repo_url line matters here.
    line = re.search(r"^repo_url:.*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert line is not None
    assert github_repository(line[0].split(":", 1)[1].strip()) == ("pytorch-floors", "floors")


@pytest.mark.parametrize("url", ["https://gitlab.com/a/b", "https://github.com/only-owner", "github.com/a/b"])
def test_a_repository_colab_cannot_open_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=re.escape("expected https://github.com/<owner>/<repo>")):
        github_repository(url)


def test_colab_opens_the_editions_copy_on_the_publishing_branch() -> None:
    floor = LABS[2]
    links = lab_links(floor, f"{REPO}.git", "2026.12")
    folder = floor.lab.removesuffix(".py")
    assert (
        links.colab_student == f"{COLAB}/pytorch-floors/floors/blob/{PUBLISH_BRANCH}/2026.12/{folder}/{links.student}"
    )
    assert links.colab_full == colab_url(REPO, "2026.12", f"{folder}/{links.full}")
    assert re.fullmatch(
        r"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/gh-pages/\d{4}\.\d{2}/labs/[\w-]+/[\w-]+\.ipynb",
        links.colab_full or "",
    )


def test_a_build_that_is_not_an_edition_links_no_colab_copy() -> None:
    links = lab_links(LABS[0], REPO, None)
    assert links.colab_student is None and links.colab_full is None


def test_each_lab_has_a_student_and_a_full_notebook_next_to_its_page() -> None:
    names = {name for floor in LABS for name in notebook_names(floor)}
    assert len(names) == 2 * len(LABS)
    student, full = notebook_names(LABS[4])
    assert (student, full) == (f"{LABS[4].key}.ipynb", f"{LABS[4].key}-solutions.ipynb")


def test_the_install_cell_comes_first_and_leaves_the_lab_untouched() -> None:
    lab = jupytext.read(ROOT / "docs" / LABS[0].lab)
    before = [cell.source for cell in lab.cells]
    launched = with_install_cell(lab, "pip install torch==2.13.0")
    assert launched.cells[0].source == "%pip install torch==2.13.0"
    assert launched.cells[0].metadata["tags"] == [INSTALL_CELL_TAG] and launched.cells[0].cell_type == "code"
    assert [cell.source for cell in launched.cells[1:]] == before == [cell.source for cell in lab.cells]


def _build(cache_dir: Path, status: Status, seconds: float | None) -> Launch:
    """One build's launch settings as `run_seconds` reads them: the settings and the lab's record."""
    record = BlockResult(LABS[0].lab, "notebook", LABS[0].lab, status, seconds)
    return configure_launch(REPO, run_times_file(cache_dir.parent.parent, cache_dir), ROOT, [record])


def test_a_cached_lab_states_the_run_time_of_the_run_that_filled_the_cache(tmp_path: Path) -> None:
    cache_dir = tmp_path / "mkdocs-jupyter" / "digest"
    first = _build(cache_dir, "ran", 12.34)
    keep_run_time(LABS[0], "lab source", 12.34, first)  # as the build does the moment the lab has run
    assert run_seconds(LABS[0], "lab source", first) == 12.34
    # The times are the build's own records: mkdocs-jupyter's folder holds only what that tool wrote.
    assert not cache_dir.exists()
    assert first.times is not None and first.times.is_file() and cache_dir.parent not in first.times.parents
    cached = _build(cache_dir, "cached", None)
    assert run_seconds(LABS[0], "lab source", cached) == 12.3
    with pytest.raises(FloorsError, match="has no run time for it"):
        run_seconds(LABS[0], "edited lab source", cached)


def test_a_build_that_fails_after_a_lab_ran_still_keeps_its_run_time(tmp_path: Path) -> None:
    """The time was kept only when the lab's page was finished, after every page's content: a build
    that failed in between (another page's proof) left the executed notebook in mkdocs-jupyter's cache
    without a time, and the next build stopped, asking to delete the cache."""
    cache_dir = tmp_path / "mkdocs-jupyter" / "digest"
    keep_run_time(LABS[0], "lab source", 7.0, _build(cache_dir, "ran", 7.0))
    # ... and the build stops here, before any page is finished. The next build takes the lab from the cache:
    assert run_seconds(LABS[0], "lab source", _build(cache_dir, "cached", None)) == 7.0


def test_a_lab_this_build_did_not_execute_states_no_run_time(tmp_path: Path) -> None:
    assert run_seconds(LABS[0], "lab source", _build(tmp_path, "skipped", None)) is None


def test_colab_opens_a_translated_labs_own_notebook() -> None:
    floor = LABS[2]
    chinese = lab_links(floor, REPO, "2026.12", "zh/")
    english = lab_links(floor, REPO, "2026.12")
    folder = floor.lab.removesuffix(".py")
    assert chinese.colab_student == colab_url(REPO, "2026.12", f"zh/{folder}/{chinese.student}")
    assert english.colab_student == colab_url(REPO, "2026.12", f"{folder}/{english.student}")


@pytest.mark.parametrize(
    ("repository", "edition", "shown"),
    [
        (None, "2026.12", "this build names no GitHub repository that holds its notebooks"),
        (REPO, "2026.12", f"{COLAB}/pytorch-floors/floors/blob/{PUBLISH_BRANCH}/2026.12/"),
        (REPO, None, "only published editions have a copy of the notebooks"),
    ],
)
def test_an_edition_links_colab_only_to_the_repository_it_was_given(
    repository: str | None, edition: str | None, shown: str
) -> None:
    """The links took `repo_url`, a placeholder organisation (issue 59); they take the `FLOORS_REPOSITORY`
    setting, and an edition built without it says so where they would be (publish refuses it)."""
    launch = Launch(repository, None, [], ROOT / "requirements.txt")
    html = download_box(LABS[2], "pip install torch", "source", edition, launch, language="en")
    assert shown in html
    assert ("colab.research.google.com" in html) == (repository is not None and edition is not None)


def test_a_lab_page_without_its_notebook_gets_no_download_box(tmp_path: Path) -> None:
    # The theme's script names `.jupyter-wrapper` on every page: a serve session's placeholder for a lab not
    # converted yet got the download box (and its first build spent a second on sixteen install lines).
    launch = _build(tmp_path / "mkdocs-jupyter" / "digest", "ran", 1.0)
    lab = LABS[0].lab
    page = (
        '<html><head></head><body><script>const code = ".jupyter-wrapper .highlight > pre";</script>'
        '<article><h1>Lab</h1><p class="floors-converting">Converting</p></article></body></html>'
    )

    def finish(output: str) -> str:
        return finish_lab_page(
            output, src_uri=lab, source=ROOT / "docs" / lab, page_url="labs/x/", launch=launch, language="en"
        )

    assert finish(page) == page
    converted = page.replace(
        '<p class="floors-converting">Converting</p>', f'<{NOTEBOOK_WRAPPER[0]} class="{NOTEBOOK_WRAPPER[1]}"></div>'
    )
    assert "pip install" in finish(converted), "a converted lab gets its download box and install line"


def test_a_labs_headings_take_their_written_anchors_and_the_contents_follow() -> None:
    page = (
        '<nav><a href="#exercise-1-strides-are-the-address-formula" class="md-nav__link">\n'
        '<span class="md-ellipsis">Exercise 1: strides are the <code>address</code> formula</span></a>'
        '<a href="#1" class="md-nav__link"><span class="md-ellipsis">练习 1：步长 &amp; 公式</span></a></nav>'
        '<div class="jupyter-wrapper"><h2 id="exercise-1-strides-are-the-address-formula">Exercise 1: strides are'
        ' the <code>address</code> formula <a id="strides"></a><a class="headerlink"'
        ' href="#exercise-1-strides-are-the-address-formula">¶</a></h2>'
        '<h3 id="1">练习 1：步长 &amp; 公式<a id="strides-zh" /> <a class="headerlink" href="#1">¶</a></h3>'
        '<h4 id="x">No anchor<a class="headerlink" href="#x">¶</a></h4>'
        # mkdocs-jupyter's slug of words without a Latin letter is empty: the Chinese lab's headings have `id=""`.
        '<h2 id="">目标<a id="goal"></a><a class="headerlink" href="#">¶</a></h2></div>'
    )
    done = _stable_heading_ids(page)
    assert '<h2 id="strides">Exercise 1: strides are the <code>address</code> formula<a class="headerlink"' in done
    assert 'href="#strides" title="Permanent link">¶</a></h2>' in done
    assert '<h3 id="strides-zh">练习 1：步长 &amp; 公式<a class="headerlink" href="#strides-zh"' in done
    assert '<a href="#strides" class="md-nav__link">' in done and '<a href="#strides-zh" class="md-nav__link">' in done
    assert '<h4 id="x">No anchor<a class="headerlink" href="#x">¶</a></h4>' in done, "a heading without an anchor stays"
    assert '<h2 id="goal">目标<a class="headerlink" href="#goal"' in done
    assert 'id="exercise-1' not in done and '<a id="' not in done
