"""Durations as readers see them: in the proof log and beside each proof's output."""

from __future__ import annotations

__all__ = ["format_seconds"]


def format_seconds(seconds: float) -> str:
    """A duration with the precision a reader needs: two significant figures, in s, ms or µs.

    Args:
        seconds: A non-negative duration.

    Returns:
        For example `40 µs`, `0.3 ms`, `12 ms`, `300 ms`, `1.2 s`, `75 s`; never `0.00 s`.
    """
    # Each unit from a tenth of it up (0.3 ms), except seconds, shown from 1 s (300 ms, not 0.3 s).
    for unit, scale, floor in (("s", 1.0, 0.9995), ("ms", 1e-3, 1e-4), ("µs", 1e-6, 0.0)):
        if seconds >= floor:
            value = seconds / scale
            # `.2g` would print 99.7 as 1e+02: from there on whole units are precise enough.
            return f"{value:.2g} {unit}" if value < 99.5 else f"{value:.0f} {unit}"
    raise ValueError(f"a duration cannot be negative: {seconds}")
