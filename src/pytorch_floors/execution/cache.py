"""A content-keyed store of block outputs.

A block's output is reused only when everything that could change it is the
same: its code (proof includes expanded), the earlier blocks of its session,
its options, the project files it imports, and the machine (torch, Python, CPU, accelerator, threads).
Torch's part of the environment comes from a block's process: the build never imports torch.

Builds may share a cache (two checkouts, `mkdocs serve` beside `make build`), and a complete build
prunes what it did not use. So a process that uses a cache holds a lock of its own in it
(`.builds/PID.lock`, from its first read or write until its build ends), and a prune, under the
cache's `.prune.lock`, leaves the cache alone while another process holds one: it would drop the
entries that build reads and writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import platform
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from filelock import BaseFileLock, FileLock, Timeout

from pytorch_floors.claims import Claim, ClaimFormatError, parse_claims
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.facts import TorchFacts, torch_facts
from pytorch_floors.execution.provenance import Provenance, cpu_model

__all__ = ["CacheError", "CacheMode", "OutputCache", "machine_fingerprint"]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

CacheMode = Literal["on", "off", "refresh"]
# 2: entries carry the provenance of the run that produced them; 3: and the claims it checked.
# The format is part of every key, so entries of an older format are never read: their blocks run again.
_FORMAT = 3

_MAX_NESTING = 32
"""Brackets an entry may nest: the deepest the cache writes is a few (a claim's values in its list)."""

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _nesting(text: str) -> int:
    """How deep `text`'s JSON arrays and objects nest, brackets inside its strings not counted."""
    depth = deepest = 0
    for bracket in re.findall(r"[][{}]", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def machine_fingerprint(facts: TorchFacts | None = None) -> dict[str, str]:
    """The facts about the machine and its settings that every block's output depends on.

    Thread settings are read on every call: a build with `OMP_NUM_THREADS=1` must not reuse
    an output measured with two threads.

    Args:
        facts: Torch's facts for this build; a block's process is asked when they are not given.

    Returns:
        Torch and Python versions, CPU model and capability, device, cores usable and thread settings.
    """
    facts = facts if facts is not None else torch_facts()
    return {
        "format": str(_FORMAT),
        "torch": facts.torch_version,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpu_capability": facts.cpu_capability,
        "device": facts.device,
        "cores": str(os.cpu_count()),
        "usable_cores": str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else "",
        "omp_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "mkl_threads": os.environ.get("MKL_NUM_THREADS", ""),
    }


def _stored_claims(stored: object) -> tuple[Claim, ...]:
    """The claims of a cache entry, read by the same parser as the channel they came through."""
    if not isinstance(stored, list):
        raise ClaimFormatError(f"claims are {type(stored).__name__}, not a list")
    return tuple(parse_claims("".join(json.dumps(c) + "\n" for c in stored)))


class CacheError(FloorsError, OSError):
    """The cache directory cannot be used as a build needs it (read-only, say); the message says what to do."""


LOCK_WAIT = 60.0
"""Seconds a build waits for another build's prune of the same cache (a prune takes milliseconds)."""

_PRUNE_LOCK = ".prune.lock"
_BUILDS = ".builds"

_present: dict[tuple[Path, int], tuple[BaseFileLock, int]] = {}
"""This process's lock in each cache it uses, by directory and process id, and how many open caches share it."""


def _leave(where: tuple[Path, int]) -> None:
    """One cache object of this process is done with its directory; the last one releases the lock."""
    if where[1] != os.getpid() or where not in _present:
        return  # a forked child: the lock is its parent's
    lock, holders = _present[where]
    if holders > 1:
        _present[where] = (lock, holders - 1)
        return
    del _present[where]
    lock.release()
    with contextlib.suppress(OSError):
        Path(lock.lock_file).unlink(missing_ok=True)


def _stored_provenance(stored: object) -> Provenance | None:
    """The provenance of a cache entry: `None`, or every field of a `Provenance` with its type."""
    return None if stored is None else Provenance.from_dict(stored)


def _record(data: object) -> CachedOutput:
    """A cache entry's JSON as an output record.

    Raises:
        ClaimFormatError: If its claims are missing or malformed.
        ValueError: If it is not an output record at all.
    """
    if not isinstance(data, dict):
        raise ValueError("not an object")
    output, seconds = data.get("output"), data.get("seconds")
    if not isinstance(output, str) or isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError("no output or seconds")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"seconds is {seconds!r}")
    return CachedOutput(
        output=output,
        seconds=float(seconds),
        provenance=_stored_provenance(data.get("provenance")),
        claims=_stored_claims(data.get("claims")),
    )


@dataclass(frozen=True)
class CachedOutput:
    """A stored block output.

    Attributes:
        output: What the block printed.
        seconds: How long the block took when it ran.
        provenance: What the run was measured on (the build's provenance, date included).
        claims: The patterns the run checked, and whether they held on its numbers.
    """

    output: str
    seconds: float
    provenance: Provenance | None = None
    claims: tuple[Claim, ...] = ()


class OutputCache:
    """Block outputs stored as one JSON file per key under a directory."""

    def __init__(self, directory: Path, mode: CacheMode = "on") -> None:
        """Open (lazily create) the cache.

        Args:
            directory: Where entries are stored.
            mode: `on` reads and writes, `off` neither, `refresh` writes without reading.
        """
        self.directory = directory
        self.mode = mode
        self.used: set[str] = set()
        self._marked = False
        self._unwritable_since: str | None = None
        self._release: weakref.finalize[[tuple[Path, int]], OutputCache] | None = None

    def close(self) -> None:
        """Stop marking the cache as in use by this build (at its end), so another build may prune it."""
        if self._release is not None:
            self._release()
        self._marked, self._release = False, None

    @staticmethod
    def key(
        code: str,
        options: Mapping[str, object],
        history: list[str],
        sources: str = "",
        machine: Mapping[str, str] | None = None,
    ) -> str:
        """The content key of a block.

        Args:
            code: The block's code, includes expanded.
            options: The block's options that may change its output or rendering.
            history: Codes of the earlier blocks of its session, in order.
            sources: Digest of the project files the block and its history import.
            machine: The build's `machine_fingerprint` (asked of a block's process when not given).

        Returns:
            A hex digest.
        """
        env = dict(machine) if machine is not None else machine_fingerprint()
        payload = json.dumps(
            {"code": code, "options": dict(options), "history": history, "sources": sources, "env": env},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _mark_in_use(self) -> None:
        """Hold this process's lock in the cache (once), so another build's prune leaves the cache alone.

        It is taken under the prune lock: a build that starts while another prunes waits for the prune
        to end. A cache where no lock can be written (read-only) is used unmarked.
        """
        if self._marked:
            return
        self._marked = True
        where = (self.directory.absolute(), os.getpid())
        if where in _present:
            lock, holders = _present[where]
            _present[where] = (lock, holders + 1)
        else:
            mine = FileLock(self.directory / _BUILDS / f"{os.getpid()}.lock")
            try:
                (self.directory / _BUILDS).mkdir(parents=True, exist_ok=True)
                with FileLock(self.directory / _PRUNE_LOCK, timeout=LOCK_WAIT):
                    mine.acquire(blocking=False)
            except (OSError, Timeout) as error:
                log.info(
                    "proof cache %s: cannot mark it in use (%s); another build may prune it", self.directory, error
                )
                return
            _present[where] = (mine, 1)
        # Released by `close`, or when this object is collected (a test's cache) or the process exits.
        self._release = weakref.finalize(self, _leave, where)

    def _other_builds(self) -> list[str]:
        """The process ids of the other builds using this cache now; the locks of builds that ended are removed.

        Call with the prune lock held.
        """
        busy = []
        for path in sorted((self.directory / _BUILDS).glob("*.lock")):
            if path.stem == str(os.getpid()):
                continue
            probe = FileLock(path)
            try:
                probe.acquire(blocking=False)
            except Timeout:
                busy.append(path.stem)
                continue
            probe.release()
            path.unlink(missing_ok=True)  # its process ended without a word (killed): nobody holds it
        return busy

    def get(self, key: str) -> CachedOutput | None:
        """Return the stored output for `key`, if reading is enabled and it exists.

        Args:
            key: A block key.

        Returns:
            The stored output, or `None`.
        """
        if self.mode != "on":
            return None
        self._mark_in_use()
        self.used.add(key)
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
            # Refused before parsing, not caught after: json's parser recurses once per bracket, and
            # a garbage collection at that depth runs finalizers that fail for want of stack (tests).
            if _nesting(text) > _MAX_NESTING:
                raise ValueError(f"nested deeper than {_MAX_NESTING} brackets")
            data = json.loads(text)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.info("cache entry %s is unreadable (%s): the block runs again", path.name, error)
            return None
        try:
            return _record(data)
        except ClaimFormatError as error:
            # An output without the claims measured with it would show a page that checks nothing.
            log.info("cache entry %s has no valid claims (%s): the block runs again", path.name, error)
        except ValueError as error:
            # Valid JSON of another shape (`null`, a list, a number as output, `"seconds": NaN`) is a miss.
            log.info("cache entry %s is not an output record (%s): the block runs again", path.name, error)
        return None

    def put(
        self,
        key: str,
        output: str,
        seconds: float,
        provenance: Provenance | None = None,
        claims: tuple[Claim, ...] = (),
    ) -> None:
        """Store an output (atomically), unless the cache is off.

        Args:
            key: A block key.
            output: What the block printed.
            seconds: How long it took.
            provenance: What it was measured on.
            claims: The claims the run checked.
        """
        if self.mode == "off":
            return
        self._mark_in_use()
        self.used.add(key)
        if self._unwritable_since is not None:
            return
        path = self._path(key)
        record = {
            "output": output,
            "seconds": seconds,
            "provenance": provenance.as_dict() if provenance is not None else None,
            "claims": [claim.__dict__ for claim in claims],
        }
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(record), encoding="utf-8")
            temporary.replace(path)
        except OSError as error:
            # The block ran and its output is good: a cache that cannot keep it costs a re-run next time, not
            # this block. Said once, as a warning (a strict build stops on it: the cache is misconfigured).
            self._unwritable_since = str(error)
            with contextlib.suppress(OSError):  # nothing was written, or the folder is gone: nothing to clean
                temporary.unlink(missing_ok=True)
            log.warning(
                "proof cache %s cannot be written (%s): this build's blocks run uncached; make it writable, "
                "or set FLOORS_CACHE_DIR to a writable directory",
                self.directory,
                error.strerror or error,
            )

    def prune(self) -> int:
        """Delete every entry this cache object neither read nor wrote (call after a complete build).

        Nothing is deleted while another build uses the cache (holds its lock in `.builds/`): what it
        reads and writes is not this build's to judge. A prune of another build, under way, is waited for.

        Returns:
            The number of entries deleted.

        Raises:
            CacheError: If an unused entry cannot be deleted (a read-only cache), saying what to do.
        """
        if not self.directory.is_dir():
            return 0
        try:
            with FileLock(self.directory / _PRUNE_LOCK, timeout=LOCK_WAIT):
                busy = self._other_builds()
                if busy:
                    log.info(
                        "proofs: the cache %s is in use by another build (process %s): nothing pruned",
                        self.directory,
                        ", ".join(busy),
                    )
                    return 0
                return self._sweep()
        except Timeout:
            log.info("proofs: another build has been pruning the cache %s for long: nothing pruned", self.directory)
            return 0
        except OSError as error:
            raise self._unwritable(error) from None

    def _sweep(self) -> int:
        removed = 0
        for path in self.directory.glob("??/*.json"):
            if path.stem not in self.used:
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def _unwritable(self, error: OSError) -> CacheError:
        return CacheError(
            f"the proof cache {self.directory} could not drop an unused entry ({error.strerror}); "
            "make it writable, or build with FLOORS_CACHE_DIR set to a writable directory"
        )
