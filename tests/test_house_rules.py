"""CONTRIBUTING's rules of the house, each read from the package's source so that breaking one fails here.

One Jinja environment; settings read through `pytorch_floors.settings` alone, with one vocabulary for
on and off; every exception the domain raises a `FloorsError`; packages layered without a cycle;
and the private names of other tools the plugin relies on, checked so that an upgrade that renames
one fails a test instead of the build. (`test_architecture.py` holds the import boundaries.)
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.page_facts import page_facts
from pytorch_floors.render.templates import environment
from pytorch_floors.settings import OTHER_PARSERS, PARSERS, SWITCH_OFF, SWITCH_ON, switch

PACKAGE = ROOT / "src" / "pytorch_floors"

CHANNELS = {
    "FLOORS_CLAIMS_FILE": "claims.py: where a proof appends its claims; a downloaded proof carries claims.py alone",
    "FLOORS_OUTPUT": "plot.py: whether a proof's chart is wanted as HTML; downloaded proofs carry plot.py alone",
    "FLOORS_RANKS_START_METHOD": "ranks.py: how a block's ranks start (the build's start method), set by the engine "
    "for each block; a downloaded proof carries ranks.py alone",
    "FLOORS_BLOCK_DEADLINE": "ranks.py: when a block's limit ends, set by the engine for each block, so that run_ranks "
    "ends first and names a rank that hung; a downloaded proof carries ranks.py alone",
    "FLOORS_PROJECT_DIR": "labs/kernel.py: the project a lab's kernel runs in, set by the build for its kernel",
    "FLOORS_SERVE_BACKGROUND": "plugin/serve/background.py: marks the session's background build, set by the session",
    "FLOORS_SERVE_SIGNALS": "plugin/serve/background.py: the session's signal folder, set by the session for its build",
}
"""Variables that carry a message from one of the package's processes to another, not a reader's setting."""

OWN_EXCEPTIONS = {
    "ClaimFormatError": "claims.py travels alone inside every downloaded proof (standard library only), so it "
    "imports nothing of the package; its readers (recordings.schema, the engine) raise it on as a FloorsError",
    "NotFilled": "labs/checker.py: a lab's check the student has not filled in; an AssertionError, as notebooks report",
    "WrongAnswer": "labs/checker.py: a student's wrong answer; an AssertionError, as notebooks report",
    "_OutputLimitReached": "execution/process/worker.py: a BaseException so that a proof's `except Exception` "
    "cannot swallow the output limit",
    "RankFailed": "ranks.py travels alone inside a downloaded proof that starts ranks (standard library and torch "
    "only); a rank's failure is the proof's own error, as a raised exception in a block is",
    "_Found": "render/splice.py: ends the HTML parser's pass at the first match; never raised past the module",
}
"""Exception classes that are deliberately not refusals of the site's rules, and why."""


def _modules() -> Iterator[tuple[str, ast.Module]]:
    yield from _parsed_modules()


@functools.cache
def _parsed_modules() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, parsed once per test process (some fifteen rules read them; nothing edits them)."""
    return tuple(
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
    )


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments: a variable's name is often kept in one."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    found[target.id] = node.value.value
    return found


def environment_reads(tree: ast.Module) -> list[tuple[int, str]]:
    """Each `FLOORS_*` variable the module reads from the environment, and the line.

    A read is `os.environ.get(NAME)`, `os.getenv(NAME)`, `os.environ[NAME]` (not as a target),
    `environ.get(NAME)` on any mapping named `environ`/`env`/`source`, or `NAME in os.environ`, where
    NAME is a string or a module constant holding one.
    """
    constants = _constants(tree)

    def name_of(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    def is_environment(node: ast.expr) -> bool:
        text = ast.unparse(node)
        return text in {"os.environ", "environ", "source", "env"}

    reads = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            getter = isinstance(func, ast.Attribute) and func.attr == "get" and is_environment(func.value)
            if getter or ast.unparse(func) == "os.getenv":
                name = name_of(node.args[0])
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environment(node.value):
            name = name_of(node.slice)
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
            name = name_of(node.left) if any(is_environment(c) for c in node.comparators) else None
        if name is not None and name.startswith("FLOORS_"):
            reads.append((getattr(node, "lineno", 0), name))
    return reads


def test_settings_are_read_only_through_the_settings_module() -> None:
    """A `FLOORS_*` setting has one parser and one reader (`settings.read`); only channels are read directly."""
    elsewhere = {
        f"{path}:{line} reads {name}"
        for path, tree in _modules()
        if path != "settings.py"
        for line, name in environment_reads(tree)
        if name not in CHANNELS
    }
    assert elsewhere == set(), "read these through pytorch_floors.settings.read (or name the channel in CHANNELS)"
    assert not set(CHANNELS) & (set(PARSERS) | set(OTHER_PARSERS)), "a variable is a setting or a channel, not both"


SETTINGS_READERS = {
    "settings.py": "the one parser and reader",
    "plugin/config.py": "the plugin's adapter: reads every setting a build needs once, into `Settings`",
    "__main__.py": "the command line's adapter: reads the settings a verb needs and hands the verb their values",
    "execution/process/runner.py": "FLOORS_START_METHOD chooses this process's multiprocessing context, one per "
    "process and made at its first block, which every engine of the process shares (a build's, make record's)",
}
"""Modules that may call `pytorch_floors.settings`' readers, and why; every other module is handed the value."""

