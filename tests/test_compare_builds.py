"""`tools/compare_builds.py`: builds that differ only in their build id are the same; any other difference is named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import compare_builds  # tools/ is no package

FIRST_ID, SECOND_ID = "0" * 31 + "1", "f" * 31 + "2"


def site(folder: Path, build_id: str, body: str = "<p>Floor 3</p>") -> Path:
    """A built site in little: a page carrying the build's mark, and the report recording its id."""
    (folder / "floors" / "3-boundary").mkdir(parents=True)
    page = f'<html><head><meta name="pytorch-floors-build" content="{build_id}"></head><body>{body}</body></html>\n'
    (folder / "floors" / "3-boundary" / "index.html").write_text(page, encoding="utf-8")
    report = {"build": {"id": build_id, "planned": []}, "totals": {"blocks": 0}}
    (folder / "build-report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (folder / "sitemap.xml.gz").write_bytes(b"\x1f\x8b binary")
    return folder


def test_two_sites_that_differ_only_in_their_build_ids_are_the_same(tmp_path: Path) -> None:
    comparison = compare_builds.compare_sites(site(tmp_path / "a", FIRST_ID), site(tmp_path / "b", SECOND_ID))
    assert comparison.same, comparison.lines()
    assert comparison.lines() == ["the two sites are the same, but for their build ids"]


def test_a_difference_beside_the_build_id_is_named_with_its_lines(tmp_path: Path) -> None:
    first = site(tmp_path / "a", FIRST_ID)
    second = site(tmp_path / "b", SECOND_ID, body="<p>Floor 3 · The boundary</p>")
    comparison = compare_builds.compare_sites(first, second)
    assert list(comparison.differ) == ["floors/3-boundary/index.html"]
    diff = comparison.differ["floors/3-boundary/index.html"]
    assert any(line.startswith("-") and "<p>Floor 3</p>" in line for line in diff), diff
    assert any(line.startswith("+") and "The boundary" in line for line in diff), diff
    assert all(FIRST_ID not in line and SECOND_ID not in line for line in diff), "the ids are replaced in the diff too"


def test_only_the_sites_own_build_id_is_ignored(tmp_path: Path) -> None:
    """Another id that differs (a notebook's random cell id, a timestamp) is a difference: it is no build id."""
    first = site(tmp_path / "a", FIRST_ID, body=f"<p>{SECOND_ID}</p>")  # the other build's id, in this build
    second = site(tmp_path / "b", SECOND_ID, body=f"<p>{SECOND_ID}</p>")
    comparison = compare_builds.compare_sites(first, second)
    assert list(comparison.differ) == ["floors/3-boundary/index.html"]


def test_files_present_in_one_site_only_and_binary_files_are_named(tmp_path: Path) -> None:
    first = site(tmp_path / "a", FIRST_ID)
    second = site(tmp_path / "b", SECOND_ID)
    (first / "old.html").write_text("x", encoding="utf-8")
    (second / "new" / "page.html").parent.mkdir()
    (second / "new" / "page.html").write_text("y", encoding="utf-8")
    (second / "sitemap.xml.gz").write_bytes(b"\x1f\x8b other \xff")
    comparison = compare_builds.compare_sites(first, second)
    assert (comparison.only_before, comparison.only_after) == (["old.html"], ["new/page.html"])
    assert comparison.differ == {"sitemap.xml.gz": ["binary: 9 bytes, then 10 bytes"]}
    assert comparison.lines()[-1] == "3 files differ"


def test_a_site_without_a_report_is_compared_as_it_is(tmp_path: Path) -> None:
    first, second = site(tmp_path / "a", FIRST_ID), site(tmp_path / "b", FIRST_ID)
    (second / "build-report.json").unlink()
    (first / "build-report.json").unlink()
    assert compare_builds.build_id(first) is None
    assert compare_builds.compare_sites(first, second).same


def test_the_command_line_compares_two_built_sites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = site(tmp_path / "a", FIRST_ID), site(tmp_path / "b", SECOND_ID)
    assert compare_builds.main(["--sites", str(first), str(second)]) == 0
    assert "the same, but for their build ids" in capsys.readouterr().out
    (second / "floors" / "3-boundary" / "index.html").write_text("changed\n", encoding="utf-8")
    assert compare_builds.main(["--sites", str(first), str(second)]) == 1
    out = capsys.readouterr().out
    assert "differs: floors/3-boundary/index.html" in out and out.rstrip().endswith("1 files differ")


def test_the_cache_copied_for_a_side_is_its_entries_without_their_locks(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "floors-exec" / "ab").mkdir(parents=True)
    (cache / "floors-exec" / "ab" / "abcd.json").write_text("{}", encoding="utf-8")
    (cache / "floors-exec" / "builds").mkdir()
    (cache / "floors-exec" / "builds" / "123.lock").write_text("", encoding="utf-8")
    (cache / "mkdocs-jupyter").mkdir()
    project = tmp_path / "project"
    assert compare_builds.copy_cache(cache, project) == 1
    assert [p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()] == [
        ".cache/floors-exec/ab/abcd.json"
    ]
