"""The install line of a lab: the pinned versions, from requirements.txt, of the packages it imports."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import packages_distributions

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

__all__ = ["imported_distributions", "install_line", "pins"]

_COMMENT = re.compile(r"(^|\s)#.*$")
"""pip's rule: `#` starts a comment at the start of a line or after white space."""


def _requirement_lines(requirements: str) -> Iterator[str]:
    """The requirement lines of a requirements file: continuations joined, comments and pip's options left out."""
    joined = re.sub(r"\\\n", "", requirements)
    for line in joined.splitlines():
        text = _COMMENT.sub("", line).strip()
        if text and not text.startswith("-"):  # `-r other.txt`, `--index-url ...`, `-e .`
            yield text.split(" --", 1)[0].strip()  # a line's own options (`--hash=...`)


def pins(requirements: str) -> dict[str, str]:
    """Every exact pin (`name==version`) of a requirements file that applies here, by normalised distribution name.

    Lines are read as pip reads them, by `packaging`: white space around `==` is allowed, extras are
    kept (`name[extra]==1.0`), and a pin whose environment marker (`; python_version < "3.12"`)
    does not hold for this interpreter is left out, its marker never copied into the install line.
    A range, a wildcard (`==1.*`) or a line that is no requirement (a path, a typo) is not a pin.
    """
    found: dict[str, str] = {}
    for line in _requirement_lines(requirements):
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or specifiers[0].version.endswith(".*"):
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        found[canonicalize_name(requirement.name)] = f"{requirement.name}{extras}=={specifiers[0].version}"
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
        distributions.update(canonicalize_name(owner) for owner in owners[module])
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
