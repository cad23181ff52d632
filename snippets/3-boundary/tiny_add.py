"""Per-call cost of adding two one-element things: a Python function, NumPy, and torch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import CoreShare, human_seconds, share_changed, time_call
from pytorch_floors.plot import bar_chart, show


def add(a: float, b: float) -> float:
    """A plain Python function doing the same arithmetic."""
    return a + b


def candidates() -> dict[str, Callable[[], object]]:
    """The same one-element add, written four ways."""
    x, y = 1.0, 2.0
    xa, ya = np.ones(1, dtype=np.float32), np.ones(1, dtype=np.float32)
    xt, yt = torch.ones(1), torch.ones(1)
    return {
        "Python function add(x, y)": lambda: add(x, y),
        "NumPy array a + b": lambda: xa + ya,
        "torch tensor a + b": lambda: xt + yt,
        "torch.add(a, b)": lambda: torch.add(xt, yt),
    }


def per_call(samples: int = 15) -> dict[str, float]:
    """Seconds per call of each candidate (fastest sample; a lambda call is included in all of them)."""
    return {name: seconds for name, (seconds, _) in shared_per_call(samples).items()}


def shared_per_call(samples: int = 15) -> dict[str, tuple[float, float | None]]:
    """`per_call`, each with the share of a core this thread got while it was timed (`CoreShare`; `None`
    where Linux does not say): the candidates are timed one after the other, and a program that started or
    stopped between two of them changes their times for that alone."""
    found = {}
    for name, fn in candidates().items():
        with CoreShare() as got:
            seconds = time_call(fn, samples=samples, warmup=50).best
        found[name] = (seconds, got.share)
    return found


def main() -> None:
    shared = shared_per_call()
    times = {name: seconds for name, (seconds, _) in shared.items()}
    base = times["Python function add(x, y)"]
    numpy_time = times["NumPy array a + b"]
    # Printed for a phone's 46 columns: the ratio's words above the table, the note a clause a line.
    lines = [f"torch {torch.__version__}, NumPy {np.__version__}:", "one-element float add, per call", ""]
    lines.append("each call, and how many times the Python call:")
    for name, seconds in times.items():
        lines.append(f"{name:<25} {human_seconds(seconds):>9} {seconds / base:>6.1f}x")
    lines += [
        "",
        f"torch's a + b costs {times['torch tensor a + b'] / numpy_time:.1f}x NumPy's:",
        "both cross from Python into C, but torch also",
        "parses arguments against several signatures,",
        "consults the dispatcher and autograd,",
        "and builds a full Tensor object for the result.",
    ]
    chart = bar_chart(
        [(name, seconds * 1e9) for name, seconds in times.items()],
        title="Adding two one-element values, per call",
        value_label="time per call (ns)",
        description="Bar chart: a Python call is cheapest, NumPy costs more, a torch add costs the most.",
        highlight=["torch tensor a + b"],
    )
    show(chart, text="\n".join(lines), name="tiny_add")
    state_claims(shared)


def state_claims(shared: dict[str, tuple[float, float | None]]) -> None:
    """The order and torch's distance from NumPy, each not applicable where the share of a core changed
    between the candidates it compares (`share_changed`), pair by pair in the order they were timed."""
    (base, base_share), (numpy_time, numpy_share) = shared["Python function add(x, y)"], shared["NumPy array a + b"]
    torch_time, torch_share = shared["torch tensor a + b"]
    changed = share_changed(base_share, numpy_share) or share_changed(numpy_share, torch_share)
    claim(
        "a Python call is cheapest, NumPy costs more, torch's add costs the most",
        held=base < numpy_time < torch_time,
        applies=not changed,
        why_not=changed,
    )
    changed = share_changed(numpy_share, torch_share)
    claim(
        "torch's add costs well over NumPy's",
        held=torch_time > 1.5 * numpy_time,
        detail=f"{torch_time / numpy_time:.1f}x",
        applies=not changed,
        why_not=changed,
    )


if __name__ == "__main__":
    main()
