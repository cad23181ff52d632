"""Asynchrony on a CPU: a worker thread runs queued matmuls (GIL released) while the host thread goes on with Python."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from html import escape

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_seconds
from pytorch_floors.plot import show

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


def run(side: int = 768, matmuls: int = 3, python_steps: int = 600_000) -> dict[str, object]:
    """The same work twice: queued on a worker while the host runs Python, then one after the other.

    Returns the host's and the worker's intervals of the overlapped run and both wall times.
    """
    torch.set_num_threads(1)  # one core per lane: the worker's matmul, the host's Python
    a, b = torch.randn(side, side), torch.randn(side, side)
    (a @ b), host_python_work(1000)  # warm up both kinds of work
    origin = time.perf_counter()
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
    overlapped_wall = time.perf_counter() - origin
    stream.close()

    start = time.perf_counter()
    for _ in range(matmuls):
        a @ b
    host_python_work(python_steps)
    serial_wall = time.perf_counter() - start
    return {"host": host, "worker": list(stream.ran), "overlapped": overlapped_wall, "serial": serial_wall}


def busy_together(first: list[Interval], second: list[Interval]) -> float:
    """Seconds during which an interval of `first` and an interval of `second` were both running."""
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for _, s1, e1 in first for _, s2, e2 in second)


def draw(host: list[Interval], worker: list[Interval]) -> str:
    """Two measured lanes on one time axis: the host thread above, the worker below."""
    width, left, span = 640, 150, 460
    end = max(e for _, _, e in host + worker)
    step = max(1, round(end * 1e3 / 5))
    axis_ms = step * (int(end * 1e3 / step) + 1)

    def x(seconds: float) -> float:
        return left + seconds * 1e3 / axis_ms * span

    title = "Two threads, measured: the host goes on while the worker computes"
    out = [
        f'<svg class="floors-plot" role="img" viewBox="0 0 {width} 196" aria-labelledby="ws-title ws-desc" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="ws-title">{escape(title)}</title>',
        '<desc id="ws-desc">Host lane: launches, Python work, the wait in synchronize. Worker lane: the queued '
        "matmuls. Every bar is a measured interval.</desc>",
        f'<text class="floors-plot__title" x="8" y="22">{escape(title)}</text>',
    ]
    classes = {"launch": 0, "Python work": 1, "synchronize (waits)": 4}
    for y, label, intervals in ((40, "host (Python thread)", host), (76, "worker thread", worker)):
        out.append(f'<text class="floors-plot__tick" x="{left - 8}" y="{y + 16}" text-anchor="end">{label}</text>')
        for what, s, e in intervals:
            css = f"floors-plot__series floors-plot__series--{classes.get(what, 2)}"
            faded = ' style="fill-opacity:0.3"' if what.startswith("synchronize") else ""
            out.append(
                f'<rect class="{css}" x="{x(s):.1f}" y="{y}" width="{max(x(e) - x(s), 1.5):.1f}" height="22"{faded}>'
                f"<title>{escape(what)}: {human_seconds(s)} .. {human_seconds(e)}</title></rect>"
            )
    for k in range(int(axis_ms / step) + 1):
        tick = left + k * step / axis_ms * span
        out.append(f'<line class="floors-plot__grid" x1="{tick:.1f}" y1="36" x2="{tick:.1f}" y2="104"/>')
        out.append(f'<text class="floors-plot__tick" x="{tick:.1f}" y="120" text-anchor="middle">{k * step}</text>')
    out.append(
        f'<text class="floors-plot__label" x="{left + span / 2}" y="140" text-anchor="middle">'
        "time since the first launch (ms)</text>"
    )
    legend = (
        ("launch (returns at once)", 0),
        ("host's own Python work", 1),
        ("matmul on the worker", 2),
        ("host waits in synchronize()", 4),
    )
    for k, (text, index) in enumerate(legend):  # two columns, two rows: fits the narrowest screens
        xpos, ypos = 8 + 310 * (k % 2), 160 + 20 * (k // 2)
        out.append(
            f'<rect class="floors-plot__series floors-plot__series--{index}" '
            f'x="{xpos}" y="{ypos}" width="14" height="8"/>'
        )
        out.append(f'<text class="floors-plot__legend" x="{xpos + 18}" y="{ypos + 8}">{escape(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def main() -> None:
    result = run()
    host: list[Interval] = result["host"]  # type: ignore[assignment]
    worker: list[Interval] = result["worker"]  # type: ignore[assignment]
    lines = [f"{'lane':<8} {'what':<22} {'start':>10} {'end':>10} {'took':>10}"]
    for lane, intervals in (("host", host), ("worker", worker)):
        for what, s, e in intervals:
            lines.append(
                f"{lane:<8} {what:<22} {human_seconds(s):>10} {human_seconds(e):>10} {human_seconds(e - s):>10}"
            )
    python = [i for i in host if i[0] == "Python work"]
    together = busy_together(python, worker)
    overlapped, serial = float(result["overlapped"]), float(result["serial"])  # type: ignore[arg-type]
    lines.append("")
    lines.append(f"host Python work and worker matmuls running at the same time: {human_seconds(together)}")
    lines.append(
        f"wall time, overlapped: {human_seconds(overlapped)}; the same work one after the other: "
        f"{human_seconds(serial)} (x{serial / overlapped:.2f})"
    )
    show(draw(host, worker), text="\n".join(lines), name="worker_stream")
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
    wait = next(i for i in host if i[0].startswith("synchronize"))
    claim("synchronize returns only after the last queued call ended", held=wait[2] >= max(ends))


if __name__ == "__main__":
    main()