_READERS = {"read", "read_text", "from_environment", "environment_value"}


def settings_reads(tree: ast.Module) -> list[int]:
    """The lines that call one of `pytorch_floors.settings`' readers (`read_text("FLOORS_EDITION")`)."""
    local: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "pytorch_floors.settings":
            local |= {alias.asname or alias.name for alias in node.names if alias.name in _READERS}
        elif isinstance(node, ast.ImportFrom) and node.module == "pytorch_floors":
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "settings"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "pytorch_floors.settings"}
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in local)
            or (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in _READERS
                and ast.unparse(node.func.value) in modules
            )
        )
    )


def test_settings_are_read_by_the_two_adapters_and_handed_to_everything_else() -> None:
    """Seven modules read a setting on their own (`render/headings.py` and `render/citation.py` both read
    `FLOORS_EDITION`): the plugin reads them into `Settings`, the command line for its verb, and passes the values."""
    found = {
        path: lines for path, tree in _modules() if path not in SETTINGS_READERS and (lines := settings_reads(tree))
    }
    assert found == {}, (
        f"take the value as an argument (Settings, or the command line's), or say why in SETTINGS_READERS: {found}"
    )


def test_the_settings_readers_check_sees_each_way_of_calling_one() -> None:
    source = (
        "from pytorch_floors.settings import read_text as rt, switch\nfrom pytorch_floors import settings\n"
        'a = rt("FLOORS_EDITION")\nb = settings.read("FLOORS_EXEC")\nc = switch("on")\nd = other.read("x")\n'
    )
    assert settings_reads(ast.parse(source)) == [3, 4], "a parser is not a reader"


ENVIRONMENT_USERS = {
    "settings.py": "the settings' one reader",
    "plugin/config.py": "the plugin's adapter: reads the settings into Settings",
    "__main__.py": "the command line's adapter: reads the settings a verb needs",
    "claims.py": "the FLOORS_CLAIMS_FILE channel (CHANNELS)",
    "plot.py": "the FLOORS_OUTPUT channel (CHANNELS)",
    "compiling.py": "sets Inductor's cache folder for one compile in a proof's process, and puts it back",
    "ranks.py": "the FLOORS_RANKS_START_METHOD channel (CHANNELS); a rank's own MASTER_ADDR, RANK, ... as torchrun's",
    "editions/publish.py": "hands mike's build the environment, with the edition's settings added",
    "execution/cache.py": "OMP_NUM_THREADS and MKL_NUM_THREADS are part of the machine a result was measured on",
    "execution/process/runner.py": "starts the fork server with a block's environment instead of the build's; "
    "FLOORS_START_METHOD (SETTINGS_READERS)",
    "execution/process/sandbox.py": "the few variables a block is given, taken from the build's",
    "execution/process/worker.py": "a block's process takes the environment it was sent",
    "execution/secrets.py": "the build's secrets, so that an output holding one is refused",
    "labs/kernel.py": "a kernel's environment, from the build's; the FLOORS_PROJECT_DIR channel",
    "plugin/parts/labs.py": "sets nbconvert's variables for the build and puts them back",
    "plugin/parts/serving.py": "the serve channels (a background build's signals)",
    "plugin/plugin.py": "the serve channels (CHANNELS)",
    "plugin/serve/background.py": "the background build's environment: the session's, with its channels",
    "tiers/confine.py": "a tier's variables, set for the run and put back",
    "tiers/copies.py": "a neighbour's build's environment",
    "tiers/python.py": "PYENV_ROOT, where pyenv keeps the Python a tier asks for; the environment that makes a venv",
}
"""Modules that touch the process's environment, and why; every other module is handed what it needs."""


def uses_environment(tree: ast.Module) -> bool:
    """Whether a module reads or changes `os.environ` (or `os.getenv`, or imports `environ` from `os`)."""
    return any(
        (isinstance(node, ast.Attribute) and ast.unparse(node) in {"os.environ", "os.getenv"})
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in {"environ", "getenv"} for a in node.names)
        )
        for node in ast.walk(tree)
    )


def test_the_environment_is_read_where_a_reason_is_given() -> None:
    """A module that reads the environment on its own is named with its reason (a setting goes through Settings)."""
    found = {path for path, tree in _modules() if uses_environment(tree)}
    assert found - set(ENVIRONMENT_USERS) == set(), "take the value as an argument, or say in ENVIRONMENT_USERS why not"
    assert set(ENVIRONMENT_USERS) - found == set(), "no longer touches the environment: drop it from ENVIRONMENT_USERS"


def test_the_settings_check_sees_each_way_of_reading_a_variable() -> None:
    source = (
        'import os\nNAME = "FLOORS_X"\n'
        'a = os.environ.get("FLOORS_A")\nb = os.getenv("FLOORS_B")\nc = os.environ["FLOORS_C"]\n'
        'd = "FLOORS_D" in os.environ\ne = os.environ.get(NAME)\nos.environ["FLOORS_W"] = "1"\n'
    )
    found = {name for _, name in environment_reads(ast.parse(source))}
    assert found == {"FLOORS_A", "FLOORS_B", "FLOORS_C", "FLOORS_D", "FLOORS_X"}, "a write is not a read"


def test_on_and_off_have_one_vocabulary() -> None:
    """`FLOORS_EXEC=yes` and `exec="yes"` mean the same: one set of words for both."""
    for word in SWITCH_ON | SWITCH_OFF:
        assert switch(word) is (word in SWITCH_ON)
        assert switch(word.upper()) is (word in SWITCH_ON)
        BlockOptions.parse({"exec": word, "id": "x"})
    with pytest.raises(ValueError, match="expected on or off"):
        switch("maybe")


