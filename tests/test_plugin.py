"""The `floors` plugin: typed options (and their variables), per-build state, a torch-free build, serve reloads."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

import pytorch_floors.plugin.build as build_module
from conftest import FIXTURE_CONFIG, ROOT, FixtureSite
from pytorch_floors.errors import InputError
from pytorch_floors.execution.facts import FactsError
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.floors import FLOORS, LABS
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.fence import formatter
from pytorch_floors.plugin.pages import first_docstring_line
from pytorch_floors.plugin.parts.labs import labs_follow
from pytorch_floors.plugin.plugin import FloorsPlugin

VARIABLES = ("FLOORS_EXEC", "FLOORS_EXEC_CACHE", "FLOORS_CACHE_DIR", "FLOORS_EXEC_TIMEOUT", "FLOORS_EXEC_ONLY")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*VARIABLES, "FLOORS_HANDOUTS", "FLOORS_CLAIMS", "FLOORS_RECORDINGS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def options(given: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    plugin = FloorsPlugin()
    errors, _ = plugin.load_config(given)
    return dict(plugin.config), [f"{key}: {error}" for key, error in errors]


# --- options: typed, validated, overridden by their FLOORS_* variables ------------------------------


def test_options_have_defaults_and_take_values_from_mkdocs_yml(clean_env: pytest.MonkeyPatch) -> None:
    values, errors = options({})
    assert errors == []
    assert values == {
        "execute": True,
        "cache": "on",
        "cache_dir": None,
        "timeout": 120.0,
        "only": None,
        "handouts": False,
        "claims": "warn",
        "recordings": "recordings",
    }
    # YAML reads a bare on/off as a boolean.
    values, errors = options({"execute": False, "cache": False, "timeout": 30, "only": "floors/3-*", "handouts": "on"})
    assert errors == []
    assert values["execute"] is False and values["cache"] == "off" and values["timeout"] == 30.0
    assert values["only"] == "floors/3-*" and values["handouts"] is True


def test_a_variable_wins_over_mkdocs_yml(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FLOORS_EXEC", "off")
    clean_env.setenv("FLOORS_EXEC_CACHE", "refresh")
    clean_env.setenv("FLOORS_EXEC_TIMEOUT", "7.5")
    clean_env.setenv("FLOORS_CACHE_DIR", "/somewhere")
    values, errors = options({"execute": True, "cache": "on", "timeout": 300})
    assert errors == []
    assert values["execute"] is False and values["cache"] == "refresh" and values["timeout"] == 7.5
    assert values["cache_dir"] == "/somewhere"
    # An empty variable is as good as unset (a Makefile's `FLOORS_EXEC_ONLY=`).
    clean_env.setenv("FLOORS_EXEC_ONLY", "")
    assert options({"only": "labs/*"})[0]["only"] == "labs/*"


@pytest.mark.parametrize(
    ("given", "variable", "message"),
    [
        ({"timeout": "inf"}, None, "timeout must be a finite number of seconds above 0, not 'inf'"),
        ({"timeout": True}, None, "expected a number of seconds, not True"),
        ({"cache": "sometimes"}, None, "expected on, off or refresh, not 'sometimes'"),
        ({"execute": "maybe"}, None, "expected on or off, not 'maybe'"),
        ({"only": 3}, None, "expected text, not 3"),
        ({}, ("FLOORS_EXEC_TIMEOUT", "nan"), "FLOORS_EXEC_TIMEOUT='nan': timeout must be a finite number"),
        ({}, ("FLOORS_EXEC_CACHE", "of"), "FLOORS_EXEC_CACHE='of': expected on, off or refresh"),
        ({}, ("FLOORS_EXEC", "nope"), "FLOORS_EXEC='nope': expected on or off"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_option(
    clean_env: pytest.MonkeyPatch, given: dict[str, Any], variable: tuple[str, str] | None, message: str
) -> None:
    if variable is not None:
        clean_env.setenv(*variable)
    _, errors = options(given)
    assert len(errors) == 1 and message in errors[0], errors


def test_an_unknown_option_is_reported(clean_env: pytest.MonkeyPatch) -> None:
    plugin = FloorsPlugin()
    _, warnings = plugin.load_config({"timout": 3})
    assert warnings == [("timout", "Unrecognised configuration name: timout")]


def test_a_fences_options_are_parsed_once_per_block_by_the_scan(
    fixture_site: FixtureSite, clean_env: pytest.MonkeyPatch
) -> None:
    # A block's options were read by the scan, by markdown-exec's validator, by the fence and again by
    # the engine; now the scan parses them and the fence, the engine and its cache read what it parsed.
    callers: list[str] = []
    parse = BlockOptions.parse.__func__  # type: ignore[attr-defined]

    def counted(cls: type[BlockOptions], written: dict[str, str], *args: Any, **kwargs: Any) -> BlockOptions:
        callers.append(sys._getframe(1).f_globals["__name__"])
        return parse(cls, written, *args, **kwargs)  # type: ignore[no-any-return]

    clean_env.setattr(BlockOptions, "parse", classmethod(counted))
    clean_env.delenv("FLOORS_TEST_BUILDS", raising=False)  # counted in this process
    fixture_site.page(
        "index.md",
        """\
        # Home

        ```python exec="1" id="first" timeout="30" session="s" width="40"
        print("a" * 60)
        ```

        ```python exec="1" id="second" html="1" session="s"
        print("<b>bold</b>")
        ```
        """,
    )
    built = fixture_site.build(env={"FLOORS_EXEC": "off", "FLOORS_EXEC_CACHE": "off"})
    assert built.returncode == 0, built.log
    assert callers == ["pytorch_floors.execution.scan"] * 2


def test_a_bad_variable_stops_mkdocs_build_with_a_config_error_not_a_traceback(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", "# Home\n")
    build_ = fixture_site.build(env={"FLOORS_EXEC_TIMEOUT": "inf"})
    assert build_.returncode == 1
    assert "Plugin 'floors' option 'timeout': FLOORS_EXEC_TIMEOUT='inf'" in build_.log, build_.log
    assert "Aborted with a configuration error" in build_.log
    assert "Traceback" not in build_.log


# --- per-build state: two builds in one process share nothing --------------------------------------


def _project(root: Path, body: str) -> Path:
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(FIXTURE_CONFIG, encoding="utf-8")
    (root / "docs" / "index.md").write_text(
        "---\ndescription: fixture page index\n---\n\n" + textwrap.dedent(body), encoding="utf-8"
    )
    return root / "mkdocs.yml"


def _fence_format(config: Any) -> Any:
    [fence] = config.mdx_configs["pymdownx.superfences"]["custom_fences"]
    return fence["format"]


def test_two_builds_in_one_process_share_no_state(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FLOORS_EXEC_CACHE", "off")
    config_file = _project(
        tmp_path,
        """\
        ```python exec="1" id="first" width="40"
        import os
        print("columns", os.environ.get("COLUMNS"))
        ```
        """,
    )
    first_config = load_config(str(config_file), site_dir=str(tmp_path / "site"))
    build(first_config)
    plugin = first_config.plugins["floors"]
    assert isinstance(plugin, FloorsPlugin)
    first = plugin.build
    assert [(r.block_id, r.status) for r in first.engine.records] == [("first", "ran")]
    bound = _fence_format(first_config)
    assert isinstance(bound, partial) and bound.func is formatter
    assert bound.keywords == {
        "engine": first.engine,
        "recordings": first.recordings.recordings,
        "lazy": first.recordings.lazy_outputs,
        "languages": first.translations.page_languages,
    }

    _project(
        tmp_path,
        """\
        ```python exec="1" id="second"
        import os
        print("columns", os.environ.get("COLUMNS"))
        ```
        """,
    )
    second_config = load_config(str(config_file), site_dir=str(tmp_path / "site"))
    build(second_config)
    # MkDocs keeps one plugin object for the process (it has on_startup); each build gets its own state.
    same = second_config.plugins["floors"]
    assert same is plugin and isinstance(same, FloorsPlugin)
    second = same.build
    assert second is not first and second.engine is not first.engine
    assert second.recordings.lazy_outputs is not first.recordings.lazy_outputs
    assert [(r.block_id, r.status) for r in second.engine.records] == [("second", "ran")]
    assert [(r.block_id, r.status) for r in first.engine.records] == [("first", "ran")]
    assert _fence_format(second_config).keywords == {
        "engine": second.engine,
        "recordings": second.recordings.recordings,
        "lazy": second.recordings.lazy_outputs,
        "languages": second.translations.page_languages,
    }
    # The labs' record and the pages' languages are each build's own, as its engine is.
    assert (
        second.labs.runs is not first.labs.runs
        and second.translations.page_languages is not first.translations.page_languages
    )
    report = json.loads((tmp_path / "site" / "build-report.json").read_text())
    assert [b["block_id"] for b in report["blocks"]] == ["second"]
    page = (tmp_path / "site" / "index.html").read_text()
    assert "columns None" in page and "columns 40" not in page


def test_the_plugin_registers_the_fence_itself(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    """As markdown-exec's plugin does in on_config: a mkdocs.yml without SuperFences still runs its proofs."""
    config_file = _project(tmp_path, '```python exec="1" id="found"\nprint(6 * 7)\n```\n')
    text = config_file.read_text().replace("  - pymdownx.superfences\n", "")
    assert "superfences" not in text
    config_file.write_text(text, encoding="utf-8")
    build(load_config(str(config_file), site_dir=str(tmp_path / "site")))
    report = json.loads((tmp_path / "site" / "build-report.json").read_text())
    assert [(b["block_id"], b["status"]) for b in report["blocks"]] == [("found", "ran")]
    assert "42" in (tmp_path / "site" / "index.html").read_text()


