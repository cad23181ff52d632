"""What `make setup` creates its environments with: the Python, and where pip takes torch from.

Run before any environment exists, by whatever `python3` the machine has, so it uses only the standard
library and runs on Pythons older than the project's own (3.8 and later: it has to be able to say that
they are too old).

    python3 tools/setup_env.py python [NAME]   # print the interpreter to make the environments with
    .venv/bin/python tools/setup_env.py torch  # print pip's extra arguments for the torch pin, if any

`python` tries python3.13, python3.12, python3.11 and python3, in that order, and prints the first
that really is a supported Python (it runs each and reads its version: a name can be a pyenv shim
that runs nothing, or Debian 12's python3.11, which is 3.11.2); NAME (`make PYTHON=...`) is checked
instead. When none fits it says exactly what to install. What it chose, and why, goes to stderr.

`torch` runs in the new environment (so pip sees that interpreter's tags). On Linux PyPI's
`torch==X` is the CUDA build (some GB of NVIDIA packages), so unless TORCH=cuda it installs
`X+cpu`: from what pip already has, if a `--no-index` dry run finds it (a local wheel, as on the
project's dev image: no index is asked, nothing waits on the network), or else from PyTorch's CPU
wheel index, which it prints as `--extra-index-url ...` for the install line. macOS's PyPI wheel is
already a CPU (and MPS) build.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CANDIDATES = ("python3.13", "python3.12", "python3.11", "python3")
"""Tried in this order when PYTHON is not set: the newest first."""

OLDEST = (3, 11, 5)
"""The oldest Python every pin installs on (`requires-python` in pyproject.toml says the same)."""

WHY_OLDEST = "pymdown-extensions==13.1.2 requires Python >=3.11.5"
"""The pin that sets OLDEST (its Requires-Python)."""

NEWEST_TESTED = (3, 13)
"""The newest minor version the project is tested on; a newer one is used only when PYTHON names it."""

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's CPU wheel index: it serves `torch==X+cpu` for Linux x86-64 and aarch64."""

TORCH_CHOICES = ("cpu", "cuda")
"""TORCH=cpu (the default) or TORCH=cuda (PyPI's CUDA build on Linux)."""

INSTALL_HELP = """\
Install one, then run make again (or name one: make serve PYTHON=/path/to/python3.12):
  Ubuntu 24.04:           sudo apt install python3.12 python3.12-venv
  Ubuntu 22.04 and older: sudo add-apt-repository ppa:deadsnakes/ppa && sudo apt install python3.13 python3.13-venv
  Debian 13:              sudo apt install python3.13 python3.13-venv
  Debian 12 (its python3.11 is 3.11.2, too old): pyenv install 3.13, or uv python install 3.13
                          (then make serve PYTHON="$(uv python find 3.13)")
  macOS (Homebrew):       brew install python@3.13
  WSL: as for its distribution (Ubuntu); keep the clone in the Linux filesystem, not under /mnt/c"""

PROBE = (
    "import sys\n"
    "print('.'.join(map(str, sys.version_info[:3])))\n"
    "try:\n"
    "    import ensurepip, venv\n"
    "    print('venv')\n"
    "except ImportError:\n"
    "    print('no-venv')\n"
)
"""What a candidate is asked: its version, and whether its `venv` can install pip (Debian's needs python3.X-venv)."""


def say(message: str) -> None:
    """Tell the person running make (stderr: stdout is what make reads)."""
    print(f"setup: {message}", file=sys.stderr)


def parse_version(text: str) -> tuple[int, ...]:
    """`3.11.2` as (3, 11, 2)."""
    return tuple(int(part) for part in text.split("."))


def shown(version: tuple[int, ...]) -> str:
    """(3, 11, 2) as `3.11.2`."""
    return ".".join(map(str, version))


def problem_with(version: tuple[int, ...], has_venv: bool, *, named: bool) -> str | None:
    """Why this Python cannot make the environments, in words; None when it can.

    Args:
        version: Its version.
        has_venv: Whether its `venv` and `ensurepip` import.
        named: Whether the user named it (PYTHON=...): then a version newer than tested is allowed.
    """
    if version < OLDEST:
        return f"is Python {shown(version)}, too old: {WHY_OLDEST}"
    if version[:2] > NEWEST_TESTED and not named:
        tested = f"{shown(OLDEST)} to {shown(NEWEST_TESTED)}"
        return f"is Python {shown(version)}, newer than any this project is tested on ({tested}); PYTHON= uses it"
    if not has_venv:
        minor = shown(version[:2])
        return (
            f"is Python {shown(version)} without a working venv (ensurepip missing): "
            f"sudo apt install python{minor}-venv"
        )
    return None


