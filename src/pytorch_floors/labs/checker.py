"""The self-check helpers, the same in every lab (`pytorch_floors/labs/checker.py`, put into the lab when it is built).

`require` stops with `NotFilled`, naming what to fill in, while an answer is still a placeholder;
`expect` stops with `WrongAnswer` and a message for you when an answer and the measurement
disagree; `expect_type` says which type an answer should have when it has another; `within`
compares a prediction with a measurement; `best_time` times a call; `CoreShare` measures how much
of a core the process got while it timed something, and `unclear` says when that was too little
to tell on which side of a line a timed ratio lies; `threads_apart` measures what more threads
buy where other programs hold the cores.
"""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

LANGUAGE = "en"  # a translated lab's copy names its own, and its words for these messages (`cells.with_checker`)
_SAID: dict[str, str] = {}


def _say(english: str, **fields: object) -> str:
    return _SAID.get(english, english).format(**fields)


try:
    import resource  # the CPU time of finished child processes (not on Windows)
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]


class _MessageAlone:
    """A self-check's verdict: its message is all there is to read, so a notebook shows the message alone."""

    def _render_traceback_(self) -> list[str]:
        # IPython (Jupyter, Colab) shows these lines in place of the traceback: its frames would be these
        # helpers' (`raise` in `require`), which say nothing about your answer.
        return [f"{type(self).__name__}: {self}"]


class NotFilled(_MessageAlone, AssertionError):
    """A self-check found a placeholder (None or ...) where your answer goes."""


class WrongAnswer(_MessageAlone, AssertionError):
    """A self-check found an answer that disagrees with what you measured."""


def _placeholders(name: str, value: object) -> list[str]:
    if value is None or value is ...:
        return [name]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _placeholders(f"{name}[{key!r}]", item)]
    return []


def require(**answers: object) -> None:
    """Stop, naming every answer that is still a placeholder."""
    missing = [p for name, value in answers.items() for p in _placeholders(name, value)]
    if missing:
        said = "fill in {names} in the answer cell above, run it, then run this check again"
        raise NotFilled(_say(said, names=", ".join(missing)))


def expect(ok: object, message: str) -> None:
    """Stop with `message` unless `ok`."""
    if not ok:
        raise WrongAnswer(message)


def expect_type(name: str, value: object, types: type | tuple[type, ...], wanted: str) -> None:
    """Stop unless the answer called `name` is one of `types`, saying that it should be `wanted`.

    True and False do not count as numbers here, although Python treats them as 1 and 0.
    """
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, types) and (bool in types or not isinstance(value, bool)):
        return
    kind = "string" if isinstance(value, str) else type(value).__name__
    raise WrongAnswer(
        _say("{name} should be {wanted}, not the {kind} {value!r}", name=name, wanted=wanted, kind=kind, value=value)
    )


def within(predicted: object, measured: float, factor: float) -> bool:
    """True when a positive `predicted` is within `factor` times `measured`, either way."""
    return isinstance(predicted, (int, float)) and predicted > 0 and measured / factor <= predicted <= measured * factor


def _sync() -> None:
    """Wait until the GPU has finished the work queued on it (nothing to wait for if the lab never used one)."""
    if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        torch.cuda.synchronize()


def best_time(
    fn: Callable[[], object], repeat: int = 15, min_batch_s: float = 0.002, synchronize: bool = True
) -> float:
    """Fastest seconds per call of `fn()` over `repeat` batches of at least `min_batch_s` each.

    With `synchronize`, each batch waits for the GPU to finish what it queued; without it, the time
    is only that of queueing the work.
    """
    fn()  # warm up: first calls pay one-off costs
    _sync()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            _sync()
        if time.perf_counter() - start >= min_batch_s:
            break
        calls *= 2
    samples = []
    for _ in range(repeat):
        _sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            _sync()
        samples.append((time.perf_counter() - start) / calls)
    _sync()
    return min(samples)  # other programs can only add time to a batch, never remove it


def _cpu_seconds() -> float:
    """CPU seconds this process has used (all its threads), and the child processes it has waited for."""
    children = 0.0
    if resource is not None:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        children = usage.ru_utime + usage.ru_stime
    return time.process_time() + children


