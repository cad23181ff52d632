"""Asynchrony on a CPU: a worker thread runs queued matmuls (GIL released) while the host thread goes on with Python."""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds
from pytorch_floors.plot import PHONE_TEXT, Key, chart_figure, nice_axis, show, text_width

Interval = tuple[str, float, float]  # (what, start, end) in seconds since the run began


class WorkerStream:
    """An in-order queue of work run by one worker thread: the CPU's stand-in for a CUDA stream.

    `launch` only enqueues and returns; `synchronize` blocks until everything queued has run and
    re-raises, on the host, the first exception a queued call raised.
    """

    def __init__(self, origin: float) -> None:
        self.origin = origin
        self.ran: list[Interval] = []
        self._queue: queue.Queue[tuple[str, Callable[[], object]] | None] = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="worker-stream", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            label, fn = item
            start = time.perf_counter()
            try:
                fn()
            except BaseException as error:  # handed to the host by synchronize(), never dropped
                self._error = self._error or error
            self.ran.append((label, start - self.origin, time.perf_counter() - self.origin))
            self._queue.task_done()
        self._queue.task_done()

    def launch(self, label: str, fn: Callable[[], object]) -> None:
        self._queue.put((label, fn))

    def synchronize(self) -> None:
        self._queue.join()
        if self._error is not None:
            raise RuntimeError("a call queued on the worker stream failed") from self._error

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


def host_python_work(n: int) -> int:
    """Work that needs only the interpreter: the stand-in for preparing the next batch in Python."""
    return sum(i * i % 7 for i in range(n))


def cores_for_two_threads(a: torch.Tensor, b: torch.Tensor, matmuls: int = 8) -> float:
    """How many cores' worth two threads got just now, each running matmuls (which release the GIL).

    Two, where two cores were free for this process; nearer one where other work held one of them.
    It tells "the threads could not run at once" from "the machine did not let them".
    """

    def work() -> None:
        for _ in range(matmuls):
            a @ b

    start, cpu_start = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (time.process_time() - cpu_start) / (time.perf_counter() - start)


def run(side: int = 768, matmuls: int = 3, python_steps: int = 600_000) -> dict[str, object]:
    """The same work twice: queued on a worker while the host runs Python, then one after the other.

    Returns the host's and the worker's intervals of the overlapped run, both runs' wall times, its CPU
    time, and the cores two GIL-free threads got around the overlapped run (the mean of one try before and one after).
    """
    torch.set_num_threads(1)  # one core per lane: the worker's matmul, the host's Python
    a, b = torch.randn(side, side), torch.randn(side, side)
    (a @ b), host_python_work(1000)  # warm up both kinds of work
    before = cores_for_two_threads(a, b)
    origin, cpu_start = time.perf_counter(), time.process_time()
    stream = WorkerStream(origin)
    host: list[Interval] = []
    for k in range(matmuls):
        start = time.perf_counter()
        stream.launch(f"a @ b #{k + 1}", lambda: a @ b)
        host.append(("launch", start - origin, time.perf_counter() - origin))
    start = time.perf_counter()
    host_python_work(python_steps)
    host.append(("Python work", start - origin, time.perf_counter() - origin))
    start = time.perf_counter()
    stream.synchronize()
    host.append(("synchronize (waits)", start - origin, time.perf_counter() - origin))
    overlapped_wall, overlapped_cpu = time.perf_counter() - origin, time.process_time() - cpu_start
    stream.close()
    free_cores = (before + cores_for_two_threads(a, b)) / 2

    start = time.perf_counter()
    for _ in range(matmuls):
        a @ b
    host_python_work(python_steps)
    serial_wall = time.perf_counter() - start
    return {
        "host": host,
        "worker": list(stream.ran),
        "overlapped": overlapped_wall,
        "serial": serial_wall,
        # CPU time of the whole process (every thread): over the wall time, the cores it kept busy.
        "overlapped_cpu": overlapped_cpu,
        "free_cores": free_cores,
    }


def busy_together(first: list[Interval], second: list[Interval]) -> float:
    """Seconds during which an interval of `first` and an interval of `second` were both running."""
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for _, s1, e1 in first for _, s2, e2 in second)


WIDTH, LEFT, RIGHT, BAR = 640, 8.0, 20.0, 22.0
GAP = 2.0
"""Pixels left between two back-to-back bars of one lane."""
LINE = 1.2
"""Line height of the drawing's text, in ems."""
CLASSES = {"launch": 0, "Python work": 1, "synchronize (waits)": 4}
"""The series colour of each kind of host interval; the worker's matmuls are colour 2."""
KEYS = (
    Key("launch (returns at once)", 0),
    Key("host's own Python work", 1),
    Key("matmul on the worker", 2),
    Key("host waits in synchronize()", 4, opacity=0.3),
)
TITLE = "Two threads, measured: the host goes on while the worker computes"


