"""A roofline measured here: ops placed by arithmetic intensity under measured compute and bandwidth ceilings."""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import cuda_event_seconds, detect_device, time_call
from pytorch_floors.plot import Series, line_chart, show


def seconds_per_call(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds per call: CUDA events on a CUDA device, else the fastest of 7 samples (the least disturbed).

    A ceiling is a capability, so the fastest sample is the honest estimate; floor 8's memory ceiling
    measures its matmul the same way.
    """
    if device.type == "cuda":
        return cuda_event_seconds(fn)
    return time_call(fn, device=device, samples=7, min_sample_seconds=5e-3).best


@dataclass(frozen=True)
class Point:
    """One measured op: its work, its minimum traffic, and how fast it ran."""

    kind: str
    label: str
    flops: float
    bytes: float
    seconds: float

    @property
    def intensity(self) -> float:
        """FLOP per byte of compulsory traffic (each input read once, each output written once)."""
        return self.flops / self.bytes

    @property
    def rate(self) -> float:
        """FLOP/s achieved."""
        return self.flops / self.seconds


def matmul_point(n: int, device: torch.device) -> Point:
    """n x n @ n x n: 2 n³ FLOP over 3 n² x 4 bytes, so intensity n / 6."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    return Point("matmul", f"a @ b, n = {n}", 2 * n**3, 3 * n * n * 4, seconds_per_call(lambda: a @ b, device))


def add_point(n: int, device: torch.device) -> Point:
    """a + b into a preallocated c: n FLOP over 3 n x 4 bytes, so intensity 1/12."""
    a, b, c = (torch.rand(n, device=device) for _ in range(3))
    return Point("add", f"add, n = {n:,}", n, 3 * n * 4, seconds_per_call(lambda: torch.add(a, b, out=c), device))


def mv_point(n: int, device: torch.device) -> Point:
    """Matrix-vector product: 2 n² FLOP over (n² + 2 n) x 4 bytes, intensity about 1/2."""
    m, v = torch.randn(n, n, device=device), torch.randn(n, device=device)
    return Point("mv", f"mv, n = {n}", 2 * n * n, (n * n + 2 * n) * 4, seconds_per_call(lambda: m @ v, device))


def linear_point(batch: int, device: torch.device) -> Point:
    """The one-page program's Linear(784, 10) forward: addmm of x (batch x 784) with the weight, plus bias."""
    model = torch.nn.Linear(784, 10).to(device)
    x = torch.randn(batch, 784, device=device)
    flops = 2 * batch * 784 * 10
    traffic = (batch * 784 + 784 * 10 + 10 + batch * 10) * 4
    with torch.no_grad():
        seconds = seconds_per_call(lambda: model(x), device)
    return Point("linear", f"Linear(784, 10), batch {batch}", flops, traffic, seconds)


def measure(device: torch.device, *, small: bool = False) -> list[Point]:
    """Every point of the figure (`small=True`: fewer and smaller sizes, for tests)."""
    if device.type == "cuda":
        matmuls, adds, mv_n = [64, 512, 2048, 8192], [1 << 20, 1 << 28], 8192
    elif small:
        matmuls, adds, mv_n = [16, 256], [1 << 14, 1 << 22], 1024
    else:
        matmuls, adds, mv_n = [16, 64, 256, 1024], [1 << 16, 1 << 24], 4096
    points = [add_point(n, device) for n in adds]
    points.append(mv_point(mv_n, device))
    points.append(linear_point(64, device))
    points.extend(matmul_point(n, device) for n in matmuls)
    return points


def ceilings(points: list[Point]) -> tuple[float, float, float]:
    """`(compute FLOP/s, best add bytes/s, largest-add bytes/s)`, all taken from the measurements."""
    adds = [p for p in points if p.kind == "add"]
    compute = max(p.rate for p in points if p.kind == "matmul")
    best_bw = max(p.bytes / p.seconds for p in adds)
    largest = max(adds, key=lambda p: p.bytes)
    return compute, best_bw, largest.bytes / largest.seconds


def legend(name: str, points: list[Point]) -> str:
    """A legend entry that says which point is which size, left to right (by intensity)."""
    sizes = [p.label.split(", ", 1)[1] for p in points if ", " in p.label]
    if len(sizes) < 2:
        return name
    if len({p.intensity for p in points}) == 1:
        return f"{name}: {', '.join(sizes)} (one intensity, stacked)"
    return f"{name}: {', '.join(sizes)} (left to right)"


def main() -> None:
    torch.set_num_threads(1)  # one core: steady numbers on a shared machine (the GPU does not care)
    device = detect_device()
    points = measure(device)
    compute, best_bw, memory_bw = ceilings(points)
    # The DEFAULT kernels (compiled without AVX2 or AVX-512) add so slowly that the loop, not memory, sets
    # the add's rate: its slope is then no bandwidth, and a point's place against it says nothing.
    loop_bound = device.type == "cpu" and torch.backends.cpu.get_cpu_capability() == "DEFAULT"
    loop_words = (
        "kernels compiled without AVX2 or AVX-512 (CPU capability DEFAULT): the add's slope is its loop's rate, "
        "not a bandwidth"
    )
    where = f"{device.type}, 1 thread" if device.type == "cpu" else device.type
    lines = [f"float32 on {where}. Both ceilings are MEASURED here, not vendor peaks:"]
    # Printed for a phone's 46 columns: each ceiling a sentence, one space apart, so that it wraps.
    lines.append(f"  compute ceiling: {compute / 1e9:.1f} GFLOP/s (best matmul below)")
    lines.append(f"  bandwidth, best: {best_bw / 1e9:.1f} GB/s (best add: data in cache)")
    lines.append(f"  bandwidth, memory: {memory_bw / 1e9:.1f} GB/s (largest add: from main memory)")
    lines.append(
        f"  ridge points: {compute / best_bw:.1f} FLOP/byte (best), {compute / memory_bw:.1f} FLOP/byte (memory)"
    )
    lines.append("")
    lines.append("roof = min(compute ceiling, intensity x best bandwidth)")
    # Each op on a line of its own, its numbers under it; the headers on two lines, each column as wide as its
    # numbers (a GPU's GFLOP/s included).
    lines.append("op")
    lines.append(f"  {'FLOP':>8} {'':>8} {'roof':>8} {'of':>5}  ridge")
    lines.append(f"  {'/byte':>8} {'GFLOP/s':>8} {'GFLOP/s':>8} {'roof':>5}  side")
    for p in points:
        roof = min(compute, p.intensity * best_bw)
        bound = "bandwidth" if p.intensity * best_bw < compute else "compute"
        share = f"{p.rate / roof:>5.0%}"
        if loop_bound:
            share, bound = f"{'-':>5}", "-"
        lines.append(p.label)
        lines.append(f"  {p.intensity:>8.3f} {p.rate / 1e9:>8.2f} {roof / 1e9:>8.1f} {share}  {bound}")
    if loop_bound:
        lines.append(f"(no share of the roof, no ridge side: {loop_words})")
    else:
        ridge = compute / best_bw
        left = [p.label for p in points if p.kind == "matmul" and p.intensity < ridge]
        lines.append(f"matrix products left of the ridge ({ridge:.1f} FLOP/byte): {', '.join(left) or 'none'}")
    if device.type == "cpu":
        lines.append("")
        lines.append("this build has no GPU; on a CUDA machine this proof measures the same points")
        lines.append("on the GPU (CUDA-event timing) and draws the GPU's measured roofline")
    xs = [0.01 * 10 ** (k / 8) for k in range(8 * 6 + 1)]  # 0.01 ... 10,000 FLOP/byte
    series = [
        Series(
            "roof: best add slope, matmul ceiling",
            xs,
            [min(compute, x * best_bw) / 1e9 for x in xs],
            points=False,
            dashed=True,
        ),
        Series(
            "roof: main-memory slope, matmul ceiling",
            xs,
            [min(compute, x * memory_bw) / 1e9 for x in xs],
            points=False,
            dashed=True,
        ),
    ]
    for kind, name in (
        ("add", "add"),
        ("mv", "matrix-vector"),
        ("linear", "the program's Linear"),
        ("matmul", "matmul"),
    ):
        chosen = sorted((p for p in points if p.kind == kind), key=lambda p: p.intensity)
        series.append(
            Series(legend(name, chosen), [p.intensity for p in chosen], [p.rate / 1e9 for p in chosen], line=False)
        )
    chart = line_chart(
        series,
        title=f"Roofline measured on this machine ({device.type}, float32)",
        x_label="arithmetic intensity (FLOP per byte moved)",
        y_label="achieved GFLOP/s",
        description="Measured ops placed by arithmetic intensity. The flat ceiling is the best matmul rate measured "
        "here; the slopes are the best and the main-memory add bandwidths measured here.",
        log_x=True,
        log_y=True,
        height=420,
    )
    show(chart, text="\n".join(lines), name="roofline")
    adds = [p for p in points if p.kind == "add"]
    matmuls = [p for p in points if p.kind == "matmul"]
    claim(
        "an add does 1 FLOP per 12 bytes; a large matmul hundreds of times more",
        held=all(abs(p.intensity - 1 / 12) < 1e-9 for p in adds)
        and max(p.intensity for p in matmuls) > 100 * adds[0].intensity,
    )
    claim(
        "the add is bandwidth-bound: far below the compute ceiling",
        held=max(p.rate for p in adds) < compute / 4,
        detail=f"best add at {max(p.rate for p in adds) / compute:.0%} of the ceiling",
        applies=not loop_bound,
        why_not=loop_words,
    )
    in_cache = min(adds, key=lambda p: p.bytes)
    claim(
        "data in cache moves faster than data from memory",
        held=in_cache.bytes / in_cache.seconds > memory_bw,
        detail=f"{in_cache.label} at {in_cache.bytes / in_cache.seconds / 1e9:.1f} GB/s, "
        f"the largest add at {memory_bw / 1e9:.1f} GB/s",
        applies=not loop_bound,
        why_not=loop_words,
    )
    smallest = min(matmuls, key=lambda p: p.flops)
    linear = next(p for p in points if p.kind == "linear")
    claim(
        "the smallest product and the program's Linear run well under the compute ceiling: below half of it",
        held=max(smallest.rate, linear.rate) < compute / 2,
        detail=f"{smallest.rate / compute:.0%} and {linear.rate / compute:.0%} of the ceiling",
    )


if __name__ == "__main__":
    main()