def jinja_environments(tree: ast.Module) -> list[int]:
    """The lines that construct a Jinja `Environment`."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in {"Environment", "jinja2.Environment"}
    ]


def test_the_package_has_one_jinja_environment() -> None:
    made = {path: lines for path, tree in _modules() if (lines := jinja_environments(tree))}
    assert list(made) == ["render/templates.py"], f"one environment, render/templates.py's (overridable): {made}"


HTML_WRITERS = {
    "plot.py": "the charts: hand-written SVG is the product there",
    "recordings/tabs.py": "finds a figure's text parts in output that recordings.html.allowed_html wrote again in one "
    'fixed shape (`<pre class="floors-output"><code>`), never in a recording\'s own markup; the marks are a template',
    "render/output_lines.py": "finds a figure's text parts in the one shape plot.show and allowed_html write them "
    '(`<pre class="floors-output"><code>`, a marked line `<span class="hll">`) to write them again line by line from '
    "output_text.html",
    "editions/verify.py": "reads a built site: the strings are what it looks for in pages, not what it writes",
    "execution/scan.py": "reads a page's Markdown source: an HTML comment around a fence is refused, not written",
    "labs/cells.py": "reads a lab's source: an exercise's heading names its anchor as `<a id>`",
    "i18n/sections.py": "reads a page's source: a heading's anchor written as `<a id>`",
    "plugin/serve/changes.py": "reads a page's source for its title (a Markdown `# ` or an `<h1>`)",
    "render/headings.py": "HEADING reads the rendered h2-h4 and their ids (anchors.lock, the site's anchors); the "
    "controls go into the headings through render.splice",
}
"""Modules that may hold HTML in Python strings or rewrite it with a regular expression, and why; everything
else renders a template (`render.templates`) and puts it into a page where `render.splice` finds the place."""

_TAG = re.compile(
    r"</?(?:a|p|div|span|h[1-6]?|br|meta|link|code|strong|em|li|ol|ul|nav|details|summary|table|tr|td|th|pre|"
    r"section|article|figure|figcaption|svg|label|input|img|button|script|style|head|body|html|main|header|footer|"
    r"aside|title|textarea|form|blockquote|caption|thead|tbody|wbr)(?![A-Za-z0-9-])"
)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string statements (docstrings, attribute docs): words about HTML, not HTML."""
    return {
        id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def html_in_strings(tree: ast.Module) -> list[int]:
    """The lines of strings whose literal text opens or closes a tag (`"<head>"`, `f"<h{level}>"`, `"</h1>"`)."""
    words = _docstrings(tree)
    return sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and id(node) not in words
            and isinstance(node.value, str)
            and _TAG.search(node.value)
        }
    )


def html_rewrites(tree: ast.Module) -> list[int]:
    """The lines that rewrite HTML with a regular expression: a `sub` whose pattern holds a tag."""
    compiled: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call) and statement.value.args:
            first = statement.value.args[0]
            if ast.unparse(statement.value.func) == "re.compile" and isinstance(first, ast.Constant):
                compiled |= {t.id: str(first.value) for t in statement.targets if isinstance(t, ast.Name)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"sub", "subn"}:
            owner = node.func.value
            pattern = ""
            if isinstance(owner, ast.Name) and owner.id in compiled:
                pattern = compiled[owner.id]
            elif ast.unparse(owner) == "re" and node.args and isinstance(node.args[0], ast.Constant):
                pattern = str(node.args[0].value)
            if _TAG.search(pattern):
                found.add(node.lineno)
    return sorted(found)


def test_html_is_built_in_templates_not_in_python_strings() -> None:
    """One Jinja environment renders the package's HTML (autoescaped); Python hands it plain data, and
    `render.splice` says where in a page a rendered fragment goes. Six modules spliced strings into rendered
    HTML (`"</h1>" + box`, `"<head>"`) and three rewrote it with regular expressions."""
    found = {
        path: lines
        for path, tree in _modules()
        if path not in HTML_WRITERS and (lines := sorted({*html_in_strings(tree), *html_rewrites(tree)}))
    }
    assert found == {}, (
        f"render these through a template in render/templates/ and place them with render.splice "
        f"(or say in HTML_WRITERS why not): {found}"
    )
    needed = {path for path, tree in _modules() if html_in_strings(tree) or html_rewrites(tree)}
    assert set(HTML_WRITERS) <= needed, f"no longer writes HTML in Python: drop {set(HTML_WRITERS) - needed}"


def test_the_html_check_sees_a_tag_in_a_string_and_a_rewrite_by_pattern() -> None:
    source = (
        'a = f\'<p class="x">{t}</p>\'\nb = f"<h{n}>"\nc = f"<{name} withheld>"\nd = "<p>plain</p>"\n'
        'e = f"<proof {page}>"\nf = f"make record TIER=<name> {x}"\ng = f"{x}<br>{y}"\n'
        '"""A docstring naming <head>."""\n'
    )
    assert html_in_strings(ast.parse(source)) == [1, 2, 4, 7], "a name in angle brackets is not HTML"
    rewrites = (
        'import re\n_H = re.compile(r"<h1 id=(.*)>")\n_W = re.compile(r"\\s+")\n'
        'a = _H.sub("", html)\nb = _W.sub(" ", text)\nc = re.sub(r"<article\\b", "x", html)\n'
    )
    assert html_rewrites(ast.parse(rewrites)) == [4, 6]


