"""The two clocks drawn: when the host issued each op and when the device ran it (measured here; CUDA as the model)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from html import escape
from typing import Any

import torch

from pytorch_floors.claims import claim, not_applicable
from pytorch_floors.measure import detect_device, human_seconds, synchronize
from pytorch_floors.plot import PHONE_TEXT, Key, chart_figure, nice_axis, show, text_width, wrap

LINE = 1.2
"""Line height of the drawing's text, in ems."""


def program(device: torch.device) -> list[tuple[str, Callable[[], Any]]]:
    """Three matmuls, a reduction and `.item()` (which needs the value on the host)."""
    side = {"cuda": 8192, "mps": 4096}.get(device.type, 384)
    a = torch.randn(side, side, device=device)
    b = torch.randn(side, side, device=device)
    box: dict[str, torch.Tensor] = {}

    def total() -> torch.Tensor:
        box["s"] = box["c"].sum()
        return box["s"]

    def matmul() -> torch.Tensor:
        box["c"] = a @ b
        return box["c"]

    def item() -> float:
        return box["s"].item()

    return [
        ("c = a @ b (1)", matmul),
        ("c = a @ b (2)", matmul),
        ("c = a @ b (3)", matmul),
        ("s = c.sum()", total),
        ("s.item()", item),
    ]


def record(device: torch.device | None = None, runs: int = 3) -> list[dict[str, Any]]:
    """Run the program `runs` times (after a warm-up run) and return the fastest run's timeline.

    Each row holds an op's host and device (start, end) in seconds from the run's t0. The fastest
    run is the one least disturbed by other work on the machine.

    Host times come from `time.perf_counter()` around each call. Device times come from CUDA
    events recorded on the stream around each op, measured from an event recorded at t0 on an
    idle device. On the CPU there is no separate device: the op runs inside the call, so the
    device interval is the host interval.
    """
    device = device or detect_device()
    ops = program(device)
    for _, op in ops:  # warm-up run
        op()
    synchronize(device)
    timelines = [_record_once(device, ops) for _ in range(runs)]
    return min(timelines, key=lambda rows: rows[-1]["host"][1])


def _record_once(device: torch.device, ops: list[tuple[str, Callable[[], Any]]]) -> list[dict[str, Any]]:
    """One timed run of `ops` on an idle device."""
    synchronize(device)
    cuda = device.type == "cuda"
    rows: list[dict[str, Any]] = []
    marks: list[tuple[Any, Any]] = []
    origin = torch.cuda.Event(enable_timing=True) if cuda else None
    t0 = time.perf_counter()
    if origin is not None:
        origin.record()
    for name, op in ops:
        begin = torch.cuda.Event(enable_timing=True) if cuda else None
        end = torch.cuda.Event(enable_timing=True) if cuda else None
        start = time.perf_counter()
        if begin is not None:
            begin.record()
        op()
        if end is not None:
            end.record()
        stop = time.perf_counter()
        rows.append({"op": name, "host": (start - t0, stop - t0)})
        marks.append((begin, end))
    synchronize(device)
    for row, (begin, end) in zip(rows, marks, strict=True):
        if origin is not None and row["op"] != "s.item()":
            row["device"] = (origin.elapsed_time(begin) / 1e3, origin.elapsed_time(end) / 1e3)
        elif origin is None:
            row["device"] = row["host"]  # the CPU ran it inside the call
        else:
            row["device"] = None  # .item() is a copy back to the host, not a kernel we time here
    return rows


WIDTH, LEFT, RIGHT = 640, 8.0, 20.0
BAND = LINE * PHONE_TEXT + 3
"""Room above a lane for its name, sized for a phone's text (plot.PHONE_TEXT); the name sits on its bar."""
BAR = 20.0


def _lane(out: list[str], top: float, label: str) -> float:
    """A lane's name above where its bars go; returns the bars' top."""
    bars = top + BAND
    out.append(
        f'<text class="floors-plot__tick" x="{LEFT}" y="{bars - 3:.1f}" dominant-baseline="text-after-edge">'
        f"{escape(label)}</text>"
    )
    out.append(
        f'<line class="floors-plot__grid" x1="{LEFT}" y1="{bars + BAR + 2:.1f}" x2="{WIDTH - RIGHT}" '
        f'y2="{bars + BAR + 2:.1f}"/>'
    )
    return bars


