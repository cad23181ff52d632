"""What `.to()` costs on one device: nothing when nothing changes, a copy that grows with size when the dtype does."""

from __future__ import annotations

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device, human_bytes, human_seconds, time_call

SIZES = tuple(1 << k for k in range(10, 25, 2))  # 1 Ki to 16 Mi float32 elements


def to_times(numel: int, device: torch.device) -> dict[str, float]:
    """Median seconds per call of the no-op, a same-dtype copy, and a float32 -> float64 conversion."""
    x = torch.randn(numel, device=device)
    calls = {
        "x.to(torch.float32)": lambda: x.to(torch.float32),
        "x.to(torch.float32, copy=True)": lambda: x.to(torch.float32, copy=True),
        "x.to(torch.float64)": lambda: x.to(torch.float64),
    }
    return {text: time_call(fn, device=device, samples=7, min_sample_seconds=2e-3).median for text, fn in calls.items()}


def sweep(device: torch.device, sizes: tuple[int, ...] = SIZES) -> list[tuple[int, dict[str, float]]]:
    return [(n, to_times(n, device)) for n in sizes]


def main() -> None:
    torch.set_num_threads(1)  # one core, as in floor 6's roofline
    device = detect_device()
    rows = sweep(device)
    names = list(rows[0][1])
    print(f"float32 tensor x on {device.type}, one thread; median time per call")
    # Printed for a phone's 46 columns: each call's column headed by a short name, the names spelled out above.
    short = dict(zip(names, ("no-op", "copy", "float64"), strict=True))
    for name in names:
        print(f"  {short[name]:<7}  {name}")
    print(f"{'elements':>10} {'bytes':>9} " + " ".join(f"{short[name]:>7}" for name in names))
    for n, times in rows:
        cells = " ".join(f"{human_seconds(times[name]):>7}" for name in names)
        print(f"{n:>10,} {human_bytes(4 * n):>9} {cells}")
    first, last = rows[0], rows[-1]
    growth = last[0] / first[0]
    print()
    for name in names:
        print(f"{name}: time grew x{last[1][name] / first[1][name]:,.1f} for x{growth:,.0f} the elements")
    small, large = first[1], last[1]
    claim(
        ".to() with nothing to change costs the same at every size",
        held=large["x.to(torch.float32)"] < 5 * small["x.to(torch.float32)"],
        detail=f"x{large['x.to(torch.float32)'] / small['x.to(torch.float32)']:.1f}",
    )
    claim(
        "a copy, or a change of dtype, grows with the size",
        held=large["x.to(torch.float32, copy=True)"] > 20 * small["x.to(torch.float32, copy=True)"]
        and large["x.to(torch.float64)"] > 20 * small["x.to(torch.float64)"],
    )
    claim(
        "at the largest size the no-op is far cheaper than a copy",
        held=large["x.to(torch.float32)"] < 0.1 * large["x.to(torch.float32, copy=True)"],
    )
    copy_seconds = last[1]["x.to(torch.float32, copy=True)"]
    print(f"the largest copy reads and writes {human_bytes(8 * last[0])}: {8 * last[0] / copy_seconds / 1e9:.1f} GB/s")


if __name__ == "__main__":
    main()
