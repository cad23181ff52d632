"""Shared fixtures: the project, a factory of small fixture sites, and the real site built once."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from filelock import FileLock, Timeout
from torch_only import TorchOnly, make_torch_only

from pytorch_floors.claims import CHANNEL, Claim, parse_claims
from pytorch_floors.execution.process.runner import BlockProcess, BlockRequest, end_all
from pytorch_floors.execution.process.sandbox import block_environment

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["timeline_log"]  # each test's phases, logged where FLOORS_TEST_TIMELINE says (make test)


BUILDS = {"built_site": "slow", "lab_site": "slow", "fixture_site": "build"}
"""Fixtures that run `mkdocs build` in a subprocess, and the marker each gives its tests."""


PROJECT_BUILDS = {"built_site", "lab_site"}
"""Fixtures that build this project itself (`make_site`), into its own proof cache."""

PROJECT_LOCK_HOLDERS = PROJECT_BUILDS | {"properdocs_site", "published"}
"""Fixtures that make what they make under `PROJECT_LOCK` (builds of this project, its publish): their tests go
to one worker, which makes them one after the other; on two workers one waited out the other's (a minute)."""

LAUNCH_ENVIRONMENT: dict[str, str] = dict(os.environ)
"""The environment this test process was started with, read before any test imported torch.

Importing parts of torch writes to `os.environ` (`torch._inductor` sets `TORCHINDUCTOR_CACHE_DIR`), so a
test that starts a program "as a reader would" reads this, not `os.environ`, which depends on what the
tests before it in this worker imported.
"""

PROJECT_CACHE = Path(os.environ.get("FLOORS_CACHE_DIR") or ROOT / ".cache")
"""The project's own caches, where its builds read and write every proof's output (the build's `cache_dir`)."""

PROJECT_LOCK = PROJECT_CACHE / "test-builds.lock"
"""The lock every build of this project itself holds: they share its proof cache, which a build writes and prunes.

It lies beside that cache, not in the run's folder: two test runs on one checkout (two terminals, or
`make test` beside `make machines`' as-is tier) have two run folders but one cache, whose labs one
run's build rewrote under the other's.
"""

