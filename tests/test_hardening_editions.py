"""Issue 34's defects of `verify`, `publish`, `record` and the settings: each refused in words, at once.

Every test here builds no site: `verify` is fed a small synthetic site and report, `publish` a git
repository made by plumbing, `record` a recordings folder, with the proofs' run replaced.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from git_repos import GIT_ENV, git

from pytorch_floors.editions.publish import SiteFacts, main, parse_edition, publish, published_versions
from pytorch_floors.editions.verify import MARK, verify_site
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.plugin.config import FloorsConfig
from pytorch_floors.plugin.plugin import FloorsPlugin
from pytorch_floors.recordings import recorder
from pytorch_floors.recordings.cli import record_main
from pytorch_floors.recordings.schema import Recording, read_recording, write_recording
from pytorch_floors.settings import PARSERS, from_environment

BUILD_ID = "0123abcd"

# --- verify: every page the build wrote, a report of the plugin's shape ------------------------------

# As a floors build leaves them: a proof page, a page with only an inline block, a page without blocks,
# an executed lab, the Cite and Proofs pages, the reference tree and the theme's 404.
PAGES = {
    "index.md": "index.html",
    "floors/1-program.md": "floors/1-program/index.html",
    "inline.md": "inline/index.html",
    "about.md": "about/index.html",
    "labs/1-program.py": "labs/1-program/index.html",
    "cite.md": "cite/index.html",
    "proofs.md": "proofs/index.html",
    "reference/index.md": "reference/index.html",
    "reference/plugin.md": "reference/plugin/index.html",
    None: "404.html",
}
FRAME = '<div class="floors-proof" data-proof="answer"></div>'


def _block(page: str, block_id: str, *, proof: str | None) -> dict[str, Any]:
    return {"page": page, "block_id": block_id, "status": "cached", "proof": proof}


def _report() -> dict[str, Any]:
    blocks = [
        _block("floors/1-program.md", "answer", proof="snippets/answer.py"),
        _block("inline.md", "inline", proof=None),
        _block("labs/1-program.py", "notebook", proof=None),
    ]
    return {
        "build": {
            "id": BUILD_ID,
            "planned": [{"page": b["page"], "block_id": b["block_id"]} for b in blocks],
            "pages": [{"path": path, "page": page} for page, path in PAGES.items()],
            "partial": False,
            "rebuilt": None,
        },
        "totals": {
            "blocks": 3,
            "ran": 0,
            "cached": 3,
            "skipped": 0,
            "failed": 0,
            "claims": 0,
            "claims_held": 0,
            "claims_not_held": 0,
            "claims_not_applicable": 0,
        },
        "claims": [],
        "blocks": blocks,
    }


def _site(root: Path, report: object) -> Path:
    site = root / "site"
    for page, path in PAGES.items():
        html = site / path
        html.parent.mkdir(parents=True, exist_ok=True)
        body = FRAME if page == "floors/1-program.md" else "<p>page</p>"
        html.write_text(f'<html><head><meta name="{MARK}" content="{BUILD_ID}"></head>{body}</html>', encoding="utf-8")
    (site / "build-report.json").write_text(json.dumps(report), encoding="utf-8")
    return site


def test_the_synthetic_site_is_verified(tmp_path: Path) -> None:
    check = verify_site(_site(tmp_path, _report()))
    assert check.passed, check.problems
    assert check.pages == len(PAGES) and check.blocks == 3


@pytest.mark.parametrize(
    "gone",
    [
        "about/index.html",  # a page without blocks
        "inline/index.html",  # a page with only an inline block
        "labs/1-program/index.html",  # an executed lab
        "cite/index.html",
        "proofs/index.html",
        "reference",  # the whole tree
        "404.html",
    ],
)
def test_verify_names_every_page_the_build_wrote_that_is_gone(tmp_path: Path, gone: str) -> None:
    site = _site(tmp_path, _report())
    target = site / gone
    if target.is_dir():
        for path in sorted(target.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        target.rmdir()
    else:
        target.unlink()
    check = verify_site(site)
    assert not check.passed
    [problem] = [p for p in check.problems if "pages the build wrote that the site lacks" in p]
    names = [path for path in PAGES.values() if path.startswith(gone)]
    assert all(name in problem for name in names), problem


def test_a_report_that_lists_no_page_is_refused(tmp_path: Path) -> None:
    report = _report()
    del report["build"]["pages"]
    problems = verify_site(_site(tmp_path, report)).problems
    assert any("build-report.json: build.pages is missing" in p for p in problems), problems


def _without(path: tuple[str | int, ...]) -> dict[str, Any]:
    report = _report()
    *parents, last = path
    node: Any = report
    for key in parents:
        node = node[key]
    del node[last]
    return report


def _with(path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    report = _report()
    *parents, last = path
    node: Any = report
    for key in parents:
        node = node[key]
    node[last] = value
    return report


@pytest.mark.parametrize(
    ("report", "message"),
    [
        (_without(("build", "id")), "build.id must be text, not None"),
        (_without(("blocks", 1, "status")), "blocks[1].status must be text, not None"),
        (_with(("blocks",), None), "blocks must be a list, not None"),
        (_with(("build", "planned"), ["x"]), "build.planned[0] must be an object, not 'x'"),
        (_with(("build", "planned", 0, "page"), 3), "build.planned[0].page must be text, not 3"),
        (_with(("claims",), {"held": 1}), "claims must be a list"),
        (_with(("claims",), [{"result": "held"}]), "claims[0].outcome must be text"),
        (_with(("totals",), []), "totals must be an object, not []"),
        (_with(("build", "pages"), "index.html"), "build.pages must be a list"),
        (_with(("build", "pages", 0, "path"), "../../etc/passwd.html"), "build.pages[0].path must be an HTML file"),
        (_with(("build", "pages", 0, "path"), "/index.html"), "build.pages[0].path must be an HTML file"),
        (_with(("build", "pages", 0, "page"), 7), "build.pages[0].page must be text"),
    ],
)
def test_verify_refuses_a_malformed_report_in_words_naming_the_field(
    tmp_path: Path, report: dict[str, Any], message: str
) -> None:
    check = verify_site(_site(tmp_path, report))
    assert not check.passed
    assert any(p.startswith("build-report.json: ") and message in p for p in check.problems), check.problems


def test_verify_refuses_a_report_nested_past_the_parsers_depth(tmp_path: Path) -> None:
    site = _site(tmp_path, {})
    (site / "build-report.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    problems = verify_site(site).problems
    assert any("build-report.json cannot be read" in p for p in problems), problems


def test_a_planned_block_on_a_page_the_report_does_not_list_is_named(tmp_path: Path) -> None:
    report = _report()
    report["build"]["pages"] = [p for p in report["build"]["pages"] if p["page"] != "inline.md"]
    problems = verify_site(_site(tmp_path, report)).problems
    assert any("planned blocks on pages the report does not list: inline.md › inline" in p for p in problems)


# --- publish: the edition's year, mike's versions.json ---------------------------------------------


@pytest.mark.parametrize("name", ["9999.12", "2028.01", "2025.12", "2000.01", "0000.01"])
def test_an_edition_outside_the_projects_years_is_refused(name: str) -> None:
    with pytest.raises(FloorsError, match=rf"edition '{name}': the year must be from 2026 .* to 2027 \(next year\)"):
        parse_edition(name, today=date(2026, 12, 2))


def test_an_edition_up_to_next_year_is_accepted() -> None:
    assert parse_edition("2026.01", today=date(2026, 12, 2)) == (2026, 1)
    assert parse_edition("2027.12", today=date(2026, 12, 2)) == (2027, 12)
    assert parse_edition("2031.05", today=date(2030, 1, 1)) == (2031, 5)


def test_publish_refuses_a_far_future_edition_before_doing_anything(tmp_path: Path) -> None:
    with pytest.raises(FloorsError, match="the year must be from 2026"):
        publish("9999.12", repo=tmp_path, read_site=_no_site, settings=from_environment(os.environ))


def _no_site(config_file: Path) -> SiteFacts:
    raise AssertionError("publish read mkdocs.yml before refusing")


def _repo_with_versions(repo: Path, versions: str) -> None:
    """A committed project (one file) and a `gh-pages` holding only `versions.json`."""
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("a project\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "project")
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=versions).strip()
    tree = git(repo, "mktree", stdin=f"100644 blob {blob}\tversions.json\n").strip()
    commit = git(repo, "commit-tree", tree, "-m", "mike").strip()
    git(repo, "update-ref", "refs/heads/gh-pages", commit)


def _site_facts(config_file: Path) -> SiteFacts:
    return SiteFacts(config_file, "S", "https://x.org/", "latest", {}, None)


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ('{"version": "2026.11", "aliases": ["latest"]}', "gh-pages:versions.json holds a JSON dict, not the list"),
        ("[1]", r"gh-pages:versions.json: entry 0 has no `version` \(text\)"),
        ('[{"version": "2026.11"}]', r"entry 0 \(2026.11\) has no `aliases` list of text"),
        ("[{", "gh-pages:versions.json is not JSON"),
    ],
)
def test_a_versions_json_mike_did_not_write_is_refused_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], versions: str, message: str
) -> None:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    _repo_with_versions(tmp_path, versions)
    with pytest.raises(FloorsError, match=message):
        published_versions(tmp_path, "gh-pages")
    # The command line says so in one line (a TypeError's traceback before).
    assert main(["2026.12", "--repo", str(tmp_path)], read_site=_site_facts, read_settings=dict) == 1
    err = capsys.readouterr().err
    assert "publish: 2026.12 not published: gh-pages:versions.json" in err and "Traceback" not in err


# --- one parser of the FLOORS_* settings -----------------------------------------------------------


def test_the_plugin_reads_every_setting_with_the_one_parser_publish_uses() -> None:
    settings = dict(FloorsConfig._schema)
    assert {option.variable: option.parse for option in settings.values()} == PARSERS  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [" ", "\t", "  \n"])
def test_a_blank_glob_is_refused_at_once_by_publish_and_by_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("FLOORS_EXEC_ONLY", value)
    expected = f"FLOORS_EXEC_ONLY={value!r}: a glob of only blanks"
    with pytest.raises(FloorsError, match=expected.replace("\\", "\\\\").replace("(", r"\(")):
        from_environment(os.environ)
    # publish refuses it before it looks at the repository (tmp_path is none) or starts mike.
    with pytest.raises(FloorsError, match="FLOORS_EXEC_ONLY="):
        publish("2026.12", repo=tmp_path, read_site=_no_site, settings=from_environment(os.environ))
    # The plugin refuses it as a configuration error, where it kept it as a glob that skipped every block.
    errors, _ = FloorsPlugin().load_config({})
    assert len(errors) == 1 and errors[0][0] == "only" and str(errors[0][1]).startswith(expected), errors
    # A blank `only:` in mkdocs.yml is refused alike.
    monkeypatch.delenv("FLOORS_EXEC_ONLY")
    errors, _ = FloorsPlugin().load_config({"only": value})
    assert len(errors) == 1 and "a glob of only blanks" in str(errors[0][1])


@pytest.mark.parametrize(("variable", "value"), [("FLOORS_EXEC", "2"), ("FLOORS_EXEC", " off"), ("FLOORS_CLAIMS", "x")])
def test_publish_refuses_what_the_plugin_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(FloorsError, match=f"{variable}={value!r}: expected"):
        publish("2026.12", repo=tmp_path, read_site=_no_site, settings=from_environment(os.environ))
    errors, _ = FloorsPlugin().load_config({})
    assert len(errors) == 1 and f"{variable}={value!r}: expected" in str(errors[0][1])


def test_an_empty_variable_is_unset_for_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOORS_EXEC_ONLY", "")
    assert "FLOORS_EXEC_ONLY" not in from_environment(os.environ)
    plugin = FloorsPlugin()
    errors, _ = plugin.load_config({"only": "labs/*"})
    assert errors == [] and plugin.config["only"] == "labs/*"


# --- record: every other tier's recording checked before this tier's is written ---------------------

MACHINE = Provenance("2.11.0", "3.12.3", "Linux x86_64", "a CPU", "AVX2", 2, 2, "none", "2026-12-02")


def _recording(tier: str, stands_for: str) -> Recording:
    return Recording(tier=tier, stands_for=stands_for, recorded="2026-12-01", machine=MACHINE)


def _record(project: Path, into: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    ran: list[str] = []

    def record_site(project_dir: Path, docs_dir: Path, tier: str, **_: object) -> Recording:
        ran.append(tier)
        return _recording(tier, "recorded again")

    monkeypatch.setattr(recorder, "record_site", record_site)
    (project / "docs").mkdir(exist_ok=True)
    return record_main(["--tier", "mine", "--project", str(project), "--into", str(into)]), ran


@pytest.mark.parametrize(
    ("broken", "message"),
    [("{not json", "cannot be read as a recording"), (None, "a tier's folder holds recording.json; this one has none")],
)
def test_record_checks_every_other_tier_before_it_runs_or_writes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    broken: str | None,
    message: str,
) -> None:
    into = tmp_path / "recordings"
    mine = write_recording(_recording("mine", "as it was"), into)
    before = mine.read_text(encoding="utf-8")
    (into / "other").mkdir()
    if broken is not None:
        (into / "other" / "recording.json").write_text(broken, encoding="utf-8")
    status, ran = _record(tmp_path, into, monkeypatch)
    assert status == 1
    err = capsys.readouterr().err
    assert f"record: {into / 'other'}" in err and message in err and "Traceback" not in err
    assert ran == [], "no proof runs before the recordings are checked"
    assert mine.read_text(encoding="utf-8") == before, "this tier's file is left as it was"


def test_record_logs_to_stderr_while_it_records_and_leaves_the_logger_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A handler left on the logger by a record called in-process wrote every later test's log lines to
    a stream pytest had closed ("--- Logging error ---"), one more handler per call."""
    logger = logging.getLogger("mkdocs.plugins.pytorch_floors")
    before = (list(logger.handlers), logger.level)

    def record_site(project_dir: Path, docs_dir: Path, tier: str, **_: object) -> Recording:
        logger.info("a block ran")
        return _recording(tier, "recorded")

    monkeypatch.setattr(recorder, "record_site", record_site)
    (tmp_path / "docs").mkdir()
    assert record_main(["--tier", "mine", "--project", str(tmp_path), "--into", str(tmp_path / "recordings")]) == 0
    assert "a block ran" in capsys.readouterr().err
    assert (list(logger.handlers), logger.level) == before


def test_record_mends_its_own_tiers_broken_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    into = tmp_path / "recordings"
    write_recording(_recording("other", "another machine"), into)
    (into / "mine").mkdir()
    (into / "mine" / "recording.json").write_text("{broken", encoding="utf-8")
    status, ran = _record(tmp_path, into, monkeypatch)
    assert status == 0 and ran == ["mine"]
    assert read_recording(into / "mine" / "recording.json").stands_for == "recorded again"
