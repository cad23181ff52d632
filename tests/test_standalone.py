"""Every proof download runs on its own: in a reader's Python with torch and numpy but without pytorch_floors."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from standalone_runs import StandaloneRecords, import_versions, run_key
from torch_only import TorchOnly, make_torch_only

from conftest import LAUNCH_ENVIRONMENT, PROJECT_CACHE, ROOT, Build
from pytorch_floors.execution.bundle import BundleError, bundle, helper_modules

PACKAGE_DIR = ROOT / "src" / "pytorch_floors"
DOWNLOAD = re.compile(r'<a href="(?P<href>[^"]+\.py)" download>')


def bare_environment(torch_only: TorchOnly) -> dict[str, str]:
    """The environment the test run was started with (a reader's shell, not what torch's imports in this
    worker added to it) with the torch-only environment activated: no PYTHONPATH, no `FLOORS_*`, and not
    the project's environment's `bin` on PATH."""
    return torch_only.environment(LAUNCH_ENVIRONMENT)


def bare_python(
    torch_only: TorchOnly, script: Path, cwd: Path, timeout: float = 300, arguments: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `script` with the torch-only interpreter (`tests/torch_only.py`): it, and every Python it starts
    with `sys.executable` or `python` on PATH, has torch and numpy and nothing of this project."""
    return subprocess.run(
        [str(torch_only.python), str(script), *(arguments or [])],
        cwd=cwd,
        env=bare_environment(torch_only),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# What a process sees of the project: printed by the probe, then by a child it starts as proofs start theirs.
PROBE = """
import importlib.util, json, os, subprocess, sys
import numpy, torch
def seen():
    return {
        "missing": [name for name in ("pytorch_floors", "setuptools", "mkdocs", "pytest")
                    if importlib.util.find_spec(name) is None],
        "pythonpath": os.environ.get("PYTHONPATH"),
        "project_paths": [entry for entry in sys.path if entry.startswith(PROJECT_PATHS)],
    }
if sys.argv[1:] == ["child"]:
    print(json.dumps(seen()))
else:
    child = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True, check=True)
    by_path = subprocess.run(["python", __file__, "child"], capture_output=True, text=True, check=True)
    print(json.dumps([seen(), json.loads(child.stdout), json.loads(by_path.stdout)]))
"""


@pytest.mark.waits
def test_the_torch_only_interpreter_and_every_python_it_starts_have_torch_and_numpy_but_nothing_of_the_project(
    torch_only: TorchOnly, torch_template: TorchTemplate, tmp_path: Path
) -> None:
    # `python -S` with torch's folder on PYTHONPATH hid the project from the download only: a child it started with
    # `sys.executable` was the project's environment's Python, with pytorch_floors, and capability.py's child needed it.
    probe = tmp_path / "probe.py"
    project_paths = (str(ROOT / "src"), sys.prefix, os.path.realpath(sys.prefix))  # the package, its environment
    probe.write_text(PROBE.replace("PROJECT_PATHS", repr(project_paths)), encoding="utf-8")
    nothing = {"missing": ["pytorch_floors", "setuptools", "mkdocs", "pytest"], "pythonpath": None, "project_paths": []}
    # A fresh interpreter, as a reader runs a download; then one forked from the template, as the downloads run here,
    # and the two Pythons it starts (each a fresh interpreter too, in the environment the template passes on).
    alone = bare_python(torch_only, probe, tmp_path, arguments=["child"])
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout) == nothing
    forked = torch_template.run(probe)
    assert forked.returncode == 0, forked.stderr
    assert json.loads(forked.stdout) == [nothing, nothing, nothing]


@pytest.mark.waits
def test_a_bundled_proof_runs_where_the_plain_one_cannot(torch_template: TorchTemplate, tmp_path: Path) -> None:
    proof = ROOT / "snippets" / "7-memory" / "bytes_per_element.py"
    source = proof.read_text(encoding="utf-8")
    (tmp_path / "plain").mkdir()
    plain = tmp_path / "plain" / "plain.py"
    plain.write_text(source, encoding="utf-8")
    failed = torch_template.run(plain)
    assert failed.returncode != 0 and "No module named 'pytorch_floors'" in failed.stderr  # what readers got before
    (tmp_path / "bundled").mkdir()
    bundled = tmp_path / "bundled" / "bundled.py"
    bundled.write_text(bundle(source, "bytes_per_element.py", PACKAGE_DIR), encoding="utf-8")
    done = torch_template.run(bundled)
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