PATTERN_MODULES = ("test_floor_", "test_measure")
"""Modules whose tests time proofs: `make test` runs them on their own, before the parallel run."""


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark each test, as it is collected, by what it costs.

    - `slow`/`build`: the test builds a site, so the fast lane (`make check`) leaves it out.
    - `patterns`: the test times proofs, so `make test` runs it alone, never beside a build.
    """
    fixtures = set(getattr(item, "fixturenames", ()))
    for fixture, marker in BUILDS.items():
        if fixture in fixtures:
            item.add_marker(getattr(pytest.mark, marker))
    if item.path.name.startswith(PATTERN_MODULES):
        item.add_marker(pytest.mark.patterns)


FAILED_BUILDS = ROOT / "test-output" / "failed-builds"
"""Where a shared build that failed leaves its trimmed log, once, for the run's summary."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Forget the failed builds of an earlier run (on the controller only, before any worker starts)."""
    if not hasattr(session.config, "workerinput"):
        shutil.rmtree(FAILED_BUILDS, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print each failed shared build once, at the end, however many tests needed it."""
    for log in sorted(FAILED_BUILDS.glob("*.log")) if FAILED_BUILDS.is_dir() else []:
        terminalreporter.section(f"shared build '{log.stem}' failed", sep="=", red=True)
        terminalreporter.write_line(log.read_text(encoding="utf-8"))


def section_words(page: str, anchor: str) -> str:
    """The words of a page's section (`docs/...`, by its explicit anchor, to the next anchored heading), one space
    apart: the sections `pytorch_floors.i18n.sections` reads, so a phrase a test looks for may break lines anywhere."""
    from pytorch_floors.i18n.sections import sections  # noqa: PLC0415  (jupytext: loaded where a test needs it)

    found = [section for section in sections((ROOT / page).read_text(encoding="utf-8")) if section.anchor == anchor]
    assert found, f"{page} has no section #{anchor}"
    return " ".join(found[0].text.split())


def bench_module(name: str) -> ModuleType:
    """A script of `bench/` (which is no package) loaded as a module, as its tests read it."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as a real import would: a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def without_spans(html: str) -> str:
    """Rendered HTML without its `<span>` tags: a text output's lines as they were printed, each one no longer in
    its own span (`render.output_lines`), for a test that looks for several lines of an output at once."""
    return re.sub(r"</?span\b[^>]*>", "", html)


def trimmed_log(log: str, tail: int = 40) -> str:
    """A build's log cut to what says why it failed: its ERROR lines, then its last `tail` lines."""
    lines = log.splitlines()
    errors = [line for line in lines[:-tail] if line.startswith("ERROR")]
    return "\n".join([*errors, *(["..."] if errors else []), *lines[-tail:]])


def needs_build(build: Build, name: str) -> Build:
    """The shared build a test needs; if it failed, one line saying so (its log is printed once, at the end)."""
    if build.returncode != 0:
        FAILED_BUILDS.mkdir(parents=True, exist_ok=True)
        log = FAILED_BUILDS / f"{name}.log"
        if not log.exists():
            log.write_text(trimmed_log(build.log), encoding="utf-8")
        pytest.fail(f"needs the shared build '{name}', which failed (its log is at the end of this run)", pytrace=False)
    return build


T = TypeVar("T")


@pytest.hookimpl(trylast=True)  # after `-m` deselected what this run leaves out: the shares are of what it runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests so that one worker makes the project's build while the others have work that needs none,
    and the tests of what `made_ahead` makes last come last (sorted is stable: otherwise in their order)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = build_readers_split(items, _reads_the_build(items), workers)
    _group_by_lab(items)
    items[:] = late_last(items)


def _reads_the_build(items: list[pytest.Item]) -> Callable[[pytest.Item], bool]:
    """Whether a test waits on the project's build: it uses a fixture made under `PROJECT_LOCK`, or it grades a lab
    one of whose tests does (a lab's tests stay with one worker, which runs the lab once: `_group_by_lab`)."""

    def holds(item: pytest.Item) -> bool:
        return bool(PROJECT_LOCK_HOLDERS & set(getattr(item, "fixturenames", ())))

    labs = {_lab_of(item) for item in items if holds(item)} - {None}
    return lambda item: holds(item) or _lab_of(item) in labs


def worksteal_shares(count: int, workers: int) -> list[int]:
    """How many tests pytest-xdist's `worksteal` first hands each worker, in order: contiguous shares of the list,
    each the remaining tests divided by the workers still to serve (`WorkStealingScheduling.check_schedule`)."""
    shares: list[int] = []
    for served in range(workers):
        shares.append((count - sum(shares)) // (workers - served))
    return shares


def build_readers_split(items: list[T], reads_the_build: Callable[[T], bool], workers: int = 2) -> list[T]:
    """`items` reordered so that the first worker's share starts with tests that read the build and every other
    worker's share starts with tests that do not (otherwise in their order).

    pytest-xdist's `worksteal` hands each worker a contiguous share of the list (`worksteal_shares`).
    The worker whose first test reads the build makes it (a minute and more, cold); the others must
    start on tests that need none, not wait on the build's lock. With two workers, putting every
    reader first did that only while they were fewer than half; with three, the third worker's share
    began with a reader, and two workers of three waited out the build (70 s each in CI).
    The other workers' shares hold the others evenly, each followed by its part of the remaining readers.
    """
    readers = [item for item in items if reads_the_build(item)]
    others = [item for item in items if not reads_the_build(item)]
    shares = worksteal_shares(len(items), max(workers, 1))
    first = readers[: shares[0]]
    ordered = first + others[: shares[0] - len(first)]  # fewer readers than a share: the first worker's rest
    others, readers = others[shares[0] - len(first) :], readers[len(first) :]
    later = shares[1:]
    for index, share in enumerate(later):
        if share == 0:
            continue
        # This share's part of the others, in proportion to its size (one at least, to open it), then readers.
        opening = min(len(others), max(1, len(others) * share // sum(later[index:])))
        taken = min(len(readers), share - opening)
        opening = min(len(others), share - taken)  # too few readers left: more of the others
        ordered += others[:opening] + readers[:taken]
        others, readers = others[opening:], readers[taken:]
    return ordered + others + readers


def _lab_of(item: pytest.Item) -> str | None:
    """The lab a grading test runs (its `floor` or `key` parameter), or None."""
    if item.path.name != "test_lab_grading.py":
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    floor = params.get("floor")
    return getattr(floor, "key", None) or params.get("key")


def _group_by_lab(items: list[pytest.Item]) -> None:
    """Within the slots the lab grading tests hold, put each lab's tests together (otherwise in their order).

    Each worker keeps a lab kernel for the lab it grades (tests/lab_kernel.py): with one lab's tests
    together in a worker's contiguous share, it runs that lab once and grades every variant there.
    """
    slots = [index for index, item in enumerate(items) if _lab_of(item) is not None]
    labs = [_lab_of(items[index]) for index in slots]
    first = {lab: labs.index(lab) for lab in labs}
    grouped = sorted((items[index] for index in slots), key=lambda item: first[_lab_of(item)])
    for index, item in zip(slots, grouped, strict=True):
        items[index] = item


@dataclass
class Build:
    """The outcome of one `mkdocs build` run in a subprocess."""

    returncode: int
    log: str
    site: Path
    seconds: float

    def page(self, name: str) -> str:
        return (self.site / name / "index.html").read_text(encoding="utf-8")


def run_mkdocs(
    project: Path, site: Path, *, strict: bool = False, env: dict[str, str] | None = None, timeout: float = 600
) -> Build:

    command = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--config-file",
        str(project / "mkdocs.yml"),
        "--site-dir",
        str(site),
    ]
    if strict:
        command.append("--strict")
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})}
    start = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, env=full_env, cwd=project, timeout=timeout, check=False
    )
    return Build(done.returncode, done.stdout + done.stderr, site, time.perf_counter() - start)


