"""Which proof downloads already ran standalone with exactly these inputs: a later test run need not run them again.

A download is self-contained (its helpers are inlined by `pytorch_floors.execution.bundle`), and the
standalone test only asks that it exits 0 in a bare interpreter (`tests/torch_only.py`). So what decides
the outcome is the file's bytes, the interpreter, the torch and numpy it imports (and every distribution
its site-packages holds), the processor, and the environment variables that change how torch runs. A
run that exited 0 leaves a record named by the digest of all of these; a run with the same digest is
then reported as cached instead of run (as the build reports a cached proof). A failure leaves
nothing, so it runs again next time. A fresh clone has no records.

The records are untrusted input, like any cache entry: one is believed only if it is a small JSON
object naming its own digest; anything else is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["StandaloneRecords", "import_versions", "run_key"]

RUNTIME_PREFIXES = (
    *("OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS_", "ATEN_", "CUDA_", "PYTORCH_"),
    *("TORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_"),
)
"""Environment variables torch and its libraries read: they choose threads, kernels and devices. Not a bare
`TORCH`: the Makefile exports `TORCH` (which torch build setup installs), and torch never reads it."""

MAX_RECORD_BYTES = 4096


def run_key(script: bytes, *, environment: Mapping[str, str], versions: Mapping[str, str]) -> str:
    """The digest of everything that decides whether `script` runs standalone here.

    Args:
        script: The download's bytes.
        environment: The environment the bare interpreter runs with; only `RUNTIME_PREFIXES` count.
        versions: The versions and files of what it imports (torch, numpy), from `import_versions`.
    """
    facts = {
        "script": hashlib.sha256(script).hexdigest(),
        "python": [sys.version, os.path.realpath(sys.executable)],
        "machine": [platform.system(), platform.machine(), platform.processor(), os.cpu_count()],
        "environment": sorted((k, v) for k, v in environment.items() if k.startswith(RUNTIME_PREFIXES)),
        "imports": sorted(versions.items()),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def import_versions() -> dict[str, str]:
    """torch's and numpy's versions and where they are installed (a rebuilt wheel of one version moves nothing,
    so torch's own git revision is part of it too)."""
    import numpy  # noqa: PLC0415
    import torch  # noqa: PLC0415

    return {
        "torch": f"{torch.__version__} {torch.version.git_version} {Path(torch.__file__).resolve().parent}",
        "numpy": f"{numpy.__version__} {Path(numpy.__file__).resolve().parent}",
    }


class StandaloneRecords:
    """The records in `directory`: one file per download that ran standalone and exited 0."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a run key: {key!r}")
        return self.directory / f"{key}.json"

    def passed(self, key: str) -> bool:
        """Whether a run with this key exited 0 before (a record that is not well formed is a miss)."""
        path = self._path(key)
        try:
            if not path.is_file() or path.stat().st_size > MAX_RECORD_BYTES:
                return False
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return False
        return isinstance(record, dict) and record.get("key") == key and isinstance(record.get("download"), str)

    def record(self, key: str, download: str) -> None:
        """Remember that the run with this key (of `download`, named for people) exited 0."""
        path = self._path(key)
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps({"key": key, "download": download}), encoding="utf-8")
        partial.replace(path)  # whole or not at all: two test runs may write the same record
