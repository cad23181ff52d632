"""Every proof download runs on its own: an interpreter with torch and numpy but without pytorch_floors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import numpy
import pytest
import torch
from standalone_runs import StandaloneRecords, import_versions, run_key

from conftest import LAUNCH_ENVIRONMENT, PROJECT_CACHE, ROOT, Build
from pytorch_floors.execution.bundle import BundleError, bundle, helper_modules

PACKAGE_DIR = ROOT / "src" / "pytorch_floors"
DOWNLOAD = re.compile(r'<a href="(?P<href>[^"]+\.py)" download>')


def bare_environment() -> dict[str, str]:
    """The environment the test run was started with (a reader's shell, not what torch's imports in this
    worker added to it) less Python's and the project's variables, with only torch's and numpy's install
    directories on PYTHONPATH."""
    roots = {str(Path(module.__file__).resolve().parent.parent) for module in (torch, numpy)}  # type: ignore[arg-type]
    env = {k: v for k, v in LAUNCH_ENVIRONMENT.items() if not k.startswith(("PYTHON", "FLOORS_"))}
    env["PYTHONPATH"] = os.pathsep.join(sorted(roots))
    return env


def bare_python(
    script: Path, cwd: Path, timeout: float = 300, arguments: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `script` with `python -S`: no site-packages processing, so the editable pytorch_floors is
    invisible, and a PYTHONPATH holding only the directories torch and numpy were installed in."""
    return subprocess.run(
        [sys.executable, "-S", str(script), *(arguments or [])],
        cwd=cwd,
        env=bare_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.waits
def test_the_bare_interpreter_has_torch_and_numpy_but_not_the_package(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib.util, torch, numpy\nprint(importlib.util.find_spec('pytorch_floors') is None)\n",
        encoding="utf-8",
    )
    done = bare_python(probe, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.mark.waits
def test_a_bundled_proof_runs_where_the_plain_one_cannot(tmp_path: Path) -> None:
    proof = ROOT / "snippets" / "7-memory" / "bytes_per_element.py"
    source = proof.read_text(encoding="utf-8")
    plain = tmp_path / "plain.py"
    plain.write_text(source, encoding="utf-8")
    failed = bare_python(plain, tmp_path)
    assert failed.returncode != 0 and "No module named 'pytorch_floors'" in failed.stderr  # what readers got before
    bundled = tmp_path / "bundled.py"
    bundled.write_text(bundle(source, "bytes_per_element.py", PACKAGE_DIR), encoding="utf-8")
    done = bare_python(bundled, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "x.nbytes" in done.stdout


def test_bundle_keeps_docstring_and_future_import_first() -> None:
    source = '"""Doc."""\n\nfrom __future__ import annotations\n\nfrom pytorch_floors.measure import human_bytes\n'
    bundled = bundle(source, "x.py", PACKAGE_DIR)
    assert bundled.startswith('"""Doc."""\n\nfrom __future__ import annotations\n')
    assert bundled.index("_floors_module('pytorch_floors.measure'") < bundled.index("from pytorch_floors.measure")
    compile(bundled, "x.py", "exec")


def test_bundle_leaves_a_proof_without_helpers_unchanged_and_refuses_what_cannot_travel() -> None:
    source = "import torch\nprint(torch.ones(1))\n"
    assert bundle(source, "x.py", PACKAGE_DIR) == source
    assert helper_modules("from pytorch_floors.plot import show\nimport pytorch_floors.measure\n", "x.py") == [
        "plot",
        "measure",
    ]
    with pytest.raises(BundleError, match=r"x\.py:1"):
        bundle("from pytorch_floors import FLOORS\n", "x.py", PACKAGE_DIR)


# Runs each download given on the command line (script, then its directory) in a child forked from
# one bare interpreter that has imported torch: what `python -S download.py` does, without paying
# torch's import once per download. Prints each script's exit code as JSON; each child's output
# goes to `output.txt` beside its script.
FORK_RUNNER = """
import json, os, runpy, sys, traceback
import torch  # noqa: F401  (imported once; every download is forked from here)
codes = {}
for script, workdir in zip(sys.argv[1::2], sys.argv[2::2]):
    pid = os.fork()
    if pid == 0:
        log = os.open(os.path.join(workdir, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(workdir)
        sys.argv, sys.path[0] = [script], workdir
        code = 0
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    codes[script] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(codes))
"""


SHARES = 4
"""The downloads run in this many tests, each a share of them: one test of minutes would hold one
pytest-xdist worker to the end of the run, where shares let the other worker take some."""


def site_downloads(built_site: Build) -> dict[str, Path]:
    """Each proof download the built pages link to: its path in the site, and the file there."""
    downloads: dict[str, Path] = {}
    for page in sorted(built_site.site.rglob("*.html")):
        url = page.relative_to(built_site.site).as_posix()
        for match in DOWNLOAD.finditer(page.read_text(encoding="utf-8")):
            target = urlsplit(urljoin(url, match["href"])).path
            downloads.setdefault(target, built_site.site / target)
    return downloads


@pytest.mark.slow
def test_every_proof_is_a_download_of_the_built_site(built_site: Build) -> None:
    assert len(site_downloads(built_site)) >= len(list((ROOT / "snippets").rglob("*.py"))) - 1


STANDALONE_RECORDS = StandaloneRecords(PROJECT_CACHE / "standalone-runs")
"""Downloads that ran standalone and exited 0 with the same bytes, interpreter, torch, numpy and settings
(`tests/standalone_runs.py`): a test run after one that changed none of these does not run them again."""


@pytest.mark.slow
@pytest.mark.parametrize("share", range(SHARES))
def test_every_download_link_of_the_built_site_runs_standalone(built_site: Build, tmp_path: Path, share: int) -> None:
    """Fetch each proof download link from the built pages into an empty directory and run it bare (a share of them).

    A download whose run with these exact inputs exited 0 before is reported as cached, not run again.
    """
    downloads = dict(sorted(site_downloads(built_site).items())[share::SHARES])
    assert downloads, "this share has downloads to run"
    versions, environment = import_versions(), bare_environment()
    contents = {target: path.read_bytes() for target, path in sorted(downloads.items())}
    keys = {target: run_key(data, environment=environment, versions=versions) for target, data in contents.items()}
    to_run = [target for target in contents if not STANDALONE_RECORDS.passed(keys[target])]
    cached = len(contents) - len(to_run)
    print(f"share {share}: {len(to_run)} downloads run, {cached} cached (ran standalone before as they are)")
    if not to_run:
        return
    scripts: dict[str, str] = {}
    arguments = []
    for target in to_run:
        workdir = tmp_path / target.replace("/", "_")
        workdir.mkdir()
        script = workdir / downloads[target].name
        script.write_bytes(contents[target])  # only the downloaded file, nothing else beside it
        scripts[str(script)] = target
        arguments += [str(script), str(workdir)]
    runner = tmp_path / "fork_runner.py"
    runner.write_text(FORK_RUNNER, encoding="utf-8")
    done = bare_python(runner, tmp_path, timeout=900, arguments=arguments)
    assert done.returncode == 0, done.stderr[-3000:]
    codes: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(codes) == set(scripts), "every download ran"
    for ran, code in codes.items():
        if code == 0:
            STANDALONE_RECORDS.record(keys[scripts[ran]], scripts[ran])
    failures = [
        f"{scripts[script]}: exit {code}\n{(Path(script).parent / 'output.txt').read_text(encoding='utf-8')[-1500:]}"
        for script, code in sorted(codes.items())
        if code != 0
    ]
    assert not failures, "\n\n".join(failures)


VERSIONS = {"torch": "2.13.0 abc /site/torch", "numpy": "2.3.0 /site/numpy"}


def test_a_download_that_ran_standalone_is_cached_only_for_the_same_inputs(tmp_path: Path) -> None:
    records = StandaloneRecords(tmp_path / "runs")
    environment = {"HOME": "/home/x", "OMP_NUM_THREADS": "2"}
    key = run_key(b"print(1)\n", environment=environment, versions=VERSIONS)
    assert not records.passed(key)
    records.record(key, "floors/1-program/walk.py")
    assert records.passed(key)
    # A variable torch does not read changes nothing; each input that decides the run is another key.
    assert run_key(b"print(1)\n", environment={**environment, "HOME": "/elsewhere"}, versions=VERSIONS) == key
    # `make test` exports the Makefile's TORCH=cpu (the build setup installs); a run of pytest alone has none.
    assert run_key(b"print(1)\n", environment={**environment, "TORCH": "cpu"}, versions=VERSIONS) == key
    others = [
        run_key(b"print(2)\n", environment=environment, versions=VERSIONS),
        run_key(b"print(1)\n", environment={**environment, "OMP_NUM_THREADS": "1"}, versions=VERSIONS),
        run_key(b"print(1)\n", environment={**environment, "ATEN_CPU_CAPABILITY": "default"}, versions=VERSIONS),
        run_key(b"print(1)\n", environment={**environment, "TORCHINDUCTOR_CACHE_DIR": "/tmp/x"}, versions=VERSIONS),
        run_key(b"print(1)\n", environment=environment, versions={**VERSIONS, "torch": "2.11.0 def /site/torch"}),
    ]
    assert len({key, *others}) == len(others) + 1
    assert not any(records.passed(other) for other in others)


def test_what_this_worker_imported_changes_neither_the_bare_environment_nor_a_run_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Importing torch._inductor sets TORCHINDUCTOR_CACHE_DIR in os.environ: the downloads' keys then depended on
    # whether an earlier test in the same worker had imported it, and 57 of 75 cached downloads ran again.
    before = bare_environment()
    key = run_key(b"print(1)\n", environment=before, versions=VERSIONS)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_someone")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert bare_environment() == before
    assert run_key(b"print(1)\n", environment=bare_environment(), versions=VERSIONS) == key


@pytest.mark.parametrize(
    "content",
    ["", "not json", "[]", '{"key": "0000", "download": "x.py"}', '{"download": "x.py"}', '{"key": "%s"}', "x" * 5000],
    ids=["empty", "garbage", "list", "another-key", "no-key", "no-download", "oversized"],
)
def test_a_standalone_record_that_is_not_well_formed_is_a_miss(tmp_path: Path, content: str) -> None:
    records = StandaloneRecords(tmp_path)
    key = run_key(b"print(1)\n", environment={}, versions=VERSIONS)
    (tmp_path / f"{key}.json").write_text(content.replace("%s", key), encoding="utf-8")
    assert not records.passed(key)
    records.record(key, "x.py")
    assert records.passed(key)
    with pytest.raises(ValueError, match="not a run key"):
        records.passed("../../etc/passwd")
