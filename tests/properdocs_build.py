"""The real site built by ProperDocs (`tests/test_properdocs.py`), made by its fixture or ahead of it (`made_ahead`)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import ROOT, SITE_BUILD_ENV, Build, build_record

PROPERDOCS_VENV = ROOT / ".venv-properdocs"
PROPERDOCS_BIN = PROPERDOCS_VENV / "bin"
SETUP = "run `make setup-properdocs` (ProperDocs in .venv-properdocs)"


def run_properdocs(site: Path, env: dict[str, str], timeout: float) -> Build:
    """This project built strictly by `.venv-properdocs/bin/properdocs` into `site`.

    Its environment's `bin` comes first on PATH and `.venv`'s is dropped, so what the build starts by
    name (the labs' kernel) comes from the same environment. The proof cache is the one the MkDocs
    build uses (`FLOORS_CACHE_DIR`, else `.cache` in the project).
    """
    others = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if Path(entry) != ROOT / ".venv" / "bin"]
    full_env = {
        **os.environ,
        "PATH": os.pathsep.join([str(PROPERDOCS_BIN), *others]),
        "VIRTUAL_ENV": str(PROPERDOCS_VENV),
        "FLOORS_CACHE_DIR": os.environ.get("FLOORS_CACHE_DIR") or str(ROOT / ".cache"),
        **env,
    }
    command = [str(PROPERDOCS_BIN / "properdocs"), "build", "--strict"]
    command += ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=full_env, cwd=ROOT, timeout=timeout, check=False)
    return Build(done.returncode, done.stdout + done.stderr, site, time.perf_counter() - start)


def has_properdocs() -> bool:
    """Whether `make setup-properdocs` made ProperDocs' environment."""
    return (PROPERDOCS_BIN / "properdocs").is_file()


def make_properdocs_site(site: Path) -> dict[str, Any]:
    """`once_per_run`'s maker of the ProperDocs build: as `built_site`'s, by ProperDocs."""
    return build_record(run_properdocs(site, SITE_BUILD_ENV, timeout=1500))
