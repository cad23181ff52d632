"""The site's "What changed" page: this build compared with a previous edition, or an honest note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, FixtureSite
from pytorch_floors.editions.what_changed import (
    MARKER,
    NO_PREVIOUS,
    PAGE,
    previous_manifest,
    site_href,
    what_changed_markdown,
)
from pytorch_floors.errors import FloorsError

EDITIONS = ROOT / "tests" / "fixtures" / "editions"


def manifest(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EDITIONS / name / "manifest.json").read_text(encoding="utf-8"))
    return loaded


def test_the_page_compares_the_two_fixture_editions_with_links_mkdocs_checks() -> None:
    page = what_changed_markdown(manifest("2026.11"), manifest("2026.12"), "en")
    assert page.startswith("# What changed since edition 2026.11 { #what-changed }")
    for heading in ("Sections added (1)", "Sections reworded (2)", "proof outputs changed (1)", "removed (1)"):
        assert heading in page
    # Links point at Markdown sources, so a strict build fails if one stops resolving.
    assert "(floors/5-autograd.md#saved-tensors)" in page
    # A removed section is named, not linked: the newer edition no longer has it.
    assert "(`floors/5-autograd/#old-diagram`)" in page and "5-autograd.md#old-diagram" not in page


def test_without_a_previous_edition_the_page_says_so() -> None:
    page = what_changed_markdown(None, manifest("2026.12"), "en")
    assert page == NO_PREVIOUS and "no earlier edition to compare with" in page


@pytest.mark.parametrize(
    ("anchor", "href"),
    [("floors/3-boundary/#crossing-cost", "floors/3-boundary.md#crossing-cost"), ("./#the-map", "index.md#the-map")],
)
def test_sections_link_to_their_sources(anchor: str, href: str) -> None:
    assert site_href(anchor) == href


def test_an_unreadable_previous_manifest_stops_the_build(tmp_path: Path) -> None:
    with pytest.raises(FloorsError, match=r"FLOORS_PREVIOUS_MANIFEST=.*nowhere\.json"):
        previous_manifest(str(tmp_path / "nowhere.json"))
    assert previous_manifest(None) is None


def test_a_build_renders_the_page_from_its_own_manifest(fixture_site: FixtureSite) -> None:
    # The fixture's Part 0 has one locked section; the previous edition has the real floors' sections.
    fixture_site.write("anchors.lock", "./\n./#first-section\n")
    fixture_site.page("index.md", "# Home { #home }\n\n## First { #first-section }\n\nText.\n")
    fixture_site.page(PAGE, f"{MARKER}\n")
    previous = fixture_site.write("previous.json", json.dumps({**manifest("2026.11"), "sections": {}}))
    build = fixture_site.build(
        strict=True, env={"FLOORS_PREVIOUS_MANIFEST": str(previous), "FLOORS_EDITION": "2026.12"}
    )
    assert build.returncode == 0, build.log[-3000:]
    html = build.page("what-changed")
    assert "What changed since edition 2026.11" in html
    assert 'href="../#first-section">Part 0 · The map › First</a>' in html
    assert "Sections added (1)" in html
    without = fixture_site.build(strict=True)
    assert "no earlier edition to compare with" in without.page("what-changed")


def test_a_chinese_page_names_each_section_by_its_chinese_heading() -> None:
    # zh/what-changed/ listed "Floor 3 · The boundary › The fixed cost of an eager op": the manifest's English titles.
    page = what_changed_markdown(manifest("2026.11"), manifest("2026.12"), "zh", ROOT / "docs")
    assert page.startswith("# 自 2026.11 版次以来的变化")
    assert "[边界 › eager 算子的固定开销](floors/3-boundary.md#crossing-cost)" in page
    assert "The fixed cost of an eager op" not in page and "The boundary" not in page
    # A section the Chinese pages do not have keeps the manifest's label, and English pages keep theirs.
    assert "(`floors/5-autograd/#old-diagram`)" in page
    english = what_changed_markdown(manifest("2026.11"), manifest("2026.12"), "en", ROOT / "docs")
    assert "[Floor 3 · The boundary › The fixed cost of an eager op](floors/3-boundary.md#crossing-cost)" in english