def draw(rows: list[dict[str, Any]], device: torch.device) -> str:
    """An SVG of a host lane and a device lane; on a CPU build also the CUDA model, without a time scale.

    Each lane's name is above its bars, so the bars take the drawing's width and the names have room
    at a phone's text size. The title, the legend and the notes are the figure's (`main`).
    """
    span = WIDTH - LEFT - RIGHT
    measured_end = max(max(r["host"][1], (r["device"] or r["host"])[1]) for r in rows)
    axis_end, step = nice_axis(measured_end * 1e3)
    cpu = device.type == "cpu"
    title = f"Two clocks, measured on this build ({device.type})"
    desc = "Host lane and device lane for three matmuls, a sum and item(). " + (
        "On the CPU both lanes are the same intervals. Below, a schematic of the CUDA case." if cpu else ""
    )
    out: list[str] = []

    def x_of(seconds: float) -> float:
        return LEFT + seconds * 1e3 / axis_end * span

    host = _lane(out, 4, "host (Python thread)")
    dev = _lane(out, host + BAR + 6, "device = the same CPU" if cpu else f"device ({device.type} stream)")
    for index, row in enumerate(rows):
        css = f"floors-plot__series floors-plot__series--{index % 6}"
        for y, interval in ((host, row["host"]), (dev, row["device"])):
            if interval is None:
                continue
            x0, x1 = x_of(interval[0]), x_of(interval[1])
            out.append(f'<rect class="{css}" x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0, 1.0):.1f}" height="{BAR}"/>')
    axis = dev + BAR + 6
    ticks = round(axis_end / step)
    every = max(1, math.ceil((text_width(f"{axis_end:g}") + 0.6 * PHONE_TEXT) / (span / ticks)))
    for k in range(ticks + 1):
        ms = k * step
        x = LEFT + ms / axis_end * span
        out.append(f'<line class="floors-plot__grid" x1="{x:.1f}" y1="{host - 2:.1f}" x2="{x:.1f}" y2="{axis:.1f}"/>')
        minor = " floors-plot__tick--minor" if k % every else ""
        anchor = "start" if k == 0 else "end" if k == ticks else "middle"
        out.append(
            f'<text class="floors-plot__tick{minor}" x="{x:.1f}" y="{axis + 2:.1f}" text-anchor="{anchor}" '
            f'dominant-baseline="hanging">{ms:g}</text>'
        )
    out.append(
        f'<text class="floors-plot__label" x="{LEFT + span / 2}" y="{axis + 2:.1f}" dy="{LINE:g}em" '
        'text-anchor="middle" dominant-baseline="hanging">time since the first call (ms)</text>'
    )
    height = axis + 2 + 2 * LINE * PHONE_TEXT + 8
    if cpu:
        height = _draw_model(out, height + 10, span)
    return (
        f'<svg class="floors-plot" role="img" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'aria-labelledby="timeline-title timeline-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="timeline-title">{escape(title)}</title><desc id="timeline-desc">{escape(desc)}</desc>'
        f"{''.join(out)}</svg>"
    )


def _draw_model(out: list[str], top: float, span: float) -> float:
    """The CUDA case as a schematic: launches return at once, kernels queue, item() waits. No numbers.

    Drawn from `top` down; returns the drawing's new bottom.
    """
    heading = "The CUDA case, as a model: schematic, not measured here, no time scale"
    lines = wrap(heading, WIDTH - 2 * LEFT, bold=True)
    for k, line in enumerate(lines):
        out.append(
            f'<text class="floors-plot__title" x="{LEFT}" y="{top:.1f}" dy="{LINE * k:g}em" '
            f'dominant-baseline="hanging">{escape(line)}</text>'
        )
    host = _lane(out, top + LINE * PHONE_TEXT * len(lines), "host (Python thread)")
    dev = _lane(out, host + BAR + 6, "device (CUDA stream)")
    unit = span / 20
    kernel_ends = []
    start = LEFT + unit
    for index, length in enumerate((5.0, 5.0, 5.0, 1.2)):
        css = f"floors-plot__series floors-plot__series--{index}"
        launch = LEFT + index * unit * 0.6
        out.append(f'<rect class="{css}" x="{launch:.1f}" y="{host:.1f}" width="{unit * 0.4:.1f}" height="{BAR}"/>')
        out.append(
            f'<rect class="{css}" x="{start:.1f}" y="{dev:.1f}" width="{length * unit - 2:.1f}" height="{BAR}"/>'
        )
        start += length * unit
        kernel_ends.append(start)
    wait_from = LEFT + 4 * unit * 0.6
    out.append(
        f'<rect class="floors-plot__series floors-plot__series--4" x="{wait_from:.1f}" y="{host:.1f}" '
        f'width="{kernel_ends[-1] - wait_from:.1f}" height="{BAR}" style="fill-opacity:0.25" stroke-dasharray="5 3"/>'
    )
    out.append(
        f'<text class="floors-plot__legend" x="{wait_from + 8:.1f}" y="{host + BAR / 2:.1f}" '
        'dominant-baseline="central">s.item() waits for the device</text>'
    )
    return dev + BAR + 8


