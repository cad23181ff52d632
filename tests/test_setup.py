"""Setup on stock machines: the Python `make setup` picks, and where pip takes torch from.

The Makefile's choices are run for real, in a copy of the project whose interpreters are stand-ins
(a shell script that answers the version probe, makes a "venv" of itself and logs every pip command):
so the command lines a stock Linux, macOS and this dev image would run are checked without installing
anything. The tests marked `network` ask PyPI (and PyTorch's CPU index) what they serve; `make check`
leaves them out.
"""

from __future__ import annotations

import concurrent.futures
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import ROOT, once_per_run, run_dir

SETUP_ENV = ROOT / "tools" / "setup_env.py"
sys.path.insert(0, str(SETUP_ENV.parent))
import setup_env  # noqa: E402  # tools/ is no package: the script runs before any environment exists

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIN = setup_env.torch_pin(ROOT / "requirements.txt")

# --- the Python ----------------------------------------------------------------------------------


def interpreter(folder: Path, name: str, version: str | None, *, venv: bool = True) -> None:
    """A stand-in interpreter answering the version probe (None: a pyenv shim for a version not active)."""
    answer = (
        f"printf '%s\\n' '{version}' '{'venv' if venv else 'no-venv'}'"
        if version
        else f"echo 'pyenv: {name}: command not found' >&2; exit 127"
    )
    path = folder / name
    path.write_text(f"#!/bin/sh\n{answer}\n", encoding="utf-8")
    path.chmod(0o755)


def pick(folder: Path, named: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SETUP_ENV), "python", *([named] if named else [])]
    return subprocess.run(command, env={"PATH": str(folder)}, capture_output=True, text=True, check=False)


def test_the_newest_supported_python_is_picked_by_its_real_version(tmp_path: Path) -> None:
    interpreter(tmp_path, "python3.13", None)
    interpreter(tmp_path, "python3.12", "3.12.1")
    interpreter(tmp_path, "python3.11", "3.11.7")
    done = pick(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "python3.12")
    assert (
        "passed over python3.13" in done.stderr and "did not run (pyenv: python3.13: command not found)" in done.stderr
    )
    assert "Python 3.12.1, the newest supported Python found" in done.stderr
    # PYTHON= names another, which wins (and is checked the same way).
    named = pick(tmp_path, "python3.11")
    assert named.stdout.strip() == str(tmp_path / "python3.11"), named.stderr
    assert "the Python PYTHON names" in named.stderr