LAB_CONFIG = """\
site_name: Fixture
site_url: https://example.invalid/
theme:
  name: material
  font: false
plugins:
  - mkdocs-jupyter:
      include: ["labs/*.py"]
      execute: true
      allow_errors: false
  - floors
"""
"""A fixture site whose labs (`docs/labs/*.py`) mkdocs-jupyter executes, with the floors plugin after it."""


TWO_PROOFS = """\
```python exec="1" id="one"
print(1)
```

```python exec="1" id="two"
print(2)
```
"""
"""A page of two proofs, `one` and `two`, each printing its number: what the progress tests number."""


FIXTURE_CONFIG = """\
site_name: Fixture
site_url: https://example.invalid/
theme:
  name: material
  font: false
plugins:
  - floors
markdown_extensions:
  - attr_list
  - pymdownx.snippets:
      base_path: [!relative $config_dir]
      check_paths: true
  - pymdownx.superfences
"""


@dataclass
class FixtureSite:
    """A tiny MkDocs project using this package's plugin and fence, built in a temp dir."""

    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def page(self, name: str, body: str) -> Path:
        return self.write(f"docs/{name}", f"---\ndescription: fixture page {name}\n---\n\n" + textwrap.dedent(body))

    def build(
        self, *, strict: bool = False, env: dict[str, str] | None = None, timeout: float = 300, process: bool = False
    ) -> Build:
        """Build the site: in this process (`site_builds`), or as a `mkdocs build` subprocess (`process`).

        `timeout` bounds the subprocess; in this process each block keeps its own limit.
        """
        if process or os.environ.get("FLOORS_TEST_BUILDS") == "process":
            return run_mkdocs(self.root, self.root / "site", strict=strict, env=env, timeout=timeout)
        from site_builds import build_in_process  # noqa: PLC0415  (MkDocs: loaded by the tests that build only)

        returncode, log, seconds = build_in_process(self.root, self.root / "site", strict=strict, env=env)
        return Build(returncode, log, self.root / "site", seconds)


@pytest.fixture
def fixture_site(tmp_path: Path) -> FixtureSite:
    site = FixtureSite(tmp_path / "project")
    site.write("mkdocs.yml", FIXTURE_CONFIG)
    return site


