"""The install line of a lab: the pinned versions, from requirements.txt, of the packages it imports."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from importlib.metadata import packages_distributions

__all__ = ["imported_distributions", "install_line", "pins"]

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)==(?P<version>\S+)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(requirements: str) -> dict[str, str]:
    """Every `name==version` line of a requirements file, by normalised distribution name."""
    found = {}
    for line in requirements.splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[_normalise(match["name"])] = f"{match['name']}=={match['version']}"
    return found


def imported_distributions(source: str, owners: Mapping[str, list[str]] | None = None) -> list[str]:
    """The distributions (normalised names, sorted) whose modules `source` imports, standard library left out.

    Args:
        source: Python source.
        owners: `importlib.metadata.packages_distributions()`, if the caller has it already (it takes
            about half a second to compute).

    Raises:
        LookupError: A module that belongs to no installed distribution.
    """
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    owners = packages_distributions() if owners is None else owners
    distributions: set[str] = set()
    for module in sorted(modules - set(sys.stdlib_module_names)):
        if module not in owners:
            raise LookupError(f"module {module!r} belongs to no installed distribution")
        distributions.update(_normalise(owner) for owner in owners[module])
    return sorted(distributions)


def install_line(source: str, requirements: str, owners: Mapping[str, list[str]] | None = None) -> str:
    """`pip install` with the pinned version of every distribution a lab's code imports.

    Args:
        source: The lab's source (a percent-format script is plain Python).
        requirements: The text of the project's requirements.txt.
        owners: `importlib.metadata.packages_distributions()`, if the caller has it already.

    Raises:
        LookupError: The lab imports a package that requirements.txt does not pin.
    """
    pinned = pins(requirements)
    wanted = imported_distributions(source, owners)
    missing = [name for name in wanted if name not in pinned]
    if missing:
        raise LookupError(f"the lab imports {', '.join(missing)}, which requirements.txt does not pin")
    return "pip install " + " ".join(pinned[name] for name in wanted)