def probe(path: str) -> tuple[tuple[int, ...], bool] | str:
    """Run a candidate: its version and whether it has venv, or why it did not answer."""
    try:
        done = subprocess.run([path, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"did not run ({error})"
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2 or not re.fullmatch(r"\d+\.\d+\.\d+", lines[0]):
        said = (done.stderr.strip().splitlines() or ["no output"])[0]
        return f"did not run ({said})"
    return parse_version(lines[0]), lines[1] == "venv"


def pick_python(named: str | None) -> str | None:
    """The interpreter to make the environments with, saying which and why; None (having said why) if none fits.

    Args:
        named: What PYTHON names, if set: only it is checked.
    """
    refused = []
    for name in [named] if named else CANDIDATES:
        path = shutil.which(name)
        if path is None:
            refused.append(f"{name}: not found")
            continue
        answer = probe(path)
        problem = answer if isinstance(answer, str) else problem_with(*answer, named=bool(named))
        if problem is None and not isinstance(answer, str):
            why = "the Python PYTHON names" if named else "the newest supported Python found"
            for line in refused:
                say(f"passed over {line}")
            where = "" if path == name else f" ({path})"
            say(f"making the environments with {name}{where}: Python {shown(answer[0])}, {why}")
            return path
        refused.append(f"{name}{'' if path == name else f' ({path})'} {problem}")
    wanted = f"Python {shown(OLDEST)} or later ({WHY_OLDEST})"
    say(f"error: no Python to make the environments with; it needs {wanted}:")
    for line in refused:
        print(f"  {line}", file=sys.stderr)
    if named:
        print("Unset PYTHON to let make look for one, or:", file=sys.stderr)
    print(INSTALL_HELP, file=sys.stderr)
    return None


def torch_pin(requirements: Path) -> str:
    """The exact torch version requirements.txt pins (`X.Y.Z`, any `+cpu` label dropped)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        found = re.match(r"torch==([0-9][0-9A-Za-z.]*)(\+[0-9A-Za-z.]+)?\s*(;.*)?$", line.strip())
        if found:
            return found[1]
    raise SystemExit(f"setup: error: {requirements} pins no torch==X")


def pip_has_locally(requirement: str) -> bool:
    """Whether pip installs `requirement` from what it has already (find-links, caches), asking no index."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "--quiet"]
    command += ["--disable-pip-version-check", requirement]
    return subprocess.run(command, capture_output=True, timeout=300, check=False).returncode == 0


def torch_arguments(platform: str, torch: str, version: str, has_cpu_build: bool) -> tuple[list[str], str]:
    """The extra arguments of pip for the torch pin, and what they mean in words.

    Args:
        platform: `sys.platform`.
        torch: TORCH (`cpu` or `cuda`).
        version: The pinned version.
        has_cpu_build: Whether pip already has `torch==<version>+cpu` (only asked on Linux with TORCH=cpu).
    """
    if platform != "linux":
        note = " (there is no CUDA build for it)" if torch == "cuda" and platform == "darwin" else ""
        return [], f"torch {version} from PyPI, whose {platform} wheel is a CPU build already{note}"
    if torch == "cuda":
        return [], f"torch {version} from PyPI: the CUDA build, some GB of NVIDIA packages (TORCH=cuda)"
    if has_cpu_build:
        return [], f"torch {version}+cpu, the CPU build, from the wheel pip already has (no index asked)"
    return (
        ["--extra-index-url", CPU_INDEX],
        f"torch {version}+cpu, the CPU build, from PyTorch's CPU index {CPU_INDEX} (TORCH=cuda: PyPI's CUDA build)",
    )


def torch_main(requirements: Path) -> int:
    """Print the install line's extra arguments for torch; say what they choose."""
    torch = os.environ.get("TORCH", "") or "cpu"
    if torch not in TORCH_CHOICES:
        say(f"error: TORCH={torch}: choose one of {', '.join(TORCH_CHOICES)} (cpu is the default)")
        return 1
    version = torch_pin(requirements)
    local = sys.platform == "linux" and torch == "cpu" and pip_has_locally(f"torch=={version}+cpu")
    arguments, meaning = torch_arguments(sys.platform, torch, version, local)
    say(meaning)
    print(" ".join(arguments))
    return 0


def main(argv: list[str]) -> int:
    """`python [NAME]` or `torch [REQUIREMENTS]`."""
    if argv[:1] == ["python"] and len(argv) <= 2:
        path = pick_python(argv[1] if len(argv) == 2 and argv[1] else None)
        if path is None:
            return 1
        print(path)
        return 0
    if argv[:1] == ["torch"] and len(argv) <= 2:
        return torch_main(
            Path(argv[1]) if len(argv) == 2 else Path(__file__).resolve().parent.parent / "requirements.txt"
        )
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
