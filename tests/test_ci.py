"""The CI workflow runs the README's test command on the machines the site promises to hold on."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