@pytest.mark.parametrize(
    "child",
    [
        '"""\nimport torch\nfrom pytorch_floors.measure import time_call\nprint(time_call(torch.ones, samples=1))\n"""',
        "'import torch; import pytorch_floors.measure'",
        '"""\n    from pytorch_floors.claims import claim\n    claim(\'x\', held=True)\n"""',
    ],
    ids=["from-import", "one-line", "indented"],
)
def test_bundle_refuses_a_proof_whose_child_process_imports_the_package(child: str) -> None:
    # The download carries the helpers in its own process; a Python it starts with this code finds no pytorch_floors.
    source = f"import subprocess, sys\n\nCHILD = {child}\nsubprocess.run([sys.executable, '-c', CHILD], check=True)\n"
    with pytest.raises(BundleError, match=r"x\.py:3: this string is Python that imports pytorch_floors"):
        bundle(source, "x.py", PACKAGE_DIR)
    with pytest.raises(BundleError, match=r"x\.py:4"):  # the proof itself imports a helper: still refused
        bundle("from pytorch_floors.measure import time_call\n" + source, "x.py", PACKAGE_DIR)


def test_bundle_lets_a_proof_name_the_package_in_prose_and_start_a_child_that_needs_torch_alone() -> None:
    source = (
        '"""Times with `from pytorch_floors.measure import time_call`, as every page does."""\n'
        "import subprocess, sys\n"
        "print('pytorch_floors.measure times this')\n"
        "subprocess.run([sys.executable, '-c', 'import torch; print(torch.ones(1))'], check=True)\n"
    )
    assert bundle(source, "x.py", PACKAGE_DIR) == source


# A torch-only interpreter that imports torch, then runs each script it is sent (its path, a JSON line) in a child
# forked from it: what `python script` does, without paying torch's import once per script.
# Each child starts in the script's directory with that directory first on sys.path and /dev/null as stdin, and writes
# its stdout and stderr to `stdout.txt` and `stderr.txt` beside the script; the template answers with its exit code.
TEMPLATE = """
import json, os, runpy, sys, traceback
import torch  # noqa: F401  (imported once; every script is forked from here)
def redirect(fd, path, flags):
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)
for request in iter(sys.stdin.readline, ""):
    script = json.loads(request)
    workdir = os.path.dirname(script)
    pid = os.fork()
    if pid == 0:
        redirect(0, os.devnull, os.O_RDONLY)  # the requests' pipe is not the script's stdin
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            redirect(fd, os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
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
    print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])), flush=True)
"""


