"""An interpreter like a reader's who installed torch and nothing else: where every proof download must run.

A download runs "wherever torch is installed", so its test must not lend it anything of the project.
`python -S` with torch's directory on PYTHONPATH hid the project only from the download's own process:
a child it started with `sys.executable` got the project's virtual environment back, the editable
`pytorch_floors` included, and a child that imported the package passed here and failed for readers.

So the test makes a real virtual environment (`venv`, without pip: a fraction of a second) whose
site-packages holds links to exactly torch's and numpy's distributions and what they require, taken
from the project's environment (no download, no install). Its `python` is what a download and every
process it starts run; nothing outside that site-packages is on their path.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import sysconfig
import venv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["OPTIONAL_TOOLS", "TorchOnly", "make_torch_only", "requirement_closure"]

ROOTS = ("torch", "numpy")
"""What a reader installs: the proofs import torch, and some numpy."""

OPTIONAL_TOOLS = frozenset({"setuptools"})
"""Requirements torch declares but does not import with `import torch`: only `torch.utils.cpp_extension` needs
setuptools, and newer torch releases no longer install it. A proof must say "not applicable" without it, so the
interpreter leaves it out unless a test asks for it."""


def requirement_closure(roots: tuple[str, ...] = ROOTS, leave_out: frozenset[str] = OPTIONAL_TOOLS) -> list[str]:
    """The installed distributions `roots` need, by name: each root and what it requires, transitively.

    A requirement whose marker does not hold for this interpreter (another platform, an extra) is not needed.

    Raises:
        importlib.metadata.PackageNotFoundError: If a required distribution is not installed here.
    """
    found: dict[str, importlib.metadata.Distribution] = {}
    waiting = list(roots)
    while waiting:
        name = canonicalize_name(waiting.pop())
        if name in found or name in leave_out:
            continue
        found[name] = importlib.metadata.distribution(name)
        for line in found[name].requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                waiting.append(requirement.name)
    return sorted(found)


@dataclass(frozen=True)
class TorchOnly:
    """A virtual environment holding torch, numpy and their requirements, and nothing of this project."""

    directory: Path
    distributions: tuple[str, ...]
    """`name version` of each distribution its site-packages holds."""

    @property
    def python(self) -> Path:
        """Its interpreter: `sys.executable` in every process a download starts."""
        return self.directory / "bin" / "python"

    def environment(self, launch: Mapping[str, str]) -> dict[str, str]:
        """`launch` (a reader's shell) as if this environment were activated in it.

        Python's variables (PYTHONPATH above all) and the project's (`FLOORS_*`) are dropped; PATH
        loses the project's environment's `bin` (its tools are not a reader's) and starts with this one's.
        """
        project_bin = str(Path(sys.prefix) / "bin")
        env = {k: v for k, v in launch.items() if not k.startswith(("PYTHON", "FLOORS_")) and k != "VIRTUAL_ENV"}
        path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry and entry != project_bin]
        env["PATH"] = os.pathsep.join([str(self.python.parent), *path])
        env["VIRTUAL_ENV"] = str(self.directory)
        return env


def make_torch_only(directory: Path, leave_out: frozenset[str] = OPTIONAL_TOOLS) -> TorchOnly:
    """Create the environment in `directory`: `venv` without pip, then a link in its site-packages to each
    top-level file or folder of each distribution of `requirement_closure` (its package, its metadata,
    its bundled libraries, its `.pth` files).

    Args:
        directory: Where to create it (must not exist yet, or be empty).
        leave_out: Distributions to leave out even where torch declares them (`OPTIONAL_TOOLS`).
    """
    venv.create(directory, with_pip=False, symlinks=True)
    site = Path(sysconfig.get_path("purelib", "venv", vars={"base": str(directory), "platbase": str(directory)}))
    held = []
    for name in requirement_closure(leave_out=leave_out):
        distribution = importlib.metadata.distribution(name)
        held.append(f"{name} {distribution.version}")
        tops = {file.parts[0] for file in distribution.files or () if file.parts[0] not in {"..", "__pycache__"}}
        if not tops:
            raise RuntimeError(f"{name} lists no files (no RECORD): it cannot be linked")
        for top in sorted(tops):
            (site / top).symlink_to(Path(str(distribution.locate_file(top))).resolve())
    return TorchOnly(directory, tuple(held))