@dataclass
class CoreShare:
    """The CPU time a measurement got against the wall time it took: `with CoreShare() as core: ...`.

    `core.share` is about 1 when the process had a core to itself while it measured (more, when
    several of its threads ran at once), and less when other programs took turns on that core:
    at a share of 0.25, every timing in the block can have taken up to four times as long as the
    code needs. CPU time counts child processes once they have finished (not on Windows).
    """

    cpu: float = 0.0
    wall: float = 0.0
    _started: tuple[float, float] = field(default=(0.0, 0.0), repr=False)

    def __enter__(self) -> "CoreShare":
        self._started = (_cpu_seconds(), time.perf_counter())
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = _cpu_seconds() - self._started[0]
        self.wall = time.perf_counter() - self._started[1]

    @property
    def share(self) -> float:
        """CPU seconds per wall second while the block ran (0 when nothing was measured)."""
        return self.cpu / self.wall if self.wall > 0 else 0.0


def unclear(measured: float, line: float, core: CoreShare, margin: float = 2.0, what: str = "the ratio") -> str:
    """Why this run cannot tell on which side of `line` the timed ratio `measured` lies; "" when it can.

    A ratio within `margin` times of the line is too close to call on any run. A process that got
    only a share s of a core while it measured can have had each timing stretched up to 1/s times,
    and so a ratio of two timings moved as far either way: the margin widens to margin / s.
    """
    share = min(core.share, 1.0)
    reach = margin / share if share > 0 else float("inf")
    if measured > 0 and max(measured, line) / min(measured, line) > reach:
        return ""
    said = "not graded on this machine: {what}, {measured:,.3g}, is within {reach:,.3g} times of {line:,.3g}, too close"
    said += " to call when this process got {share:.0%} of a core while it measured"
    return _say(said, what=_SAID.get(what, what), measured=measured, reach=reach, line=line, share=core.share)


def _turn() -> tuple[float, float] | None:
    """Seconds the calling thread has spent on a core and waiting for one (Linux); None where unknown."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            on_core, waiting = stat.read().split()[:2]
    except (OSError, ValueError):
        return None
    return int(on_core) / 1e9, int(waiting) / 1e9


def _apart(fn: Callable[[], object], threads: int, seconds: float) -> tuple[float, float, float | None]:
    """`threads` threads calling `fn` for `seconds`: calls per second, calls per CPU second, and cores used.

    The cores used add up, for each thread, its time on a core over the time it did not spend waiting
    for one (None where the operating system does not tell).
    """
    stop, calls = threading.Event(), [0] * threads
    turns: list[float | None] = [None] * threads

    def work(index: int) -> None:
        torch.set_num_threads(1)  # OpenMP keeps the count per thread: a new one would start with every core
        before, start = _turn(), time.perf_counter()
        while not stop.is_set():
            fn()
            calls[index] += 1
        after, wall = _turn(), time.perf_counter() - start
        if before is not None and after is not None and wall > after[1] - before[1]:
            turns[index] = min((after[0] - before[0]) / (wall - (after[1] - before[1])), 1.0)

    workers = [threading.Thread(target=work, args=(index,)) for index in range(threads)]
    cpu, start = _cpu_seconds(), time.perf_counter()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    cores = None if None in turns else sum(turn or 0.0 for turn in turns)
    return sum(calls) / wall, sum(calls) / cpu if cpu > 0 else 0.0, cores


def threads_apart(fn: Callable[[], object], threads: int, rounds: int = 3, seconds: float = 0.1) -> dict[str, float]:
    """What `threads` threads, each calling `fn` on its own, did against one thread in the same run.

    `"calls"` is the calls they made per second over one thread's: on a busy machine, where other
    programs hold the cores, it can stay near 1. `"per_cpu"` is the calls they made per second of CPU
    over one thread's: the work each thread did with the turns it got, which other programs cannot
    take from it. Near 1, each thread did with its turns what one thread does, so with a core each,
    `threads` threads would be about that many times as fast; below 1, they slowed each other down
    (sharing a core's arithmetic units, as hyper-threads do, or memory). `"cores"` adds up, for each
    thread, its time on a core over the time it did not wait for one: the CPU seconds per second they
    use when they get their turns (left out where the operating system does not tell: not Linux).
    The threads of one kernel cannot show this on a busy machine: they wait for each other's turns.
    Rounds alternate one thread and `threads`, and each keeps its best.
    """
    best = {1: (0.0, 0.0), threads: (0.0, 0.0)}
    cores: float | None = None
    for _ in range(rounds):
        for count, (rate, per_cpu) in best.items():
            measured = _apart(fn, count, seconds)
            best[count] = (max(rate, measured[0]), max(per_cpu, measured[1]))
            if count == threads and measured[2] is not None:
                cores = max(cores or 0.0, measured[2])
    (one_rate, one_per_cpu), (rate, per_cpu) = best[1], best[threads]
    found = {
        "calls": rate / one_rate if one_rate else 0.0,
        "per_cpu": per_cpu / one_per_cpu if one_per_cpu else 0.0,
    }
    if cores is not None:
        found["cores"] = cores
    return found