def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of this test run that every pytest-xdist worker sees (each has its own basetemp in it)."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def once_per_run(
    shared: Path, name: str, make: Callable[[Path], dict[str, Any]], *, lock: str | Path | None = None
) -> dict[str, Any]:
    """What `make(shared / name)` returns, made once per test run however many workers ask.

    A session fixture runs once per pytest-xdist worker: two workers would each build the site
    (minutes of CPU), at the same time, into the same proof cache. Here the first worker to ask
    makes it under a file lock and records the result as JSON; the others wait, then read it. One
    that asks once it is made reads the record without the lock, which another maker that shares it
    (the publish, beside the site's build) may hold for minutes; the record is written whole or not at all.
    A `make` that raises records nothing, so the next worker to ask tries again (and fails alike).

    Args:
        shared: A directory every worker of the run sees (`run_dir`).
        name: What is made (names the record and the directory given to `make`).
        make: Makes it in the given directory; returns JSON-serialisable facts about it.
        lock: The lock to hold while making it (default: its own), so makers that share
            something else never run at the same time: a name, in `shared`, for makers of one run;
            a path (`PROJECT_LOCK`) for makers of any run that share what lies there.
    """
    if isinstance(lock, Path):
        lock.parent.mkdir(parents=True, exist_ok=True)
    record = shared / f"{name}.json"
    lock_file = lock if isinstance(lock, Path) else shared / f"{lock or name}.lock"
    while True:
        if record.is_file():  # made already: no lock to wait for (another maker may hold it for minutes)
            made: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
            return made
        # Look for the record again every second while waiting: a maker that shares the lock may go on to
        # make something else without letting it go (`made_ahead` makes the site, then the publish), and a
        # test waiting on the lock alone waited out all of it (398 s for the site's first reader).
        with contextlib.suppress(Timeout), FileLock(lock_file, timeout=1):
            return _made_under_lock(shared, name, make)


