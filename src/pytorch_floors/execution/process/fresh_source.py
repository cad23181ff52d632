"""A block imports the project's modules from their source as it is now, never from a bytecode cache.

Python trusts a module's cached bytecode (`__pycache__/*.pyc`) while its source keeps the modification time, in
whole seconds, and the size the cache recorded. The engine decides from the sources' content whether a block
must run again (`imports.sources_digest`), so a helper edited twice within one second, to text of the same
length (`SCALE = 2` to `SCALE = 3`), made the block run again with the old code, and cached that output under
the new source. The interpreter's own packages and those of its environment keep their caches: they do not
change under a build, and torch alone compiles for seconds.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable
from importlib.abc import PathEntryFinder
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)
from types import CodeType

__all__ = ["SourceOnlyLoader", "import_project_modules_from_source"]


class SourceOnlyLoader(SourceFileLoader):
    """Compiles the module from its source each time it is imported, and writes no cache."""

    def get_code(self, fullname: str) -> CodeType:
        """The module's code, compiled from its source file as it is now."""
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _installed() -> tuple[str, ...]:
    """The folders the interpreter's and its environment's own packages are imported from."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    folders |= {path for name in ("stdlib", "platstdlib", "purelib", "platlib") if (path := sysconfig.get_path(name))}
    return tuple(os.path.join(os.path.realpath(folder), "") for folder in folders)


def _path_hook(installed: tuple[str, ...]) -> Callable[[str], PathEntryFinder]:
    """A `sys.path_hooks` entry: for a folder outside `installed`, a finder whose Python modules load from source."""
    finder_for = FileFinder.path_hook(
        (ExtensionFileLoader, EXTENSION_SUFFIXES),
        (SourceOnlyLoader, SOURCE_SUFFIXES),
        (SourcelessFileLoader, BYTECODE_SUFFIXES),
    )

    def project_finder(entry: str) -> PathEntryFinder:
        folder = os.path.join(os.path.realpath(entry or os.getcwd()), "")
        if not os.path.isdir(folder) or folder.startswith(installed):
            raise ImportError(f"{entry!r} is left to the standard finders")
        return finder_for(entry)

    return project_finder


def import_project_modules_from_source() -> None:
    """From now on in this process, modules outside the interpreter's installation import from their source."""
    sys.path_hooks.insert(0, _path_hook(_installed()))
    sys.path_importer_cache.clear()  # each folder on the path asks the hooks again, this one first