def test_every_exception_of_the_domain_is_a_floors_error() -> None:
    """One refusal: whatever the domain raises on purpose can be caught, and reported, as a FloorsError."""
    classes: dict[str, list[str]] = {}
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = [ast.unparse(base) for base in node.bases]

    def is_exception(name: str, seen: frozenset[str] = frozenset()) -> bool:
        bases = classes.get(name)
        if bases is None:
            return name.endswith(("Error", "Exception")) or name in {"BaseException", "KeyboardInterrupt"}
        return any(is_exception(base, seen | {name}) for base in bases if base not in seen)

    def is_floors_error(name: str) -> bool:
        return name == "FloorsError" or any(is_floors_error(base) for base in classes.get(name, []))

    exceptions = {name for name in classes if is_exception(name)}
    assert {"FloorsError", "ProofFailure", "ScanError"} <= exceptions, "the check sees the package's exceptions"
    outside = sorted(name for name in exceptions - set(OWN_EXCEPTIONS) if not is_floors_error(name))
    assert outside == [], f"make these FloorsError subclasses (or say in OWN_EXCEPTIONS why not): {outside}"


BUILTIN_RAISES = {
    "settings.py": "its parsers' ValueError is turned into a FloorsError naming the variable (environment_value)",
    "measure.py": "a proof's helper, carried alone in downloads: a wrong argument is the caller's bug",
    "plot.py": "a proof's helper, carried alone in downloads: a wrong argument is the caller's bug",
    "claims.py": "carried alone in downloads; its readers raise its errors on as FloorsErrors",
    "ranks.py": "a proof's helper, carried alone in downloads: a wrong argument is the caller's bug",
    "floors.py": "a lookup by floor number: a wrong number is the caller's bug (KeyError)",
    "labs/cells.py": "a lookup by exercise anchor (KeyError), for tests and the build that pass a known one",
    "execution/cache.py": "its entry parser's ValueError becomes a CacheError or a rerun where it is read",
    "execution/provenance.py": "from_dict's ValueError becomes a RecordingError or a cache miss where it is read",
    "execution/facts.py": "its parser's ValueError becomes a FactsError",
    "execution/progress.py": "the serve session logs a malformed event and reads on",
    "execution/duration.py": "a negative duration is the caller's bug",
    "execution/process/runner.py": "a Python without ForkServer._stop: the interpreter, not the site, is at fault",
    "recordings/schema.py": "json's parse_constant hook must raise ValueError; read_recording makes a RecordingError",
    "execution/process/worker.py": "a failed system call (prctl) is an OSError with its errno, as the library's are",
}
"""Modules that may raise a builtin error, and why; everywhere else a refusal is a FloorsError (InputError, ...)."""


def builtin_raises(tree: ast.Module) -> list[int]:
    """The lines that raise a builtin error by name (`raise ValueError(...)`)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and ast.unparse(node.exc.func) in {"ValueError", "RuntimeError", "KeyError", "TypeError", "OSError"}
    ]


def test_refusals_are_floors_errors_not_builtin_ones() -> None:
    """A refusal the author or reader sees names what and where as a FloorsError; the plugin reports it in one line."""
    found = {
        path: lines
        for path, tree in _modules()
        if not path.startswith("plugin/") and path not in BUILTIN_RAISES and (lines := builtin_raises(tree))
    }
    assert found == {}, f"raise a FloorsError (InputError, ToolError) here, or say in BUILTIN_RAISES why not: {found}"


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph() -> dict[str, set[str]]:
    """Which of the package's parts (a subpackage, or a top-level module) imports which, at any time."""
    graph: dict[str, set[str]] = {}
    for path, tree in _modules():
        here = path.split("/")[0].removesuffix(".py")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pytorch_floors."):
                there = _package_of(node.module)
                if there != here:
                    graph.setdefault(here, set()).add(there)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    def visit(node: str, path: list[str]) -> list[str] | None:
        for target in sorted(graph.get(node, ())):
            if target in path:
                return [*path[path.index(target) :], target]
            if found := visit(target, [*path, target]):
                return found
        return None

    for start in sorted(graph):
        if found := visit(start, [start]):
            return found
    return None


PROOF_HELPERS = {
    "claims": "claim and not_applicable: the patterns a page states",
    "measure": "timing and byte counts, the same on every page",
    "plot": "the SVG charts",
    "compiling": "a compiler's presence, and a fresh Inductor cache",
    "ranks": "run_ranks: several processes of a torch.distributed job, with a limit, killed as a group",
}
"""The package's modules a proof may import (standard library and torch only, each carried inside a download)."""

PROOF_IMPORTS_ELSEWHERE = {
    "0-map/building.py:floors": "Part 0's building draws the registry's floors",
}
"""A proof that imports another module of the package, and why."""


