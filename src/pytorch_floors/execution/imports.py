"""Which of the project's own source files a block depends on, found by following its imports.

The cache key used to hash the whole package, so a style edit in `gauge.py` re-ran every
proof. A block's output can only change with the project files it (transitively) imports:
those are found statically, by reading `import` statements, and hashed.
"""

from __future__ import annotations

import ast
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["local_imports", "sources_digest"]

_T = TypeVar("_T")


class _PerFile(Generic[_T]):
    """What `compute` makes of a file's current version, remembered per file, for at most `size` files.

    An edited file replaces its entry (its modification time says it changed) instead of adding
    one, so `mkdocs serve` rebuilding after every edit holds one entry per file, never one per edit;
    past `size` files the least recently used go.
    """

    def __init__(self, compute: Callable[[Path, str], _T], size: int = 4096) -> None:
        self._compute = compute
        self._size = size
        self._entries: OrderedDict[tuple[Path, str], tuple[int, _T]] = OrderedDict()

    def __call__(self, path: Path, package: str = "") -> _T:
        mtime_ns = path.stat().st_mtime_ns
        key = (path, package)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == mtime_ns:
            self._entries.move_to_end(key)
            return entry[1]
        value = self._compute(path, package)
        self._entries[key] = (mtime_ns, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every file."""
        self._entries.clear()


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` except those under `if TYPE_CHECKING:`, which never run."""
    nodes, pending = [], [tree]
    while pending:
        node = pending.pop()
        nodes.append(node)
        children = node.orelse if _is_type_checking(node) else ast.iter_child_nodes(node)  # type: ignore[attr-defined]
        pending.extend(children)
    return nodes


def _lazy_names(tree: ast.AST) -> dict[str, str]:
    """A package's `_LAZY = {"name": "module"}` table: names it imports on first use."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            value = ast.literal_eval(node.value)
            if isinstance(value, dict):
                return {str(k): str(v) for k, v in value.items()}
    return {}


def _imported_names(tree: ast.AST, package: str) -> set[str]:
    """Absolute names of the modules a source file imports (`from . import x` resolved against `package`)."""
    names: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base:
                names.add(base)
                # `from package import module` imports a module, not only a name: try both.
                names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _module_file(name: str, roots: tuple[Path, ...]) -> Path | None:
    relative = Path(*name.split("."))
    for root in roots:
        for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _parse_file(path: Path, _package: str) -> ast.AST:
    return _tree(path.read_text(encoding="utf-8"))


_parsed = _PerFile(_parse_file)


def _imports_of_file(path: Path, package: str) -> frozenset[str]:
    # Every block of a page imports the same helpers: walking their trees once per file, not once
    # per block, took a warm build's import scan from about a second to a few milliseconds.
    return frozenset(_imported_names(_parsed(path), package))


_file_imports = _PerFile(_imports_of_file)


def _tree(code: str) -> ast.AST:
    try:
        return ast.parse(code)
    except SyntaxError:
        # The block fails with this error when it runs; its key only needs to be stable meanwhile.
        return ast.Module(body=[], type_ignores=[])


def local_imports(code: str, roots: tuple[Path, ...]) -> list[Path]:
    """The files under `roots` that `code` imports, directly or through each other.

    Packages count with their `__init__.py` (importing `a.b` runs `a/__init__.py` too).
    Imports are read, not run: a module imported by name in a string (`importlib`) is not seen.

    Args:
        code: A block's source (or several, one after another).
        roots: Directories that modules are imported from (the project's `src/`, the project itself).

    Returns:
        The files, sorted.
    """
    found: set[Path] = set()
    pending = [(name, "") for name in _imported_names(_tree(code), "")]
    seen: set[str] = set()
    while pending:
        name, _ = pending.pop()
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            module = ".".join(parts[:depth])
            if module in seen:
                continue
            seen.add(module)
            path = _module_file(module, roots)
            if path is None:
                # `from package import name`: a lazily imported name resolves through the package's table.
                parent = _module_file(".".join(parts[: depth - 1]), roots) if depth > 1 else None
                lazy = _lazy_names(_parsed(parent)) if parent else {}
                if parts[depth - 1] in lazy:
                    pending.append((lazy[parts[depth - 1]], ""))
                continue
            if path in found:
                continue
            found.add(path)
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            pending.extend((imported, package) for imported in _file_imports(path, package))
    return sorted(found)


def sources_digest(code: str, roots: tuple[Path, ...]) -> str:
    """Hash of the project files a block imports (names and contents).

    Args:
        code: A block's source.
        roots: Directories that modules are imported from.

    Returns:
        A hex digest; the same as long as none of those files changes.
    """
    digest = hashlib.sha256()
    for path in local_imports(code, roots):
        # Relative names: the same checkout moved elsewhere (a CI runner, a copy) keeps its keys.
        relative = next(path.relative_to(root) for root in roots if path.is_relative_to(root))
        digest.update(relative.as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
