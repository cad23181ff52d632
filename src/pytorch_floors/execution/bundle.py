"""Make a proof's download run on its own: with only torch and numpy installed, no `pytorch_floors`.

Proofs import their helpers from this package (`from pytorch_floors.measure import time_call`), so
that every page times and draws the same way. A reader who downloads one proof does not have the
package. [`bundle`][pytorch_floors.execution.bundle.bundle] writes the file behind each download link:
the proof, unchanged, with the helper modules it imports carried inside it as source text and
registered in `sys.modules` before the proof's own code runs. The proof's imports then resolve
to that embedded copy; nothing is renamed, so no name in the proof can clash with a helper's.

Only the proof's own process has that copy. A process it starts (`subprocess.run([sys.executable, "-c",
CHILD])`) is a fresh interpreter with only what the reader installed, so a proof whose child code imports
the package cannot be bundled: its child must use torch alone.
"""

from __future__ import annotations

import ast
import textwrap
from functools import lru_cache
from pathlib import Path

from pytorch_floors.errors import FloorsError

__all__ = ["BundleError", "bundle", "helper_modules"]

PACKAGE = "pytorch_floors"


class BundleError(FloorsError, ValueError):
    """A proof imports something from the package that cannot travel with it."""


def helper_modules(source: str, filename: str) -> list[str]:
    """The `pytorch_floors` submodules a proof imports, in first-use order (e.g. `["measure", "plot"]`).

    Args:
        source: The proof's source text.
        filename: Its path, for error messages.

    Raises:
        BundleError: If the proof imports the package itself or a name that is not a submodule's.
    """
    return list(_helper_modules(source, filename))


def _parse(source: str, filename: str) -> ast.Module:
    """Parse a proof, or say in one line which file and line is not Python."""
    try:
        return ast.parse(source, filename)
    except SyntaxError as error:
        raise BundleError(f"{filename}:{error.lineno or 0}: the proof is not valid Python: {error.msg}") from None


def _imported_names(node: ast.AST) -> list[str]:
    """The dotted names of the package that an import statement imports (none for any other node)."""
    if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE:
        return [node.module]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE]
    return []


@lru_cache(maxsize=256)
def _helper_modules(source: str, filename: str) -> tuple[str, ...]:
    # Every proof's bundle parses the same few helpers again: their source text is the key.
    found: list[str] = []
    tree = _parse(source, filename)
    for node in ast.walk(tree):
        for name in _imported_names(node):
            parts = name.split(".")
            if len(parts) != 2:
                raise BundleError(
                    f"{filename}:{getattr(node, 'lineno', 0)}: import a helper module ('from {PACKAGE}.measure "
                    f"import ...'), not '{name}', so the download can carry it"
                )
            if parts[1] not in found:
                found.append(parts[1])
    _refuse_child_imports(tree, filename)
    return tuple(found)


def _refuse_child_imports(tree: ast.Module, filename: str) -> None:
    """Refuse a string of the proof that is Python importing the package: the code of a process it starts.

    The download carries the helpers in its own process only; a child interpreter started with that
    code finds no `pytorch_floors` on a reader's machine, though it finds the project's in the build's.
    """
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and PACKAGE in node.value):
            continue
        try:
            code = ast.parse(textwrap.dedent(node.value))
        except (SyntaxError, ValueError):  # prose, or not Python: no process runs it
            continue
        if any(_imported_names(statement) for statement in ast.walk(code)):
            raise BundleError(
                f"{filename}:{node.lineno}: this string is Python that imports {PACKAGE}; a process the proof "
                "starts with it has only what the reader installed (the download carries the helpers in its own "
                "process only): give the child code that needs torch alone"
            )


def _header_end(tree: ast.Module) -> int:
    """The last line of the proof's docstring and `from __future__` imports, which must stay first."""
    end = 0
    for statement in tree.body:
        is_docstring = (
            end == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        is_future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if not (is_docstring or is_future):
            break
        end = statement.end_lineno or statement.lineno
    return end


def bundle(source: str, filename: str, package_dir: Path) -> str:
    """The proof's source as a single file that runs without `pytorch_floors` installed.

    A proof that imports nothing from the package is returned unchanged.

    Args:
        source: The proof's source text.
        filename: Its path, for error messages.
        package_dir: The directory of this package, where the helper modules' sources are read.

    Returns:
        The proof with its helpers embedded after its docstring and `__future__` imports.

    Raises:
        BundleError: If the proof imports what cannot be bundled, or a helper itself imports
            another part of the package (helpers must stand alone).
    """
    modules = helper_modules(source, filename)
    if not modules:
        return source
    lines = source.splitlines(keepends=True)
    split = _header_end(_parse(source, filename))
    embedded = []
    for name in modules:
        path = package_dir / f"{name}.py"
        helper = path.read_text(encoding="utf-8")
        if helper_modules(helper, str(path)):
            raise BundleError(f"{path}: a helper that proofs import must not import {PACKAGE} itself")
        embedded.append(f"_floors_module({f'{PACKAGE}.{name}'!r}, {helper!r})\n")
    preamble = (
        "\n# --- Helpers from the pytorch_floors package, carried inside this download so that it runs\n"
        "# --- with only torch (and numpy) installed. The proof itself starts after the next marker.\n"
        "import sys as _floors_sys\n"
        "import types as _floors_types\n\n\n"
        "def _floors_module(name: str, source: str) -> None:\n"
        "    module = _floors_types.ModuleType(name)\n"
        "    module.__file__ = __file__\n"
        "    _floors_sys.modules[name] = module\n"
        "    exec(compile(source, f'<{name}>', 'exec'), module.__dict__)\n\n\n"
        f"_floors_module({PACKAGE!r}, '')\n" + "".join(embedded) + "# --- The proof.\n"
    )
    return "".join(lines[:split]) + preamble + "".join(lines[split:])