def test_proofs_import_only_the_documented_helpers() -> None:
    found = set()
    for proof in sorted((ROOT / "snippets").rglob("*.py")):
        tree = ast.parse(proof.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                parts = name.split(".")
                if parts[0] == "pytorch_floors" and (len(parts) < 2 or parts[1] not in PROOF_HELPERS):
                    found.add(f"{proof.relative_to(ROOT / 'snippets').as_posix()}:{'.'.join(parts[1:])}")
    assert found - set(PROOF_IMPORTS_ELSEWHERE) == set(), f"import a helper of PROOF_HELPERS, or say why: {found}"


def test_every_proof_helper_imports_only_the_standard_library_and_torch() -> None:
    modules = dict(_modules())
    for helper in PROOF_HELPERS:
        tree = modules[f"{helper}.py"]
        for node in ast.walk(tree):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in ("torch", "__future__"), f"{helper}.py imports {name}"


def test_the_packages_are_layered_without_a_cycle() -> None:
    """`render` knows nothing of `editions` or `recordings`; a type the renderer needs lives below it."""
    graph = package_graph()
    assert {"render", "editions", "recordings", "plugin"} <= set(graph), "the graph holds the packages"
    assert _cycle(graph) is None, f"packages import each other: {' -> '.join(_cycle(graph) or [])}"


def test_the_layering_check_finds_a_cycle_between_packages() -> None:
    assert _cycle({"render": {"editions"}, "editions": {"render"}}) == ["editions", "render", "editions"]
    assert _cycle({"editions": {"render"}, "render": {"floors"}}) is None


def test_the_private_names_of_other_tools_the_plugin_relies_on_still_exist() -> None:
    """No public way exists for these; plugin/parts/ says so beside each use. An upgrade that renames one fails here.

    - mkdocs-jupyter: `_compute_cache_key` and `_get_cache_path` name the cache file of a lab's page,
      which a lab that failed in the background must not leave behind; its `cache`, `cache_dir`,
      `execute` and `execute_ignore` options are set per build.
    - Material's search plugin: `search_index_prev`, the index a dirty rebuild merges into.
    - mkdocstrings: `enable_inventory`, switched off for a build that renders no API page.
    """
    # The documentation engine's plugins: loaded by this test only, not at every worker's collection.
    import mkdocs_jupyter.plugin as jupyter  # type: ignore[import-untyped]  # noqa: PLC0415
    from material.plugins.search.plugin import SearchPlugin  # noqa: PLC0415
    from mkdocstrings import PluginConfig as MkdocstringsConfig  # noqa: PLC0415

    assert list(inspect.signature(jupyter._compute_cache_key).parameters) == ["nb_path", "config", "exec_nb"]
    assert list(inspect.signature(jupyter._get_cache_path).parameters) == ["cache_dir", "cache_key"]
    options = dict(jupyter.Plugin.config_scheme)
    assert {"cache", "cache_dir", "execute", "execute_ignore"} <= set(options)
    assert "search_index_prev" in inspect.getsource(SearchPlugin)
    assert "enable_inventory" in MkdocstringsConfig.__dict__  # a public option, set for one build only


BUILD_STATE_SLOTS = {
    "labs/kernel.py:_bound": "nbconvert constructs the lab executor from the Jupyter configuration and takes no "
    "object of the build's: the slot names the running build's own LabRuns (bind), a new one each build, and "
    "is emptied at its end (unbind)",
    "execution/process/runner.py:_context": "multiprocessing's context and fork server are one per process, "
    "shared by every engine the process makes (a build's, make record's)",
    "execution/process/runner.py:_live": "every block process this Python process started, whoever started it: "
    "what end_all ends when the process exits",
    "execution/cache.py:_present": "a file lock is held per process: the count of this process's holders of each "
    "cache folder's lock, shared by its engines",
    "plugin/fence.py:_TEXT_CONVERTERS": "a text converter per page Markdown, weakly keyed on the build's own "
    "Markdown: it goes with it",
    "execution/imports.py:_parsed": "a cache of each file's parsed module keyed by its path and modification "
    "time, so valid across builds (an edited file replaces its entry)",
    "execution/imports.py:_file_imports": "a cache of each file's imports keyed by its path, package and "
    "modification time, so valid across builds (an edited file replaces its entry)",
    "render/highlighted.py:HIGHLIGHTED": "a cache keyed by everything its output depends on (the highlighting "
    "settings and the fenced code's text), so valid across builds: a page's twin and a serve session's next "
    "build reuse it, and a change to either is another key, never a stale result",
}
"""Module-level names a function changes, and why each is the process's and not one build's."""

_MUTATORS = {
    "append",
    "extend",
    "insert",
    "clear",
    "add",
    "update",
    "pop",
    "popitem",
    "remove",
    "discard",
    "setdefault",
}


def module_state_changed(tree: ast.Module) -> set[str]:
    """The module-level names a function rebinds (`global`) or changes (`_build.runs.append(...)`, `_x[k] = v`)."""
    names: set[str] = set()
    for statement in tree.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else []
        )
        names |= {target.id for target in targets if isinstance(target, ast.Name)}

    def root(node: ast.expr) -> str | None:
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        return node.id if isinstance(node, ast.Name) and node.id in names else None

    def changes_self(cls: ast.ClassDef) -> bool:
        """A method other than `__init__` changes the instance (`self._entries[k] = v`, `self.n += 1`)."""
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
                continue
            for node in ast.walk(method):
                target = (
                    node.value
                    if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del)
                    else node.func.value
                    if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _MUTATORS
                    else node.target
                    if isinstance(node, ast.AugAssign)
                    else None
                )
                while isinstance(target, ast.Attribute | ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Name) and target.id == "self":
                    return True
        return False

    # A module-level instance of a class of the module that changes itself: whoever calls it changes the module's state.
    stateful = {cls.name for cls in tree.body if isinstance(cls, ast.ClassDef) and changes_self(cls)}
    changed: set[str] = {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign | ast.AnnAssign)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id in stateful
        for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
        if isinstance(target, ast.Name)
    }
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed |= set(node.names)
            elif isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                changed |= {name} if (name := root(node.value)) else set()
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                changed |= {name} if (name := root(node.func.value)) else set()
    return changed


