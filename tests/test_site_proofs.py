"""The pattern phase runs each page's proofs once, as the build runs them, into the cache the build then reads."""

from __future__ import annotations

import re

import pytest
from site_proofs import SiteProofs

from conftest import FixtureSite

pytestmark = pytest.mark.build

PROOF = """\
from pytorch_floors.claims import claim

total = sum(range(10))
print("total", total)
claim("the first ten numbers add up to 45", total == 45, f"got {total}")
"""

PAGE = """\
# Home

```python exec="1" id="setup" session="s"
base = 40
```

```python exec="1" id="shown" session="s"
--8<-- "snippets/adds.py"
print("base", base + 2)
```
"""


def _counts(log: str) -> tuple[int, int]:
    found = re.search(r"proofs: (\d+) ran, (\d+) cached", log)
    assert found is not None, log
    return int(found[1]), int(found[2])


def test_a_pattern_run_fills_the_cache_the_build_reads(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/adds.py", PROOF)
    fixture_site.page("index.md", PAGE)
    proofs = SiteProofs(fixture_site.root, fixture_site.root / ".cache", fixture_site.root / "tests.lock")
    try:
        runs = proofs.runs_of("snippets/adds.py")
    finally:
        proofs.close()
    assert [run.block.block_id for run in runs] == ["shown"]  # only the block that shows the proof
    (run,) = runs
    assert run.failure is None and run.result is not None
    assert [(c.statement, c.held) for c in run.result.claims] == [("the first ten numbers add up to 45", True)]
    assert "base 42" in run.result.output  # its session's earlier block ran first, as on the page
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log
    assert _counts(build.log) == (0, 2), "the build ran a block the pattern run had measured"
    assert "total 45" in build.page("")


def test_a_pattern_run_measures_again_what_the_cache_holds(fixture_site: FixtureSite) -> None:
    """Its runs can fail: the cache's `refresh` mode runs every block, so a proof broken since is not read back."""
    fixture_site.write("snippets/adds.py", PROOF)
    fixture_site.page("index.md", PAGE)
    assert fixture_site.build(strict=True).returncode == 0  # the cache now holds both blocks
    # What the proof reads changes, not its code: the cache key stays, and only a real run can see it miss.
    # By its full path: a block runs in a scratch folder of its own, not in the project.
    numbers = fixture_site.root / "n.txt"
    fixture_site.write("snippets/adds.py", PROOF.replace("range(10)", f"range(int(open({str(numbers)!r}).read()))"))
    fixture_site.write("n.txt", "10")
    proofs = SiteProofs(fixture_site.root, fixture_site.root / ".cache", fixture_site.root / "tests.lock")
    try:
        assert proofs.runs_of("snippets/adds.py")[0].failure is None
    finally:
        proofs.close()
    fixture_site.write("n.txt", "11")
    proofs = SiteProofs(fixture_site.root, fixture_site.root / ".cache", fixture_site.root / "tests.lock")
    try:
        (run,) = proofs.runs_of("snippets/adds.py")
    finally:
        proofs.close()
    assert run.result is not None and [c.held for c in run.result.claims] == [False], "read from the cache"


def test_a_failing_proof_fails_its_run_naming_page_block_and_line(fixture_site: FixtureSite) -> None:
    fixture_site.write("snippets/adds.py", PROOF.replace('print("total", total)', "raise ValueError('planted')"))
    fixture_site.page("index.md", PAGE)
    proofs = SiteProofs(fixture_site.root, fixture_site.root / ".cache", fixture_site.root / "tests.lock")
    try:
        (run,) = proofs.runs_of("snippets/adds.py")
    finally:
        proofs.close()
    assert run.failure is not None
    message = str(run.failure)
    assert "index.md" in message and "shown" in message and "snippets/adds.py:4" in message, message
    assert proofs.runs_of("snippets/elsewhere.py") == []  # a proof no page shows: the caller runs it alone
