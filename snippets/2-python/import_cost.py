"""What `import torch` costs a fresh Python process: wall time, the modules it loads, and where the time goes."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds

# Run in a fresh interpreter: time the import itself and list the modules it added. Every probe ends with
# os._exit, so the wall time is start-up plus import, not the clean-up of everything torch created.
PROBE = (
    "import sys, time, json, os; before = set(sys.modules); start = time.perf_counter(); import torch; "
    "seconds = time.perf_counter() - start; "
    "print(json.dumps({'seconds': seconds, 'modules': sorted(set(sys.modules) - before)}), flush=True); "
    "os._exit(0)"
)
EMPTY = "import os; os._exit(0)"
IMPORT_ONLY = "import torch, os, sys; sys.stderr.flush(); os._exit(0)"


def wall_seconds(code: str) -> tuple[float, str]:
    """Wall time of `python -c code` in a fresh process, and its standard output."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def measure(runs: int = 5) -> dict[str, float]:
    """Medians over `runs` fresh processes: empty interpreter, interpreter importing torch, the import alone."""
    empty = [wall_seconds(EMPTY)[0] for _ in range(runs)]
    full, inside, modules = [], [], []
    for _ in range(runs):
        seconds, out = wall_seconds(PROBE)
        report = json.loads(out)
        full.append(seconds)
        inside.append(report["seconds"])
        modules.append(report["modules"])
    names = modules[-1]
    return {
        "empty": statistics.median(empty),
        "with_torch": statistics.median(full),
        "import": statistics.median(inside),
        "modules": float(len(names)),
        "torch_modules": float(sum(1 for name in names if name == "torch" or name.startswith("torch."))),
    }


def slowest_modules(count: int = 5) -> list[tuple[str, float]]:
    """The modules whose own import code took longest (`python -X importtime`, one fresh process)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", IMPORT_ONLY], capture_output=True, text=True, check=True
    )
    own: list[tuple[str, float]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        own.append((name.strip(), int(self_us) * 1e-6))
    return sorted(own, key=lambda item: -item[1])[:count]


def main() -> None:
    runs = 5
    m = measure(runs)
    print(f"median of {runs} fresh processes each:")
    ratio = m["with_torch"] / m["empty"]
    print(f"  an empty python process     {human_seconds(m['empty']):>9}")
    # Printed for a phone's 46 columns: the ratio under the table, the module names' column as wide as they are.
    print(f"  python that imports torch   {human_seconds(m['with_torch']):>9}")
    print(f"  the import statement alone  {human_seconds(m['import']):>9}")
    print(f"  (python that imports torch: {ratio:.0f} x the empty one)")
    others = m["modules"] - m["torch_modules"]
    print(f"modules loaded by import torch: {m['modules']:.0f} ({m['torch_modules']:.0f} torch.*, {others:.0f} others)")
    claim(
        "a python that imports torch takes far longer to start than an empty one",
        held=ratio > 5,
        detail=f"{ratio:.0f}x",
    )
    claim(
        "import torch loads hundreds of torch modules, and others besides",
        held=m["torch_modules"] > 100 and m["modules"] > m["torch_modules"],
        detail=f"{m['torch_modules']:.0f} torch.*",
    )
    print()
    print("slowest modules by own import time (python -X importtime, one run):")
    slowest = slowest_modules()
    # Each time right-aligned, then its module one space after it: a name too long for a phone's 46 columns
    # (torch.ao.nn.quantizable.modules.activation, on some releases) wraps, not the whole list scrolls.
    for name, seconds in slowest:
        print(f"  {human_seconds(seconds):>9} {name}")
    claim(
        "loading the compiled module torch._C is among the slowest imports",
        held="torch._C" in [name for name, _ in slowest[:2]],
        detail="the two slowest: " + ", ".join(name for name, _ in slowest[:2]),
    )


if __name__ == "__main__":
    main()
