"""Recordings: every proof of the site as other machines ran it, shown beside this build's own.

`make record TIER=<name>` (`python -m pytorch_floors record --tier NAME`) runs every proof as the
build runs it and writes `recordings/<name>/recording.json` ([`schema`][pytorch_floors.recordings.schema]).
A build shows each block's current recordings in tabs, notes the stale ones (recorded for an earlier
version of the block), and compares every claim on every machine in the build report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytorch_floors._lazy import lazy_attributes

if TYPE_CHECKING:
    from pytorch_floors.recordings.compare import BlockTiers, claim_table, machine_in_words, orphans, tiers_for
    from pytorch_floors.recordings.merge import merge_recordings
    from pytorch_floors.recordings.recorder import planned_blocks, prune, record_site
    from pytorch_floors.recordings.schema import (
        FORMAT,
        RecordedBlock,
        Recording,
        RecordingError,
        read_recording,
        read_recordings,
        write_recording,
    )

_LAZY = {
    "BlockTiers": "pytorch_floors.recordings.compare",
    "FORMAT": "pytorch_floors.recordings.schema",
    "RecordedBlock": "pytorch_floors.recordings.schema",
    "Recording": "pytorch_floors.recordings.schema",
    "RecordingError": "pytorch_floors.recordings.schema",
    "claim_table": "pytorch_floors.recordings.compare",
    "machine_in_words": "pytorch_floors.recordings.compare",
    "merge_recordings": "pytorch_floors.recordings.merge",
    "orphans": "pytorch_floors.recordings.compare",
    "planned_blocks": "pytorch_floors.recordings.recorder",
    "prune": "pytorch_floors.recordings.recorder",
    "read_recording": "pytorch_floors.recordings.schema",
    "read_recordings": "pytorch_floors.recordings.schema",
    "record_site": "pytorch_floors.recordings.recorder",
    "tiers_for": "pytorch_floors.recordings.compare",
    "write_recording": "pytorch_floors.recordings.schema",
}

__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "FORMAT",
    "BlockTiers",
    "RecordedBlock",
    "Recording",
    "RecordingError",
    "claim_table",
    "machine_in_words",
    "merge_recordings",
    "orphans",
    "planned_blocks",
    "prune",
    "read_recording",
    "read_recordings",
    "record_site",
    "tiers_for",
    "write_recording",
]
