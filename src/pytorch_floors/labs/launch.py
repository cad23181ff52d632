"""Labs a class can launch: an "Open in Colab" link, both notebooks, their install cell, the run time.

`FLOORS_REPOSITORY` names the GitHub repository the editions are published to (`repo_url` in
`mkdocs.yml`, which Material shows with each page's edit link, may be a placeholder, so the links
do not take it: `make publish` refuses to publish without the setting, and an edition built without
it says so where the links would be). A published edition is deployed by mike into the `gh-pages` branch, one folder per
edition, and each lab's notebooks are written next to its page (`publish_notebooks`), so the edition's
copy of a notebook lives at `gh-pages:<edition>/labs/N-slug/N-slug.ipynb`, which is what Colab's
GitHub form opens. `latest` is a symbolic link on that branch, so the link names the edition itself.
A build that is not an edition (`make build`, `make serve`) has no published copy and says so instead
of linking.

Each lab ships two notebooks: the student's (`N-slug.ipynb`: solution cells removed, self-checks
kept) and the full one (`N-slug-solutions.ipynb`). Both open with a cell that installs the versions
this site was built with. The page states how long the lab took to execute in this build, as recorded
by the build (for a lab whose executed notebook came from mkdocs-jupyter's cache, the time of the run
that filled the cache, kept beside it).
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import nbformat

from pytorch_floors.errors import FloorsError, InputError
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.floors import Floor, Lab
from pytorch_floors.render.templates import render

__all__ = [
    "COLAB",
    "PUBLISH_BRANCH",
    "LabLinks",
    "Launch",
    "colab_url",
    "configure_launch",
    "download_box",
    "github_repository",
    "keep_run_time",
    "lab_links",
    "notebook_names",
    "run_seconds",
    "run_times_file",
    "with_install_cell",
]

COLAB = "https://colab.research.google.com/github"
"""Colab's form for a notebook on GitHub: `COLAB/<owner>/<repo>/blob/<branch-or-tag>/<path>`."""

PUBLISH_BRANCH = "gh-pages"
"""The branch mike deploys the editions to (one folder per edition)."""

INSTALL_CELL_TAG = "install"
"""The tag of the notebooks' first cell, which installs the pinned versions."""

_GITHUB = re.compile(r"https://github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?/?")
# Not a `.json` name: mkdocs-jupyter deletes every `*.json` of its cache folder that its build did not use.


@dataclass(frozen=True)
class Launch:
    """What one build's lab pages need to launch and time their labs (owned by the build).

    Attributes:
        repo_url: The site's `repo_url`, from which Colab links are derived (`None`: no links).
        times: The file that keeps the labs' run times (`None`: labs do not run in this build).
        records: The build's block results, which grow as pages render (labs record their runs there).
        requirements: The project's `requirements.txt`, whose pins the install line and cell use.
        published: The edition this build publishes (`Settings.published`), which the download box names.
    """

    @cached_property
    def owners(self) -> dict[str, list[str]]:
        """Which installed distributions own each importable module, computed once per build."""
        return dict(packages_distributions())

    repo_url: str | None
    times: Path | None
    records: list[BlockResult]
    requirements: Path
    published: str | None = None


def github_repository(repo_url: str) -> tuple[str, str]:
    """The owner and name of a GitHub repository URL.

    Raises:
        InputError: The URL is not a GitHub repository's (`https://github.com/<owner>/<repo>`).
    """
    match = _GITHUB.fullmatch(repo_url)
    if match is None:
        raise InputError(f"repo_url {repo_url!r}: expected https://github.com/<owner>/<repo> (Colab opens GitHub)")
    return match["owner"], match["repo"]


def colab_url(repo_url: str, edition: str, site_path: str) -> str:
    """The "Open in Colab" address of a file of a published edition.

    Args:
        repo_url: The project's GitHub repository.
        edition: The published edition (`2026.12`), a folder of the publishing branch.
        site_path: The file's path in the built site (`labs/3-boundary/3-boundary.ipynb`).
    """
    owner, repo = github_repository(repo_url)
    return f"{COLAB}/{owner}/{repo}/blob/{PUBLISH_BRANCH}/{edition}/{site_path}"


def notebook_names(entry: Floor | Lab) -> tuple[str, str]:
    """The file names of a lab's student notebook and full notebook (written next to its page)."""
    name = Path(entry.lab).stem
    return f"{name}.ipynb", f"{name}-solutions.ipynb"


def with_install_cell(notebook: Any, install: str) -> Any:
    """A copy of `notebook` whose first cell installs the pinned versions (`%pip install …`)."""
    launched = copy.deepcopy(notebook)
    cell = nbformat.v4.new_code_cell(f"%{install}", metadata={"tags": [INSTALL_CELL_TAG]})  # type: ignore[no-untyped-call]
    launched.cells.insert(0, cell)
    return launched


def run_times_file(cache_root: Path, jupyter_cache: Path) -> Path:
    """Where the labs' run times are kept: in the project's cache, under mkdocs-jupyter's key, not in its folder.

    A cached notebook and the time of the run that made it are found by the same key, and that
    tool's folder holds only what it wrote.

    Args:
        cache_root: The build's cache directory.
        jupyter_cache: The executed labs' folder (`labs.notebooks.jupyter_cache_dir`).
    """
    return cache_root / "floors-labs" / f"{jupyter_cache.name}.tsv"


