"""Machine tiers: the whole site built strictly as nine kinds of machine would build it.

Run with `make machines` (or `python bench/machines.py [--tier NAME ...]`). Each tier builds the
site with `mkdocs build --strict`, its own empty proof cache and its own site folder, from a snapshot
of the tree taken when the run began (in a scratch directory, so your tree and cache are untouched,
and an edit made meanwhile changes no tier's build), and the script prints one table: tier, build
result, claims held / missed / not applicable, labs' self-checks passed / not graded, and time.

What each tier is (its environment, CPU affinity, the load beside the build, its own Python) is
defined once, in `pytorch_floors.tiers`, which `make record TIER=<name>` takes too: the build runs
inside `as_tier`, with the interpreter `tier_python` gives (a tier's own environment, such as
`.venv-cuda/` or `.venv-py3.12/`, is made on demand the first time; `--setup` only makes them).

- `as-is`: a laptop or workstation as it is; this machine, nothing changed.
- `one-core-scalar`: a single-vCPU CI runner, an old or throttled CPU; pinned to CPU 0,
  `OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`, `ATEN_CPU_CAPABILITY=default`.
- `loaded`: a busy CI host; two spinning CPU hogs beside the build.
- `crowded`: a shared JupyterHub node; a neighbour building a copy of the site cold, again and
  again, and two spinning hogs per core, beside the build.
- `spawn`: Windows or macOS Python, where the fork server is not used; `FLOORS_START_METHOD=spawn`.
- `avx2`: an AVX2-only CPU, emulated with `ATEN_CPU_CAPABILITY=avx2` on this CPU.
- `cuda-build-no-gpu`: PyPI's CUDA build of torch without a GPU (`.venv-cuda/`, `CUDA_VISIBLE_DEVICES=`).
- `python3.12`, `python3.13`: stock Pythons (`.venv-py3.12/`, `.venv-py3.13/`).

Every tier must pass: a claim that cannot apply says so ("not applicable") and a lab check that
cannot grade says "not graded on this machine", while a genuine contradiction fails the build.
The claims are strict here (no `FLOORS_CLAIMS=advisory`): these tiers are what the site promises
to hold on. The counts of lab checks are what the labs printed when they ran: the executed outputs
on the lab pages this script's own build wrote (never the lab's code, which the page shows too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other scripts of bench/ (records)

from records import cpu_model  # noqa: E402  (one name for the CPU in every record)

from pytorch_floors.errors import FloorsError  # noqa: E402
from pytorch_floors.floors import LABS  # noqa: E402  (the registry names the lab pages)
from pytorch_floors.tiers import TIERS, Tier, as_tier, snapshot, tier_python  # noqa: E402  (the package's: `make record` takes them)


@dataclass
class Outcome:
    """What one tier's build did."""

    tier: Tier
    passed: bool
    seconds: float
    claims: tuple[int, int, int] = (0, 0, 0)  # held, missed, not applicable
    labs: tuple[int, int] = (0, 0)  # self-checks passed, not graded
    problem: str = ""