def _made_under_lock(shared: Path, name: str, make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """`once_per_run`'s record of `name`, read, or made and written whole, by the holder of its lock."""
    record = shared / f"{name}.json"
    if record.is_file():
        made: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
        return made
    made = make(shared / name)
    partial = record.with_name(f"{record.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(made), encoding="utf-8")
    partial.replace(record)  # whole or not at all: a reader outside the lock never sees half a record
    return made


def make_unless_taken(shared: Path, name: str, make: Callable[[Path], dict[str, Any]]) -> None:
    """Make what `once_per_run(shared, name, make)` would, now, unless it is made or another worker is making it.

    A worker about to wait for one thing another worker makes can make another meanwhile, instead of idling.
    """
    if (shared / f"{name}.json").is_file():
        return
    with contextlib.suppress(Timeout), FileLock(shared / f"{name}.lock", timeout=0):
        _made_under_lock(shared, name, make)


SITE_BUILD_ENV = {"FLOORS_CLAIMS": "advisory"}
"""How the tests build the real site: strictly, its claims advisory (`built_site` says why)."""


def build_record(build: Build) -> dict[str, Any]:
    """A build as `once_per_run` records it."""
    return {"returncode": build.returncode, "log": build.log, "site": str(build.site), "seconds": build.seconds}


def make_site(site: Path) -> dict[str, Any]:
    """`once_per_run`'s maker of `built_site`: this project built strictly into `site`."""
    return build_record(run_mkdocs(ROOT, site, strict=True, env=SITE_BUILD_ENV, timeout=1500))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The real site, built once per test run with `--strict`.

    Its claims are advisory here: this build runs beside other tests (`make test` uses two
    workers), so a timing claim can miss for want of a quiet core. The pattern tests run every
    proof's claims alone and require each to hold; `test_claims.py` checks the strict policy.
    """
    made = once_per_run(run_dir(tmp_path_factory), "site", make_site, lock=PROJECT_LOCK)
    return needs_build(Build(made["returncode"], made["log"], Path(made["site"]), made["seconds"]), "site")


def _make_published(scratch: Path) -> dict[str, Any]:
    from published_editions import publish_two_editions  # noqa: PLC0415  (mike, git: loaded where a test needs it)

    return publish_two_editions(scratch)


def _make_properdocs_site(site: Path) -> dict[str, Any]:
    from properdocs_build import has_properdocs, make_properdocs_site  # noqa: PLC0415  (it imports this module)

    if not has_properdocs():  # its fixture fails the test, saying how to set ProperDocs up
        raise FileNotFoundError("no ProperDocs")
    return make_properdocs_site(site)


MADE_AHEAD: dict[str, tuple[str, Callable[[Path], dict[str, Any]]]] = {
    "built_site": ("site", make_site),
    "published": ("publish", _make_published),
    "properdocs_site": ("properdocs-site", _make_properdocs_site),
}
"""What a run's tests wait for under `PROJECT_LOCK`, by fixture: its `once_per_run` record and maker, in the order
`made_ahead` makes them (the site first: most tests read it; the publish's 30-odd tests before ProperDocs' six)."""

LATE_FIXTURES = frozenset(MADE_AHEAD) - {"built_site"}
"""Fixtures made last in that chain: their tests go at the end of the run's order, where they find them made."""


def made_ahead_names(items: Iterable[object]) -> list[str]:
    """The fixtures of `MADE_AHEAD` that some of these tests use, in its order."""
    used = {name for item in items for name in getattr(item, "fixturenames", ())}
    return [fixture for fixture in MADE_AHEAD if fixture in used]


def make_ahead(shared: Path, makers: list[tuple[str, Callable[[Path], dict[str, Any]]]], lock: Path) -> None:
    """`once_per_run` each record of `makers`, in order, under one lock (what `made_ahead`'s thread does)."""
    for record, make in makers:
        # One that raises records nothing: the fixture that needs it makes it again, and its test fails on its own.
        with contextlib.suppress(Exception):
            once_per_run(shared, record, make, lock=lock)


def late_last(items: list[T]) -> list[T]:
    """The tests in their order, those that use a fixture of `LATE_FIXTURES` moved to the end."""
    return sorted(items, key=lambda item: bool(LATE_FIXTURES & set(getattr(item, "fixturenames", ()))))


@pytest.fixture(scope="session", autouse=True)
def made_ahead(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """On the run's first worker, make in the background what its tests will wait for, from its first test on.

    The site's build, the publish of two editions and the ProperDocs build take `PROJECT_LOCK` one after
    the other (minutes, in subprocesses). Made only when a test asked, the publish and ProperDocs began
    late and a worker sat waiting on each while tests queued behind it (issue 56: the rest phase used half
    of two cores). A thread of this worker makes them in order now, while its tests run; a test that
    needs one earlier waits on the lock as before, or makes it first (`once_per_run`), and the thread
    then reads its record.
    """
    fixtures = made_ahead_names(request.session.items)
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0" or not fixtures:
        yield
        return
    makers = [MADE_AHEAD[fixture] for fixture in fixtures]
    maker = threading.Thread(
        target=make_ahead, args=(run_dir(tmp_path_factory), makers, PROJECT_LOCK), name="made-ahead", daemon=True
    )
    maker.start()
    yield
    maker.join()


@pytest.fixture(scope="session")
def torch_only(tmp_path_factory: pytest.TempPathFactory) -> TorchOnly:
    """A reader's Python: torch, numpy and what they require, nothing of this project (`tests/torch_only.py`)."""
    return make_torch_only(tmp_path_factory.mktemp("torch-only"))


SCREENSHOTS = os.environ.get("FLOORS_SCREENSHOTS") == "on"
"""`make screenshots` (FLOORS_SCREENSHOTS=on): the browser tours leave their screenshots in `test-output/` for people
to look at (every floor's whole page, light and dark, ...). Off otherwise: drawing and encoding them took about a
tenth of the tours' time, and no test reads them."""


@pytest.fixture(scope="session")
def output_dir() -> Iterator[Path]:
    """Where tests leave artefacts for people to look at (screenshots); not committed."""
    path = ROOT / "test-output"
    path.mkdir(exist_ok=True)
    yield path


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium, or the Chromium-based browser `FLOORS_CHROMIUM` names (a CI runner without Debian's)."""
    path = os.environ.get("FLOORS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(f"no browser at {path}: run `make browser` (apt-get install chromium) or set FLOORS_CHROMIUM")
    return path


ServeFn = Callable[[Path], str]


@pytest.fixture(scope="session")
def load_proof() -> Callable[[str], ModuleType]:
    """Import a proof script from `snippets/` as a module (its `main()` is not run).

    Pattern tests call a proof's measuring functions, usually with smaller sizes, and
    assert the pattern the page states: ratios and orders, never absolute times.
    """

    def load(relative: str) -> ModuleType:
        path = ROOT / "snippets" / relative
        spec = importlib.util.spec_from_file_location(f"proof_{path.stem}", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        # Registered first, as a real import would be: dataclasses look their module up there.
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    return load


def claims_problem(relative: str, claims: list[Claim]) -> str | None:
    """Why a proof's claims fail its pattern test, or None: it must state a claim, and none may miss.

    A claim that cannot apply on this machine (`applies=False`: one core, no CUDA) passes; it is
    shown and counted as not applicable. One that applied and did not hold fails.
    """
    if not claims:
        return f"{relative} states no claim"
    missed = [f"{c.statement} ({c.detail}) at line {c.line}" for c in claims if c.missed]
    if missed:
        return f"{relative}: claims that did not hold: {missed}"
    return None


@pytest.fixture(scope="session")
def proof_claims(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], list[Claim]]]:
    """Run a proof from `snippets/` as the build does, and return its claims.

    A proof a page shows runs as that page's block: the whole page runs through the build's engine
    once (`site_proofs.SiteProofs`), into the project's proof cache, which the site build of the later
    phase reads. A proof no page shows runs on its own, in a fresh process forked from the same kind
    of torch-loaded server. Either way the claims are the patterns the page states, written once in
    the proof; the pattern tests reuse them instead of restating them. Fails unless the proof ran,
    stated at least one claim, and every claim held or could not apply on this machine (`claims_problem`).
    """
    from site_proofs import SiteProofs  # noqa: PLC0415  (the engine: loaded by the pattern tests only)

    channel_dir = tmp_path_factory.mktemp("claims")
    site = SiteProofs(ROOT, PROJECT_CACHE, PROJECT_LOCK)

    def shown(relative: str) -> list[Claim] | None:
        runs = site.runs_of(f"snippets/{relative}")
        if not runs:
            return None
        failed = [str(run.failure) for run in runs if run.failure is not None]
        assert failed == [], f"{relative} failed as its page's block:\n" + "\n".join(failed)
        claims = [claim for run in runs if run.result is not None for claim in run.result.claims]
        problem = claims_problem(relative, claims)
        outputs = "\n".join(run.result.output for run in runs if run.result is not None)
        assert problem is None, f"{problem}\noutput:\n{outputs}"
        return claims

    def alone(relative: str) -> list[Claim]:
        path = ROOT / "snippets" / relative
        channel = channel_dir / (relative.replace("/", "__") + ".jsonl")
        channel.write_text("", encoding="utf-8")
        request = BlockRequest(
            code=path.read_text(encoding="utf-8"),
            filename=str(path),
            # As the build runs a figure proof (html="1"): figures go to the output, not to files in the project.
            env={**block_environment(html=True, width=None), CHANNEL: str(channel)},
            cwd=str(ROOT),
            file=str(path),
            max_output=1 << 20,
        )
        process = BlockProcess()
        try:
            report = process.run(request, 600)
        finally:
            process.close()
        error = report.error
        assert error is None, f"{relative} failed: {error.type}: {error.message}\n{error.traceback}"
        claims = parse_claims(channel.read_text(encoding="utf-8"))
        problem = claims_problem(relative, claims)
        assert problem is None, f"{problem}\noutput:\n{report.output}"
        return claims

    def run(relative: str) -> list[Claim]:
        claims = shown(relative)
        return alone(relative) if claims is None else claims

    yield run
    site.close()
    end_all()


PUBLIC_URL = "https://pytorch-floors.github.io/"

AXE_CORE_PREFIX = ROOT / ".cache" / "npm"
"""Where npm installs the accessibility tests' axe-core (tests/accessibility.py; not committed: `make clean` removes
it, and the next run installs it again)."""

AXE_CORE_ADDRESS = "/__tests__/axe.min.js"
"""Where the test server serves that axe-core to the pages it serves (no page of the site asks for it)."""


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serve the built site as if this origin were its public address.

    Material's instant navigation only intercepts links listed in `sitemap.xml`, and
    it matches them by protocol and host but not port; deployed, the sitemap's host is
    the page's own, so the test server rewrites the sitemap to its own origin.
    """

    def do_GET(self) -> None:
        if self.path == AXE_CORE_ADDRESS:
            # Fetched from an address (not written into each page), axe-core's script is compiled once by the
            # browser, which keeps its compiled code for the next page, where it took a tenth of a second or more
            # on each page that the accessibility checks read.
            body = (AXE_CORE_PREFIX / "node_modules" / "axe-core" / "axe.min.js").read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=3600")
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.split("?")[0].endswith("/sitemap.xml"):
            path = Path(self.translate_path(self.path))
            origin = f"http://{self.headers['Host']}/"
            body = path.read_text(encoding="utf-8").replace(PUBLIC_URL, origin).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


class LocalServer(http.server.ThreadingHTTPServer):
    """The tests' local web server: a request it failed to serve is kept, for its fixture to fail on.

    socketserver prints such a traceback to stderr and goes on, so a broken handler would pass
    unseen. A browser that drops a connection (a page closed or navigated on mid-load) is no error.
    """

    def __init__(self, handler: Callable[..., http.server.BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.errors: list[str] = []

    def handle_error(self, request: object, client_address: object) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):  # reset, aborted or a broken pipe: the client went away
            return
        self.errors.append(traceback.format_exc())

    def check(self) -> None:
        """Stop serving; fail if a request raised."""
        self.shutdown()
        self.server_close()
        assert not self.errors, "the local server failed a request:\n" + "\n".join(self.errors)


@pytest.fixture(scope="session")
def site_url(built_site: Build) -> Iterator[str]:
    server = LocalServer(functools.partial(SiteHandler, directory=str(built_site.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.check()


@pytest.fixture(scope="session")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Two editions of the real site published into a throwaway repository once per run, served like GitHub Pages.

    `tests/published_editions.py`: the publish tests follow its addresses, the handout tests read its PDFs.
    """
    from published_editions import PagesHandler, Published  # noqa: PLC0415  (mike, git)

    made = once_per_run(run_dir(tmp_path_factory), "publish", _make_published, lock=PROJECT_LOCK)
    tree = Path(made["tree"])
    # Serve what was pushed (each worker serves the one published tree).
    server = LocalServer(functools.partial(PagesHandler, directory=str(tree)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Published(Path(made["repo"]), tree, f"http://127.0.0.1:{server.server_address[1]}", made["log"])
    server.check()


@pytest.fixture(scope="session")
def axe_core(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The pinned axe-core's script (tests/accessibility.py), installed once per run."""
    from accessibility import install_axe_core  # noqa: PLC0415  (Playwright: loaded by the browser tests only)

    return install_axe_core(run_dir(tmp_path_factory))


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Browser]:
    # Imported here: collection (every worker, every phase) and the tests that open no browser never load
    # Playwright, nor the handouts' nbformat.
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    from pytorch_floors.editions.handouts import CHROMIUM_ARGS  # noqa: PLC0415

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def toured(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    browser: Browser,
    site_url: str,
    built_site: Build,
    axe_core: str,
    output_dir: Path,
) -> Callable[[str], Any]:
    """The tour of the built site in a viewport and palette (tests/page_tour.py), made once per test run.

    Every page a check reads there is loaded once, and every check's facts read from it: a test asserts on
    `toured("phone-slate").facts("head")` where it loaded the pages itself.
    """
    from page_tour import TOURS, Toured, take_tour  # noqa: PLC0415  (Playwright: loaded by the browser tests only)

    shared = run_dir(tmp_path_factory)

    def maker(name: str) -> Callable[[Path], dict[str, Any]]:
        tour = TOURS[name]
        shots = output_dir if SCREENSHOTS else None
        return lambda _: take_tour(browser, site_url, built_site.site, tour, axe_core=axe_core, output_dir=shots)

    @functools.cache
    def tour(name: str) -> Toured:
        make_unless_taken(shared, f"tour-{name}", maker(name))
        if not (shared / f"tour-{name}.json").is_file():
            # Another worker is making it: rather than wait, make the tours nobody is making yet (a run that
            # reads one tour reads them all), then read it.
            for other in TOURS:
                # One that fails records nothing: the test that reads it makes it again, and fails on its own.
                with contextlib.suppress(Exception):
                    make_unless_taken(shared, f"tour-{other}", maker(other))
        return Toured(TOURS[name], once_per_run(shared, f"tour-{name}", maker(name)))

    return tour
