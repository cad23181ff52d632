"""Ending a child that leads its own process group: ask the group to stop, then make it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

__all__ = ["end_group"]


def end_group(process: subprocess.Popen[bytes] | subprocess.Popen[str], grace: float) -> None:
    """SIGTERM the group `process` leads, wait `grace` seconds, then SIGKILL the group and reap the leader.

    Args:
        process: A child started with `start_new_session=True` (it leads its group).
        grace: Seconds the group has to end on its own.
    """
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
