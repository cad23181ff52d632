"""`make machines` builds the site as four kinds of machine and prints one table of what each did."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from conftest import ROOT


def _machines() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_machines", ROOT / "bench" / "machines.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_tiers_are_a_laptop_a_one_core_scalar_runner_a_loaded_host_and_spawn() -> None:
    machines = _machines()
    tiers = {tier.name: tier for tier in machines.TIERS}
    assert list(tiers) == ["as-is", "one-core-scalar", "loaded", "spawn"]
    scalar = tiers["one-core-scalar"]
    assert scalar.cpus == "0"
    assert scalar.env == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"}
    assert tiers["loaded"].hogs == 2
    assert tiers["spawn"].env == {"FLOORS_START_METHOD": "spawn"}
    assert tiers["as-is"].env == {} and tiers["as-is"].hogs == 0 and tiers["as-is"].cpus is None


def test_the_table_says_what_each_tier_did_and_a_failure_in_words(tmp_path: Path) -> None:
    machines = _machines()
    as_is, scalar = machines.TIERS[:2]
    passed = machines.Outcome(as_is, True, 301.4, (181, 0, 2), (30, 1))
    failed = machines.Outcome(scalar, False, 99.0, (170, 1, 12), (29, 2), "WARNING - claim did not hold")
    rows = machines.table([passed, failed]).splitlines()
    assert rows[0].startswith("| tier | stands for | build | claims held / missed / n.a.")
    assert rows[2] == "| as-is | a laptop or workstation as it is | passed | 181 / 0 / 2 | 30 / 1 | 301 s |"
    assert "| FAILED: WARNING - claim did not hold | 170 / 1 / 12 |" in rows[3]


def test_lab_checks_are_counted_from_the_tiers_own_lab_pages(tmp_path: Path) -> None:
    machines = _machines()
    page = tmp_path / "labs" / "1-program" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text("self-check passed: a\nself-check passed: b\nnot graded on this machine: noisy\n")
    assert machines._lab_checks(tmp_path) == (2, 1)


def test_a_blocks_process_runs_the_kernels_the_tier_asks_for() -> None:
    # The one-core-scalar tier sets ATEN_CPU_CAPABILITY=default; a block's narrow environment dropped
    # it, so its proofs (and the provenance) still ran the machine's vector kernels.
    code = "from pytorch_floors.execution.facts import torch_facts; print(torch_facts().cpu_capability)"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "DEFAULT"
