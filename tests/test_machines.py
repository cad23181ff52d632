"""`make machines` builds the site as eleven kinds of machine and prints one table of what each did.

The tiers are defined once (`pytorch_floors.tiers`), for `make machines` and `make record` alike; these
tests check the definitions, the neighbour's command and the table's counts, and run no build.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest

from conftest import ROOT
from pytorch_floors import tiers
from pytorch_floors.errors import FloorsError
from pytorch_floors.tiers import TIERS, Neighbour, as_tier, hog_count, tier_named, tier_python
from pytorch_floors.tiers import copies as tier_copies
from pytorch_floors.tiers import python as tier_pythons


def _machines() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_machines", ROOT / "bench" / "machines.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _tier(name: str) -> tiers.Tier:
    tier = tier_named(name)
    assert tier is not None, name
    return tier


def test_make_machines_lists_the_tiers_of_issues_33_and_60() -> None:
    machines = _machines()
    assert [tier.name for tier in machines.TIERS] == [
        "as-is",
        "one-core-scalar",
        "loaded",
        "crowded",
        "spawn",
        "avx2",
        "cuda-build-no-gpu",
        "python3.12",
        "python3.13",
        "torch-2.14.1",
        "torch-2.15.0",
    ]
    # One definition: bench/machines.py takes the package's tiers (make record's), and loads the
    # machine only through as_tier (no `yes` hogs or `taskset` of its own).
    assert machines.TIERS is TIERS and machines.as_tier is as_tier
    source = (ROOT / "bench" / "machines.py").read_text(encoding="utf-8")
    assert "taskset" not in source and '"yes"' not in source and "sched_setaffinity" not in source


def test_each_tier_sets_what_it_stands_for() -> None:
    as_is, scalar, loaded, crowded = (_tier(n) for n in ("as-is", "one-core-scalar", "loaded", "crowded"))
    assert as_is.env == {} and as_is.cpus is None and hog_count(as_is) == 0 and not as_is.neighbour
    assert as_is.venv is None
    assert scalar.cpus == "0"
    assert scalar.env == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"}
    assert hog_count(loaded) == 2 and not loaded.neighbour
    # Crowded: a neighbour building the site cold, and two spinning hogs per core this process may use.
    assert crowded.neighbour and crowded.env == {} and crowded.cpus is None
    assert hog_count(crowded) == 2 * len(os.sched_getaffinity(0))
    assert _tier("spawn").env == {"FLOORS_START_METHOD": "spawn"}
    avx2 = _tier("avx2")
    assert avx2.env == {"ATEN_CPU_CAPABILITY": "avx2"} and "emulated" in avx2.stands_for
    assert avx2.venv is None and avx2.cpus is None


def test_the_cuda_and_python_tiers_run_in_environments_of_their_own() -> None:
    cuda = _tier("cuda-build-no-gpu")
    assert cuda.venv == tiers.TierEnvironment(".venv-cuda", "", pypi_torch=True, cuda_build=True)
    assert cuda.env == {"CUDA_VISIBLE_DEVICES": ""}  # no GPU, even on a machine that has one
    for minor in ("3.12", "3.13"):
        tier = _tier(f"python{minor}")
        assert tier.venv == tiers.TierEnvironment(f".venv-py{minor}", minor)
        assert tier.env == {} and tier.cpus is None and hog_count(tier) == 0
    # Each environment lies in a folder git ignores: the project's .gitignore or the folder's own `*`.
    for tier in TIERS:
        if tier.venv is not None:
            assert tier.venv.folder.startswith(".venv-")


def test_pip_takes_the_cuda_tiers_torch_from_pypi_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The dev image's find-links holds a +cpu wheel that satisfies torch==2.13.0 and sorts higher.
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    monkeypatch.setenv("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt")
    cuda = _tier("cuda-build-no-gpu").venv
    assert cuda is not None
    env = tier_pythons._pip_env(cuda)
    assert env["PIP_CONFIG_FILE"] == os.devnull and "PIP_FIND_LINKS" not in env
    assert env["PIP_CERT"] == "/etc/ssl/certs/ca-certificates.crt"
    stock = _tier("python3.12").venv
    assert stock is not None and tier_pythons._pip_env(stock)["PIP_FIND_LINKS"] == "/opt/wheels"


def test_a_tier_uses_its_environment_once_made_and_this_python_otherwise(tmp_path: Path) -> None:
    assert tier_python(_tier("avx2"), tmp_path) == sys.executable
    tier = _tier("python3.12")
    assert tier.venv is not None
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text(f"{name}\n", encoding="utf-8")
    python = tmp_path / tier.venv.folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("", encoding="utf-8")
    (python.parent.parent / ".tier-installed").write_text(tier_pythons._digest(tmp_path, tier.venv), encoding="utf-8")
    # Made for these requirements: used as it is, nothing run.
    assert tier_python(tier, tmp_path) == str(python)


def test_a_python_tier_without_its_interpreter_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    with pytest.raises(FloorsError, match=r"no Python 3\.12 found .*install it"):
        tiers.find_python("3.12")


def test_the_crowded_neighbour_builds_a_copy_of_the_site_cold_with_its_own_cache(tmp_path: Path) -> None:
    neighbour = Neighbour(tmp_path, python="/usr/bin/python3")
    try:
        command = neighbour.command()
        assert command == ["/usr/bin/python3", "-m", "mkdocs", "build", "--site-dir", str(neighbour.copy / "site")]
        assert "--strict" not in command  # its outcome is not graded: it is load
        env = neighbour.environment()
        assert env["FLOORS_CACHE_DIR"] == str(neighbour.copy / ".cache") and env["FLOORS_CLAIMS"] == "advisory"
        # A round that stopped on a block's time limit would skip the rest of the site (the labs).
        assert env["FLOORS_EXEC_TIMEOUT"] == "600"
        assert not neighbour.copy.is_relative_to(tmp_path)
    finally:
        neighbour.stop()
    assert not neighbour.copy.parent.exists()


def test_the_neighbours_copy_leaves_out_environments_caches_and_sites(tmp_path: Path) -> None:
    for path in ("docs/index.md", "src/pkg/__pycache__/x.pyc", ".venv-cuda/bin/python", ".cache/a", "site/x.html"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x", encoding="utf-8")
    ignore = tier_copies._not_copied(tmp_path)
    assert ignore(str(tmp_path), ["docs", "src", ".venv-cuda", ".venv", ".cache", "site", ".git", "mkdocs.yml"]) == {
        ".venv-cuda",
        ".venv",
        ".cache",
        "site",
        ".git",
    }
    assert ignore(str(tmp_path / "docs"), ["site", "build"]) == set()  # only the project's own are left out
    assert ignore(str(tmp_path / "src" / "pkg"), ["__pycache__", "a.py"]) == {"__pycache__"}


def test_as_tier_starts_the_tiers_hogs_and_stops_them() -> None:
    me = psutil.Process()

    def hogs() -> list[psutil.Process]:
        return [c for c in me.children() if tiers.HOG in " ".join(c.cmdline())]

    assert hogs() == []
    with as_tier(_tier("loaded")):
        # Popen returns once a child's exec has passed its point of no return; the kernel sets the new
        # command line a moment later, and on a busy machine psutil read it empty (this failed once, in
        # the fast lane beside the pattern tests). Wait for it, up to a bound no machine needs.
        deadline = time.monotonic() + 30
        while len(hogs()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(hogs()) == 2, [(child.pid, child.cmdline()) for child in me.children()]
    assert hogs() == []


def test_a_tier_with_its_own_python_sets_its_environment_for_the_build_it_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    # bench/machines.py names the interpreter the build runs with: nothing is made or run again.
    with as_tier(_tier("cuda-build-no-gpu"), python=sys.executable):
        assert os.environ["CUDA_VISIBLE_DEVICES"] == ""
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"


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


def test_every_tier_builds_the_tree_as_it_was_when_the_run_began(monkeypatch: pytest.MonkeyPatch) -> None:
    # A run of make machines takes many minutes: the tiers built the live tree, so an edit made meanwhile
    # changed what the later tiers built, and the table mixed two versions of the site.
    machines = _machines()
    built: list[tuple[Path, dict[str, str]]] = []

    def fake_run(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        if "mkdocs" in command:  # the tier's build; lscpu too goes through subprocess.run
            built.append((options["cwd"], options["env"]))
        return subprocess.CompletedProcess(command, 1, "", "")

    monkeypatch.setattr(machines.subprocess, "run", fake_run)
    machines.main(["--tier", "as-is", "--tier", "spawn"])
    (first, env), (second, _) = built
    assert first == second and first != ROOT and first.name == "project"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(first / "src")
    assert not first.exists(), "the snapshot is left behind"
    assert [t.name for t in machines.TIERS] and (ROOT / "mkdocs.yml").is_file()


def test_a_snapshot_holds_the_tree_and_none_of_its_environments(tmp_path: Path) -> None:
    for path in ("docs/index.md", "src/pkg/a.py", ".venv/bin/python", ".cache/x", ".git/HEAD"):
        (tmp_path / "tree" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / path).write_text("before", encoding="utf-8")
    copy = tiers.snapshot(tmp_path / "tree", tmp_path / "copy")
    (tmp_path / "tree" / "docs" / "index.md").write_text("edited during the run", encoding="utf-8")
    assert (copy / "docs" / "index.md").read_text(encoding="utf-8") == "before"
    assert (copy / "src" / "pkg" / "a.py").is_file()
    assert not any((copy / name).exists() for name in (".venv", ".cache", ".git"))


def test_the_torch_tiers_run_every_proof_on_a_newer_torch_without_a_gpu() -> None:
    """Issue 60: the site ran torch 2.13.0 alone while readers' `pip install torch` got 2.15.0."""
    for version, month, month_zh in (("2.14.1", "September", "9"), ("2.15.0", "October", "10")):
        tier = _tier(f"torch-{version}")
        assert tier.venv == tiers.TierEnvironment(f".venv-torch-{version}", torch=version)
        assert tier.env == {"CUDA_VISIBLE_DEVICES": ""}  # PyPI's CUDA build, run on the CPU
        assert tier.cpus is None and hog_count(tier) == 0 and not tier.neighbour
        assert tier.stands_for == f"torch {version} (PyPI, {month} 2026)"
        assert tier.stands_for_in("zh") == f"torch {version}（PyPI，2026 年 {month_zh} 月）"


