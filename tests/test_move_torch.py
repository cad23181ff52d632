"""`make torch VERSION=X` moves the build to another torch release: the pin written in one place (issue 60).

Nothing here installs torch or records: the pin's places, the hand-typed check and the dry run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from conftest import ROOT
from pytorch_floors.claims import Claim
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.recordings.changes import recording_changes
from pytorch_floors.recordings.schema import RecordedBlock, Recording

sys.path.insert(0, str(ROOT / "tools"))
import move_torch  # tools/ is no package: the script runs before the new environment exists

PIN = move_torch.pinned(ROOT)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for name, _ in move_torch.PLACES:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, project / name)
    kinds = project / "src/pytorch_floors/tiers/kinds.py"
    kinds.parent.mkdir(parents=True)
    shutil.copy(ROOT / "src/pytorch_floors/tiers/kinds.py", kinds)
    return project


def _recording(project: Path, tier: str, cpu: str, cores: int, torch: str) -> None:
    folder = project / "recordings" / tier
    folder.mkdir(parents=True)
    machine = {"torch_version": torch, "cpu": cpu, "cores": cores}
    recording = {"tier": tier, "stands_for": f"what {tier} is", "machine": machine, "blocks": []}
    (folder / "recording.json").write_text(json.dumps(recording), encoding="utf-8")


def test_the_pin_moves_everywhere_it_is_written(tmp_path: Path) -> None:
    project = _project(tmp_path)
    moved = move_torch.move_pin(project, PIN, "2.99.1", dry_run=False)
    assert [line.split(":")[0] for line in moved] == [name for name, _ in move_torch.PLACES]
    assert move_torch.pinned(project) == "2.99.1"
    for name, words in move_torch.PLACES:
        text = (project / name).read_text(encoding="utf-8")
        assert PIN not in text, name
        assert all(form.format("2.99.1") in text for form in words), name
    # A place edited by hand so that it no longer names the release in its words is refused by name.
    (project / "README.md").write_text("torch, some version\n", encoding="utf-8")
    try:
        move_torch.move_pin(project, "2.99.1", "2.99.2", dry_run=True)
    except SystemExit as refused:
        assert "README.md does not name torch 2.99.1" in str(refused)
    else:
        raise AssertionError("a place that lost the pin's words was moved silently")


def test_the_pinned_torch_is_typed_nowhere_else() -> None:
    """`make torch` moves `PLACES`; a release typed anywhere else would stay behind, wrong after the move."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert "requirements.txt" in files
    assert move_torch.hand_typed(ROOT, files, PIN) == []


def test_a_hand_typed_release_is_found(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "README.md").write_text(
        f"`torch=={PIN}` installs `{PIN}+cpu`; torch {PIN} is the newest.\n", encoding="utf-8"
    )
    (project / "notes.md").write_text(f"torch 1{PIN} and {PIN}.1 are others; torch {PIN} is not\n", encoding="utf-8")
    (project / "tests").mkdir()
    (project / "tests" / "fixture.txt").write_text(f"torch=={PIN}\n", encoding="utf-8")
    files = ["README.md", "notes.md", "tests/fixture.txt", "requirements.txt"]
    assert move_torch.hand_typed(project, files, PIN) == ["README.md:1", "notes.md:1"]


def _files(project: Path) -> dict[Path, bytes]:
    """The project's files and what they hold: what git would see (Python's bytecode caches are not the project's)."""
    return {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_make_torch_dry_run_shows_every_step_and_changes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cpu, cores = move_torch.this_cpu(), os.cpu_count() or 1
    _recording(project, "one-core-scalar", "another CPU", 4, f"{PIN}+cpu")  # a tier: recorded here
    _recording(project, "ci-2core", cpu, cores, f"{PIN}+cpu")  # this machine as it is
    _recording(project, "gh-ubuntu-arm", "Neoverse-N2", 4, f"{PIN}+cpu")  # another machine
    _recording(project, "torch-2.14.1", cpu, cores, "2.14.1+cu130")  # keeps its own torch
    before = _files(project)
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools/move_torch.py"), "2.15.0", "--dry-run", "--project", str(project)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert f"moving the build from torch {PIN} to 2.15.0 (dry run: nothing is changed)" in said
    for name, _ in move_torch.PLACES:
        assert f"torch:    {name}: " in said
    steps = [line.removeprefix("torch: $ ") for line in said.splitlines() if line.startswith("torch: $ ")]
    assert steps[0] == "make setup"
    assert steps[1:3] == ["make record TIER=ci-2core 'STANDS_FOR=what ci-2core is'", "make record TIER=one-core-scalar"]
    assert steps[3] == "make build"
    assert steps[4].startswith(".venv/bin/python -m pytorch_floors compare-recordings ") and steps[4].endswith(
        " recordings"
    )
    assert "not here: gh-ubuntu-arm: recorded on Neoverse-N2 (4 cores)" in said
    assert "not here: torch-2.14.1: keeps its own torch (2.14.1+cu130)" in said
    assert _files(project) == before


def _make_torch(*settings: str) -> str:
    command = ["make", "--no-print-directory", "-n", "torch", *settings]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_make_torch_runs_the_mover_and_passes_a_dry_run_on() -> None:
    assert "tools/move_torch.py 2.15.0 --dry-run" in _make_torch("VERSION=2.15.0", "DRY_RUN=1")
    assert "--dry-run" not in _make_torch("VERSION=2.15.0")


def test_what_changed_names_the_torch_the_outputs_and_each_claim_whose_verdict_moved() -> None:
    old = Provenance("2.13.0+cpu", "3.11.7", "Linux x86_64", "a CPU", "AVX512", 2, 2, "none", "2026-12-01")
    new = replace(old, torch_version="2.15.0+cpu")

    def claim(statement: str, held: bool, applies: bool = True) -> Claim:
        return Claim(statement, held, "", 1, "p.py", applies, "" if applies else "one core")

    def block(block_id: str, output: str, *claims: Claim, machine: Provenance) -> RecordedBlock:
        return RecordedBlock("floors/8-chip.md", block_id, "sha256:" + "0" * 64, False, output, 1.0, claims, machine)

    before = Recording(
        "ci-2core",
        "Linux x86_64",
        "2026-12-01",
        old,
        (
            block("scaling", "x2.0", claim("a matmul gains", True), claim("sum gains", True), machine=old),
            block("same", "1\n", claim("ops are listed", True), machine=old),
            block("gone", "", machine=old),
        ),
    )
    after = replace(
        before,
        machine=new,
        blocks=(
            block("scaling", "x1.1", claim("a matmul gains", False), claim("sum gains", True, False), machine=new),
            block("same", "1\n", claim("ops are listed", True), machine=new),
            block("new", "", machine=new),
        ),
    )
    changes = recording_changes(before, after)
    assert changes.outputs_changed == (("floors/8-chip.md", "scaling"),)
    assert (changes.outcomes_before, changes.outcomes_after) == ((3, 0, 0), (1, 1, 1))
    assert changes.lines() == [
        "ci-2core: torch 2.13.0+cpu -> 2.15.0+cpu: 3 blocks, 1 outputs changed; "
        "claims held 3 -> 1, missed 0 -> 1, not applicable 0 -> 1",
        "  floors/8-chip.md › new: new block",
        "  floors/8-chip.md › gone: no longer recorded",
        "  floors/8-chip.md › scaling: held -> missed: a matmul gains",
        "  floors/8-chip.md › scaling: held -> not applicable: sum gains",
    ]