class TorchTemplate:
    """The torch-only interpreter (`bare_python`'s) running `TEMPLATE`: each script it runs is forked from it.

    A fresh `python download.py` spends a second or more importing torch before the download's own work; every proof
    imports torch first, so a child forked once torch is imported runs it as a fresh interpreter would, and sees what
    that would: the torch-only environment, nothing of the project (the probe test checks both).
    """

    def __init__(self, torch_only: TorchOnly, directory: Path) -> None:
        self.torch_only = torch_only
        self.directory = directory
        self.process: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            template = self.directory / "template.py"
            template.write_text(TEMPLATE, encoding="utf-8")
            with (self.directory / "template-stderr.txt").open("w", encoding="utf-8") as stderr:
                self.process = subprocess.Popen(
                    [str(self.torch_only.python), str(template)],
                    cwd=self.directory,
                    env=bare_environment(self.torch_only),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    start_new_session=True,  # its group: a script still running at its limit is killed with it
                )
        return self.process

    def run(self, script: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run `script` (alone in its directory, where its output lands) in a child forked from the template.

        Raises:
            AssertionError: The script was still running after `timeout` seconds (the template and every process
                of its group are killed), or the template itself died.
        """
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(str(script)) + "\n")
        process.stdin.flush()
        if not select.select([process.stdout], [], [], timeout)[0]:
            self.close()
            raise AssertionError(f"{script.name} was still running after {timeout:.0f} s")
        answer = process.stdout.readline()
        if not answer:
            self.close()
            stderr = (self.directory / "template-stderr.txt").read_text(encoding="utf-8")
            raise AssertionError(f"the torch-only template died running {script.name}:\n{stderr[-3000:]}")
        output = {name: (script.parent / f"{name}.txt").read_text(encoding="utf-8") for name in ("stdout", "stderr")}
        return subprocess.CompletedProcess([str(script)], int(json.loads(answer)), output["stdout"], output["stderr"])

    def close(self) -> None:
        """End the template and whatever of its process group still runs."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None


@pytest.fixture(scope="module")
def torch_template(torch_only: TorchOnly, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TorchTemplate]:
    """One template per worker while it runs this module's tests: one import of torch for all the scripts they run."""
    template = TorchTemplate(torch_only, tmp_path_factory.mktemp("torch-template"))
    yield template
    template.close()


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


def run_standalone(template: TorchTemplate, downloads: Mapping[str, bytes], tmp_path: Path) -> tuple[int, list[str]]:
    """Run each download (its path in the site → its bytes) in the torch-only template, each alone in an empty
    directory; remember those that exit 0 (`STANDALONE_RECORDS`), and skip those that did before.

    Returns:
        How many ran (the others were cached), and one message per download that failed: its exit code and
        the end of its output.
    """
    versions = {**import_versions(), "site-packages": ", ".join(template.torch_only.distributions)}
    environment = bare_environment(template.torch_only)
    keys = {target: run_key(data, environment=environment, versions=versions) for target, data in downloads.items()}
    to_run = [target for target in sorted(downloads) if not STANDALONE_RECORDS.passed(keys[target])]
    failures = []
    for target in to_run:
        workdir = tmp_path / target.replace("/", "_")
        workdir.mkdir()
        script = workdir / Path(target).name
        script.write_bytes(downloads[target])  # only the downloaded file, nothing else beside it
        done = template.run(script)
        if done.returncode == 0:
            STANDALONE_RECORDS.record(keys[target], target)
        else:
            failures.append(f"{target}: exit {done.returncode}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return len(to_run), failures


@pytest.mark.slow
@pytest.mark.parametrize("share", range(SHARES))
def test_every_download_link_of_the_built_site_runs_standalone(
    built_site: Build, torch_template: TorchTemplate, tmp_path: Path, share: int
) -> None:
    """Fetch each proof download link from the built pages into an empty directory and run it bare (a share of them).

    A download whose run with these exact inputs exited 0 before is reported as cached, not run again.
    """
    downloads = dict(sorted(site_downloads(built_site).items())[share::SHARES])
    assert downloads, "this share has downloads to run"
    ran, failures = run_standalone(
        torch_template, {target: path.read_bytes() for target, path in downloads.items()}, tmp_path
    )
    print(f"share {share}: {ran} downloads run, {len(downloads) - ran} cached (ran standalone before as they are)")
    assert not failures, "\n\n".join(failures)


def snippet_download(proof: Path) -> tuple[str, bytes]:
    """A proof's download as the build writes it: its path in the site, and its bundled bytes."""
    target = proof.relative_to(ROOT).as_posix()
    return target, bundle(proof.read_text(encoding="utf-8"), target, PACKAGE_DIR).encode()


PROOFS_STARTING_PYTHON = sorted(
    proof.relative_to(ROOT / "snippets").as_posix()
    for proof in (ROOT / "snippets").rglob("*.py")
    if "sys.executable" in proof.read_text(encoding="utf-8")
)
"""The proofs that start a Python of their own: on a reader's machine it has torch and numpy, nothing else."""


@pytest.mark.waits
@pytest.mark.parametrize("proof", PROOFS_STARTING_PYTHON)
def test_a_download_whose_proof_starts_a_python_runs_with_torch_alone(
    torch_template: TorchTemplate, tmp_path: Path, proof: str
) -> None:
    # capability.py's child ran `from pytorch_floors.measure import time_call`: the download carries the helpers in
    # its own process only, so the child failed for readers, and passed here only while it found the project's Python.
    # Cached like the site's downloads: the same bytes in the same interpreter ran before.
    target, data = snippet_download(ROOT / "snippets" / proof)
    _, failures = run_standalone(torch_template, {target: data}, tmp_path)
    assert not failures, failures[0]


@pytest.mark.waits
@pytest.mark.parametrize("setuptools", [False, True], ids=["without-setuptools", "with-setuptools"])
def test_op_registration_download_runs_with_or_without_the_tools_a_cpp_extension_needs(
    torch_template: TorchTemplate, tmp_path: Path, setuptools: bool
) -> None:
    # torch.utils.cpp_extension imports setuptools, which newer torch does not install: the download ended in
    # `ModuleNotFoundError: No module named 'setuptools'` instead of saying the C++ part cannot apply, and why.
    _, data = snippet_download(ROOT / "snippets" / "4-dispatcher" / "op_registration.py")
    (tmp_path / "download").mkdir()
    script = tmp_path / "download" / "op_registration.py"
    script.write_bytes(data)
    if setuptools:  # an interpreter of its own, with setuptools: a fresh one
        done = bare_python(make_torch_only(tmp_path / "venv", frozenset()), script, script.parent)
    else:
        done = torch_template.run(script)
    assert done.returncode == 0, done.stderr[-3000:]
    cxx = "a C++ kernel is registered boxed and unboxed; a Python one boxed only"
    if setuptools:
        # Built where a compiler and ninja are on PATH; otherwise not applicable, naming the tool that is missing.
        assert f"claim held: {cxx}" in done.stdout or re.search(
            r"claim not applicable on this machine: no (C\+\+ compiler|ninja) .*" + re.escape(cxx), done.stdout
        ), done.stdout
    else:
        assert (
            "claim not applicable on this machine: no setuptools in this Python: torch.utils.cpp_extension builds "
            f"C++ extensions with it (not checked: {cxx})"
        ) in done.stdout, done.stdout


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
    monkeypatch: pytest.MonkeyPatch, torch_only: TorchOnly
) -> None:
    # Importing torch._inductor sets TORCHINDUCTOR_CACHE_DIR in os.environ: the downloads' keys then depended on
    # whether an earlier test in the same worker had imported it, and 57 of 75 cached downloads ran again.
    before = bare_environment(torch_only)
    key = run_key(b"print(1)\n", environment=before, versions=VERSIONS)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_someone")
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert bare_environment(torch_only) == before
    assert run_key(b"print(1)\n", environment=bare_environment(torch_only), versions=VERSIONS) == key


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
