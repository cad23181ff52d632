"""`make torch VERSION=X`: move the build to another torch release in one command, and say what changed.

    python3 tools/move_torch.py 2.15.0            # move, set up, record again, build, compare
    python3 tools/move_torch.py 2.15.0 --dry-run  # print every step, change nothing

The version is written in one place, requirements.txt's `torch==X`; the few other places that must
name it (the package's dependency, the README's setup notes) are `PLACES`, each in the words it is
written in, and tests/test_move_torch.py fails when the pinned version is typed anywhere else. The steps:

1. The pin: every place in `PLACES` rewritten from the old release to X.
2. `make setup`: `.venv` made again for the new requirements.txt; tools/setup_env.py takes torch
   `X+cpu` on Linux, from a wheel pip already has or else PyTorch's CPU index (the same on a GitHub
   runner: the workflows run `make setup` and `make test`, which read the pin).
3. The build's own recordings recorded again on X (`make record TIER=<name>`): each recording of a tier
   this machine runs as (`pytorch_floors.tiers`, but the torch tiers, which keep their own release) or
   of this machine as it is (the same CPU and core count). The others (GitHub's runners, a GPU server)
   are named: their recordings turn stale until they are recorded on their own machines.
4. `make build`: the whole site strictly on X, every proof run and every claim checked.
5. What changed: `python -m pytorch_floors compare-recordings`, the recordings before against after.

Like tools/setup_env.py it runs before the new environment exists, with the standard library alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PLACES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("requirements.txt", ("torch=={}\n",)),
    ("pyproject.toml", ('"torch=={}"',)),
    ("README.md", ("`torch=={}`", "`{}+cpu`")),
)
"""Each file that names the pinned release, and the words it names it in (`{}`: the release)."""

_RELEASE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:(?:a|b|rc)[0-9]+)?")


def say(message: str) -> None:
    """Tell the person running make."""
    print(f"torch: {message}", flush=True)


def pinned(root: Path) -> str:
    """The torch release requirements.txt pins."""
    found = re.search(r"^torch==([^\s+;#]+)", (root / "requirements.txt").read_text(encoding="utf-8"), re.M)
    if found is None:
        raise SystemExit("torch: error: requirements.txt pins no torch==X")
    return found[1]


def moved(text: str, words: tuple[str, ...], old: str, new: str) -> tuple[str, int]:
    """A file's text with each of its `words` naming `old` made to name `new`, and how many it changed."""
    count = 0
    for form in words:
        count += text.count(form.format(old))
        text = text.replace(form.format(old), form.format(new))
    return text, count


UNMOVED = ("tests/", "recordings/", "bench/records/")
"""Where a release may be written and is not moved: test fixtures, and measurements (each names the torch it ran)."""


def hand_typed(root: Path, files: list[str], version: str) -> list[str]:
    """Where `version` is written outside `PLACES`' words: what `make torch` would leave behind.

    Args:
        root: The project.
        files: The project's files (`git ls-files`), relative to it.
        version: The pinned release.

    Returns:
        `path:line` for each line naming it that no place's words account for (`UNMOVED` skipped).
    """
    words = dict(PLACES)
    release = re.compile(rf"(?<![0-9.]){re.escape(version)}(?![0-9])")
    found = []
    for name in files:
        path = root / name
        if name.startswith(UNMOVED) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # an image or a font
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            named = len(release.findall(line))
            placed = sum(line.count(form.format(version)) for form in words.get(name, ()))
            if named > placed:
                found.append(f"{name}:{number}")
    return found


def move_pin(root: Path, old: str, new: str, *, dry_run: bool) -> list[str]:
    """Rewrite every place of the pin; return what each place says now (or would say).

    Raises:
        SystemExit: If a place no longer names the old release in its words (it was edited by hand).
    """
    done = []
    for name, words in PLACES:
        path = root / name
        text, count = moved(path.read_text(encoding="utf-8"), words, old, new)
        if count == 0:
            raise SystemExit(f"torch: error: {name} does not name torch {old} as {' or '.join(words)}")
        if not dry_run:
            path.write_text(text, encoding="utf-8")
        done.append(f"{name}: {count} × {' / '.join(w.format(old).strip() for w in words)} -> {new}")
    return done


def _tier_kinds(root: Path) -> tuple[set[str], set[str]]:
    """The tiers' names, and the torch tiers' (read from pytorch_floors/tiers/kinds.py: stdlib only)."""
    spec = importlib.util.spec_from_file_location("floors_tier_kinds", root / "src/pytorch_floors/tiers/kinds.py")
    assert spec is not None and spec.loader is not None
    kinds = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = kinds
    spec.loader.exec_module(kinds)
    names = {tier.name for tier in kinds.TIERS}
    torch = {tier.name for tier in kinds.TIERS if tier.venv is not None and tier.venv.torch}
    return names, torch