def draw(host: list[Interval], worker: list[Interval]) -> str:
    """Two measured lanes on one time axis: the host thread above, the worker below.

    Each lane's name is above its bars, with room for a phone's text size (plot.PHONE_TEXT); the
    title and the legend are the figure's (`main`).
    """
    span = WIDTH - LEFT - RIGHT
    end = max(e for _, _, e in host + worker)
    axis_ms, step = nice_axis(end * 1e3)

    def x(seconds: float) -> float:
        return LEFT + seconds * 1e3 / axis_ms * span

    out = []
    top = 4.0
    first = top + LINE * PHONE_TEXT + 3
    for label, intervals in (("host (Python thread)", host), ("worker thread", worker)):
        bars = top + LINE * PHONE_TEXT + 3
        out.append(
            f'<text class="floors-plot__tick" x="{LEFT}" y="{bars - 3:.1f}" dominant-baseline="text-after-edge">'
            f"{label}</text>"
        )
        for what, s, e in intervals:
            css = f"floors-plot__series floors-plot__series--{CLASSES.get(what, 2)}"
            faded = ' style="fill-opacity:0.3"' if what.startswith("synchronize") else ""
            # Back-to-back matmuls keep a gap between them, so each is a bar of its own; a launch, microseconds
            # long, is drawn as a mark a little taller than the lane, wide enough to see.
            width, y, height = max(x(e) - x(s) - (GAP if what not in CLASSES else 0), 1.5), bars, BAR
            if what == "launch":
                width, y, height = max(width, 3.0), bars - 3, BAR + 6
            out.append(
                f'<rect class="{css}" x="{x(s):.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}"{faded}>'
                f"<title>{escape(what)}: {human_seconds(s)} .. {human_seconds(e)}</title></rect>"
            )
        top = bars + BAR + 6
    axis = top
    ticks = round(axis_ms / step)
    every = max(1, math.ceil((text_width(f"{axis_ms:g}") + 0.6 * PHONE_TEXT) / (span / ticks)))
    for k in range(ticks + 1):
        tick = LEFT + k * step / axis_ms * span
        out.append(
            f'<line class="floors-plot__grid" x1="{tick:.1f}" y1="{first - 2:.1f}" x2="{tick:.1f}" y2="{axis:.1f}"/>'
        )
        minor = " floors-plot__tick--minor" if k % every else ""
        anchor = "start" if k == 0 else "end" if k == ticks else "middle"
        out.append(
            f'<text class="floors-plot__tick{minor}" x="{tick:.1f}" y="{axis + 2:.1f}" text-anchor="{anchor}" '
            f'dominant-baseline="hanging">{k * step:g}</text>'
        )
    out.append(
        f'<text class="floors-plot__label" x="{LEFT + span / 2}" y="{axis + 2:.1f}" dy="{LINE:g}em" '
        'text-anchor="middle" dominant-baseline="hanging">time since the first launch (ms)</text>'
    )
    height = axis + 2 + 2 * LINE * PHONE_TEXT + 8
    return (
        f'<svg class="floors-plot" role="img" viewBox="0 0 {WIDTH} {height:.0f}" aria-labelledby="ws-title ws-desc" '
        'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="ws-title">{escape(TITLE)}</title>'
        '<desc id="ws-desc">Host lane: launches, Python work, the wait in synchronize. Worker lane: the queued '
        f"matmuls. Every bar is a measured interval.</desc>{''.join(out)}</svg>"
    )


FREE_CORES_NEEDED = 1.6
"""Cores two GIL-free threads must get for the run to show two cores at once (the claim asks half the overlap)."""


@dataclass(frozen=True)
class AtOnce:
    """Whether the overlapped run kept two cores busy, and the figures it was judged on."""

    held: bool
    detail: str


def at_once(result: dict[str, object], together: float, cpus: int | None = None) -> tuple[AtOnce, str | None]:
    """Judge the overlap by CPU time, which time slicing cannot fake.

    On one core a process's CPU time never exceeds its wall time, however much its threads' bars
    overlap; on two, every second both threads really ran adds a second of CPU time beyond the
    wall time. Held when that extra is at least half the overlapping time. Also returns why the run
    cannot show it, if it cannot: one CPU, or other work holding a core, so that two threads which
    release the GIL got well under two cores' worth beside this run (`free_cores`).
    """
    wall, cpu = float(result["overlapped"]), float(result["overlapped_cpu"])  # type: ignore[arg-type]
    free = float(result["free_cores"])  # type: ignore[arg-type]
    extra = cpu - wall
    verdict = AtOnce(
        held=extra > 0.5 * together,
        detail=f"CPU time {cpu / wall:.2f}× the wall time: {human_seconds(max(extra, 0.0))} beyond it, "
        f"{human_seconds(together)} overlapping; two GIL-free threads got {free:.2f} cores' worth beside it",
    )
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if cpus < 2:
        return verdict, "this process may run on one CPU: its threads take turns, and the bars overlap by time slicing"
    if free < FREE_CORES_NEEDED:
        return verdict, (
            f"other work held the cores: two threads of matmuls, which need no GIL, got {free:.2f} cores' worth "
            "beside this run"
        )
    return verdict, None


