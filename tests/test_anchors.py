"""Citable forever: explicit ids, the lock, aliases, redirects, copy links, the cite page, editions."""

import json
import os
import re
import subprocess
import sys
from html import escape, unescape
from pathlib import Path

import pytest

from conftest import ROOT, Build, FixtureSite
from pytorch_floors.editions.anchors import (
    CITABLE_PAGES,
    apply_aliases,
    read_aliases,
    read_lock,
    site_anchors,
    unresolved,
    update_lock,
)
from pytorch_floors.floors import FLOORS
from pytorch_floors.render.citation import bibtex, cite_page_html, edition

HEADING = re.compile(r"^(#{2,4})\s+(.*)$")
LOCK = ROOT / "anchors.lock"


def headings(markdown: str) -> list[str]:
    found, fence = [], ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = "" if fence == marker else fence or marker
            continue
        if not fence and (match := HEADING.match(line)):
            found.append(match.group(2))
    return found


@pytest.mark.parametrize("page", CITABLE_PAGES)
def test_every_citable_heading_has_an_explicit_id(page: str) -> None:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    for heading in headings(text):
        assert re.search(r"\{\s*#[a-z0-9][a-z0-9-]*[^}]*\}\s*$", heading), f"docs/{page}: '{heading}' needs {{ #id }}"


def test_heading_scanner_sees_headings_and_skips_code() -> None:
    assert headings("## A { #a }\n```\n## not a heading\n```\n### B") == ["A { #a }", "B"]


def test_lock_is_sorted_and_covers_every_floor() -> None:
    lock = read_lock(LOCK)
    assert lock == sorted(lock) and len(lock) == len(set(lock))
    for floor in FLOORS:
        assert f"floors/{floor.key}/" in lock
        assert f"floors/{floor.key}/#what-you-see" in lock
    assert "floors/3-boundary/#crossing-cost" in lock


def test_every_locked_url_resolves_in_the_built_site(built_site: Build) -> None:
    assert unresolved(built_site.site, read_lock(LOCK)) == []


def test_the_lock_knows_every_current_anchor(built_site: Build) -> None:
    pages = [src for src in CITABLE_PAGES]
    current = site_anchors(built_site.site, pages)
    new = sorted(current - set(read_lock(LOCK)))
    assert new == [], f"anchors not in anchors.lock (run `make anchors`): {new}"


def test_update_appends_and_never_removes(tmp_path: Path) -> None:
    lock = tmp_path / "anchors.lock"
    lock.write_text("b/\nb/#old\n")
    added = update_lock(lock, {"a/", "b/"})
    assert added == ["a/"]
    assert read_lock(lock) == ["a/", "b/", "b/#old"]


def test_unresolved_names_missing_pages_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "index.html").write_text('<h2 id="kept">Kept</h2><span id="alias"></span>')
    assert unresolved(tmp_path, ["p/", "p/#kept", "p/#alias", "p/#gone", "q/"]) == ["p/#gone", "q/"]


def test_an_alias_lands_on_the_renamed_section() -> None:
    html = '<p>intro</p><h2 id="crossing-cost">The fixed cost</h2><p>text</p>'
    aliased = apply_aliases(html, {"overhead": "crossing-cost"})
    assert aliased.index('id="overhead"') < aliased.index('id="crossing-cost"')
    assert aliased.index('id="overhead"') > aliased.index("intro")
    with pytest.raises(ValueError, match="no element with id 'nowhere'"):
        apply_aliases(html, {"old": "nowhere"})


def test_the_aliases_file_parses_and_each_alias_resolves(built_site: Build) -> None:
    aliases = read_aliases(ROOT / "anchors.aliases")
    for url, renames in aliases.items():
        html = (built_site.site / url / "index.html").read_text(encoding="utf-8")
        for old, new in renames.items():
            assert re.search(rf'<span id="{old}" class="floors-anchor-alias" data-alias-of="{new}">', html)
            assert f'id="{new}"' in html
            assert f"{url}#{old}" in read_lock(LOCK), "an alias keeps a locked anchor alive"


def test_bad_alias_lines_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "anchors.aliases"
    path.write_text("# comment\nfloors/3-boundary/#old -> new\nnonsense\n")
    with pytest.raises(ValueError, match=r"anchors\.aliases:3"):
        read_aliases(path)


