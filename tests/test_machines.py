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


# A lab page as mkdocs-jupyter writes it: each code cell's source (highlighted), then its outputs.
LAB_PAGE = """
<div class="jp-Cell jp-CodeCell"><div class="jp-Cell-inputWrapper"><div class="highlight-ipynb hl-python"><pre>
<span class="n">expect</span><span class="p">(</span><span class="n">ok</span><span class="p">)</span>
<span class="nb">print</span><span class="p">(</span>
<span class="s2">"not graded on this machine: too noisy"</span><span class="p">)</span>
<span class="nb">print</span><span class="p">(</span>
<span class="s2">"self-check passed: your formula matches"</span><span class="p">)</span>
</pre></div></div>
<div class="jp-Cell-outputWrapper"><div class="jp-OutputArea jp-Cell-outputArea"><div class="jp-OutputArea-child">
<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain">
<pre>self-check passed: your formula matches all 4 dtypes you measured
</pre>
</div></div></div></div></div>
<div class="jp-Cell jp-CodeCell"><div class="highlight-ipynb hl-python"><pre>
<span class="nb">print</span><span class="p">(</span>
<span class="s2">"self-check passed: all right"</span><span class="p">)</span>
</pre></div>
<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain"><pre>x&nbsp;=&nbsp;3<br>
not graded on this machine: the two timers, 2.1, is within 4 times of 3
self-check passed: all right
</pre></div></div>
<p>Run the self-check: it prints "self-check passed" when your answer matches.</p>
"""


def test_lab_checks_are_counted_from_what_the_labs_printed_not_from_their_code(tmp_path: Path) -> None:
    # A lab page shows each cell's code as well as its outputs: counting the strings anywhere on the page
    # counted every `print("self-check passed ...")` twice (68 passed and 6 not graded where the outputs
    # showed 34 and 0).
    machines = _machines()
    page = tmp_path / "labs" / "1-program" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(LAB_PAGE, encoding="utf-8")
    assert machines._lab_checks(tmp_path) == (2, 1)
    outputs = machines.executed_outputs(LAB_PAGE)
    assert len(outputs) == 2 and outputs[0].strip().startswith("self-check passed: your formula")


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