def test_a_python_fence_of_another_formatter_stops_the_build(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The proofs would render as markdown-exec's in-process runs (or as plain code), and no record would say so."""
    config_file = _project(tmp_path, '```python exec="1" id="lost"\nprint(1)\n```\n')
    fence = (
        "  - pymdownx.superfences:\n      custom_fences:\n        - name: python\n          class: python\n"
        "          validator: !!python/name:markdown_exec.validator\n"
        "          format: !!python/name:markdown_exec.formatter\n"
    )
    config_file.write_text(config_file.read_text().replace("  - pymdownx.superfences\n", fence), encoding="utf-8")
    with pytest.raises(Abort):
        build(load_config(str(config_file), site_dir=str(tmp_path / "site")))
    assert "the floors plugin registers that fence" in caplog.text


# --- the MkDocs process never imports torch; serve rebuilds with the package's new code ------------

BUILD_SCRIPT = """\
import json, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config

import pytorch_floors.plugin.plugin


def main():
    results = {"plugin": pytorch_floors.plugin.plugin.__file__, "torch": []}
    config = load_config(sys.argv[1])
    # A serve with no live reload to show pages again runs its proofs itself, in its own builds.
    sys.argv.append("--no-livereload")
    config.plugins.on_startup(command="serve", dirty=False)
    build(config)
    results["torch"].append("torch" in sys.modules)
    results["first"] = open(sys.argv[2], encoding="utf-8").read()
    print("built", flush=True)
    input()  # the test edits the package now
    build(load_config(sys.argv[1]))  # what `mkdocs serve` does after an edit
    results["torch"].append("torch" in sys.modules)
    results["second"] = open(sys.argv[2], encoding="utf-8").read()
    config.plugins.on_shutdown()
    print(json.dumps(results))


if __name__ == "__main__":  # block processes re-import the main module
    main()
"""


def _run_builds(project: Path, env: dict[str, str], edit: Any) -> dict[str, Any]:
    script = project / "two_builds.py"
    script.write_text(BUILD_SCRIPT, encoding="utf-8")
    log = project / "build.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(script), str(project / "mkdocs.yml"), str(project / "site" / "index.html")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=project,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()  # "built", or nothing if the first build failed
            if first.strip() == "built":
                edit()
            out, _ = process.communicate("\n", timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0 and first.strip() == "built", log.read_text()[-6000:]
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.build
def test_the_build_process_never_imports_torch(tmp_path: Path) -> None:
    _project(
        tmp_path,
        """\
        ```python exec="1" id="uses-torch"
        import torch
        print("threads", torch.get_num_threads())
        ```
        """,
    )
    result = _run_builds(tmp_path, {"FLOORS_EXEC_CACHE": "off"}, lambda: None)
    assert "threads" in result["first"] and "threads" in result["second"]
    assert result["torch"] == [False, False]


@pytest.mark.build
def test_serve_rebuilds_with_the_packages_new_code(tmp_path: Path) -> None:
    """A real `mkdocs serve`: an edit of the package restarts it, and the page shows the new code's output.

    Both halves must see the edit: the proof (run by the proof server) and the build's own code.
    """
    copy = tmp_path / "src" / "pytorch_floors"  # a copy of the package, first on the path, for the test to edit
    shutil.copytree(ROOT / "src" / "pytorch_floors", copy, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    config_file = _project(
        project,
        """\
        <!-- floors:handouts -->

        ```python exec="1" id="marker"
        import pytorch_floors
        print("marker", pytorch_floors.MARKER)
        ```
        """,
    )
    config_file.write_text(config_file.read_text() + "watch: [../src]\n", encoding="utf-8")
    init = copy / "__init__.py"
    init.write_text(init.read_text() + '\nMARKER = "before"\n')
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "serve.log"
    temp = Path(tempfile.mkdtemp(prefix="serve-"))  # short: a Unix socket's path is limited to about a hundred bytes
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PYTHONPATH": str(tmp_path / "src"),
        "FLOORS_EXEC_CACHE": "off",
        "TMPDIR": str(temp),
    }
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"],
            cwd=project,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def page_once(*wanted: str) -> str:
            deadline = time.monotonic() + 180
            text = ""
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                        text = response.read().decode()
                except OSError:
                    text = ""
                if all(w in text for w in wanted):
                    return text
                time.sleep(0.5)
            raise AssertionError(f"the served page never showed {wanted}:\n{log.read_text()[-6000:]}")

        page_once("marker before", "This build has no PDFs")
        init.write_text(init.read_text().replace('MARKER = "before"', 'MARKER = "after!"'))
        build_module = copy / "plugin" / "pages.py"  # where the build writes the handouts marker
        build_module.write_text(build_module.read_text().replace("This build has no PDFs", "Edited: no PDFs"))
        page_once("marker after!", "Edited: no PDFs")
        assert "mkdocs serve starts again" in log.read_text()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    # The process before the restart ran its proofs from a fork server, whose folder (`pymp-*`) only an exit
    # handler removes: the restart (`execv`) runs none, and left it behind at every edit of the package.
    kept = sorted(path.name for path in temp.iterdir() if path.name.startswith("pymp-"))
    shutil.rmtree(temp, ignore_errors=True)
    assert kept == [], f"{kept} left in the temporary folder"


def test_the_labs_follow_the_execute_and_only_options(clean_env: pytest.MonkeyPatch) -> None:
    # mkdocs-jupyter executes the labs; options set in mkdocs.yml (not only the variables) must reach it.
    jupyter = SimpleNamespace(config={"execute": True, "execute_ignore": [FLOORS[0].lab]})
    config: Any = SimpleNamespace(plugins={"mkdocs-jupyter": jupyter})
    labs_follow(config, Settings(only="labs/3-*"))
    assert jupyter.config["execute"] is True
    assert sorted(jupyter.config["execute_ignore"]) == sorted(f.lab for f in LABS if not f.lab.startswith("labs/3-"))
    labs_follow(config, Settings(execute=False))
    assert jupyter.config["execute"] is False


def test_a_proof_the_proofs_page_cannot_read_stops_the_build(tmp_path: Path) -> None:
    """It used to get a blank summary on the Proofs page instead."""
    broken = tmp_path / "broken.py"
    broken.write_text('"""Unfinished.\n', encoding="utf-8")
    # A refusal of the domain's: the plugin's one wrapper (`_as_plugin_error`) makes it MkDocs' one line.
    with pytest.raises(InputError, match=r"broken\.py: the Proofs page cannot read its docstring"):
        first_docstring_line(broken)
    with pytest.raises(InputError, match=r"missing\.py"):
        first_docstring_line(tmp_path / "missing.py")


def test_torch_that_cannot_say_what_it_is_stops_the_build_in_one_line(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`torch_facts()` runs in `SiteBuild`: its FactsError used to escape as a traceback, not MkDocs' one-line error."""
    config_file = _project(tmp_path, '```python exec="1" id="x"\nprint(1)\n```\n')

    def broken() -> object:
        raise FactsError("torch answered with something that is not its facts: 'garbage'")

    clean_env.setattr(build_module, "torch_facts", broken)
    # MkDocs logs a PluginError's one line and aborts; anything else would escape as the exception itself.
    with pytest.raises(Abort, match="Aborted with a BuildError"):
        build(load_config(str(config_file), site_dir=str(tmp_path / "site")))
    assert "torch answered with something that is not its facts" in caplog.text


def test_mike_reading_the_config_starts_no_build(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    """`make publish` runs mike twice, and each reads `mkdocs.yml` with every plugin's `on_config` (for its branch and
    `site_dir`) before `mike deploy` starts `mkdocs build` in a process of its own: a build started for that read
    asked torch for its facts in a process that imports torch (SiteBuild: 2.2 s of each read on an AMD EPYC) and
    ran nothing."""
    from mike import mkdocs_utils  # noqa: PLC0415  (only this test reads a config as mike does)

    config_file = _project(tmp_path, '```python exec="1" id="x"\nprint(1)\n```\n')
    asked: list[str] = []

    def facts() -> object:
        asked.append("torch")
        raise FactsError("a build started: it asked torch for its facts")

    clean_env.setattr(build_module, "torch_facts", facts)
    config = mkdocs_utils.load_config(str(config_file))
    assert asked == [], "mike's read of mkdocs.yml started a build of the site"
    assert config["site_dir"] == str(tmp_path / "site")
    plugin = config.plugins["floors"]
    assert isinstance(plugin, FloorsPlugin)
    with pytest.raises(RuntimeError, match="before on_config"):
        plugin.build  # noqa: B018  (no build: an event that needs one is refused)
    # `mkdocs build` itself (what `mike deploy` starts) still builds: it asks torch.
    with pytest.raises(Abort):
        build(load_config(str(config_file), site_dir=str(tmp_path / "site")))
    assert asked == ["torch"]
