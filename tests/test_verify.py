"""`python -m pytorch_floors verify`: a site passes only as a complete build of the floors plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAB_CONFIG, ROOT, Build, FixtureSite
from pytorch_floors.editions.verify import MARK, verify_site

PROOF_PAGE = """\
A sentence.

```python exec="1" id="answer"
--8<-- "snippets/answer.py"
```
"""


ANSWER = '''"""The answer, printed."""

print(6 * 7)
'''


def _verify(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "verify", str(site)], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_the_built_site_is_verified(built_site: Build) -> None:
    done = _verify(built_site.site)
    assert done.returncode == 0, done.stderr
    check = verify_site(built_site.site)
    report = json.loads((built_site.site / "build-report.json").read_text())
    assert check.blocks == report["totals"]["blocks"] == len(report["blocks"]) > 0
    assert check.claims == report["totals"]["claims"] > 0
    assert check.pages > 1 and check.redirects >= 1


@pytest.mark.build
def test_a_site_built_without_the_plugin_fails(fixture_site: FixtureSite) -> None:
    """As an engine that skips unknown plugins (Zensical) would build it: every page, no proof run."""
    fixture_site.page("index.md", PROOF_PAGE)
    fixture_site.write("snippets/answer.py", ANSWER)
    fixture_site.write("mkdocs.yml", (fixture_site.root / "mkdocs.yml").read_text().replace("  - floors\n", "  []\n"))
    assert "floors" not in (fixture_site.root / "mkdocs.yml").read_text()
    built = fixture_site.build(strict=True)
    assert built.returncode == 0, built.log
    assert "6 * 7" in (built.site / "index.html").read_text(), "the proof is shown as code, never run"
    done = _verify(built.site)
    assert done.returncode == 1
    assert "no build-report.json: the floors plugin did not run" in done.stderr
    assert "pages without the floors plugin's mark" in done.stderr


@pytest.mark.build
def test_a_site_built_with_the_plugin_passes_and_each_kind_of_damage_fails(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", PROOF_PAGE)
    fixture_site.page("about.md", "A page without blocks.\n")
    fixture_site.write("snippets/answer.py", ANSWER)
    built = fixture_site.build(strict=True, env={"FLOORS_EXEC_CACHE": "off"})
    assert built.returncode == 0, built.log
    site = built.site
    assert verify_site(site).passed, verify_site(site).problems
    # The report lists every page the build wrote, and a page deleted afterwards is named.
    listed = json.loads((site / "build-report.json").read_text())["build"]["pages"]
    assert sorted(listed, key=lambda entry: entry["path"]) == [
        {"path": "404.html", "page": None},
        {"path": "about/index.html", "page": "about.md"},
        {"path": "index.html", "page": "index.md"},
    ]
    about = site / "about" / "index.html"
    kept = about.read_text()
    about.unlink()
    assert "1 pages the build wrote that the site lacks: about/index.html" in verify_site(site).problems
    about.write_text(kept)
    report_path, page = site / "build-report.json", site / "index.html"
    report, html = report_path.read_text(), page.read_text()

    def problems_after(damage_report: str, damage_page: str) -> list[str]:
        report_path.write_text(damage_report)
        page.write_text(damage_page)
        try:
            return verify_site(site).problems
        finally:
            report_path.write_text(report)
            page.write_text(html)

    data = json.loads(report)
    build_id = data["build"]["id"]
    stale = html.replace(f'<meta name="{MARK}" content="{build_id}">', f'<meta name="{MARK}" content="0123abcd">')
    assert any("marked by another build" in p for p in problems_after(report, stale))
    unplanned = {
        **data,
        "build": {**data["build"], "planned": [*data["build"]["planned"], {"page": "index.md", "block_id": "gone"}]},
    }
    assert any(
        "planned blocks without a record: index.md › gone" in p for p in problems_after(json.dumps(unplanned), html)
    )
    miscounted = {**data, "totals": {**data["totals"], "blocks": data["totals"]["blocks"] + 1}}
    assert any("totals that disagree" in p for p in problems_after(json.dumps(miscounted), html))
    skipped = {**data, "blocks": [{**b, "status": "skipped"} for b in data["blocks"]]}
    found = problems_after(json.dumps(skipped), html)
    assert any("blocks skipped: index.md › answer" in p for p in found)
    frame = '<div class="floors-proof"'
    assert frame in html
    assert any("do not show every proof" in p for p in problems_after(report, html.replace(frame, "<div ")))
    assert verify_site(site).passed


def test_a_folder_that_is_no_site_fails(tmp_path: Path) -> None:
    check = verify_site(tmp_path)
    assert not check.passed and "not a built site" in check.problems[0]


@pytest.mark.build
@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"FLOORS_EXEC_ONLY": "floors/3-*"}, "FLOORS_EXEC_ONLY='floors/3-*'"),
        ({"FLOORS_EXEC": "off"}, "FLOORS_EXEC=off"),
    ],
    ids=["only", "off"],
)
def test_a_build_told_to_leave_blocks_out_verifies_as_partial_only_when_asked(
    fixture_site: FixtureSite, env: dict[str, str], why: str
) -> None:
    # The README's "write one page" recipe, `FLOORS_EXEC_ONLY="floors/3-*" make build`, failed in verify.
    fixture_site.page("index.md", PROOF_PAGE)
    fixture_site.page("floors/3-x.md", PROOF_PAGE.replace('id="answer"', 'id="three"'))
    fixture_site.write("snippets/answer.py", ANSWER)
    built = fixture_site.build(strict=True, env={"FLOORS_EXEC_CACHE": "off", **env})
    assert built.returncode == 0, built.log
    strict = _verify(built.site)
    assert strict.returncode == 1 and "blocks skipped: index.md › answer" in strict.stderr
    partial = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", "verify", str(built.site), "--partial"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert partial.returncode == 0, partial.stderr
    left_out = 2 if "FLOORS_EXEC" in env else 1
    assert (
        "verified as a partial build: " in partial.stdout and f"{left_out} of them left out by {why}" in partial.stdout
    )


@pytest.mark.build
def test_partial_accepts_no_skip_the_build_was_not_told_of(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", PROOF_PAGE)
    fixture_site.write("snippets/answer.py", ANSWER)
    built = fixture_site.build(strict=True, env={"FLOORS_EXEC_CACHE": "off", "FLOORS_EXEC_ONLY": "index.md"})
    assert built.returncode == 0, built.log
    report_path = built.site / "build-report.json"
    report = json.loads(report_path.read_text())
    for block in report["blocks"]:
        block["status"] = "skipped"  # a block skipped on a page the build was told to run
    report["totals"] |= {"ran": 0, "cached": 0, "skipped": len(report["blocks"])}
    report_path.write_text(json.dumps(report))
    check = verify_site(built.site, partial=True)
    assert check.problems == ["1 blocks skipped: index.md › answer"] and check.left_out == []


def test_make_build_asks_verify_for_a_partial_site_only_when_told_to_leave_blocks_out() -> None:
    def verify_line(*variables: str) -> str:
        shown = subprocess.run(
            ["make", "-n", "--no-print-directory", "build", *variables],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("FLOORS_EXEC")},
        ).stdout
        return next(line for line in shown.splitlines() if "pytorch_floors verify" in line)

    assert verify_line().rstrip().endswith("verify site")
    assert verify_line("FLOORS_EXEC_ONLY=floors/3-*").rstrip().endswith("--partial")
    assert verify_line("FLOORS_EXEC=off").rstrip().endswith("--partial")
    assert verify_line("FLOORS_EXEC=on").rstrip().endswith("verify site")


LINKING_CONFIG = LAB_CONFIG.replace("plugins:\n", "plugins:\n  - search\n").replace(
    "      allow_errors: false\n", "      allow_errors: false\n      include_source: true\n"
) + (
    "markdown_extensions:\n"
    "  - attr_list\n"
    "  - pymdownx.snippets:\n"
    "      base_path: [!relative $config_dir]\n"
    "      check_paths: true\n"
    "  - pymdownx.superfences\n"
    "  - pymdownx.tabbed:\n"
    "      alternate_style: true\n"
    "extra_css:\n"
    "  - stylesheets/extra.css\n"
    "extra_javascript:\n"
    "  - javascripts/extra.js\n"
)
"""A fixture site that promises a file of each kind: search (both languages' indexes), a lab (notebooks, text
version, its stylesheet), a proof (its download) with another machine's recording (`floors-tiers.json`), and
stylesheets and scripts of its own."""

LINKING_PAGE = """\
A sentence.

