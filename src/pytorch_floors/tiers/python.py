"""The Python a tier runs on: this one, or a tier's own environment, made on demand in the project."""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from pytorch_floors.errors import FloorsError
from pytorch_floors.tiers.copies import checkout
from pytorch_floors.tiers.kinds import CPU_INDEX, Tier, TierEnvironment


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


_TORCH_PIN = re.compile(r"^torch\s*==.*$", re.M)


def pinned_requirements(requirements: str, version: str) -> str:
    """The text of requirements.txt with its torch pin replaced by exactly another release.

    Args:
        requirements: requirements.txt's text.
        version: The release (`2.15.0`).

    Returns:
        The text with `torch===<version>`: arbitrary equality, so `2.15.0+cpu` from a local wheel
        folder, which `torch==2.15.0` would accept (and prefer), is not installed in its place.

    Raises:
        FloorsError: If requirements.txt pins no torch.
    """
    if not _TORCH_PIN.search(requirements):
        raise FloorsError("requirements.txt pins no torch==X to replace")
    return _TORCH_PIN.sub(f"torch==={version}", requirements, count=1)


def constraint_files(listing: str) -> list[str]:
    """The constraint files pip applies, from what `pip config list` prints.

    Args:
        listing: Its output (`global.constraint='/etc/xdg/pip/constraints.txt'`, `:env:.constraint='...'`).

    Returns:
        The files of the last `constraint` it lists (pip's order: files, then the environment, the
        later winning), or none.
    """
    found = re.findall(r"^\S*\.constraint='([^']*)'$", listing, re.M)
    return found[-1].split() if found else []


def lifted_constraints(constraints: str, version: str) -> str | None:
    """The constraints pip applies, less those that exclude a torch release.

    Args:
        constraints: The constraint files' text (`torch<=2.14.1`, a cap on an image whose disk holds
            only releases up to it).
        version: The torch release a tier needs.

    Returns:
        The constraints with each line on torch that excludes `version` left out, or `None` when none
        does (pip's configuration serves as it is).
    """
    kept, lifted = [], False
    for line in constraints.splitlines():
        try:
            requirement = Requirement(line.split("#", 1)[0].strip())
        except InvalidRequirement:
            kept.append(line)  # a comment, a blank line or an option: not a cap
            continue
        if requirement.name.lower() == "torch" and not requirement.specifier.contains(version, prereleases=True):
            lifted = True
            continue
        kept.append(line)
    return "\n".join(kept) + "\n" if lifted else None


def _configured_constraints(python: Path) -> list[Path]:
    done = subprocess.run(
        [str(python), "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=120, check=False
    )
    return [Path(name) for name in constraint_files(done.stdout)]


def _pip_env(venv: TierEnvironment, constraints: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if venv.pypi_torch:
        # No configuration file (find-links /opt/wheels, local mirrors, constraints): PyPI alone.
        env["PIP_CONFIG_FILE"] = os.devnull
        for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
            env.pop(name, None)
    if constraints is not None:
        # The environment's variable overrides every configuration file's `constraint`.
        env["PIP_CONSTRAINT"] = str(constraints)
    return env


def _own_constraints(tier: Tier, python: Path, folder: Path) -> Path | None:
    """The environment's own constraints, written when pip's would keep the tier's torch out."""
    assert tier.venv is not None
    files = [path for path in _configured_constraints(python) if path.is_file()]
    text = "".join(path.read_text(encoding="utf-8") + "\n" for path in files)
    lifted = lifted_constraints(text, tier.venv.torch)
    if lifted is None:
        return None
    own = folder / "pip-constraints.txt"
    own.write_text(lifted, encoding="utf-8")
    shown = ", ".join(str(path) for path in files)
    _say(f"{tier.name}: pip's constraints ({shown}) keep torch {tier.venv.torch} out: this environment uses {own}")
    return own


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
    requirements, constraints = "requirements.txt", None
    if venv.torch:
        # PyPI's wheel of that release (or a local copy of it, where pip's configuration has one).
        pinned = folder / "requirements.txt"
        pinned.write_text(
            pinned_requirements((project / "requirements.txt").read_text(encoding="utf-8"), venv.torch),
            encoding="utf-8",
        )
        requirements, constraints = str(pinned), _own_constraints(tier, python, folder)
        where = f"exactly {venv.torch}, from pip's configured sources and PyPI"
    elif not venv.pypi_torch and _cpu_index_answers():
        extra = ["--extra-index-url", CPU_INDEX]
    if venv.pypi_torch:
        where = "PyPI only (pip's configuration ignored)"
    elif not venv.torch:
        where = "PyTorch's CPU index, then PyPI" if extra else "PyPI (PyTorch's CPU index does not answer here)"
    _say(f"{tier.name}: pip install --requirement {requirements}, torch from {where}; pip's log: {folder}/setup.log")
    with (folder / "setup.log").open("w", encoding="utf-8") as log:
        for step in (
            [str(python), "-m", "pip", "install", "--progress-bar", "off", *extra, "--requirement", requirements],
            [str(python), "-m", "pip", "install", "--no-deps", "--editable", "."],
        ):
            log.write(f"$ {' '.join(step)}\n")
            log.flush()
            done = subprocess.run(
                step, cwd=project, env=_pip_env(venv, constraints), stdout=log, stderr=subprocess.STDOUT, check=False
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
    # PyPI's wheel of 2.14.1 says `2.14.1+cu130` once imported: its build is no part of the release.
    if venv.torch and torch.split("+")[0] != venv.torch:
        raise FloorsError(f"{folder}: holds torch {torch}; {tier.name} stands for torch {venv.torch}")
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    build = f"CUDA {cuda} build" if cuda != "None" else "CPU build"
    _say(
        f"{tier.name}: {venv.folder} ready: Python {version}, torch {torch} ({build}), "
        f"{size / 2**30:.1f} GiB, {time.perf_counter() - started:.0f} s"
    )
    stamp.write_text(digest + "\n", encoding="utf-8")
    return str(python)