def test_a_torch_tiers_requirements_pin_exactly_its_release() -> None:
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    pinned = tier_pythons.pinned_requirements(requirements, "2.15.0")
    assert re.findall(r"^torch\b.*$", pinned, re.M) == ["torch===2.15.0"]  # not 2.15.0+cpu from a local folder
    others = [line for line in requirements.splitlines() if not line.startswith("torch==")]
    assert [line for line in pinned.splitlines() if line != "torch===2.15.0"] == others
    with pytest.raises(FloorsError, match="pins no torch"):
        tier_pythons.pinned_requirements("numpy==2.4.6\n# torch==X in a comment\n", "2.15.0")


# What `pip config list` prints on the dev image (the cap) under a variable that names other files.
PIP_CONFIG_LIST = """\
:env:.find-links='/opt/wheels'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
"""
IMAGE_CONSTRAINTS = "# These releases lie on this machine's disk.\ntorch<=2.14.1\ntorchvision<=0.29.1\n"


def test_a_torch_above_the_images_cap_gets_constraints_of_its_own(tmp_path: Path) -> None:
    assert tier_pythons.constraint_files(PIP_CONFIG_LIST) == ["/etc/xdg/pip/constraints.txt"]
    overridden = PIP_CONFIG_LIST + ":env:.constraint='/a.txt /b.txt'\n"
    assert tier_pythons.constraint_files(overridden) == ["/a.txt", "/b.txt"]
    assert tier_pythons.constraint_files(":env:.find-links='/opt/wheels'\n") == []
    # 2.15.0 is above the cap: the cap alone goes, every other constraint stays.
    lifted = tier_pythons.lifted_constraints(IMAGE_CONSTRAINTS, "2.15.0")
    assert lifted == "# These releases lie on this machine's disk.\ntorchvision<=0.29.1\n"
    # 2.14.1 is within it (its wheel is on this image's disk): pip's configuration serves as it is.
    assert tier_pythons.lifted_constraints(IMAGE_CONSTRAINTS, "2.14.1") is None
    assert tier_pythons.lifted_constraints("torch>=2.14,<2.16  # a range\n", "2.15.0") is None
    # The environment's own file overrides the configured one; the local wheel folders are kept.
    torch = _tier("torch-2.15.0").venv
    assert torch is not None
    env = tier_pythons._pip_env(torch, tmp_path / "pip-constraints.txt")
    assert env["PIP_CONSTRAINT"] == str(tmp_path / "pip-constraints.txt")
    assert "PIP_CONFIG_FILE" not in env or env["PIP_CONFIG_FILE"] != os.devnull


def test_a_tiers_environment_lies_in_the_checkout_the_package_runs_from() -> None:
    """`checkout()` looked two folders above tiers/copies.py (`src/`) once tiers.py became a package."""
    assert tier_copies.checkout() == ROOT.resolve()