def configure_launch(
    repo_url: str | None,
    run_times: Path | None,
    project_dir: Path,
    records: list[BlockResult],
    published: str | None = None,
) -> Launch:
    """The build's repository and where the labs' run times are kept.

    Args:
        repo_url: The site's repository, if it names one.
        run_times: The file that keeps the labs' run times (`run_times_file`), if labs run.
        project_dir: The project root (its `requirements.txt` pins what a lab installs).
        records: The build's block results (the engine's list, read as lab pages render).
        published: The edition this build publishes, if any (`Settings.published`).

    Returns:
        The build's launch settings.

    Raises:
        FloorsError: A `repo_url` that is not a GitHub repository's.
    """
    if repo_url:
        try:
            github_repository(repo_url)
        except ValueError as error:
            raise FloorsError(str(error)) from None
    return Launch(repo_url, run_times, records, project_dir / "requirements.txt", published)


def _read_times(path: Path) -> dict[str, float]:
    """The kept run times: one `lab:source-digest<TAB>seconds` line each."""
    if not path.is_file():
        return {}
    return {
        key: float(value) for key, value in (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines())
    }


def _time_key(entry: Lab, source: str) -> str:
    return f"{entry.lab}:{hashlib.sha256(source.encode()).hexdigest()}"


def keep_run_time(entry: Lab, source: str, seconds: float, launch: Launch) -> None:
    """Keep a lab's run time in the build's own records, the moment the lab has run.

    mkdocs-jupyter caches the executed notebook as soon as it has run, while the page is only
    finished later (after every page's content): a build that fails in between must still leave
    the time of every run it cached, or the next build, taking those notebooks from the cache,
    has no time to state.

    Args:
        entry: The lab (a floor's or an annex's).
        source: The lab's source (keys the time, as mkdocs-jupyter's cache is keyed on it).
        seconds: How long the lab took to execute.
        launch: The build's launch settings (where the times are kept).
    """
    if launch.times is None:
        return
    times = _read_times(launch.times)
    times[_time_key(entry, source)] = round(seconds, 1)
    launch.times.parent.mkdir(parents=True, exist_ok=True)
    launch.times.write_text("".join(f"{k}\t{v}\n" for k, v in sorted(times.items())), encoding="utf-8")


def run_seconds(entry: Lab, source: str, launch: Launch) -> float | None:
    """How long the lab took to execute in this build, or `None` when this build did not execute it.

    A lab whose cell failed under `mkdocs serve` ran to its end: its time is that run's.

    A lab that ran has its time recorded by the build and kept (`keep_run_time`) beside
    mkdocs-jupyter's cache, keyed on the lab's source, so a later build that takes the executed
    notebook from the cache states the time of the run that made it.

    Raises:
        FloorsError: A cached lab whose run time was never kept (the cache predates it).
    """
    records = [r for r in launch.records if r.page == entry.lab and r.block_id == "notebook"]
    if not records or records[-1].status == "skipped":
        return None
    record = records[-1]
    times_path = launch.times
    if times_path is None:
        raise FloorsError(f"docs/{entry.lab}: configure_launch must run before the lab pages render")
    if record.status == "failed" or (record.status == "ran" and record.seconds is not None):
        return record.seconds  # a lab that failed in a serve session's background build has no time here
    key = _time_key(entry, source)
    times = _read_times(times_path)
    if key not in times:
        raise FloorsError(
            f"docs/{entry.lab}: the executed notebook came from mkdocs-jupyter's cache, which has no run time "
            f"for it in {times_path}; delete {times_path.parent} to run the lab again"
        )
    return times[key]


@dataclass(frozen=True)
class LabLinks:
    """What a lab page offers: its two notebooks, the text version, and the Colab links when published."""

    student: str
    full: str
    text: str
    colab_student: str | None
    colab_full: str | None


def lab_links(entry: Lab, repo_url: str | None, edition: str | None, site_folder: str = "") -> LabLinks:
    """The lab page's links, relative to the page (the notebooks sit next to it).

    Args:
        entry: The lab (a floor's or an annex's).
        repo_url: The project's GitHub repository, if configured.
        edition: The edition being published, or `None` for a build that is not one.
        site_folder: The language's folder of the site the lab page is in (`zh/`), whose notebooks Colab opens.
    """
    student, full = notebook_names(entry)
    folder = site_folder + entry.lab.removesuffix(".py")
    colab_student = colab_full = None
    if repo_url is not None and edition is not None:
        colab_student = colab_url(repo_url, edition, f"{folder}/{student}")
        colab_full = colab_url(repo_url, edition, f"{folder}/{full}")
    return LabLinks(student, full, Path(entry.lab).name, colab_student, colab_full)


def download_box(
    entry: Lab,
    install: str,
    source: str,
    edition: str | None,
    launch: Launch,
    *,
    site_folder: str = "",
    language: str,
) -> str:
    """The box under a lab page's title: launch, download, install line and measured run time.

    Args:
        entry: The lab (a floor's or an annex's).
        install: The pinned `pip install` line of what the lab imports.
        source: The lab's source (keys its recorded run time).
        edition: The edition being published, or `None`.
        launch: The build's launch settings.
        site_folder: The language's folder of the site (`zh/`): Colab opens that language's notebooks.
        language: The page's language (`en`, `zh`).
    """
    seconds = run_seconds(entry, source, launch)
    return render(
        "lab-download.html",
        language,
        entry=entry,
        links=lab_links(entry, launch.repo_url, edition, site_folder),
        edition=edition,
        install=install,
        seconds=None if seconds is None else f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}",
    )
