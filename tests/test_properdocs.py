"""The real site built with ProperDocs 1.6.7 is the site MkDocs 1.6.1 builds: the same pages, blocks and claims.

ProperDocs, a maintained fork of MkDocs 1.6, aliases the `mkdocs` module, so Material and the plugins
(this project's `floors` among them) run unchanged. It lives in its own environment, `.venv-properdocs`
(`make setup-properdocs`: `.venv`'s packages with MkDocs swapped for it), and `make test` runs these
tests with the rest, after the pattern tests (`make pytest-properdocs` runs them alone). The MkDocs side
is the shared `built_site`; this build comes after it, holding the same lock, and both read the proof
cache the pattern tests filled.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from properdocs_build import PROPERDOCS_BIN, PROPERDOCS_VENV, SETUP, has_properdocs, make_properdocs_site

from conftest import PROJECT_LOCK, ROOT, Build, needs_build, once_per_run, run_dir
from pytorch_floors.editions.verify import verify_site

pytestmark = [pytest.mark.properdocs, pytest.mark.slow]


@pytest.fixture(scope="session")
def properdocs_site(tmp_path_factory: pytest.TempPathFactory, built_site: Build) -> Build:
    """The real site built strictly by ProperDocs, once per run, after (and as) `built_site` was by MkDocs."""
    if not has_properdocs():
        pytest.fail(f"no ProperDocs at {PROPERDOCS_BIN.relative_to(ROOT)}: {SETUP}", pytrace=False)
    made = once_per_run(run_dir(tmp_path_factory), "properdocs-site", make_properdocs_site, lock=PROJECT_LOCK)
    build = Build(made["returncode"], made["log"], Path(made["site"]), made["seconds"])
    return needs_build(build, "properdocs-site")


def report(build: Build) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((build.site / "build-report.json").read_text(encoding="utf-8"))
    return data


def pages(site: Path) -> set[str]:
    return {path.relative_to(site).as_posix() for path in site.rglob("*.html")}


def test_the_environment_has_properdocs_and_no_mkdocs() -> None:
    """The build below can only be ProperDocs': no MkDocs distribution is installed beside it."""
    python = PROPERDOCS_BIN / "python"
    if not python.is_file():
        pytest.fail(f"no environment at {PROPERDOCS_VENV.relative_to(ROOT)}: {SETUP}", pytrace=False)
    probe = (
        "import importlib.metadata as m, json\n"
        "def version(name):\n"
        "    try:\n"
        "        return m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        return None\n"
        "print(json.dumps({n: version(n) for n in ('properdocs', 'mkdocs', 'mkdocs-get-deps', 'mkdocs-material')}))\n"
    )
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True)
    versions = json.loads(done.stdout)
    assert versions == {"properdocs": "1.6.7", "mkdocs": None, "mkdocs-get-deps": None, "mkdocs-material": "9.8.2"}


def test_properdocs_builds_the_site_strictly(properdocs_site: Build) -> None:
    assert properdocs_site.returncode == 0
    generator = '<meta name="generator" content="mkdocs-ProperDocs 1.6.7,'
    assert generator in (properdocs_site.site / "index.html").read_text(encoding="utf-8")


def test_properdocs_writes_the_same_pages(built_site: Build, properdocs_site: Build) -> None:
    mkdocs_pages, properdocs_pages = pages(built_site.site), pages(properdocs_site.site)
    assert len(mkdocs_pages) > 40
    assert sorted(mkdocs_pages - properdocs_pages) == [], "pages only MkDocs wrote"
    assert sorted(properdocs_pages - mkdocs_pages) == [], "pages only ProperDocs wrote"


def test_properdocs_executes_the_same_blocks(built_site: Build, properdocs_site: Build) -> None:
    """The same blocks, page by page, in the same states; ProperDocs' build serves every one from the cache.

    MkDocs built first and filled the cache, so a block it ran is one ProperDocs finds cached: the two
    count as one state here. ProperDocs running a block would mean it gave the block another cache key
    (its code or options came out differently), so its build must run none.
    """
    mkdocs, properdocs = report(built_site), report(properdocs_site)
    assert mkdocs["totals"]["blocks"] > 0

    def blocks(data: dict[str, Any]) -> list[tuple[str, str, str | None]]:
        return [(block["page"], block["block_id"], block["proof"]) for block in data["blocks"]]

    def states(data: dict[str, Any]) -> Counter[str]:
        return Counter("ran or cached" if b["status"] in {"ran", "cached"} else b["status"] for b in data["blocks"])

    assert blocks(properdocs) == blocks(mkdocs)
    assert states(properdocs) == states(mkdocs)
    for total in ("blocks", "skipped", "failed"):
        assert properdocs["totals"][total] == mkdocs["totals"][total], total
    assert properdocs["totals"]["ran"] == 0, "ProperDocs ran blocks MkDocs had just cached"


def test_properdocs_checks_the_same_claims(built_site: Build, properdocs_site: Build) -> None:
    """The same claims with the same outcomes: every block's claims came from the cache MkDocs' build filled."""
    mkdocs, properdocs = report(built_site), report(properdocs_site)
    assert mkdocs["totals"]["claims"] > 0

    def claims(data: dict[str, Any]) -> list[tuple[str, str, str, str]]:
        return [(c["page"], c["block_id"], c["statement"], c["outcome"]) for c in data["claims"]]

    assert Counter(c["outcome"] for c in properdocs["claims"]) == Counter(c["outcome"] for c in mkdocs["claims"])
    for total in ("claims", "claims_held", "claims_not_held", "claims_not_applicable"):
        assert properdocs["totals"][total] == mkdocs["totals"][total], total
    assert claims(properdocs) == claims(mkdocs)


def test_the_properdocs_site_is_verified(properdocs_site: Build) -> None:
    """Every page carries the floors plugin's mark under ProperDocs too, and every planned block a record."""
    check = verify_site(properdocs_site.site)
    assert check.passed, check.problems
    assert check.blocks == report(properdocs_site)["totals"]["blocks"] > 0
