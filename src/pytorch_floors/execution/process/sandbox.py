"""The environment a block runs with: a few named variables of the build's, never all of them.

A proof that prints `os.environ` would otherwise publish the build machine's tokens and
paths, and a block's settings (`COLUMNS` from `width=`) would leak into every later one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["PASSED_THROUGH", "block_environment"]

PASSED_THROUGH = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    # The SIMD level torch's kernels dispatch to: the one-core-scalar tier sets it to `default`.
    "ATEN_CPU_CAPABILITY",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
)
"""Variables taken from the build's environment: what tools need to run and what changes a measurement."""


def block_environment(*, html: bool, width: int | None, build_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The complete environment of one block.

    Args:
        html: The page shows the block's output as HTML (a figure); `FLOORS_OUTPUT` tells
            [`pytorch_floors.plot.show`][] whether to print a figure inline or save it.
        width: Console width the block asked for (`COLUMNS`), if any.
        build_env: The build's environment (default: this process's).

    Returns:
        The variables the block sees, and nothing else.
    """
    source = os.environ if build_env is None else build_env
    env = {name: source[name] for name in PASSED_THROUGH if name in source}
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"
    env["FLOORS_OUTPUT"] = "html" if html else "text"
    if width:
        env["COLUMNS"] = str(width)
    if "PYTHONPATH" in source:
        # A process the block starts (`sys.executable -c ...`) must import what the block imports: on a
        # box where this package is a checkout on the path, not installed, it would not find it. A
        # search path is no secret. Each entry made absolute: a block runs in a scratch folder, where
        # `PYTHONPATH=src` (relative to the build's directory) would name nothing.
        entries = source["PYTHONPATH"].split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(entry) for entry in entries if entry)
    return env