RUNS = 5
"""Overlapped runs the proof may make before it judges: a neighbour that takes a core for a few milliseconds in
the middle of one run squeezes its overlap, although the cores measured free just before and after it."""


@dataclass(frozen=True)
class Judged:
    """The overlapped run the page shows, the verdict on it, and how many runs were made to get it."""

    result: dict[str, object]
    together: float
    verdict: AtOnce
    cannot: str | None
    runs: int


def overlap_of(result: dict[str, object]) -> float:
    """How long the host's Python work and the worker's matmuls ran at the same time in one run."""
    host: list[Interval] = result["host"]  # type: ignore[assignment]
    worker: list[Interval] = result["worker"]  # type: ignore[assignment]
    return busy_together([i for i in host if i[0] == "Python work"], worker)


def judged_run(measure: Callable[[], dict[str, object]] = run, runs: int = RUNS, cpus: int | None = None) -> Judged:
    """Run the overlap until one run keeps two cores busy, at most `runs` times.

    A run that shows it is proof enough that the threads can run at once: load only ever takes cores away,
    so it cannot make a run that serialises look parallel. If none shows it, the verdict is the one on the
    run whose cores were the freest around it; a machine that really serialises the threads (one CPU, a lock
    held across the matmul) misses every time, so the claim can still fail.
    """
    fairest: Judged | None = None
    for made in range(1, runs + 1):
        result = measure()
        together = overlap_of(result)
        verdict, cannot = at_once(result, together, cpus)
        judged = Judged(result, together, verdict, cannot, made)
        if verdict.held:
            return judged
        if fairest is None or float(result["free_cores"]) > float(fairest.result["free_cores"]):  # type: ignore[arg-type]
            fairest = Judged(result, together, verdict, cannot, made)
    assert fairest is not None  # runs >= 1
    return Judged(fairest.result, fairest.together, fairest.verdict, fairest.cannot, runs)


def main() -> None:
    judged = judged_run()
    result = judged.result
    host: list[Interval] = result["host"]  # type: ignore[assignment]
    worker: list[Interval] = result["worker"]  # type: ignore[assignment]
    # Printed for a phone's 46 columns: each lane heads its rows, a sentence broken where it reads on.
    lines = [f"  {'what':<19} {'start':>7} {'end':>7} {'took':>7}"]
    for lane, intervals in (("host", host), ("worker", worker)):
        lines.append(f"{lane}:")
        for what, s, e in intervals:
            lines.append(f"  {what:<19} {human_seconds(s):>7} {human_seconds(e):>7} {human_seconds(e - s):>7}")
    python = [i for i in host if i[0] == "Python work"]
    together = judged.together
    overlapped, serial = float(result["overlapped"]), float(result["serial"])  # type: ignore[arg-type]
    lines.append("")
    lines += [
        "host Python work and worker matmuls running",
        f"at the same time: {human_seconds(together)}",
        f"wall time, overlapped: {human_seconds(overlapped)};",
        "the same work one after the other:",
        f"{human_seconds(serial)} (x{serial / overlapped:.2f})",
    ]
    show(chart_figure(draw(host, worker), title=TITLE, keys=KEYS), text="\n".join(lines), name="worker_stream")
    launches = [e - s for what, s, e in host if what == "launch"]
    matmuls = [e - s for _, s, e in worker]
    claim(
        "a launch returns at once: the host does not wait for the work it queues",
        held=max(launches) < 0.1 * min(matmuls),
        detail=f"longest launch {human_seconds(max(launches))}, shortest matmul {human_seconds(min(matmuls))}",
    )
    starts, ends = [s for _, s, _ in worker], [e for _, _, e in worker]
    claim(
        "one queue: the matmuls run in order, one at a time",
        held=all(e <= s for e, s in zip(ends, starts[1:], strict=False)),
    )
    python_time = python[0][2] - python[0][1]
    claim(
        "the host's Python work and the worker's matmuls overlap",
        held=together > 0.3 * min(python_time, sum(matmuls)),
        detail=f"{human_seconds(together)} together",
    )
    claim(
        "while they overlap, the host's bytecode and the worker's matmul run on two cores at once",
        held=judged.verdict.held,
        detail=f"{judged.verdict.detail}; overlapped runs made: {judged.runs} of at most {RUNS}",
        applies=judged.cannot is None,
        why_not=judged.cannot or "",
    )
    wait = next(i for i in host if i[0].startswith("synchronize"))
    claim("synchronize returns only after the last queued call ended", held=wait[2] >= max(ends))


if __name__ == "__main__":
    main()