def test_no_module_global_holds_a_builds_state() -> None:
    """A build's state lives in an object the build owns and passes (`labs/kernel.py` kept it in a module
    global, `_build`, that leaked one build's lab outputs into the next)."""
    found = {
        f"{path}:{name}"
        for path, tree in _modules()
        for name in module_state_changed(tree)
        if f"{path}:{name}" not in BUILD_STATE_SLOTS
    }
    assert found == set(), f"keep this in an object the build owns (or say in BUILD_STATE_SLOTS why not): {found}"


def test_the_module_state_check_sees_each_way_of_changing_a_global() -> None:
    source = (
        "_a = None\n_b = State()\n_c = []\n_d = {}\nE = (1, 2)\n"
        "def f(x):\n    global _a\n    _a = x\n    _b.runs.append(x)\n    _c.clear()\n    _d[x] = 1\n"
        "    y = []\n    y.append(E[0])\n"
        "class Cache:\n    def __init__(self):\n        self.n = 0\n    def get(self, k):\n        self.n += 1\n"
        "class Plain:\n    def __init__(self):\n        self.n = 0\n    def get(self, k):\n        return self.n\n"
        "CACHE = Cache()\nPLAIN = Plain()\n"
    )
    assert module_state_changed(ast.parse(source)) == {"_a", "_b", "_c", "_d", "CACHE"}


def language_from_context(tree: ast.Module) -> list[int]:
    """The lines that import `contextvars`, and those that call `t` with no language (`t("Held:")`)."""

    def is_context(node: ast.AST) -> bool:
        if isinstance(node, ast.Import):
            return any(alias.name == "contextvars" for alias in node.names)
        return isinstance(node, ast.ImportFrom) and node.module == "contextvars"

    def lacks_language(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "t"
            and len(node.args) < 2
            and not any(keyword.arg == "language" for keyword in node.keywords)
        )

    return sorted(getattr(node, "lineno", 0) for node in ast.walk(tree) if is_context(node) or lacks_language(node))


def test_the_language_is_passed_never_read_from_the_context() -> None:
    """The page's language was a ContextVar read inside `t()`; as mkdocstrings-python passes its locale to
    `render`, every message is asked for in a language, and a template gets `t` bound to its page's."""
    found = {path: lines for path, tree in _modules() if (lines := language_from_context(tree))}
    assert found == {}, f"pass the page's language (t(message, language), render(name, language, ...)): {found}"
    assert not {"t", "claim_text"} & set(environment().globals), "the environment holds no language of its own"


def test_the_language_check_sees_a_context_and_a_message_without_language() -> None:
    source = (
        "import contextvars\nfrom contextvars import ContextVar\n"
        'a = t("Held:")\nb = t("Held:", "zh")\nc = t(message, language, n=1)\nd = x.t("y")\n'
    )
    assert language_from_context(ast.parse(source)) == [1, 2, 3]


PRIVATE_NAMES = {
    "claims.py:sys._getframe": "documented in the sys module's reference: the frame of the proof line a claim is on",
    "execution/process/worker.py:os._exit": "documented in the os module's reference: a child ends without cleanup",
    "plugin/serve/background.py:os._exit": "documented in the os module's reference: a child ends without cleanup",
    "ranks.py:os._exit": "documented in the os module's reference: a rank ends without cleanup once it reported",
    "compiling.py:torch._inductor.cpp_builder.get_cpp_compiler": "the compiler Inductor itself would use; no public "
    "way names it (guarded below)",
    "execution/process/runner.py:forkserver._forkserver": "the process's fork server, to stop it after an edit of the "
    "package; multiprocessing offers no public way (its own tests use it; guarded below)",
    "execution/process/runner.py:forkserver._forkserver._stop": "as forkserver._forkserver (guarded below)",
    "execution/process/worker.py:progress._instances": "tqdm's open bars: its monitor thread ends only when none is "
    "open, as tqdm itself decides (guarded below)",
    "measure.py:a._cdata": "a storage without an address (meta, empty) is told apart by its C object; no public "
    "way (guarded below)",
    "measure.py:b._cdata": "as a._cdata",
    "plugin/parts/labs.py:mkdocs_jupyter.plugin._compute_cache_key": "the cache file of a lab's page, which a lab that "
    "failed must not leave behind; no public way (guarded below)",
    "plugin/parts/labs.py:mkdocs_jupyter.plugin._get_cache_path": "as _compute_cache_key (guarded below)",
    "tiers/python.py:sys._base_executable": "the interpreter a virtual environment was made from, to make a tier's "
    "from the same one; venv itself reads it (guarded below)",
}
"""Private names of other packages the package uses, and why; each that no reference documents is guarded below."""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names_of_others(trees: dict[str, ast.Module]) -> set[str]:
    """`path:name` for each private name of another package used (imported, an attribute, a `getattr` string).

    A name is another package's when no module of this package defines it (a function, a class, an
    attribute it sets, a variable or an argument).
    """
    own: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                own.add(node.name)
            elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
                own.add(node.id if isinstance(node, ast.Name) else node.attr)
            elif isinstance(node, ast.arg):
                own.add(node.arg)
    found = set()
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.split(".")[0]
                not in {
                    "pytorch_floors",
                    "__future__",
                }
            ):
                private_module = any(_is_private(part) for part in node.module.split("."))
                found |= {
                    f"{path}:{node.module}.{alias.name}"
                    for alias in node.names
                    if private_module or _is_private(alias.name)
                }
            elif isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in own:
                found.add(f"{path}:{ast.unparse(node)}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"getattr", "hasattr", "setattr"}
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and _is_private(node.args[1].value)
                and node.args[1].value not in own
            ):
                found.add(f"{path}:{ast.unparse(node.args[0])}.{node.args[1].value}")
    return found


