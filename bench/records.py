"""The benchmarks' last figures, committed in `bench/records/`, and the README's cost table made from them.

`make bench-suite` (`bench/suite.py --record`) and `make bench` (`bench/build.py --record`) each write their
figures here with the CPU they ran on (`lscpu`'s model name), its logical cores, the load around the run and the
commit measured. `python bench/records.py readme --write` puts the table those records make into README.md
between its `bench:costs` markers; `tests/test_readme.py` fails when the README's table and the committed
records disagree, so the README never quotes a figure nobody measured. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "bench" / "records"
README = ROOT / "README.md"
BEGIN, END = "<!-- bench:costs -->", "<!-- /bench:costs -->"

BUDGETS = {"suite-warm": 600, "suite-fresh": 900, "serve_first_page": 10, "prose_edit": 2}
"""Seconds each loop may take on two cores (the developers' guide): make test set up, CI from a fresh clone,
serve's first page after setup, a prose edit shown."""

BACKGROUND_RATIO = 1.2
"""How long the server's background build may take to run every proof and lab, against the seconds those blocks and
labs ran for by their own clocks (issue 56): what is over it is the build's own overhead."""


def background_verdict(background: float, blocks: float) -> str:
    """`within` or `over`: the background build's seconds against `BACKGROUND_RATIO` × the blocks' own seconds."""
    return "within" if background <= BACKGROUND_RATIO * blocks else "over"


def cpu_label(lscpu: str) -> str | None:
    """The CPU `lscpu`'s output describes: its model name, and where it names a family and model, those and the
    widest vectors its flags offer.

    A virtual machine's model name can be a brand alone: "AMD EPYC" named a Zen 4 with AVX-512 and a Zen 3
    without it on this project's machines, whose figures differ by half. `None` when it names no model.
    """
    fields: dict[str, str] = {}
    for line in lscpu.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("Model name")
    if not name:
        return None
    family, model = fields.get("CPU family"), fields.get("Model")
    if not family or not model:
        return name
    flags = set(fields.get("Flags", "").split())
    vectors = [
        label
        for label, flag in (("AVX-512", "avx512f"), ("AVX2", "avx2"), ("AMX", "amx_tile"), ("NEON", "asimd"))
        if flag in flags
    ]
    if "AVX-512" in vectors and "AVX2" in vectors:
        vectors.remove("AVX2")  # the wider one says it
    return f"{name} (family {family}, model {model}{'; ' + ', '.join(vectors) if vectors else ''})"


def cpu_model() -> str:
    """The CPU as `cpu_label` names it from `lscpu` (else /proc/cpuinfo's model name, else what `platform` says)."""
    try:
        done = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10, check=False)
        label = cpu_label(done.stdout)
        if label:
            return label
    except OSError:
        pass
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def write_record(name: str, figures: Mapping[str, Any], load_start: float, folder: Path = RECORDS) -> Path:
    """Write a benchmark's figures as `bench/records/<name>.json`, with the machine and the commit measured.

    Args:
        name: `suite-fresh`, `suite-warm` or `build`.
        figures: Seconds (and counts) the benchmark measured, by name.
        load_start: The 1-minute load average when the run started.
        folder: Where records go.

    Returns:
        The record's path.
    """
    record = {
        "figures": dict(figures),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "commit": _commit(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_records(folder: Path = RECORDS) -> dict[str, dict[str, Any]]:
    """Every committed record, by name."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))}


def _seconds(value: float | None) -> str:
    return "not measured yet" if value is None else f"{value:,.0f} s" if value >= 10 else f"{value:.1f} s"


def _budget(value: float | None, budget: int) -> str:
    if value is None:
        return ""
    return f" (budget ≤ {budget} s: {'within' if value <= budget else 'over'})"


def _against(value: float | None, budget: int) -> str:
    """The figure and its verdict; to a tenth where whole seconds would show the budget itself ("10 s: over")."""
    if value is not None and value >= 10 and value != budget and round(value) == budget:
        return f"{value:.1f} s" + _budget(value, budget)
    return _seconds(value) + _budget(value, budget)


def _background(build: Mapping[str, Any]) -> str:
    background, blocks = build.get("serve_background"), build.get("block_seconds")
    if background is None or not blocks:
        return _seconds(background)
    return (
        f"{_seconds(background)} (goal ≤ {BACKGROUND_RATIO} × the {_seconds(blocks)} its blocks and labs ran for: "
        f"{background_verdict(background, blocks)})"
    )


def readme_table(records: Mapping[str, Mapping[str, Any]]) -> str:
    """The README's cost table, every figure from a record, each record's CPU named.

    Args:
        records: `read_records()`.

    Returns:
        Markdown: the table, then one line per record saying what measured it.
    """
    fresh = records.get("suite-fresh", {}).get("figures", {})
    warm = records.get("suite-warm", {}).get("figures", {})
    build = records.get("build", {}).get("figures", {})
    rows = [
        (
            "setup (`.venv` and `.venv-properdocs`)",
            _seconds(fresh.get("setup")),
            "pip's progress, then `setup: … is ready`",
        ),
        (
            "`make serve`, first page",
            _against(build.get("serve_first_page"), BUDGETS["serve_first_page"]),
            "every page, with “running…” where a proof has not run yet",
        ),
        (
            "that page complete: its proofs run behind the server",
            _seconds(build.get("serve_complete")),
            "`background: proof n/N …` lines; each page reloads when its proofs are done",
        ),
        (
            "every page complete: every proof and lab run behind the server",
            _background(build),
            "`serve: the background build ended (exit status 0)`",
        ),
        (
            "a prose edit, shown",
            _against(build.get("prose_edit"), BUDGETS["prose_edit"]),
            "`serve: N of M pages render again: …`",
        ),
        (
            "the first prose edit, 2 s after the first page",
            _against(build.get("prose_edit_first"), BUDGETS["prose_edit"]),
            "`serve: an edit came: it is shown first …`: the API reference the first build left renders after it",
        ),
        (
            "`make test`, set up",
            _against(warm.get("phases"), BUDGETS["suite-warm"]),
            "each phase's tests, then `make test: every phase passed` and its total",
        ),
        (
            "`make test` from a fresh clone",
            _against(fresh.get("total"), BUDGETS["suite-fresh"]),
            "the same, after setup",
        ),
    ]
    lines = ["| step | time | what you see meanwhile |", "|---|---|---|"]
    lines += [f"| {step} | {time_} | {seen} |" for step, time_, seen in rows]
    lines.append("")
    for name in ("suite-fresh", "suite-warm", "build"):
        record = records.get(name)
        if record is not None:
            load = " to ".join(str(x) for x in record["load"])
            failed = "" if record["figures"].get("passed", True) else " (that run did not pass every test)"
            lines.append(
                f"- `{name}`: {record['cpu']}, {record['cores']} logical cores, load {load}, "
                f"commit {record['commit']}, {record['date']}{failed}."
            )
    return "\n".join(lines)


def readme_section(text: str) -> str | None:
    """What stands between the README's `bench:costs` markers, or `None` without them."""
    found = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    return found[1].removesuffix("\n") if found else None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["readme"])
    parser.add_argument("--write", action="store_true", help="write the table into README.md")
    args = parser.parse_args(argv)
    table = readme_table(read_records())
    if not args.write:
        print(table)
        return 0
    text = README.read_text(encoding="utf-8")
    if readme_section(text) is None:
        print(f"README.md has no {BEGIN} … {END} section", file=sys.stderr)
        return 1
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    README.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