<p><a href="https://example.org/x">elsewhere</a> <a href="../../outside/">outside the site</a>
<a href="pdf/floor-1-program.pdf">a handout the build does not print</a>
<img alt="" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></p>

```python exec="1" id="answer"
--8<-- "snippets/1-program/answer.py"
```
"""


@pytest.fixture
def linking_site(fixture_site: FixtureSite) -> Path:
    from test_recordings import as_elsewhere  # noqa: PLC0415  (a recording as another machine's)

    from pytorch_floors.recordings.recorder import record_site  # noqa: PLC0415
    from pytorch_floors.recordings.schema import write_recording  # noqa: PLC0415

    site = fixture_site
    site.write("mkdocs.yml", LINKING_CONFIG)
    site.write(
        "jupyter/jupyter_nbconvert_config.json", (ROOT / "jupyter" / "jupyter_nbconvert_config.json").read_text()
    )
    site.write("requirements.txt", (ROOT / "requirements.txt").read_text(encoding="utf-8"))
    site.page("index.md", LINKING_PAGE)
    site.write("docs/zh/index.md", "---\ndescription: 中文\n---\n\n一句话。\n\n" + LINKING_PAGE.split("\n\n", 1)[1])
    site.write("snippets/1-program/answer.py", ANSWER)  # a floor's proof: its lab's course pack holds it
    site.write("docs/stylesheets/extra.css", "p { margin: 0; }\n")
    site.write("docs/stylesheets/labs.css", "p { margin: 0; }\n")
    site.write("docs/javascripts/extra.js", "// nothing to do\n")
    site.write(
        "docs/labs/1-program.py", "# %% [markdown]\n# # Lab 1\n\n# %%\nprint('ran')\n\n# %% tags=[\"checker\"]\n# x\n"
    )
    recording = record_site(
        site.root, site.root / "docs", "other", stands_for="another", cache_dir=site.root / ".cache"
    )
    write_recording(as_elsewhere(recording, "42, measured elsewhere"), site.root / "recordings")
    built = site.build(strict=True, env={"FLOORS_EXEC_CACHE": "off"})
    assert built.returncode == 0, built.log[-3000:]
    return built.site


PROMISED = [
    ("labs/1-program/1-program.ipynb", "labs/1-program/1-program.ipynb (from labs/1-program/index.html)"),
    ("labs/1-program/1-program-solutions.ipynb", "labs/1-program/1-program-solutions.ipynb (from labs/"),
    ("labs/1-program/1-program.py", "labs/1-program/1-program.py (from labs/1-program/index.html)"),
    ("search/search_index.json", "search/search_index.json (from 404.html)"),
    ("zh/search/search_index.json", "zh/search/search_index.json (from zh/index.html)"),
    ("floors-tiers.json", "floors-tiers.json (from index.html)"),
    ("zh/floors-tiers.json", "zh/floors-tiers.json (from zh/index.html)"),
    ("snippets", "snippets/1-program/answer.py (from index.html)"),
    ("stylesheets", "stylesheets/extra.css (from 404.html)"),
    ("stylesheets/labs.css", "stylesheets/labs.css (from labs/1-program/index.html)"),
    ("javascripts", "javascripts/extra.js (from 404.html)"),
    ("assets/stylesheets", "assets/stylesheets/main."),
    ("zh/index.html", "zh/ (from "),
]
"""What is deleted from the built site, and how `verify` names what the site then lacks."""


def test_verify_names_every_file_a_page_links_or_loads_that_the_site_lacks(linking_site: Path, tmp_path: Path) -> None:
    """`verify` read only HTML: a site without its notebooks, search index, tier outputs or stylesheets passed."""
    site = linking_site
    assert verify_site(site).passed, verify_site(site).problems
    for gone, named in PROMISED:
        (site / gone).rename(tmp_path / "gone")
        try:
            problems = verify_site(site).problems
            lacking = [p for p in problems if "files the pages link or load that the site lacks: " in p]
            assert len(lacking) == 1 and named in lacking[0], (gone, problems)
            # A page the report lists is named as such too; anything else is only what the pages need.
            assert len(problems) == (2 if gone.endswith(".html") else 1), (gone, problems)
        finally:
            (tmp_path / "gone").rename(site / gone)
    (site / "floors-tiers.json").unlink()
    done = _verify(site)
    assert done.returncode == 1, done.stdout
    assert "verify: 1 files the pages link or load that the site lacks: floors-tiers.json (from index.html)" in (
        done.stderr
    )
