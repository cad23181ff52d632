"""`python -m pytorch_floors record --tier NAME`, `merge-recordings DIR...` and `compare-recordings BEFORE AFTER`."""

from __future__ import annotations

import argparse
import logging
import platform
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from pytorch_floors.claims import Claim
from pytorch_floors.errors import FloorsError
from pytorch_floors.recordings.changes import recording_changes
from pytorch_floors.recordings.merge import merge_recordings
from pytorch_floors.recordings.schema import (
    FILE_NAME,
    RecordingError,
    read_recording,
    read_recordings,
    tier_name_problem,
    write_recording,
)
from pytorch_floors.tiers import TIERS, as_tier, tier_named

__all__ = ["compare_main", "merge_main", "record_main"]


@contextmanager
def _log_to_stderr() -> Iterator[None]:
    """The engine's log on this process's stderr while recording, and only then.

    Called in a process that goes on (a test), a handler left behind would write every later log
    line to a stream since closed.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs.plugins.pytorch_floors")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _counts(claims: list[Claim]) -> str:
    outcomes = [c.outcome for c in claims]
    return (
        f"{outcomes.count('held')} held, {outcomes.count('missed')} did not hold, "
        f"{outcomes.count('not applicable')} not applicable"
    )


def _check_other_tiers(into: Path, tier: str) -> None:
    """Read every tier's recording under `into` but `tier`'s own (recording it again mends that one).

    Raises:
        RecordingError: If a tier's folder holds no readable recording, naming the file and what is wrong.
    """
    if not into.is_dir():
        return
    for folder in sorted(p for p in into.iterdir() if p.is_dir() and p.name != tier):
        path = folder / FILE_NAME
        if not path.is_file():
            raise RecordingError(f"{folder}: a tier's folder holds {FILE_NAME}; this one has none")
        read_recording(path)


def record_main(argv: list[str], *, cache_dir: str | None = None) -> int:
    """Record every proof of the site on this machine, as a tier; prune blocks no page has any more.

    Args:
        argv: The verb's arguments.
        cache_dir: Where the caches live (`FLOORS_CACHE_DIR`, read by the command line), if not `.cache`
            in the project.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors record", description=record_main.__doc__)
    parser.add_argument(
        "--tier",
        required=True,
        help="the tier's name; one of "
        + ", ".join(t.name for t in TIERS)
        + " also runs as that tier (see pytorch_floors.tiers), any other name records this machine as it is",
    )
    parser.add_argument("--stands-for", default="", help="what kind of machine it is, in words")
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the project root (default: here)")
    parser.add_argument("--into", type=Path, default=None, help="the recordings folder (default: PROJECT/recordings)")
    parser.add_argument("--fresh", action="store_true", help="run every proof again instead of using the cache")
    args = parser.parse_args(argv)
    # Only recording runs proofs (the cache's lock, torch's facts); the merge needs nothing but this package.
    from pytorch_floors.recordings.recorder import planned_blocks, prune, record_site  # noqa: PLC0415

    if problem := tier_name_problem(args.tier):
        parser.error(problem)
    project = args.project.resolve()
    into = args.into or project / "recordings"
    tier = tier_named(args.tier)
    stands_for = args.stands_for or (tier.stands_for if tier else f"{platform.system()} {platform.machine()}")
    cache_folder = Path(cache_dir or project / ".cache")
    try:
        # Every other tier's recording is read before anything runs or is written: one that is broken
        # stops the pruning below, which would come after this tier's file had been rewritten.
        _check_other_tiers(into, args.tier)
        with _log_to_stderr(), as_tier(tier) if tier else nullcontext():
            recording = record_site(
                project,
                project / "docs",
                args.tier,
                stands_for=stands_for,
                cache_dir=cache_folder,
                cache_mode="refresh" if args.fresh else "on",
            )
        path = write_recording(recording, into)
        pruned = prune(into, planned_blocks(project / "docs", project))
    except FloorsError as error:
        print(f"record: {error}", file=sys.stderr)
        return 1
    claims = [c for b in recording.blocks for c in b.claims]
    print(f"record: {args.tier}: {len(recording.blocks)} blocks, {len(claims)} claims ({_counts(claims)})")
    print(f"record: {recording.machine.line()}")
    print(f"record: wrote {path.relative_to(project) if path.is_relative_to(project) else path}")
    for gone in pruned:
        print(f"record: pruned {gone.tier} › {gone.page} › {gone.block_id} (no page has it any more)")
    return 0


def merge_main(argv: list[str]) -> int:
    """Merge recordings made elsewhere (the recording workflow's artifacts) into the recordings folder.

    Args:
        argv: The verb's arguments.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors merge-recordings", description=merge_main.__doc__)
    parser.add_argument("sources", nargs="+", type=Path, help="folders holding <tier>/recording.json, at any depth")
    parser.add_argument("--into", type=Path, default=Path("recordings"), help="the recordings folder")
    args = parser.parse_args(argv)
    try:
        merged = merge_recordings(args.sources, args.into)
    except FloorsError as error:
        print(f"merge-recordings: {error}", file=sys.stderr)
        return 1
    for recording in merged:
        print(f"merge-recordings: {recording.tier}: {len(recording.blocks)} blocks, {recording.machine.line()}")
    return 0


def compare_main(argv: list[str]) -> int:
    """Say what changed in each tier recorded in both folders: torch, outputs, every claim's verdict.

    Args:
        argv: The verb's arguments.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m pytorch_floors compare-recordings", description=compare_main.__doc__
    )
    parser.add_argument("before", type=Path, help="the recordings folder before (a copy of recordings/)")
    parser.add_argument("after", type=Path, help="the recordings folder after")
    args = parser.parse_args(argv)
    try:
        earlier = {r.tier: r for r in read_recordings(args.before)}
        later = read_recordings(args.after)
    except FloorsError as error:
        print(f"compare-recordings: {error}", file=sys.stderr)
        return 1
    for recording in later:
        before = earlier.get(recording.tier)
        if before is None:
            print(f"compare-recordings: {recording.tier}: new ({recording.machine.line()})")
        elif before == recording:
            print(f"compare-recordings: {recording.tier}: the same recording")
        else:
            for line in recording_changes(before, recording).lines():
                print(f"compare-recordings: {line}")
    return 0
