"""Measurement helpers used by the proofs: sizes, storage identity, timing, devices.

Also what a proof needs to judge its timings: the share of a core a run got (`CoreShare`), the caches
the operating system reports, and the kernel slots in torch's CPU library (`dispatch_stub_slots`).
"""

from __future__ import annotations

import mmap
import os
import statistics
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch

__all__ = [
    "CAPABILITIES",
    "SHARE_STEADY",
    "CoreShare",
    "Timing",
    "cache_sizes",
    "cuda_event_seconds",
    "detect_device",
    "dispatch_stub_slots",
    "fits",
    "human_bytes",
    "human_seconds",
    "interleaved_rounds",
    "paired_ratio",
    "paired_ratios",
    "past_the_thread_count",
    "private_share_fits",
    "same_storage",
    "seconds_per_call",
    "share_changed",
    "storage_bytes",
    "stub_name",
    "synchronize",
    "tensor_bytes",
    "thread_schedstats",
    "time_call",
    "torch_cpu_library",
]

_T = TypeVar("_T")

_DECIMAL = ("B", "kB", "MB", "GB", "TB", "PB")
_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def tensor_bytes(tensor: torch.Tensor) -> int:
    """Bytes of the elements a tensor can see: `numel × element_size`.

    This counts the tensor's own elements, not the storage it may share with
    a larger tensor (see [`storage_bytes`][pytorch_floors.measure.storage_bytes]).
    Works on any device, including `meta`, where nothing is allocated.

    Args:
        tensor: Any tensor.

    Returns:
        The byte count.
    """
    return tensor.numel() * tensor.element_size()


def storage_bytes(tensor: torch.Tensor) -> int:
    """Bytes of the whole storage behind a tensor (shared by all its views).

    Args:
        tensor: Any tensor.

    Returns:
        The storage's size in bytes.
    """
    return tensor.untyped_storage().nbytes()


def human_bytes(count: float, *, binary: bool = False) -> str:
    """Format a byte count for people, stating the unit system.

    Decimal units (kB, MB, GB: powers of 1000) are what hardware vendors print;
    binary units (KiB, MiB, GiB: powers of 1024) are what most operating systems
    report. The two differ by about 7 % at the GB scale.

    Args:
        count: Number of bytes.
        binary: Use powers of 1024 (KiB, MiB, ...) instead of powers of 1000.

    Returns:
        A string such as `2.42 GB` or `2.25 GiB`.
    """
    base = 1024.0 if binary else 1000.0
    units = _BINARY if binary else _DECIMAL
    value = float(count)
    for unit in units[:-1]:
        if abs(value) < base:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= base
    return f"{value:.2f} {units[-1]}"


