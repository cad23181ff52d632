"""Machine tiers: the kinds of machine the site promises to hold on, as settings this machine can take.

This module is the one definition of a tier: its environment, its CPU affinity, the load beside it
and the Python it runs on. `make machines` (bench/machines.py) builds the site as each of them, and
`make record TIER=<name>` records the proofs as one of them when the name is a tier's (any other name
records this machine as it is: a GPU server, a laptop, a CI runner of the recording workflow); both
enter `as_tier`, so a tier loads the machine the same way for either.

- `as-is`: a laptop or workstation as it is; this machine, nothing changed.
- `one-core-scalar`: a single-vCPU CI runner, an old or throttled CPU; the run (and every process it
  starts) pinned to CPU 0, `OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`, `ATEN_CPU_CAPABILITY=default`.
- `loaded`: a busy CI host; two spinning CPU hogs beside the run.
- `crowded`: a shared JupyterHub node or an oversubscribed CI host; a neighbour that builds a copy of
  the site cold, over and over (`mkdocs build` with its own empty cache: CPU, memory, disk and many
  processes), and two spinning hogs per core, beside the run.
- `spawn`: Windows Python and macOS, where the fork server is not what runs the blocks;
  `FLOORS_START_METHOD=spawn`.
- `avx2`: an AVX2-only CPU (AMD Zen 2/3, older Intel), *emulated*: `ATEN_CPU_CAPABILITY=avx2` caps
  torch's kernels at AVX2 on this CPU, which keeps its own caches, clocks and memory.
- `cuda-build-no-gpu`: the most common reader setup, PyPI's CUDA build of torch on a machine without a
  GPU; the run uses `.venv-cuda/`, made on demand with this Python and torch from PyPI only (pip's local
  wheels and mirrors ignored: the dev image's local `+cpu` wheel would otherwise satisfy the pin), and
  `CUDA_VISIBLE_DEVICES=` hides any GPU the machine has.
- `python3.12`, `python3.13`: stock Pythons; the run uses `.venv-py3.12/` or `.venv-py3.13/`, made on
  demand with that interpreter (found on PATH or under pyenv's versions). torch comes as pip finds it
  for that Python: PyTorch's CPU index when it answers, else PyPI, whose Linux wheel is the CUDA build.

A tier's environment folder lies in the project, ignored by git (it holds a `.gitignore` of `*`, as
Python 3.13's venv writes), and is made again when requirements.txt or pyproject.toml change.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.process.groups import end_group

__all__ = [
    "TIERS",
    "Neighbour",
    "Tier",
    "TierEnvironment",
    "as_tier",
    "hog_count",
    "snapshot",
    "tier_named",
    "tier_python",
]

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's CPU wheel index (tools/setup_env.py names the same)."""

HOG = "while True: pass"
"""What a hog runs (`python -c`): a core kept busy in user space, with no I/O, until it is killed."""


@dataclass(frozen=True)
class TierEnvironment:
    """A virtual environment of the tier's own, made on demand in the project (ignored by git).

    Attributes:
        folder: Its folder, relative to the project (`.venv-cuda`).
        python: The Python minor version it is made with (`3.12`), or `""` for the one running this.
        pypi_torch: torch from PyPI only: pip's configuration (local wheels, mirrors, constraints) is
            ignored, so on Linux the pin `torch==X` is PyPI's CUDA build.
        cuda_build: The environment must hold a CUDA build of torch (checked once it is made).
    """

    folder: str
    python: str = ""
    pypi_torch: bool = False
    cuda_build: bool = False


@dataclass(frozen=True)
class Tier:
    """One kind of machine: extra environment, a CPU affinity, the load beside the run, its own Python.

    Attributes:
        name: The tier's name.
        stands_for: The machines it stands for, in words.
        env: Environment variables the run gets.
        cpus: The CPUs the run is pinned to (`taskset -c` syntax, such as `0`), or `None`.
        hogs: Processes that keep a core busy each while the run lasts.
        hogs_per_core: As many more for each core this process may use.
        neighbour: A neighbour builds a copy of the site cold, again and again, while the run lasts.
        venv: The environment the run's Python comes from, or `None` for the one running this.
    """

    name: str
    stands_for: str
    env: dict[str, str] = field(default_factory=dict)
    cpus: str | None = None
    hogs: int = 0
    hogs_per_core: int = 0
    neighbour: bool = False
    venv: TierEnvironment | None = None


