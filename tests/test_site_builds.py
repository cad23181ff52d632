"""A fixture site built in the test's process says what `mkdocs build` says: exit code, log lines, pages."""

import os
import re

import pytest

from conftest import Build, FixtureSite

pytestmark = pytest.mark.build

FAILING = """\
# Home

```python exec="1" id="fine"
print("fine", 6 * 7)
```

```python exec="1" id="broken"
raise ZeroDivisionError("on purpose")
```
"""


def _lines(build: Build) -> list[str]:
    """The log's warning and error lines, figures out, sorted (a subprocess's log is its stdout, then its stderr)."""
    wanted = [line for line in build.log.splitlines() if line.startswith(("WARNING", "ERROR", "Error", "Aborted"))]
    return sorted(re.sub(r"\d+(\.\d+)?", "N", line) for line in wanted)


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_a_failed_build_in_process_ends_as_the_command_line_ends(fixture_site: FixtureSite, strict: bool) -> None:
    fixture_site.page("index.md", FAILING)
    env = {"FLOORS_EXEC_CACHE": "off"}
    subprocess_build = fixture_site.build(strict=strict, env=env, process=True)
    in_process = fixture_site.build(strict=strict, env=env)
    assert subprocess_build.returncode == in_process.returncode == 1, in_process.log
    assert _lines(in_process) == _lines(subprocess_build), (in_process.log, subprocess_build.log)
    assert any("block 'broken'" in line for line in _lines(in_process)), in_process.log


def test_a_build_in_process_leaves_the_tests_directory_and_environment_as_they_were(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", '# Home\n\n```python exec="1" id="fine"\nprint("fine", 6 * 7)\n```\n')
    before = (os.getcwd(), dict(os.environ))
    build = fixture_site.build(env={"FLOORS_SITE_BUILDS_PROBE": "1"})
    assert build.returncode == 0, build.log
    assert "fine 42" in build.page("")
    assert (os.getcwd(), dict(os.environ)) == before