NOTES = (
    "The lower drawing is a model: launches return at once and the kernels queue up on the stream; "
    "the host waits only when it needs a value (here, s.item()). "
    "On a CUDA build this proof measures both lanes (with CUDA events) and draws them above.",
)


def main() -> None:
    device = detect_device()
    rows = record(device)
    # Printed for a phone's 46 columns: the host's lane and the device's as two tables, the notes broken into lines.
    hosts, devices = [], []
    for row in rows:
        host = f"{human_seconds(row['host'][0])} .. {human_seconds(row['host'][1])}"
        dev = row["device"]
        dev_text = f"{human_seconds(dev[0])} .. {human_seconds(dev[1])}" if dev else "(copy to host)"
        hosts.append(f"{row['op']:<14} {host:>22}")
        devices.append(f"{row['op']:<14} {dev_text:>22}")
    lines = [f"device: {device}", f"{'op':<14} {'host: call .. return':>22}", *hosts]
    lines += ["", f"{'op':<14} {'device: start .. end':>22}", *devices]
    if device.type == "cpu":
        lines.append("On the CPU the two lanes are the same intervals:")
        lines.append("each op ran inside its call.")
        lines.append("The lower drawing is the CUDA model,")
        lines.append("explained in the text;")
        lines.append("it carries no measured numbers.")
    keys = [Key(row["op"], index % 6) for index, row in enumerate(rows)]
    chart = chart_figure(
        draw(rows, device),
        title=f"Two clocks, measured on this build ({device.type})",
        keys=keys,
        notes=NOTES if device.type == "cpu" else (),
    )
    show(chart, text="\n".join(lines), name="timeline")
    check(rows, device)


def spans(rows: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Seconds on the host clock: the whole run, its matmul calls together, and the `s.item()` call."""
    run = rows[-1]["host"][1] - rows[0]["host"][0]
    matmuls = sum(r["host"][1] - r["host"][0] for r in rows if r["op"].startswith("c = a @ b"))
    return run, matmuls, rows[-1]["host"][1] - rows[-1]["host"][0]


def one_processor(rows: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether the run looks as it must where host and device are one processor, and the shares it was judged on.

    The calls that compute (the matmuls and the sum) hold most of the run, and `s.item()` almost
    none of it: the opposite of CUDA's launches, which return at once and leave `.item()` to wait.
    Which computing call takes the longest is not part of it: beside other work, a thread team
    stalled at a barrier can make the small sum outlast the matmuls.
    """
    run, matmuls, item = spans(rows)
    computing = sum(r["host"][1] - r["host"][0] for r in rows if r["op"] != "s.item()")
    detail = (
        f"computing calls {computing / run:.0%} of the run (matmuls {matmuls / run:.0%}), s.item() {item / run:.0%}"
    )
    return computing > 0.5 * run and item < 0.05 * run, detail


def check(rows: list[dict[str, Any]], device: torch.device) -> None:
    """The page's claims about the two lanes: what each clock shows on this device."""
    run, calls, item = spans(rows)
    share = f"matmul calls {calls / run:.0%} of the run, s.item() {item / run:.0%}"
    if device.type == "cuda":
        claim(
            "on CUDA the launches return at once and s.item() waits for the queued kernels",
            held=calls < 0.2 * run and item > 0.5 * run,
            detail=share,
        )
        matmuls = [r for r in rows if r["op"].startswith("c = a @ b")]
        claim(
            "the device lane runs behind the host lane: each matmul ends on the device after its launch returned",
            held=all(r["device"] is not None and r["device"][1] > r["host"][1] for r in matmuls),
        )
        return
    held, detail = one_processor(rows)
    claim(
        "where host and device are one processor, each call lasts as long as its work, and s.item() has nothing to "
        "wait for",
        held=held,
        detail=detail,
        applies=device.type == "cpu",
        why_not="this proof times the MPS device with the host clock only",
    )
    not_applicable(
        "the device lane runs behind the host lane",
        why="a CPU-only build has no device clock of its own: its device lane is the host lane by definition"
        if device.type == "cpu"
        else "this proof has no device clock for MPS",
    )


if __name__ == "__main__":
    main()