def this_cpu() -> str:
    """The CPU's model name as a recording's provenance says it (`execution.provenance.cpu_model`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def plan_records(root: Path, cpu: str, cores: int) -> tuple[list[list[str]], list[str]]:
    """The `make record` commands that record the build's own tiers again, and the recordings left alone.

    Args:
        root: The project.
        cpu: This machine's CPU model.
        cores: Its logical CPUs.

    Returns:
        One command per recording made here (a tier, or this machine as it is), and for every other
        recording a line saying why it is not recorded here.
    """
    tiers, torch_tiers = _tier_kinds(root)
    commands, others = [], []
    for path in sorted((root / "recordings").glob("*/recording.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        name, machine = recording["tier"], recording["machine"]
        if name in torch_tiers:
            others.append(f"{name}: keeps its own torch ({machine['torch_version']})")
        elif name in tiers:
            commands.append(["make", "record", f"TIER={name}"])
        elif machine["cpu"] == cpu and machine["cores"] == cores:
            commands.append(["make", "record", f"TIER={name}", f"STANDS_FOR={recording['stands_for']}"])
        else:
            others.append(
                f"{name}: recorded on {machine['cpu']} ({machine['cores']} cores), not this machine: stale until "
                f"`make record TIER={name}` runs there (GitHub's runners: .github/workflows/record.yml)"
            )
    return commands, others


def where_setup_finds(version: str) -> str:
    """Where `make setup` takes the new torch from on this machine, as tools/setup_env.py decides it."""
    if sys.platform != "linux":
        return f"torch {version} from PyPI, whose {sys.platform} wheel is a CPU build already"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import setup_env  # noqa: PLC0415  # tools/ is no package

    if setup_env.pip_has_locally(f"torch=={version}+cpu"):
        return f"{version}+cpu, the CPU build, from the wheel pip already has here"
    return f"{version}+cpu, the CPU build, from PyTorch's CPU index {setup_env.CPU_INDEX} (pip has no such wheel here)"


def run(command: list[str], root: Path, *, dry_run: bool) -> None:
    """Run one step (or only show it)."""
    say(f"$ {shlex.join(command)}")
    if not dry_run and subprocess.run(command, cwd=root, check=False).returncode != 0:
        raise SystemExit(f"torch: error: {shlex.join(command)} failed; the pin is moved, the rest not done")


def main(argv: list[str]) -> int:
    """Move the build to torch VERSION."""
    parser = argparse.ArgumentParser(prog="make torch VERSION=X", description=__doc__.split("\n")[0])
    parser.add_argument("version", help="the torch release to move to (2.15.0)")
    parser.add_argument("--dry-run", action="store_true", help="print every step, change nothing")
    parser.add_argument("--project", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root, new, dry = args.project.resolve(), args.version, args.dry_run
    if not _RELEASE.fullmatch(new):
        parser.error(f"{new!r} is not a torch release (X.Y.Z)")
    old = pinned(root)
    if old == new:
        say(f"requirements.txt pins torch {new} already: nothing to move")
        return 0
    say(f"moving the build from torch {old} to {new}{' (dry run: nothing is changed)' if dry else ''}")
    say("1. the pin, where it is written:")
    for line in move_pin(root, old, new, dry_run=dry):
        say(f"   {line}")
    say(f"2. set up: .venv made again for torch {new}: {where_setup_finds(new)}")
    run(["make", "setup"], root, dry_run=dry)
    commands, others = plan_records(root, this_cpu(), os.cpu_count() or 1)
    say(f"3. the build's own recordings, recorded again on torch {new}:")
    folder = (
        Path(tempfile.gettempdir(), "floors-recordings-<new>")
        if dry
        else Path(tempfile.mkdtemp(prefix="floors-recordings-"))
    )
    before = folder / "recordings"
    if not dry:
        shutil.copytree(root / "recordings", before)
    for command in commands:
        run(command, root, dry_run=dry)
    for line in others:
        say(f"   not here: {line}")
    say(f"4. the whole site built strictly on torch {new}:")
    run(["make", "build"], root, dry_run=dry)
    say(f"5. what changed (the recordings before, copied to {before}, against after):")
    run(
        [".venv/bin/python", "-m", "pytorch_floors", "compare-recordings", str(before), "recordings"], root, dry_run=dry
    )
    say("done: review `git diff` and the build report's Machines table, then commit the pin and the recordings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