TIERS = (
    Tier("as-is", "a laptop or workstation as it is"),
    Tier(
        "one-core-scalar",
        "a single-vCPU runner without AVX2 or AVX-512 kernels",
        {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"},
        cpus="0",
    ),
    Tier("loaded", "a busy CI host", hogs=2),
    Tier(
        "crowded",
        "a shared JupyterHub node or an oversubscribed CI host",
        hogs_per_core=2,
        neighbour=True,
    ),
    Tier("spawn", "Windows or macOS Python (no fork server)", {"FLOORS_START_METHOD": "spawn"}),
    Tier("avx2", "an AVX2-only CPU (emulated: torch's kernels capped at AVX2)", {"ATEN_CPU_CAPABILITY": "avx2"}),
    Tier(
        "cuda-build-no-gpu",
        "PyPI's CUDA build of torch on a machine without a GPU",
        {"CUDA_VISIBLE_DEVICES": ""},
        venv=TierEnvironment(".venv-cuda", pypi_torch=True, cuda_build=True),
    ),
    Tier("python3.12", "a stock Python 3.12 (Ubuntu 24.04)", venv=TierEnvironment(".venv-py3.12", "3.12")),
    Tier("python3.13", "a stock Python 3.13 (Homebrew, Debian 13)", venv=TierEnvironment(".venv-py3.13", "3.13")),
)
"""Every tier, in the order `make machines` builds them."""


def tier_named(name: str) -> Tier | None:
    """The tier of that name, or `None` (the name of a real machine, recorded as it is).

    Args:
        name: A tier's name.

    Returns:
        The tier, or `None`.
    """
    return next((tier for tier in TIERS if tier.name == name), None)


def _cpus(written: str) -> set[int]:
    chosen: set[int] = set()
    for part in written.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return chosen


def _cores() -> int:
    """The cores this process may run on (its affinity: a container's share), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def hog_count(tier: Tier) -> int:
    """How many hogs spin beside a run as `tier` on this machine.

    Args:
        tier: The tier.

    Returns:
        Its fixed hogs and its hogs per core times the cores this process may use.
    """
    return tier.hogs + tier.hogs_per_core * _cores()


# ---------------------------------------------------------------------------------------------------
# The crowded tier's neighbour
# ---------------------------------------------------------------------------------------------------

_NOT_COPIED_AT_ROOT = {".git", "site", ".cache", "build", "test-output", "node_modules"}
_NOT_COPIED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def _not_copied(root: Path) -> Callable[[str, list[str]], set[str]]:
    """What `shutil.copytree` leaves out of the neighbour's copy of `root`."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        at_root = Path(folder) == root
        return {
            name
            for name in names
            if name in _NOT_COPIED
            or name.endswith(".egg-info")
            or (at_root and (name in _NOT_COPIED_AT_ROOT or name.startswith(".venv")))
        }

    return ignore


def snapshot(project: Path, to: Path) -> Path:
    """A copy of `project` as it is now, to build from while its tree is edited (`make machines`).

    Its environments, caches, site and `.git` are left out; a build from it imports the package from
    the copy when its `src` comes first on `PYTHONPATH` (which the blocks' fork server and the labs'
    kernels keep).

    Args:
        project: The project.
        to: Where the copy goes (must not exist).

    Returns:
        `to`.
    """
    shutil.copytree(project, to, ignore=_not_copied(project), symlinks=True)
    return to


class Neighbour:
    """Another user's build beside the run: a copy of the project built cold, again and again.

    Each round is `mkdocs build` (not strict, claims advisory, a block's default time limit 600 s: the
    neighbour's outcome is not graded, and a round that stopped on a block's time limit would skip the
    rest of the site) of the copy into its own site folder, with its own proof cache emptied first, so
    every round runs every proof and lab again: CPU on every core, memory, disk and many processes. It starts on
    `start()` and stops (its current round's whole process group killed) on `stop()`.

    Args:
        project: The project to copy (its environments, caches, site and `.git` are left out).
        python: The interpreter whose MkDocs builds the copy (default: this one).
    """

    def __init__(self, project: Path, python: str | None = None) -> None:
        self.project = project
        self.python = python or sys.executable
        self.rounds: list[tuple[int, float]] = []  # each finished round's exit code and seconds
        self._scratch = Path(tempfile.mkdtemp(prefix="floors-neighbour-"))
        self.copy = self._scratch / "project"
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}
        self._cut_short = False
        self._thread = threading.Thread(target=self._loop, name="floors-neighbour", daemon=True)

    def command(self) -> list[str]:
        """One round's command line (run in the copy)."""
        return [self.python, "-m", "mkdocs", "build", "--site-dir", str(self.copy / "site")]

    def environment(self) -> dict[str, str]:
        """One round's environment: its own cache in the copy, claims advisory, long time limits."""
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "FLOORS_CLAIMS": "advisory", "FLOORS_EXEC_TIMEOUT": "600"}
        env["FLOORS_CACHE_DIR"] = str(self.copy / ".cache")
        return env

    def start(self) -> None:
        """Copy the project and start building it, round after round."""
        snapshot(self.project, self.copy)
        self._env = self.environment()  # taken now: the run's own tier settings come after
        self._thread.start()

    def _loop(self) -> None:
        log = self._scratch / "neighbour.log"
        while not self._stopping.is_set():
            shutil.rmtree(self.copy / ".cache", ignore_errors=True)  # cold: every proof and lab runs again
            started = time.perf_counter()
            with self._lock:
                if self._stopping.is_set():
                    return
                with log.open("ab") as out:
                    self._process = subprocess.Popen(
                        self.command(),
                        cwd=self.copy,
                        env=self._env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
            code = self._process.wait()
            if self._stopping.is_set():
                self._cut_short = True
                return
            self.rounds.append((code, time.perf_counter() - started))
            if code != 0 and time.perf_counter() - started < 5:
                self._stopping.wait(5)  # a copy that cannot build at all does not spin on starting

    def stop(self) -> None:
        """Stop the current round (its process group) and the loop; remove the copy."""
        with self._lock:
            self._stopping.set()
            process = self._process
        if process is not None:
            end_group(process, grace=15)
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def summary(self) -> str:
        """What the neighbour did, in words."""
        done = [seconds for code, seconds in self.rounds if code == 0]
        failed = len(self.rounds) - len(done)
        said = f"{len(done)} cold builds finished" + (f" ({sum(done) / len(done):.0f} s each)" if done else "")
        return said + (f", {failed} failed" if failed else "") + (", one cut short" if self._cut_short else "")


# ---------------------------------------------------------------------------------------------------
# A tier's own Python
# ---------------------------------------------------------------------------------------------------


def checkout() -> Path:
    """The project this package is checked out in (an editable install), where tiers keep their environments.

    Raises:
        FloorsError: If the package is not running from a checkout (no pyproject.toml two folders up).
    """
    root = Path(__file__).resolve().parent.parent.parent
    if not (root / "pyproject.toml").is_file() or not (root / "requirements.txt").is_file():
        raise FloorsError(f"{root}: not a checkout of PyTorch Floors (no pyproject.toml, requirements.txt)")
    return root


def _minor_of(python: str) -> str:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def find_python(minor: str) -> str:
    """An interpreter that really is Python `minor` (a pyenv shim on PATH may run nothing).

    Args:
        minor: `3.12`.

    Returns:
        Its path: `pythonX.Y` on PATH, else the newest under pyenv's versions (`$PYENV_ROOT`, `~/.pyenv`).

    Raises:
        FloorsError: If none runs, saying what to install.
    """
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = sorted(glob.glob(str(pyenv / "versions" / f"{minor}.*" / "bin" / f"python{minor}")), reverse=True)
    for candidate in [shutil.which(f"python{minor}"), *found]:
        if candidate and _minor_of(candidate) == minor:
            return candidate
    raise FloorsError(
        f"no Python {minor} found (python{minor} on PATH, or under {pyenv}/versions): install it "
        f"(Ubuntu: sudo apt install python{minor} python{minor}-venv; pyenv install {minor}) to run this tier"
    )


def _digest(project: Path, venv: TierEnvironment) -> str:
    inputs = [(project / name).read_bytes() for name in ("requirements.txt", "pyproject.toml")]
    return hashlib.sha256(repr(venv).encode() + b"".join(inputs)).hexdigest()


def _pip_env(venv: TierEnvironment) -> dict[str, str]:
    env = dict(os.environ)
    if venv.pypi_torch:
        # No configuration file (find-links /opt/wheels, local mirrors, constraints): PyPI alone.
        env["PIP_CONFIG_FILE"] = os.devnull
        for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
            env.pop(name, None)
    return env


def _cpu_index_answers() -> bool:
    try:
        with urllib.request.urlopen(f"{CPU_INDEX}/torch/", timeout=10) as answer:
            return int(answer.status) == 200
    except (OSError, ValueError):
        return False


def _say(message: str) -> None:
    print(f"tiers: {message}", file=sys.stderr, flush=True)


def tier_python(tier: Tier, project: Path | None = None) -> str:
    """The interpreter a run as `tier` uses: this one, or the tier's environment's (made when missing).

    Making one runs `python -m venv`, pip with requirements.txt, and the project installed editable;
    what pip said goes to `<folder>/setup.log`. It says what it made (Python, torch, size, time).

    Args:
        tier: The tier.
        project: The project the environment lies in (default: this checkout).

    Returns:
        The interpreter's path.

    Raises:
        FloorsError: If no interpreter is found, pip fails, or the torch installed is not what the tier
            stands for.
    """
    if tier.venv is None:
        return sys.executable
    venv = tier.venv
    project = project or checkout()
    folder = project / venv.folder
    python = folder / "bin" / "python"
    stamp = folder / ".tier-installed"
    digest = _digest(project, venv)
    if python.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest:
        return str(python)
    base = find_python(venv.python) if venv.python else getattr(sys, "_base_executable", sys.executable)
    started = time.perf_counter()
    _say(f"{tier.name}: making {venv.folder} with {base} (some GB: torch and, from PyPI on Linux, CUDA's libraries)")
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([base, "-m", "venv", str(folder)], check=True)
    (folder / ".gitignore").write_text("*\n", encoding="utf-8")
    extra: list[str] = []
    if not venv.pypi_torch and _cpu_index_answers():
        extra = ["--extra-index-url", CPU_INDEX]
    where = (
        "PyPI only (pip's configuration ignored)"
        if venv.pypi_torch
        else ("PyTorch's CPU index, then PyPI" if extra else "PyPI (PyTorch's CPU index does not answer here)")
    )
    _say(f"{tier.name}: pip install --requirement requirements.txt, torch from {where}; pip's log: {folder}/setup.log")
    with (folder / "setup.log").open("w", encoding="utf-8") as log:
        for step in (
            [str(python), "-m", "pip", "install", "--progress-bar", "off", *extra, "--requirement", "requirements.txt"],
            [str(python), "-m", "pip", "install", "--no-deps", "--editable", "."],
        ):
            log.write(f"$ {' '.join(step)}\n")
            log.flush()
            done = subprocess.run(
                step, cwd=project, env=_pip_env(venv), stdout=log, stderr=subprocess.STDOUT, check=False
            )
            if done.returncode != 0:
                raise FloorsError(f"{folder}/setup.log: {' '.join(step[1:5])} ... failed (exit {done.returncode})")
    facts = subprocess.run(
        [str(python), "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if facts.returncode != 0:
        raise FloorsError(f"{folder}: torch does not import: {facts.stderr.strip().splitlines()[-1:]}")
    version, torch, cuda = facts.stdout.split()
    if venv.cuda_build and cuda == "None":
        raise FloorsError(f"{folder}: torch {torch} is not a CUDA build; {tier.name} stands for one")
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    build = f"CUDA {cuda} build" if cuda != "None" else "CPU build"
    _say(
        f"{tier.name}: {venv.folder} ready: Python {version}, torch {torch} ({build}), "
        f"{size / 2**30:.1f} GiB, {time.perf_counter() - started:.0f} s"
    )
    stamp.write_text(digest + "\n", encoding="utf-8")
    return str(python)


def _runs_in(folder: Path) -> bool:
    return Path(sys.prefix).resolve() == folder.resolve()


# ---------------------------------------------------------------------------------------------------
# Being a tier
# ---------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def as_tier(tier: Tier, *, python: str | None = None, project: Path | None = None) -> Iterator[None]:
    """Make this process (and every process it starts) run as `tier`, until the block ends.

    The load starts first (hogs and the neighbour are not pinned: they take every core), then the
    environment and the CPU affinity are set, which every process the block starts inherits.

    A tier with an environment of its own runs its Python work there. `python` names the interpreter
    that will (bench/machines.py starts the build with `tier_python`); without it the work is this
    process's own (`make record`), so a process not running in the tier's environment runs itself
    again there, with the same arguments (`os.execv`), the environment made first if it is missing.

    Args:
        tier: The tier.
        python: The interpreter the tier's work runs with, when this process only starts it.
        project: The project (the environments' place and the neighbour's copy; default: this checkout).

    Yields:
        Nothing; the environment, CPU affinity and load are undone afterwards.
    """
    if tier.venv is not None and python is None:
        folder = (project or checkout()) / tier.venv.folder
        if not _runs_in(folder):
            again = tier_python(tier, project)
            _say(f"{tier.name} runs in {tier.venv.folder}: running this command again with {again}")
            os.execv(again, [again, *sys.orig_argv[1:]])
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        for _ in range(hog_count(tier))
    ]
    neighbour = Neighbour(project or checkout()) if tier.neighbour else None
    saved_env = {name: os.environ.get(name) for name in tier.env}
    saved_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        if neighbour is not None:
            neighbour.start()
        os.environ.update(tier.env)
        if tier.cpus is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, _cpus(tier.cpus))
        yield
    finally:
        if neighbour is not None:
            neighbour.stop()
            _say(f"{tier.name}: the neighbour: {neighbour.summary()}")
        for hog in hogs:
            hog.kill()
            hog.wait()
        if saved_cpus is not None and tier.cpus is not None:
            os.sched_setaffinity(0, saved_cpus)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
