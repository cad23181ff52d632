"""The child side of proof execution: runs blocks in a fresh process and reports back.

This module is preloaded by the fork server (together with torch), so every
block's process starts from an already-imported, never-used torch: default
dtype, grad mode, RNG seed and thread count are torch's own defaults.
"""

from __future__ import annotations

import builtins
import io
import linecache
import os
import sys
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from multiprocessing.connection import Connection
from typing import Any

import torch  # noqa: F401  (preloaded once in the fork server, so blocks start fast)

__all__ = ["serve"]


def _describe(error: BaseException, filename: str) -> dict[str, Any]:
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    if isinstance(error, SyntaxError) and error.filename == filename and error.lineno:
        lines.append(error.lineno)
    if isinstance(error, SystemExit):
        message = f"the proof called sys.exit({error.code!r}); proofs must run to the end"
    else:
        message = str(error)
    return {
        "type": type(error).__name__,
        "message": message,
        "lines": [line for line in lines if line is not None],
        "traceback": "".join(traceback.format_exception(error)),
    }


def serve(conn: Connection, workdir: str) -> None:
    """Run code blocks received on `conn` in one shared namespace until told to stop.

    Each message is `(code, filename, output_kind)`; `output_kind` (`text` or `html`) is
    exported as `FLOORS_OUTPUT` so that [`pytorch_floors.plot.show`][] knows whether the
    page wants a figure inline or a reader runs the script in a terminal. The reply is a dict with the block's
    printed output, its stderr (kept out of the page), its wall time and, when
    it raised anything at all (`SystemExit` included), a description of the error.

    Args:
        conn: The parent's end of a pipe.
        workdir: Directory the blocks run in.
    """
    os.chdir(workdir)
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        code, filename, output_kind = message
        os.environ["FLOORS_OUTPUT"] = output_kind
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        sys.argv = [filename]
        stdout, stderr = io.StringIO(), io.StringIO()
        error = None
        start = time.perf_counter()
        try:
            compiled = compile(code, filename, "exec")
            with redirect_stdout(stdout), redirect_stderr(stderr):
                exec(compiled, namespace)
        except BaseException as raised:
            error = _describe(raised, filename)
        seconds = time.perf_counter() - start
        conn.send({"output": stdout.getvalue(), "stderr": stderr.getvalue(), "seconds": seconds, "error": error})