def human_seconds(seconds: float) -> str:
    """Format a duration with a unit that keeps 3 significant digits readable.

    Args:
        seconds: A duration in seconds.

    Returns:
        A string such as `812 ns`, `3.41 µs`, `12.0 ms` or `1.25 s`.
    """
    for scale, unit in ((1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms")):
        if abs(seconds) < scale * 1000:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def same_storage(first: torch.Tensor, second: torch.Tensor) -> bool:
    """Whether two tensors are views of one storage (so writing one changes the other).

    Args:
        first: A tensor.
        second: Another tensor.

    Returns:
        `True` when both share the same underlying storage.
    """
    a, b = first.untyped_storage(), second.untyped_storage()
    if a.device != b.device:
        return False
    if a.data_ptr() != 0:
        return a.data_ptr() == b.data_ptr()
    # Meta and empty storages have no address; compare the storage objects themselves.
    return bool(a._cdata == b._cdata)


def detect_device() -> torch.device:
    """The fastest device this process can use: CUDA, then Apple's MPS, then the CPU.

    Returns:
        The chosen device.
    """
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def synchronize(device: torch.device | str | None = None) -> None:
    """Wait until all queued work on `device` has finished.

    CUDA and MPS launches return before the work ends; timing without this
    measures only the launch. On the CPU this does nothing, because CPU ops
    return when they are done.

    Args:
        device: The device to wait for; `None` waits for the detected device.
    """
    kind = torch.device(device).type if device is not None else detect_device().type
    if kind == "cuda":
        torch.cuda.synchronize()
    elif kind == "mps":
        torch.mps.synchronize()


@dataclass(frozen=True)
class Timing:
    """The result of [`time_call`][pytorch_floors.measure.time_call]: per-call seconds.

    Attributes:
        median: Median seconds per call over the samples.
        q1: First quartile of the per-call seconds.
        q3: Third quartile of the per-call seconds.
        best: Fastest sample's seconds per call.
        samples: Number of samples taken.
        number: Calls per sample.
    """

    median: float
    q1: float
    q3: float
    best: float
    samples: int
    number: int

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median (0.05 means ±5 % around it, roughly)."""
        return (self.q3 - self.q1) / self.median if self.median > 0 else 0.0

    def describe(self) -> str:
        """A short human-readable summary.

        Returns:
            For example `3.41 µs per call (IQR 3.38–3.47 µs; 15 samples × 2000 calls)`.
        """
        return (
            f"{human_seconds(self.median)} per call (IQR {human_seconds(self.q1)}–{human_seconds(self.q3)}; "
            f"{self.samples} samples × {self.number} calls)"
        )


def time_call(
    fn: Callable[[], object],
    *,
    device: torch.device | str | None = None,
    warmup: int = 3,
    samples: int = 15,
    number: int | None = None,
    min_sample_seconds: float = 2e-3,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time `fn()` the careful way: warm up, batch calls, repeat, synchronize, take the median.

    Args:
        fn: The call to time, taking no arguments.
        device: Device whose queue is synchronized around every sample
            (`None`: the detected device). Synchronizing the CPU is a no-op.
        warmup: Untimed calls first (caches, lazy initialisation, allocator).
        samples: Timed samples taken.
        number: Calls per sample; chosen automatically when `None` so that one
            sample lasts at least `min_sample_seconds`.
        min_sample_seconds: Target duration of one sample when choosing `number`.
        clock: The clock read around each sample: the host's wall clock by default;
            `time.thread_time` counts only the CPU time of the calling thread, so the moments
            another program holds the core are left out (right for CPU work on one torch thread,
            which runs on the caller's; wrong for a GPU's work or an op that spreads over threads).

    Returns:
        Per-call statistics, in the clock's seconds.

    Raises:
        ValueError: If `samples` or `warmup` is negative or `samples` is zero.
    """
    if samples < 1 or warmup < 0:
        raise ValueError("time_call needs samples >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    synchronize(device)
    if number is None:
        number = 1
        while True:
            start = clock()
            for _ in range(number):
                fn()
            synchronize(device)
            if clock() - start >= min_sample_seconds or number >= 1 << 20:
                break
            number *= 2
    per_call = []
    for _ in range(samples):
        start = clock()
        for _ in range(number):
            fn()
        synchronize(device)
        per_call.append((clock() - start) / number)
    quartiles = statistics.quantiles(per_call, n=4) if len(per_call) > 1 else [per_call[0]] * 3
    return Timing(
        median=statistics.median(per_call),
        q1=quartiles[0],
        q3=quartiles[2],
        best=min(per_call),
        samples=samples,
        number=number,
    )


def cuda_event_seconds(fn: Callable[[], object], *, repeats: int = 20, warmup: int = 3) -> float:
    """Device seconds per call of `fn()`, timed by CUDA events recorded in the stream around the calls.

    Events measure the GPU's own clock: the time between two marks in the stream, with no
    host-side launch overhead or synchronisation in it (Floor 8 shows the two clocks apart).

    Args:
        fn: The call to time; it must queue its work on the current CUDA stream.
        repeats: Calls between the two events.
        warmup: Untimed calls first.

    Returns:
        Seconds per call.

    Raises:
        RuntimeError: If this build or machine has no CUDA device.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("cuda_event_seconds needs a CUDA device, and this process has none")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / 1e3 / repeats


def seconds_per_call(
    fn: Callable[[], object],
    device: torch.device | str | None = None,
    *,
    samples: int = 7,
    min_sample_seconds: float = 5e-3,
) -> float:
    """Seconds per call of `fn()` on `device`: CUDA events on a CUDA device, else `time_call`'s median.

    See [`cuda_event_seconds`][pytorch_floors.measure.cuda_event_seconds] and
    [`time_call`][pytorch_floors.measure.time_call].

    Args:
        fn: The call to time.
        device: Where `fn` runs (`None`: the detected device).
        samples: Samples for `time_call` (host clock, synchronised).
        min_sample_seconds: Minimum duration of one `time_call` sample.

    Returns:
        Seconds per call.
    """
    kind = torch.device(device).type if device is not None else detect_device().type
    if kind == "cuda":
        return cuda_event_seconds(fn)
    return time_call(fn, device=device, samples=samples, min_sample_seconds=min_sample_seconds).median


def interleaved_rounds(measurements: Mapping[str, Callable[[], _T]], rounds: int) -> dict[str, list[_T]]:
    """Take every measurement once per round, all of a round's back to back, for `rounds` rounds.

    On a shared machine the other programs' load changes from second to second. Measured one after
    the other, a small size and a large one (or two dtypes) can land in a quiet moment and a busy
    one; measured in the same round they share its load, so their ratio in that round cancels most
    of it (see [`paired_ratios`][pytorch_floors.measure.paired_ratios]). Odd rounds visit the
    measurements in reverse order, so none is always the first (or the last) of its round.

    Args:
        measurements: Each name's measurement, a call taking no arguments (seconds, a rate, or
            the text of an error where it could not run).
        rounds: How many rounds.

    Returns:
        Each name's results, one per round, in round order.

    Raises:
        ValueError: If `rounds` is under 1.
    """
    if rounds < 1:
        raise ValueError("interleaved_rounds needs rounds >= 1")
    results: dict[str, list[_T]] = {name: [] for name in measurements}
    names = list(measurements)
    for number in range(rounds):
        for name in names if number % 2 == 0 else reversed(names):
            results[name].append(measurements[name]())
    return results


def paired_ratio(top: Sequence[float | str], bottom: Sequence[float | str]) -> float | None:
    """The median over rounds of `top[r] / bottom[r]`: two measurements compared within each round.

    A round where either side is not a number (the text of an error) pairs with nothing. The
    median drops a round that one burst of other work disturbed on one side only.

    Args:
        top: One measurement per round (from [`interleaved_rounds`][pytorch_floors.measure.interleaved_rounds]).
        bottom: The other's, from the same rounds.

    Returns:
        The median ratio, or `None` when no round has both as numbers.

    Raises:
        ValueError: If the two have different numbers of rounds, or a divisor is not positive.
    """
    if len(top) != len(bottom):
        raise ValueError(f"paired_ratio needs the same rounds on both sides ({len(top)} and {len(bottom)})")
    ratios = []
    for upper, lower in zip(top, bottom, strict=True):
        if isinstance(upper, str) or isinstance(lower, str):
            continue
        if lower <= 0:
            raise ValueError(f"paired_ratio cannot divide by {lower}")
        ratios.append(upper / lower)
    return statistics.median(ratios) if ratios else None


def paired_ratios(rounds: Mapping[str, Sequence[float | str]], against: str) -> dict[str, float]:
    """Each name's measurement over `against`'s in the same round, the median of the rounds.

    Best values taken from separate rounds compare a quiet moment with a busy one (beside two CPU
    hogs the best add rates of four dtypes once spread by 2.1x); the measurements of one round
    shared its load, so their ratio cancels most of it. See
    [`paired_ratio`][pytorch_floors.measure.paired_ratio].

    Args:
        rounds: Each name's results by round, `against`'s among them.
        against: The name every other is divided by.

    Returns:
        Each name's median ratio (`against`'s own is 1.0); a name with no round that ran is left out.
    """
    ratios: dict[str, float] = {}
    for name, values in rounds.items():
        ratio = paired_ratio(values, rounds[against])
        if ratio is not None:
            ratios[name] = ratio
    return ratios


SHARE_STEADY = 0.8
"""Two runs are compared only when the smaller share of a core they got is at least this part of the larger."""

_TASKS = "/proc/self/task"


def thread_schedstats() -> dict[str, tuple[int, int]] | None:
    """Nanoseconds each thread of this process has run, and has waited ready to run, since it started.

    Read from Linux's `/proc/self/task/<tid>/schedstat` (its first two fields). A thread that waits
    ready to run waits for a core that other work holds; one that sleeps or blocks is not waiting.

    Returns:
        `{thread id: (running ns, waiting ns)}`, or `None` where the kernel does not say (not Linux,
        no schedstats).
    """
    try:
        tasks = os.listdir(_TASKS)
    except OSError:
        return None
    stats = {}
    for task in tasks:
        try:
            with open(f"{_TASKS}/{task}/schedstat", encoding="ascii") as file:
                running, waiting = file.read().split()[:2]
        except (OSError, ValueError):
            continue  # the thread ended between the listing and the read
        stats[task] = (int(running), int(waiting))
    return stats or None


class CoreShare:
    """The share of a core the threads of this process got while a block of code ran.

    A thread that is ready to run either runs or waits for a core that other work holds; its share is
    the time it ran over the time it was ready. A parallel region goes at the pace of its slowest
    thread (the others wait for it at the barrier), so `share` is the smallest share of the threads
    that did a real part of the work (at least a quarter of the busiest one's ready time): near 1
    on cores of its own, about 1/2 beside one other busy process on its core.

        with CoreShare() as got:
            a @ b
        got.share  # 0.98, or None where the kernel does not say

    Entered again, it adds the new block's time to the earlier blocks': the share of several short
    samples taken apart (a size sampled once per round) is the share over all of them, which a
    sample of a few milliseconds, inside one slice of the scheduler, cannot show alone.

    Attributes:
        share: The smallest share, once a block ended; `None` where it cannot be measured.
    """

    def __init__(self) -> None:
        self.share: float | None = None
        self._before: dict[str, tuple[int, int]] | None = None
        self._ready: dict[str, tuple[int, int]] = {}

    def __enter__(self) -> CoreShare:
        self._before = thread_schedstats()
        return self

    def __exit__(self, *exc: object) -> None:
        after = thread_schedstats()
        if self._before is None or after is None:
            return
        ready = self._ready
        for task, (running, waiting) in after.items():
            ran, waited = self._before.get(task, (0, 0))
            earlier_ran, earlier_waited = ready.get(task, (0, 0))
            ready[task] = (earlier_ran + running - ran, earlier_waited + waiting - waited)
        busiest = max((running + waiting for running, waiting in ready.values()), default=0)
        if busiest <= 0:
            # Linux moves a running thread's counters only when the scheduler looks at it, and its waiting
            # time only when it gets a core back: a block of a few milliseconds that no thread was taken off
            # its core in moved none of them, and none waited.
            self.share = 1.0
            return
        shares = [
            running / (running + waiting) for running, waiting in ready.values() if running + waiting >= busiest / 4
        ]
        self.share = min(shares)


def share_changed(first: float | None, second: float | None, *, within: float = SHARE_STEADY) -> str:
    """Why two timed runs cannot be compared when other work took a different share of the cores in each.

    A claim that compares two timed runs (one thread against two, a small size against a large one)
    judges the code only if both ran on the same share of a core: a run that lost half its core to a
    program that started between them is slower for that alone.

    Args:
        first: The share one run got (`CoreShare.share`); `None` when it was not measured.
        second: The share the other run got.
        within: The smaller share must be at least this part of the larger.

    Returns:
        An empty string when the shares agree or were not measured (the claim is judged as before),
        else the reason, with both shares, for the claim's `why_not`.
    """
    if first is None or second is None or max(first, second) <= 0:
        return ""
    if min(first, second) >= within * max(first, second):
        return ""
    return (
        f"the share of a core it got changed between the two runs ({first:.0%} of a core, then {second:.0%}):"
        " other work came or went"
    )


CAPABILITIES = ("DEFAULT", "AVX2", "AVX512")
"""The x86 capabilities ATen compiles its CPU kernel files for (`aten/src/ATen/native/DispatchStub.h`)."""
_SHT_DYNSYM, _SHT_NOBITS = 11, 8
_DECLARED = b"_DECLARE_DISPATCH_type"
"""How `DECLARE_DISPATCH` names the type of a stub: `<stub>_DECLARE_DISPATCH_type`."""


def torch_cpu_library() -> Path | None:
    """Torch's CPU library, where its kernels and their `DispatchStub` slots live (an ELF file on Linux)."""
    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    return library if library.is_file() else None


def stub_name(mangled: bytes) -> str | None:
    """The `DispatchStub` a mangled symbol belongs to (`exp_stub`), or `None` when it names none.

    The Itanium ABI writes each name with its length first, so the length tells `exp_stub` from
    `frexp_stub`, whose name holds the same characters: `30exp_stub_DECLARE_DISPATCH_type`, but
    `32frexp_stub_DECLARE_DISPATCH_type`.
    """
    end = mangled.find(_DECLARED)
    if end < 0:
        return None
    end += len(_DECLARED)
    for start in range(end - len(_DECLARED), 0, -1):
        length = str(end - start).encode()
        if mangled[start - len(length) : start] == length and not mangled[start : start + 1].isdigit():
            return mangled[start : end - len(_DECLARED)].decode("ascii")
    return None


def dispatch_stub_slots(library: Path) -> dict[str, dict[str, bool]]:
    """Which capability slots of every `DispatchStub` the library fills, read from its ELF symbol table.

    Each stub has one exported pointer per capability (`DispatchStub<..., add_stub_...>::AVX512`). A
    slot the build registered a kernel for starts as that kernel's address (a data section, with a
    relocation); a slot left empty is a zero, so the linker puts it in `.bss`, a section with no bytes
    in the file. `REGISTER_DISPATCH` leaves the AVX512 slot empty on purpose (DispatchStub.h), and at
    run time `choose_cpu_impl` falls back to the AVX2 kernel.

    Args:
        library: An x86-64 ELF build of torch's CPU library (`torch_cpu_library()`).

    Returns:
        Stub -> capability -> filled, for every stub the library exports slots of, each stub named by
        its mangled `DispatchStub<...>` type: two stubs may share a name in different namespaces
        (`at::native::copy_stub` and `at::native::cpublas::copy_stub`); `stub_name` reads the name.

    Raises:
        ValueError: If the file is not a little-endian 64-bit ELF file.
    """
    found: dict[str, dict[str, bool]] = {}
    with library.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as elf:
        if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
            raise ValueError(f"{library.name} is not a little-endian 64-bit ELF file")
        (section_offset,) = struct.unpack_from("<Q", elf, 0x28)
        entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", elf, section_offset + i * entry_size) for i in range(count)]
        nobits = {i for i, section in enumerate(sections) if section[1] == _SHT_NOBITS}
        symbols = next(section for section in sections if section[1] == _SHT_DYNSYM)
        strings = sections[symbols[6]]
        for start in range(symbols[4], symbols[4] + symbols[5], symbols[9]):
            name_at, _, _, index, _, _ = struct.unpack_from("<IBBHQQ", elf, start)
            begin = strings[4] + name_at
            name = elf[begin : elf.find(b"\0", begin)]
            if b"DispatchStub" not in name:
                continue
            for capability in CAPABILITIES:
                # The member's mangled name ends `<length><name>E`, as `6AVX512E`.
                member = f"{len(capability)}{capability}E".encode()
                if name.endswith(member) and stub_name(name) is not None:
                    stub = name[: -len(member)].decode("ascii")
                    found.setdefault(stub, {})[capability] = index not in nobits
    return found


_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def cache_sizes() -> list[tuple[str, int]]:
    """Data and unified caches of CPU 0 as the operating system reports them (Linux sysfs), if it does.

    Returns:
        `(name, bytes)` per level, such as `("L2 unified", 1048576)`; empty where the OS does not say.
    """
    found = []
    for index in sorted(_CACHES.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = (index / "level").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction" or not size.endswith("K"):
            continue
        found.append((f"L{level} {kind.lower()}", int(size[:-1]) << 10))
    return found


def fits(size: int, caches: list[tuple[str, int]]) -> str:
    """The smallest cache level a buffer of `size` bytes fits in, or `main memory`."""
    for name, capacity in sorted(caches, key=lambda cache: cache[1]):
        if size <= capacity:
            return name
    return "main memory"


def private_share_fits(total: int, threads: int, caches: list[tuple[str, int]]) -> tuple[str, int] | None:
    """The private cache (L1 or L2, one per core) that holds one thread's share of `total` bytes but not the whole.

    Split across `threads` threads on as many cores, each thread's share sits in its own core's cache,
    so together they read from a faster cache than one thread with the whole working set can: a
    speed-up beyond the thread count then comes from the cache. A shared cache (L3) gains nothing
    from the split, so only the private levels count.

    Returns:
        `(name, bytes)` of the smallest such cache, or `None` when there is none (or no cache sizes).
    """
    share = -(-total // max(threads, 1))
    for name, capacity in sorted(caches, key=lambda cache: cache[1]):
        if name.startswith(("L1", "L2")) and share <= capacity < total:
            return name, capacity
    return None


SUPERLINEAR = 1.1
"""A speed-up this much past the thread count is more than the threads alone can give (noise aside)."""


def past_the_thread_count(gain: float, threads: int, total: int, caches: list[tuple[str, int]]) -> list[str]:
    """What a proof prints under a speed-up beyond its thread count: whether the caches explain it.

    Args:
        gain: The speed-up on `threads` threads against one.
        threads: The threads it ran on.
        total: The bytes of the working set (every tensor the operation reads and writes).
        caches: `cache_sizes()`.

    Returns:
        Two lines when `gain` is past `threads` by `SUPERLINEAR`: the first names the gain, the second says
        which private cache holds a thread's share but not the whole, or that none of the caches the
        operating system reports does (then they do not account for it). No line otherwise.
    """
    if threads < 2 or gain <= SUPERLINEAR * threads:
        return []
    share = human_bytes(-(-total // threads), binary=True)
    whole = human_bytes(total, binary=True)
    found = private_share_fits(total, threads, caches)
    if found is None:
        because = f"no private cache the OS reports holds a thread's share, {share}, and not the whole {whole}"
    else:
        name, capacity = found
        because = (
            f"each thread's share, {share}, fits in its own core's {name} ({human_bytes(capacity, binary=True)}),"
            f" the whole {whole} does not"
        )
    return [f"×{gain:.2f} on {threads} threads is more than ×{threads}:", because]