OUTPUT_CLASS = "jp-OutputArea-output"
"""The class nbconvert gives each output of an executed cell (mkdocs-jupyter's lab pages)."""

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Outputs(HTMLParser):
    """The text of every executed cell's output on a page; the cells' source is left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outputs: list[str] = []
        self._open: list[bool] = []  # per open element: does it start an output?
        self._depth = 0  # how many open elements are outputs (nested ones count once)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        starts = OUTPUT_CLASS in (dict(attrs).get("class") or "").split()
        self._open.append(starts)
        if starts:
            if self._depth == 0:
                self.outputs.append("")
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not self._open:
            return
        if self._open.pop():
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.outputs[-1] += data


def executed_outputs(html: str) -> list[str]:
    """The text of each executed output on a built lab page (what its cells printed)."""
    parser = _Outputs()
    parser.feed(html)
    parser.close()
    return parser.outputs


def _lab_checks(site: Path) -> tuple[int, int]:
    """Self-checks passed and not graded: the lines the labs printed when they ran, page by page."""
    passed = not_graded = 0
    for lab in LABS:  # every floor's lab and each annex's
        page = site / lab.lab.removesuffix(".py") / "index.html"
        if not page.is_file():
            continue
        for output in executed_outputs(page.read_text(encoding="utf-8")):
            for line in output.splitlines():
                passed += line.lstrip().startswith("self-check passed")
                not_graded += "not graded on this machine" in line
    return passed, not_graded


def run_tier(tier: Tier, scratch: Path, project: Path = ROOT) -> Outcome:
    """Build the site strictly as `tier`, into `scratch`, from `project` (a snapshot of this one).

    The tier's interpreter and environments are this project's (`tier_python`); the package and the
    pages are the snapshot's, its `src` put first on `PYTHONPATH`.
    """
    site, cache = scratch / f"site-{tier.name}", scratch / f"cache-{tier.name}"
    start = time.perf_counter()
    try:
        python = tier_python(tier, ROOT)
    except (FloorsError, OSError, subprocess.CalledProcessError) as error:
        return Outcome(tier, False, time.perf_counter() - start, problem=f"setup: {error}")
    command = [python, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    start = time.perf_counter()
    with as_tier(tier, python=python, project=project):
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "FLOORS_CACHE_DIR": str(cache)}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project / "src"), os.environ.get("PYTHONPATH")]))
        env.pop("FLOORS_CLAIMS", None)
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    log = scratch / f"build-{tier.name}.log"
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    outcome = Outcome(tier, done.returncode == 0, seconds)
    report = site / "build-report.json"
    if report.is_file():
        totals = json.loads(report.read_text(encoding="utf-8"))["totals"]
        outcome.claims = (
            int(totals.get("claims_held", 0)),
            int(totals.get("claims_not_held", 0)),
            int(totals.get("claims_not_applicable", 0)),
        )
        outcome.labs = _lab_checks(site)
    if not outcome.passed:
        errors = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("ERROR", "WARNING"))]
        outcome.problem = errors[0] if errors else f"exit code {done.returncode}; see {log}"
    return outcome


def table(outcomes: list[Outcome]) -> str:
    """The Markdown table the script prints."""
    rows = [
        "| tier | stands for | build | claims held / missed / n.a. | lab checks passed / not graded | time |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        held, missed, not_applicable = o.claims
        result = "passed" if o.passed else f"FAILED: {o.problem}"
        rows.append(
            f"| {o.tier.name} | {o.tier.stands_for} | {result} | {held} / {missed} / {not_applicable} "
            f"| {o.labs[0]} / {o.labs[1]} | {o.seconds:.0f} s |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Build every tier (or those named) and print the table; exit 1 if any tier failed."""
    parser = argparse.ArgumentParser(prog="python bench/machines.py", description=__doc__.splitlines()[0])
    parser.add_argument("--tier", action="append", choices=[t.name for t in TIERS], help="only this tier (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (sites, logs)")
    parser.add_argument("--setup", action="store_true", help="only make the tiers' own environments; build nothing")
    args = parser.parse_args(argv)
    chosen = [t for t in TIERS if not args.tier or t.name in args.tier]
    if args.setup:
        for tier in chosen:
            print(f"machines: {tier.name} runs {tier_python(tier, ROOT)}", flush=True)
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="floors-machines-"))
    outcomes = []
    try:
        # Every tier builds the tree as it was when the run began: an edit during the run changes none.
        project = snapshot(ROOT, scratch / "project")
        for tier in chosen:
            print(f"machines: building as {tier.name} ({tier.stands_for})", flush=True)
            outcomes.append(run_tier(tier, scratch, project))
            print(table(outcomes[-1:]).splitlines()[-1], flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"machines: sites and logs kept in {scratch}")
    print(f"\nmachines: {cpu_model()}, {os.cpu_count()} cores\n")
    print(table(outcomes))
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
