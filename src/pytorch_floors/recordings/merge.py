"""Merge recordings made elsewhere (the recording workflow's artifacts) into the project's `recordings/`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pytorch_floors.recordings.schema import FILE_NAME, Recording, RecordingError, read_recording, write_recording

__all__ = ["ARTIFACT_PREFIX", "merge_recordings"]

ARTIFACT_PREFIX = "recording-"
"""How record.yml names a leg's artifact (`recording-<tier>`): `download-artifact@v4` extracts each into a folder
of that name, and `upload-artifact@v4` (`path: recordings/<tier>/`) stores the folder's contents, so a leg's
recording arrives as `artifacts/recording-<tier>/recording.json`."""


def merge_recordings(sources: Iterable[Path], into: Path) -> list[Recording]:
    """Copy every tier's recording found under `sources` into `into`, each replacing that tier's.

    Each recording is read (and so checked) before anything is written: a folder holding a broken
    recording, or two folders recording the same tier, merge nothing.

    Args:
        sources: Folders holding `<tier>/recording.json` or, as the recording workflow downloads its legs'
            artifacts, `recording-<tier>/recording.json`, at any depth; or such files themselves.
        into: The project's recordings folder.

    Returns:
        The recordings merged, by tier name.

    Raises:
        RecordingError: If a recording cannot be read, two record the same tier, or none was found.
    """
    found: dict[str, tuple[Path, Recording]] = {}
    for source in sources:
        paths = [source] if source.name == FILE_NAME else sorted(source.rglob(FILE_NAME))
        for path in paths:
            recording = read_recording(path, folder_prefixes=("", ARTIFACT_PREFIX))
            if recording.tier in found:
                raise RecordingError(f"{path} and {found[recording.tier][0]} both record the tier {recording.tier!r}")
            found[recording.tier] = (path, recording)
    if not found:
        raise RecordingError(f"no {FILE_NAME} found to merge")
    for _, recording in found.values():
        write_recording(recording, into)
    return [recording for _, recording in sorted(found.values(), key=lambda item: item[1].tier)]