def test_built_floor_headings_offer_copy_links(built_site: Build) -> None:
    html = built_site.page("floors/3-boundary")
    assert 'data-floors-copy="https://pytorch-floors.github.io/floors/3-boundary/#crossing-cost"' in html
    assert "javascripts/copy-link.js" in html
    # One control per heading: Material's permalink is off, ours replaces it.
    headings = re.findall(r"<h[234] id=[^>]*>.*?</h[234]>", html, re.S)
    assert headings and all(h.count('class="floors-copy-link"') == 1 for h in headings)
    assert 'class="headerlink"' not in html


def test_a_removed_page_redirects(built_site: Build) -> None:
    html = (built_site.site / "floors" / "index.html").read_text(encoding="utf-8")
    assert 'http-equiv="refresh"' in html and 'content="0; url=../"' in html


def test_cite_page_has_a_bibtex_entry_per_floor(built_site: Build) -> None:
    html = built_site.page("cite")
    for floor in FLOORS:
        assert f'id="bibtex-floor-{floor.number}"' in html
        assert f"floors/{floor.key}/" in html
    assert edition(None) in html


def test_bibtex_is_pinned_to_the_edition() -> None:
    entry = bibtex(FLOORS[2], "https://s.org/", edition("2026.12"), 2026)
    assert "https://s.org/2026.12/floors/3-boundary/" in entry
    assert "Floor 3 · The boundary" in entry and entry.startswith("@misc{pytorchfloors202612floor3,")


def test_404_offers_the_gauge_and_sitemap_lists_the_floors(built_site: Build) -> None:
    page = (built_site.site / "404.html").read_text(encoding="utf-8")
    assert page.count('class="floors-gauge__floor"') == len(FLOORS)
    assert 'href="/floors/3-boundary/"' in page
    sitemap = (built_site.site / "sitemap.xml").read_text(encoding="utf-8")
    for floor in FLOORS:
        assert f"https://pytorch-floors.github.io/floors/{floor.key}/" in sitemap


def test_mike_publishes_frozen_editions(fixture_site: FixtureSite) -> None:
    root = fixture_site.root
    fixture_site.page("index.md", "# Home { #home }\n\n## Section { #first-section }\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "site"], cwd=root, check=True)
    env = {"NO_MKDOCS_2_WARNING": "1"}
    mike = [str(Path(sys.executable).parent / "mike")]

    def deploy(name: str, *aliases: str) -> None:
        done = subprocess.run(
            [*mike, "deploy", "--update-aliases", name, *aliases],
            cwd=root,
            env={
                **os.environ,
                **env,
                "FLOORS_EDITION": name,
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t",
                # mike starts mkdocs by name: it must be this environment's.
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            },
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    deploy("2026.11", "latest")
    page = root / "docs/index.md"
    page.write_text(page.read_text().replace("## Section { #first-section }", "## Section { #second-section }"))
    deploy("2026.12", "latest")

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "show", f"gh-pages:{path}"], cwd=root, capture_output=True, text=True, check=True
        ).stdout

    versions = json.loads(show("versions.json"))
    assert [v["version"] for v in versions] == ["2026.12", "2026.11"]
    assert versions[0]["aliases"] == ["latest"] and versions[1]["aliases"] == []
    assert 'id="first-section"' in show("2026.11/index.html")
    assert 'id="second-section"' in show("2026.12/index.html")
    assert 'id="first-section"' not in show("2026.12/index.html")


def test_cite_page_is_one_table_and_one_block_of_every_entry() -> None:
    html = cite_page_html("https://s.org/", "2026.12", 2026)
    assert html.count("<table") == 1 and html.count("<pre") == 1, "not one block per entry"
    anchors = re.findall(r'<tr id="([^"]+)">', html)
    assert anchors == ["bibtex-site", *[f"bibtex-floor-{floor.number}" for floor in FLOORS]]
    block = html[html.index("<pre") :]
    assert block.count("@misc{") == len(FLOORS) + 1
    for floor in FLOORS:
        entry = bibtex(floor, "https://s.org/", "2026.12", 2026)
        assert entry in unescape(block)
        assert f'<a href="https://s.org/2026.12/floors/{floor.key}/">{escape(floor.heading)}</a>' in html
