"""The package's boundaries, read from its source: only `plugin/` imports the documentation engine's world,
and no module imports itself back at run time."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "pytorch_floors"
ENGINE_WORLD = {"mkdocs", "markdown", "markdown_exec", "pymdownx", "material", "mkdocs_jupyter", "properdocs"}
"""What only the plugin may import: the static-site engine, its Markdown and its plugins."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, module: str, *, runtime_only: bool, in_functions: bool = False) -> set[str]:
    """Every module `tree` imports; with `runtime_only`, only those imported when the module loads.

    `in_functions` adds, to the `runtime_only` ones, those a function imports when it runs (never the
    imports only a type checker reads).
    """
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and runtime_only:
                continue
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if function and runtime_only and not in_functions:
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                # The package imports absolutely (`from pytorch_floors.x import y`): a relative one would hide here.
                assert child.level == 0, f"{module}:{child.lineno}: a relative import"
                found.add(child.module or "")
                found.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child)

    visit(tree)
    return found


def _sources() -> dict[str, ast.Module]:
    return dict(_parsed_sources())


@functools.cache
def _parsed_sources() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package by its dotted name, parsed once per test process (nothing edits the trees)."""
    return tuple(
        (_module_name(path), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
    )


def test_only_the_plugin_imports_the_engines_world() -> None:
    sources = _sources()
    assert "pytorch_floors.plugin.plugin" in sources and "pytorch_floors.execution.engine" in sources
    leaks = {
        module: sorted(
            name for name in _imports(tree, module, runtime_only=False) if name.split(".")[0] in ENGINE_WORLD
        )
        for module, tree in sources.items()
        if not module.startswith("pytorch_floors.plugin")
    }
    leaks = {module: names for module, names in leaks.items() if names}
    assert leaks == {}, f"only pytorch_floors.plugin may import {sorted(ENGINE_WORLD)}: {leaks}"
    # The check can see an import: the plugin has them.
    plugin_imports = _imports(
        sources["pytorch_floors.plugin.plugin"], "pytorch_floors.plugin.plugin", runtime_only=False
    )
    assert any(name.startswith("mkdocs") for name in plugin_imports)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _runtime_graph(sources: dict[str, ast.Module]) -> dict[str, set[str]]:
    return {
        module: {name for name in _imports(tree, module, runtime_only=True) if name in sources and name != module}
        for module, tree in sources.items()
    }


def test_no_module_imports_itself_back_at_run_time() -> None:
    graph = _runtime_graph(_sources())
    assert sum(len(targets) for targets in graph.values()) > len(graph), "the graph holds the package's imports"
    assert _cycle(graph) is None, f"an import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_no_module_imports_itself_back_even_inside_a_function() -> None:
    # An import inside a function runs too: i18n.translation imported i18n.check in its command, and
    # i18n.check imports i18n.translation, a circle the module-level check did not see.
    sources = _sources()
    graph = {
        module: {
            name
            for name in _imports(tree, module, runtime_only=True, in_functions=True)
            if name in sources and name != module
        }
        for module, tree in sources.items()
    }
    assert _cycle(graph) is None, f"an import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_collecting_the_tests_loads_no_browser_driver_notebook_library_or_mkdocs() -> None:
    """Every pytest process (each worker, each phase) imports conftest; what only some tests need waits for them."""
    probe = (
        "import sys; sys.path.insert(0, 'tests'); import conftest; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'playwright', 'nbformat', 'mkdocs', 'torch'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- the engine is built complete ---------------------------------------------------------------

MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "sort", "__setitem__"}
"""Methods that change a list or dictionary in place: called on an engine's attribute, they change its state."""


def _is_engine(node: ast.expr) -> bool:
    """`engine`, `self.engine`, `build.engine`, `proofs_engine`: an expression naming an engine."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower().endswith("engine")


def _engine_state(node: ast.expr) -> bool:
    """`engine.x`, `engine.x[...]`, `engine.x.y`: a place in an engine's state."""
    while isinstance(node, ast.Subscript | ast.Starred):
        node = node.value
    while isinstance(node, ast.Attribute):
        if _is_engine(node.value):
            return True
        node = node.value
    return False


def engine_changes(source: str) -> list[int]:
    """The lines of `source` that assign to an engine's attribute or change one in place."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [
                t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])
            ]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            targets = [node.func.value] if not _is_engine(node.func.value) else []
        if any(_engine_state(target) for target in targets):
            lines.append(targets[0].lineno)
    return sorted(lines)


def test_the_engine_is_built_complete_and_changed_only_through_its_methods() -> None:
    # The build set the engine's state in seven places after building it (execute, known_failures,
    # report_failure, on_progress, twins, records[:], failures.extend): a constructor argument or a method now.
    changes = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "execution"
        and (found := engine_changes(path.read_text(encoding="utf-8")))
    }
    assert changes == {}, f"outside execution/, code changes an engine's state (file: lines): {changes}"


def test_the_engine_check_sees_each_way_of_changing_its_state() -> None:
    source = (
        "self.engine.execute = False\n"
        "engine.twins[page] = english\n"
        "self.engine.records[:] = records\n"
        "self.engine.failures.extend(kept)\n"
        "engine.on_progress, x = None, 1\n"
        "engine.record(result)\n"  # its own method: allowed
        "engine.planned.get(page)\n"  # reading: allowed
        "known = engine.known_failures\n"
    )
    assert engine_changes(source) == [1, 2, 3, 4, 5]


def test_the_engine_keeps_its_shared_lists_in_place() -> None:
    # Others hold the engine's lists (the labs' launch settings read `records` as pages render):
    # `fail_shown` rebound `self.records` to a new list, so a holder kept the failed block's old record.
    engine = ast.parse((PACKAGE / "execution" / "engine.py").read_text(encoding="utf-8"))
    rebound = [
        f"{function.name}:{node.lineno}"
        for function in ast.walk(engine)
        if isinstance(function, ast.FunctionDef) and function.name != "__init__"
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
        and target.attr in {"records", "failures", "planned"}
    ]
    assert rebound == [], f"the engine rebinds a list others hold (change it in place): {rebound}"


# --- the plugin stays small ----------------------------------------------------------------------

MAX_CLASS_LINES = 300
MAX_MODULE_LINES = 500


def oversized(root: Path) -> list[str]:
    """The modules under `root` over `MAX_MODULE_LINES` lines and the classes over `MAX_CLASS_LINES`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES:
            found.append(f"{name}: {lines} lines")
        for node in (node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)):
            if (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_CLASS_LINES:
                found.append(f"{name}: class {node.name}, {length} lines")
    return found


def test_the_plugin_is_split_by_concern_into_small_parts() -> None:
    # plugin/build.py was 970 lines, SiteBuild 800 of them: one part per concern now (plugin/parts/).
    assert oversized(PACKAGE / "plugin") == [], (
        f"split by concern (plugin/parts/): no module in plugin/ over {MAX_MODULE_LINES} lines, "
        f"no class over {MAX_CLASS_LINES}"
    )


def test_the_size_check_sees_a_long_class_and_a_long_module(tmp_path: Path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(MAX_CLASS_LINES))
    (tmp_path / "long_class.py").write_text(f"class Long:\n{body}", encoding="utf-8")
    (tmp_path / "long_module.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "short.py").write_text("class Short:\n    x = 1\n", encoding="utf-8")
    assert oversized(tmp_path) == [
        f"long_class.py: class Long, {MAX_CLASS_LINES + 1} lines",
        f"long_module.py: {MAX_MODULE_LINES + 1} lines",
    ]