def test_every_private_name_of_another_package_is_listed_with_its_reason() -> None:
    """Eight private names of other packages were used and three guarded: each is listed here, and guarded below."""
    found = private_names_of_others(dict(_modules()))
    assert found - set(PRIVATE_NAMES) == set(), "use a public way, or list the name in PRIVATE_NAMES and guard it"
    assert set(PRIVATE_NAMES) - found == set(), "a listed private name is no longer used: drop it from PRIVATE_NAMES"


def test_the_private_names_check_sees_an_import_an_attribute_and_a_getattr() -> None:
    source = (
        "from pygments.token import _TokenType\nfrom torch._inductor.x import f\nimport sys\n"
        "class A:\n    def m(self):\n        self._mine = 1\n        return self._mine, sys._base, getattr(sys, '_x')\n"
    )
    assert private_names_of_others({"m.py": ast.parse(source)}) == {
        "m.py:pygments.token._TokenType",
        "m.py:torch._inductor.x.f",
        "m.py:sys._base",
        "m.py:sys._x",
    }


def _source_of(module: str) -> ast.Module:
    """A module's source, parsed, without importing it (torch is heavy; the build never imports it)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not installed"
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def test_the_private_names_of_other_packages_exist_as_called() -> None:
    """Each undocumented private name in PRIVATE_NAMES, in the installed version, with the signature called."""
    from multiprocessing import forkserver  # noqa: PLC0415

    import tqdm.std  # type: ignore[import-untyped]  # noqa: PLC0415

    # torch, read from its source: `get_cpp_compiler()` takes no argument; a storage has `_cdata`.
    builder = _source_of("torch._inductor.cpp_builder")
    [compiler] = [n for n in builder.body if isinstance(n, ast.FunctionDef) and n.name == "get_cpp_compiler"]
    assert not compiler.args.args and not compiler.args.kwonlyargs, ast.unparse(compiler.args)
    storage = _source_of("torch.storage")
    fields = {
        node.target.id
        for cls in storage.body
        if isinstance(cls, ast.ClassDef) and cls.name == "_StorageBase"
        for node in cls.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert "_cdata" in fields
    # multiprocessing: the process's fork server, stopped with no argument.
    assert list(inspect.signature(forkserver._forkserver._stop).parameters) == []  # type: ignore[attr-defined]
    # tqdm: its open bars (a set) and its monitor thread, as worker._ended_idle_progress_monitor reads them.
    assert len(tqdm.std.tqdm._instances) >= 0 and "monitor" in vars(tqdm.std.tqdm)
    # The interpreter a virtual environment was made from.
    assert isinstance(sys._base_executable, str)  # type: ignore[attr-defined]
    assert callable(sys._getframe) and callable(os._exit)


def test_the_build_report_has_one_template_rendered_by_the_package() -> None:
    """The build-report partial in `overrides/` repeated `machines.html`'s folded table and was rendered through
    the theme's environment: the package renders its own pages' parts, each piece of markup in one template."""
    templates = [
        *sorted((ROOT / "overrides").rglob("*.html")),
        *sorted((PACKAGE / "render" / "templates").rglob("*.html")),
    ]
    folds = [
        path.relative_to(ROOT).as_posix() for path in templates if "floors-report__fold" in path.read_text("utf-8")
    ]
    assert folds == ["src/pytorch_floors/render/templates/report_fold.html"], folds
    theme_rendered = {
        path: [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("get_env")]
        for path, tree in _modules()
    }
    assert {path: lines for path, lines in theme_rendered.items() if lines} == {}, (
        "render the package's HTML with render.templates, not the theme's environment"
    )


def _lazy_tables(path: Path) -> tuple[set[str], set[str], set[str]]:
    """A lazy package's three lists: names imported for type checkers, names in `_LAZY`, names in `__all__`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed: set[str] = set()
    lazy: set[str] = set()
    exported: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typed |= {
                alias.asname or alias.name
                for child in node.body
                if isinstance(child, ast.ImportFrom)
                for alias in child.names
            }
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "_LAZY" and isinstance(node.value, ast.Dict):
                lazy = {str(key.value) for key in node.value.keys if isinstance(key, ast.Constant)}
            elif isinstance(target, ast.Name) and target.id == "__all__" and isinstance(node.value, ast.List):
                exported = {str(item.value) for item in node.value.elts if isinstance(item, ast.Constant)}
    return typed, lazy, exported