def test_debians_python_3_11_2_is_refused_in_words_with_what_to_install(tmp_path: Path) -> None:
    interpreter(tmp_path, "python3.11", "3.11.2")
    interpreter(tmp_path, "python3", "3.11.2")
    done = pick(tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert "python3.11" in done.stderr and "python3.13: not found" in done.stderr
    assert "is Python 3.11.2, too old: pymdown-extensions==13.1.2 requires Python >=3.11.5" in done.stderr
    for line in ("sudo apt install python3.12 python3.12-venv", "brew install python@3.13", "uv python install 3.13"):
        assert line in done.stderr
    named = pick(tmp_path, "python3.11")
    assert named.returncode == 1 and "too old" in named.stderr


def test_a_python_without_venv_or_newer_than_tested_is_passed_over_saying_why(tmp_path: Path) -> None:
    interpreter(tmp_path, "python3.12", "3.12.3", venv=False)
    interpreter(tmp_path, "python3", "3.14.0")
    done = pick(tmp_path)
    assert done.returncode == 1
    assert "without a working venv (ensurepip missing): sudo apt install python3.12-venv" in done.stderr
    assert "3.14.0, newer than any this project is tested on (3.11.5 to 3.13); PYTHON= uses it" in done.stderr
    assert pick(tmp_path, "python3").returncode == 0


REAL = {
    "/usr/bin/python3.11": False,  # Debian 12's own: 3.11.2
    f"{Path.home()}/.pyenv/versions/3.13.0/bin/python3.13": True,
    f"{Path.home()}/.pyenv/versions/3.12.1/bin/python3.12": True,
}


@pytest.mark.parametrize("path", sorted(REAL))
def test_this_machines_real_interpreters_are_judged_by_their_real_version(path: str) -> None:
    version = (
        subprocess.run([path, "-V"], capture_output=True, text=True, check=False).stdout if Path(path).is_file() else ""
    )
    if path == "/usr/bin/python3.11" and "3.11.2" not in version:
        pytest.skip(f"no Debian 12 python3.11 (3.11.2) here: {version.strip() or 'absent'}")
    if not version:
        pytest.skip(f"{path} is not on this machine")
    done = subprocess.run([sys.executable, str(SETUP_ENV), "python", path], capture_output=True, text=True, check=False)
    assert (done.returncode == 0) == REAL[path], done.stderr
    if not REAL[path]:
        assert "is Python 3.11.2, too old: pymdown-extensions==13.1.2 requires Python >=3.11.5" in done.stderr


def test_the_picker_runs_on_a_python_too_old_to_be_picked() -> None:
    old = Path.home() / ".pyenv" / "versions" / "3.8.18" / "bin" / "python3.8"
    if not old.is_file():
        pytest.skip("no Python 3.8 here (pyenv's 3.8.18 on the dev image)")
    done = subprocess.run(
        [str(old), str(SETUP_ENV), "python", sys.executable], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == sys.executable, done.stderr


def test_requires_python_is_the_oldest_python_every_pin_installs_on() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^requires-python = ">=3\.11\.5"$', pyproject, re.MULTILINE), "pyproject says >=3.11.5"
    assert setup_env.OLDEST == (3, 11, 5)
    assert importlib.metadata.metadata("pymdown-extensions")["Requires-Python"] == ">=3.11.5"
    oldest = ".".join(map(str, setup_env.OLDEST))
    lines = (line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    for pin in (Requirement(line) for line in lines if line):
        wants = importlib.metadata.metadata(pin.name)["Requires-Python"]
        for version in (oldest, "3.12.1", "3.13.0"):
            assert not wants or version in SpecifierSet(wants), f"{pin} requires Python {wants}, not {version}"


# --- the Makefile, run with stand-in interpreters ------------------------------------------------

STAND_IN = """\
#!/bin/bash
# A stand-in interpreter: answers the probe, makes a "venv" of itself, logs pip, runs tools/setup_env.py for real
# (as if on FAKE_PLATFORM, with itself as sys.executable, so its pip answers the local dry run).
echo "$0 $*" >> "$FAKE_LOG"
case "$1" in
  -c) printf '%s\\n' "$FAKE_VERSION" venv ;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
      if [ "$2" = pip ] && [[ " $* " == *" --dry-run "* ]]; then exit "$FAKE_LOCAL_RC"; fi
      # An install of the pins that takes FAKE_PIP_SECONDS, its start and end logged: are two at once?
      if [ "$2" = pip ] && [ -n "$FAKE_PIP_SECONDS" ] && [[ " $* " == *" --requirement "* ]]; then
        echo "began $(date +%s.%N) $0" >> "$FAKE_LOG"; sleep "$FAKE_PIP_SECONDS"
        echo "ended $(date +%s.%N) $0" >> "$FAKE_LOG"
      fi ;;
  *setup_env.py) me="$0"; exec "$REAL_PYTHON" -c "import runpy, sys; sys.platform = '$FAKE_PLATFORM'; \\
sys.executable = sys.argv[1]; sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')" "$me" "$@" ;;
esac
"""


def run_setup(
    tmp_path: Path,
    *,
    platform: str,
    local: bool,
    torch: str = "",
    targets: tuple[str, ...] = ("setup", "setup-properdocs"),
    pip_seconds: str = "",
) -> tuple[str, list[str]]:
    """`make TARGETS` (both environments) in a copy of the project; make's output and the stand-ins' log.

    `pip_seconds`: how long each stand-in install of the pins takes (none by default).
    """
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for name in ("Makefile", "requirements.txt", "pyproject.toml", "tools/setup_env.py"):
        shutil.copy(ROOT / name, project / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    interpreter(bin_dir, "python3.13", None)
    for name in ("python3.12", "python3"):
        (bin_dir / name).write_text(STAND_IN, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "log"
    log.touch()
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "FAKE_LOG": str(log),
        "FAKE_VERSION": "3.12.3",
        "FAKE_PLATFORM": platform,
        "FAKE_LOCAL_RC": "0" if local else "1",
        "REAL_PYTHON": sys.executable,
        **({"TORCH": torch} if torch else {}),
        **({"FAKE_PIP_SECONDS": pip_seconds} if pip_seconds else {}),
    }
    output = make(*targets, cwd=project, env=env, timeout=120)
    lines = [line.replace(str(bin_dir), "BIN").replace(str(project), ".") for line in log.read_text().splitlines()]
    return output, lines


def make(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: int = 30) -> str:
    """`make ARGS` in `cwd` (this environment by default): what it printed, failing the test if it failed."""
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def pins_installs(log: list[str]) -> list[str]:
    return [line for line in log if "pip install" in line and "--requirement requirements.txt" in line]


def test_make_setup_on_a_stock_linux_installs_the_cpu_build_from_pytorchs_index_into_both_venvs(
    tmp_path: Path,
) -> None:
    output, log = run_setup(tmp_path, platform="linux", local=False)
    assert [line.split(" -m ")[0] for line in log if " -m venv " in line] == ["BIN/python3.12", "BIN/python3.12"]
    assert "making the environments with python3.12" in output and "Python 3.12.3, the newest supported" in output
    index = f"--extra-index-url {CPU_INDEX}"
    assert pins_installs(log) == [
        f"{venv}/bin/python -m pip install --progress-bar on {index} --requirement requirements.txt"
        for venv in (".venv", ".venv-properdocs")
    ]
    dry_runs = [line for line in log if "--dry-run" in line]
    assert len(dry_runs) == 2 and all("--no-index --no-deps" in d and f"torch=={PIN}+cpu" in d for d in dry_runs)
    assert f"torch {PIN}+cpu, the CPU build, from PyTorch's CPU index {CPU_INDEX}" in output


def test_make_setup_takes_the_cpu_build_pip_already_has_without_asking_an_index(tmp_path: Path) -> None:
    output, log = run_setup(tmp_path, platform="linux", local=True)
    assert all("--extra-index-url" not in line and "download.pytorch.org" not in line for line in log)
    assert len(pins_installs(log)) == 2
    assert "from the wheel pip already has (no index asked)" in output


@pytest.mark.parametrize(("platform", "torch"), [("darwin", ""), ("linux", "cuda")])
def test_make_setup_on_macos_or_with_torch_cuda_installs_pypis_torch(tmp_path: Path, platform: str, torch: str) -> None:
    output, log = run_setup(tmp_path, platform=platform, local=False, torch=torch)
    assert pins_installs(log) == [
        f"{venv}/bin/python -m pip install --progress-bar on --requirement requirements.txt"
        for venv in (".venv", ".venv-properdocs")
    ]
    assert not [line for line in log if "--dry-run" in line], "no local check where the CPU index is not wanted"
    assert ("darwin wheel is a CPU build already" if platform == "darwin" else "the CUDA build") in output


def test_make_tests_environments_are_installed_side_by_side(tmp_path: Path) -> None:
    # make test sets up .venv and .venv-properdocs with `make environments`: two installs at once (issue 56), each
    # the same as `make setup setup-properdocs` makes one after the other.
    output, log = run_setup(tmp_path, platform="linux", local=True, targets=("environments",), pip_seconds="1")
    assert len(pins_installs(log)) == 2 and "from the wheel pip already has" in output
    spans: dict[str, dict[str, float]] = {}
    for line in log:
        if line.startswith(("began ", "ended ")):
            kind, when, python = line.split(" ", 2)
            spans.setdefault(python.split("/bin/")[0], {})[kind] = float(when)
    assert sorted(spans) == [".venv", ".venv-properdocs"], log
    first, second = sorted(spans.values(), key=lambda span: span["began"])
    assert second["began"] < first["ended"], f"the installs ran one after the other: {spans}"
    assert (tmp_path / "project" / ".venv" / ".installed").is_file()
    assert (tmp_path / "project" / ".venv-properdocs" / ".installed").is_file()


def test_the_side_by_side_setup_asks_only_what_the_running_make_has() -> None:
    # GNU make 3.81 (macOS's, which CI's macos-14 job runs) has no --output-sync: without it in .FEATURES, the
    # recipe must not ask for it, or `make test` stops there with "unrecognized option".
    def recipe(*overrides: str) -> str:
        return " ".join(make("-n", "environments", *overrides).split())

    assert "-j2 --output-sync=line setup setup-properdocs" in recipe()
    without = recipe(".FEATURES=target-specific order-only second-expansion else-if")
    assert "-j2 setup setup-properdocs" in without and "output-sync" not in without, without


def test_make_lets_python_keep_its_compiled_modules_whatever_the_shell_says() -> None:
    # With PYTHONDONTWRITEBYTECODE set, pytest rewrote every test module's asserts in each of make test's pytest
    # processes (issue 56); make's recipes run without it.
    shown = make(
        "-s",
        "--eval",
        'shown: ; @echo "[$$PYTHONDONTWRITEBYTECODE]"',
        "shown",
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert shown.strip() == "[]", shown


def test_an_unknown_torch_choice_is_refused_by_name() -> None:
    env = {**os.environ, "TORCH": "rocm"}
    done = subprocess.run(
        [sys.executable, str(SETUP_ENV), "torch"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "TORCH=rocm: choose one of cpu, cuda" in done.stderr


def test_requirements_pin_torch_exactly() -> None:
    lines = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("torch")]
    assert lines and all(re.fullmatch(r"torch==2\.13\.0(\+cpu)?\s*(;.*)?", line) for line in lines), lines


# --- this machine, for real ----------------------------------------------------------------------


def local_cpu_wheel() -> Path | None:
    """This dev image's `torch-<pin>+cpu` wheel for this Python, in pip's find-links, if there is one."""
    config = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    for folder in re.findall(r"find-links='([^']+)'", config):
        for wheel in Path(folder).glob(f"torch-{PIN}+cpu-{tag}-*.whl"):
            return wheel
    return None


def test_here_the_local_cpu_wheel_is_chosen_at_once() -> None:
    if sys.platform != "linux" or local_cpu_wheel() is None:
        pytest.skip("no local torch +cpu wheel for this Python in pip's find-links (the dev image has one)")
    done = subprocess.run(
        [sys.executable, str(SETUP_ENV), "torch"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "", done.stderr
    assert "from the wheel pip already has (no index asked)" in done.stderr


def report(*arguments: str, isolated: bool = False) -> dict[str, Any]:
    """What `pip install --dry-run --report` would install of torch alone (its metadata: PyPI serves it apart)."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet", "--report", "-"]
    env = {k: v for k, v in os.environ.items() if not (isolated and k.startswith("PIP_"))}
    if isolated:
        env["PIP_CONFIG_FILE"] = os.devnull  # PyPI alone: not this image's find-links or file indexes
    done = subprocess.run([*command, *arguments], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    [torch] = json.loads(done.stdout)["install"]
    return cast("dict[str, Any]", torch)


@pytest.mark.network
def test_here_the_makefiles_install_line_takes_torch_from_the_local_file(tmp_path: Path) -> None:
    wheel = local_cpu_wheel()
    if sys.platform != "linux" or wheel is None:
        pytest.skip("no local torch +cpu wheel for this Python in pip's find-links (the dev image has one)")
    torch = report("--ignore-installed", f"torch=={PIN}")  # the line with no extra index, as the Makefile runs it
    assert torch["metadata"]["version"] == f"{PIN}+cpu"
    assert torch["download_info"]["url"] == wheel.as_uri()


LINUX = {"platform_system": "Linux", "sys_platform": "linux"}
MACOS = {"platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "arm64"}


PYTHONS = ["3.11", "3.12", "3.13"]
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "macosx_14_0_arm64"]


def _pypi_reports(scratch: Path) -> dict[str, Any]:
    """PyPI's torch for every (platform, Python) pair, four pips at a time: each mostly waits on PyPI, so nine in
    a row held a worker for a minute and a half on a busy machine. A pair whose pip failed holds its error."""

    def ask(pair: str) -> dict[str, Any]:
        platform, python = pair.split(" ")
        tags = ["--only-binary=:all:", "--platform", platform, "--python-version", python, "--implementation", "cp"]
        try:
            return {
                "torch": report(
                    "--target", str(scratch / pair.replace(" ", "-")), *tags, f"torch=={PIN}", isolated=True
                )
            }
        except AssertionError as error:
            return {"error": str(error)}

    pairs = [f"{platform} {python}" for platform in PLATFORMS for python in PYTHONS]
    first = {pairs[0]: ask(pairs[0])}  # alone: it puts PyPI's index of torch in pip's cache, which the others read
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return first | dict(zip(pairs[1:], pool.map(ask, pairs[1:]), strict=True))


@pytest.fixture(scope="session")
def pypi_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`_pypi_reports`, once per test run (the workers share it)."""
    return once_per_run(run_dir(tmp_path_factory), "pypi-torch-reports", _pypi_reports)


@pytest.mark.network
@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_pypis_plain_torch_is_the_cuda_build_on_linux_and_not_on_macos(
    pypi_reports: dict[str, Any], platform: str, python: str
) -> None:
    """Why the CPU index: PyPI's torch==X for Linux (x86-64 and aarch64 alike) requires NVIDIA's CUDA packages."""
    asked = pypi_reports[f"{platform} {python}"]
    assert "error" not in asked, asked.get("error")
    torch = asked["torch"]
    assert torch["metadata"]["version"] == PIN
    assert torch["download_info"]["url"].startswith("https://files.pythonhosted.org/")
    machine = platform.split("_", 3)[-1]
    environment = {**(LINUX if platform.startswith("manylinux") else MACOS), "python_version": python}
    environment.setdefault("platform_machine", machine)
    wanted = []
    for line in torch["metadata"]["requires_dist"]:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({**environment, "extra": ""}):
            wanted.append(requirement.name)
    cuda = [name for name in wanted if name.startswith(("nvidia-", "cuda-")) or name == "triton"]
    if platform.startswith("manylinux"):
        assert "cuda-toolkit" in cuda and any(name.startswith("nvidia-cudnn") for name in cuda), wanted
    else:
        assert cuda == [], wanted


@pytest.mark.network
@pytest.mark.parametrize("platform", ["manylinux_2_28_x86_64", "manylinux_2_28_aarch64"])
def test_pytorchs_cpu_index_serves_the_pinned_cpu_build_with_no_cuda_packages(tmp_path: Path, platform: str) -> None:
    try:
        socket.create_connection(("download.pytorch.org", 443), timeout=10).close()
    except OSError as error:
        pytest.skip(f"download.pytorch.org cannot be reached from here ({error}); GitHub's runners reach it")
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    tags = ["--only-binary=:all:", "--platform", platform, "--python-version", python, "--implementation", "cp"]
    torch = report("--target", str(tmp_path / "t"), "--index-url", CPU_INDEX, *tags, f"torch=={PIN}+cpu", isolated=True)
    assert torch["metadata"]["version"] == f"{PIN}+cpu"
    linux = {**LINUX, "python_version": python, "platform_machine": platform.split("_", 3)[-1], "extra": ""}
    needs = [Requirement(r) for r in torch["metadata"].get("requires_dist", [])]
    assert not [
        r.name for r in needs if r.name.startswith("nvidia-") and (r.marker is None or r.marker.evaluate(linux))
    ]


# --- the README and CONTRIBUTING say what is so ------------------------------------------------------------------


def test_contributing_lists_exactly_the_variables_a_block_is_passed() -> None:
    from pytorch_floors.execution.process.sandbox import PASSED_THROUGH  # noqa: PLC0415

    guide = " ".join((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split())
    found = re.search(r"a block sees only a few variables of the build's environment \(([^)]*)\)", guide)
    assert found, "CONTRIBUTING's list of the variables a block sees"
    assert re.findall(r"`([A-Z_]+)`", found[1]) == list(PASSED_THROUGH)


def test_the_readme_says_how_to_set_up_on_wsl_and_which_python() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "sudo apt install make" in readme
    assert "/mnt/c" in readme and "Linux filesystem" in readme
    assert "Python 3.11.5" in readme and "TORCH=cuda" in readme
