"""Package attributes imported on first use, so importing a package costs only what is used.

A proof's worker imports `pytorch_floors` (and the fork server `pytorch_floors.execution`):
they must get torch and nothing more, not MkDocs, Markdown and Jinja through the package's
re-exports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """Make a module `__getattr__` that imports each name from its module when first asked for.

    Args:
        package: The package's `__name__` (for the error message).
        table: Exported name -> the module that defines it.

    Returns:
        The `__getattr__` function.
    """

    def attribute(name: str) -> Any:
        if name in table:
            return getattr(importlib.import_module(table[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return attribute