def test_a_lazy_packages_three_lists_name_the_same_attributes() -> None:
    """Type checkers read the imports, `__getattr__` reads `_LAZY`, `import *` and mypy read `__all__`: one set."""
    packages = sorted(
        path for path in PACKAGE.rglob("__init__.py") if "lazy_attributes(" in path.read_text(encoding="utf-8")
    )
    assert len(packages) >= 2, "the check sees the lazy packages"
    for path in packages:
        typed, lazy, exported = _lazy_tables(path)
        assert lazy and typed == lazy == exported, (path.relative_to(PACKAGE), typed ^ lazy, lazy ^ exported)


# --- a page's facts are computed once ---------------------------------------------------------------

PAGE_FACT_FUNCTIONS = ("english_source", "language_of", "floor_for_page")
"""What `page_facts` computes a page's facts from: the build's hooks read `PageFacts` instead."""


def _calls(source: str, names: tuple[str, ...]) -> list[int]:
    tree = ast.parse(source)
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
    ]


def test_the_build_reads_a_pages_facts_once_computed_not_from_its_path_again() -> None:
    # Following one page through on_page_markdown entered english_source six times; build.py called it 13 times.
    # The build's conductor and its parts (plugin/parts/) hand each page's PageFacts to every hook.
    modules = [PACKAGE / "plugin" / "build.py", *sorted((PACKAGE / "plugin" / "parts").glob("*.py"))]
    calls = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in modules
        if (found := _calls(path.read_text(encoding="utf-8"), PAGE_FACT_FUNCTIONS))
    }
    assert calls == {}, (
        f"{calls}: the build works a page's language, English source or floor out of its path: use its PageFacts "
        "(pytorch_floors.page_facts, computed once in on_files)"
    )


def test_the_page_facts_check_sees_a_call() -> None:
    assert _calls("x = english_source(page.file.src_uri)\n", PAGE_FACT_FUNCTIONS) == [1]


@pytest.mark.parametrize(
    ("src_uri", "source", "language", "floor", "kind"),
    [
        ("floors/4-dispatcher.md", "floors/4-dispatcher.md", "en", 4, "floor"),
        ("zh/floors/4-dispatcher.md", "floors/4-dispatcher.md", "zh", 4, "floor"),
        ("zh/labs/7-memory.py", "labs/7-memory.py", "zh", 7, "lab"),
        ("compile.md", "compile.md", "en", None, "annex"),
        ("zh/distributed.md", "distributed.md", "zh", None, "annex"),
        ("reference/floors.md", "reference/floors.md", "en", None, "reference"),
        ("zh/cite.md", "cite.md", "zh", None, "site"),
    ],
)
def test_a_pages_facts(src_uri: str, source: str, language: str, floor: int | None, kind: str) -> None:
    facts = page_facts(src_uri)
    assert (facts.source, facts.language.code, facts.floor.number if facts.floor else None, facts.kind) == (
        source,
        language,
        floor,
        kind,
    )
    assert facts.translated == (language != "en")


def test_one_place_turns_the_domains_refusals_into_mkdocs_errors() -> None:
    # build.py turned errors into PluginError in seven places beside plugin.py's wrapper of every hook.
    raising = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if re.search(r"\bPluginError\(", path.read_text(encoding="utf-8"))
    )
    assert raising == ["plugin/plugin.py"], (
        f"{raising}: raise a FloorsError (pytorch_floors.errors); plugin.py's _as_plugin_error makes it MkDocs' error"
    )


def option_readers(tree: ast.Module) -> list[tuple[int, str]]:
    """The places that parse a fence's option strings: a call that makes `BlockOptions` from text, a check of
    them (`validate_options`, which the scan's parse once only checked), or markdown-exec's validator,
    which parses every option again by rules of its own."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if ("BlockOptions." in name and name.rsplit(".", 1)[1] in {"parse", "from_written"}) or name.endswith(
                "validate_options"
            ):
                found.append((node.lineno, name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("markdown_exec"):
            found += [(node.lineno, f"{node.module}.validator") for alias in node.names if alias.name == "validator"]
        elif isinstance(node, ast.Attribute) and ast.unparse(node) == "markdown_exec.validator":
            found.append((node.lineno, "markdown_exec.validator"))
    return found


def test_a_fences_options_are_parsed_once_by_the_scan() -> None:
    # They were read four times: the scan (validate_options), markdown-exec's validator, the fence popping
    # four keys, and BlockOptions' `parse` and `from_written`, one for each shape they reached the engine in.
    readers = [f"{module}: {name}" for module, tree in _modules() for _line, name in option_readers(tree)]
    assert readers == ["execution/scan.py: BlockOptions.parse"], (
        f"{readers}: the scan parses a block's options once (execution/options.py's BlockOptions.parse), and every "
        "later step reads the typed BlockOptions it keeps on the block (ExecBlock.options)"
    )
    constructors = [name for name, member in vars(BlockOptions).items() if isinstance(member, classmethod)]
    assert constructors == ["parse"], f"{constructors}: one parser of a fence's option strings, not a second shape"


def test_the_option_readers_check_sees_each_way_of_reading_them() -> None:
    source = (
        "from markdown_exec import base_format, validator\nimport markdown_exec\nv = markdown_exec.validator\n"
        "BlockOptions.parse(o)\noptions.BlockOptions.from_written(w, default_timeout=1)\nvalidate_options(w)\n"
        "Other.parse(x)\n"
    )
    assert sorted(option_readers(ast.parse(source))) == [
        (1, "markdown_exec.validator"),
        (3, "markdown_exec.validator"),
        (4, "BlockOptions.parse"),
        (5, "options.BlockOptions.from_written"),
        (6, "validate_options"),
    ]
