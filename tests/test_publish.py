"""The published layout: `make publish` deploys editions with mike, and the root 404 lands every cited address.

The end-to-end tests publish the real site twice into a throwaway git repository (measured, as
every edition must be: on the project's own proof cache, so a build of this run has usually run
the proofs already, and never beside another build of the project), serve its `gh-pages` tree the
way GitHub Pages does (a miss gets the root `404.html` with status 404) and follow addresses with
headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from accessibility import serious_violations
from git_repos import GIT_ENV, git
from mike.mkdocs_utils import inject_plugin
from mkdocs.config import load_config
from playwright.sync_api import Browser, Page, expect
from published_editions import FIRST, MARKER, REPOSITORY, SECOND, Published
from pypdf import PdfReader

from conftest import ROOT
from pytorch_floors.editions import publish as publish_module
from pytorch_floors.editions.anchors import page_url
from pytorch_floors.editions.course_pack import PACK_DIR, pack_filename
from pytorch_floors.editions.handouts import EDITION_PDF, HANDOUT_DIR, handout_context, handouts
from pytorch_floors.editions.publish import main, publish, published_versions, unmeasured
from pytorch_floors.editions.root404 import NOTE_KEY, layout_from, redirect_urls, render_root_404
from pytorch_floors.errors import FloorsError
from pytorch_floors.floors import FLOORS, floor_for_page
from pytorch_floors.i18n.languages import LANGUAGES
from pytorch_floors.plugin.site_config import read_site_facts
from pytorch_floors.render.citation import bibtex, edition_url
from pytorch_floors.settings import from_environment

# --- the pieces, without a deployment ---------------------------------------------------------


def test_redirect_maps_become_page_urls() -> None:
    urls = redirect_urls({"floors/index.md": "index.md", "old.md": "floors/3-boundary.md#crossing-cost"})
    assert urls == {"floors/": "", "old/": "floors/3-boundary/#crossing-cost"}
    assert redirect_urls({"gone.md": "https://example.org/x/"}) == {"gone/": "https://example.org/x/"}
    with pytest.raises(ValueError, match=r"old\.html: index\.md"):
        redirect_urls({"old.html": "index.md"})


def test_layout_needs_exactly_one_edition_carrying_latest() -> None:
    versions = [{"version": SECOND, "aliases": ["latest"]}, {"version": FIRST, "aliases": []}]
    layout = layout_from(
        site_name="S", site_url="https://x.org/repo", latest="latest", versions_json=versions, redirects={}
    )
    assert (layout.base, layout.latest_version, layout.versions, layout.aliases) == (
        "/repo/",
        SECOND,
        (SECOND, FIRST),
        ("latest",),
    )
    with pytest.raises(ValueError, match="exactly one edition with the alias 'latest'"):
        layout_from(site_name="S", site_url="https://x.org/", latest="latest", versions_json=versions[1:], redirects={})


def test_root_404_embeds_the_layout_and_the_sites_own_404_text() -> None:
    versions = [{"version": SECOND, "aliases": ["latest"]}, {"version": FIRST, "aliases": []}]
    layout = layout_from(
        site_name="PyTorch Floors",
        site_url="https://x.org/repo/",
        latest="latest",
        versions_json=versions,
        redirects={"floors/": ""},
    )
    html = render_root_404(layout, ROOT / "overrides")
    embedded = json.loads(re.search(r'id="floors-layout">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert embedded["editions"] == [SECOND, FIRST, "latest"]
    assert embedded["redirects"] == {"floors/": ""} and embedded["base"] == "/repo/"
    assert embedded["note_key"] == NOTE_KEY
    assert NOTE_KEY in (ROOT / "docs/javascripts/edition-note.js").read_text(encoding="utf-8")
    own_text = (ROOT / "overrides/partials/not-found.html").read_text(encoding="utf-8").split("-#}", 1)[1].strip()
    assert own_text in html
    assert html.count('class="floors-gauge__floor"') == len(FLOORS)
    for floor in FLOORS:
        assert f'href="/repo/latest/floors/{floor.key}/"' in html


def test_bibtex_names_the_edition_once_when_mike_already_put_it_in_site_url() -> None:
    # mike builds an edition with site_url + edition: the Cite page then printed …/2026.12/2026.12/….
    assert edition_url("https://s.org/", SECOND) == f"https://s.org/{SECOND}/"
    assert edition_url(f"https://s.org/{SECOND}/", SECOND) == f"https://s.org/{SECOND}/"
    assert edition_url(f"https://s.org/{SECOND}", SECOND) == f"https://s.org/{SECOND}/"
    assert f"https://s.org/{SECOND}/floors/3-boundary/" in bibtex(FLOORS[2], f"https://s.org/{SECOND}/", SECOND, 2026)


@pytest.mark.parametrize("name", ["2026.13", "26.12", "2026-12", "latest", "\u0662\u0660\u0662\u0666.12", "0000.1"])
def test_publish_refuses_an_edition_that_is_not_year_dot_month(name: str, tmp_path: Path) -> None:
    with pytest.raises(FloorsError, match=r"expected YYYY\.MM in ASCII digits"):
        publish(name, repo=tmp_path, read_site=read_site_facts, settings=from_environment(os.environ))


@pytest.mark.parametrize(("variable", "value"), [("FLOORS_EXEC", "off"), ("FLOORS_EXEC_ONLY", "floors/3-*")])
def test_publish_refuses_a_build_told_not_to_measure(
    variable: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(FloorsError, match=f"{variable}.*an edition must"):
        publish(SECOND, repo=tmp_path, read_site=read_site_facts, settings=from_environment(os.environ))


def test_only_a_complete_build_report_is_an_edition() -> None:
    complete = {"totals": {"blocks": 71, "ran": 3, "cached": 68, "skipped": 0, "failed": 0}}
    assert unmeasured(complete) is None
    render_only = {"totals": {"blocks": 71, "ran": 0, "cached": 0, "skipped": 71, "failed": 0}}
    assert "0 ran, 0 came from the cache, 71 were skipped" in str(unmeasured(render_only))
    assert unmeasured({"totals": {"blocks": 0}}) == "the build ran no block and no lab"
    assert unmeasured({}) == "the build report has no totals"


def _repo_with_site(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed project whose `mkdocs.yml` loads (its folders link to this project's)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("FLOORS_REPOSITORY", REPOSITORY)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    git(repo, "init", "-q", "-b", "main")
    shutil.copy(ROOT / "mkdocs.yml", repo / "mkdocs.yml")
    for folder in ("docs", "overrides", "snippets", "src"):  # what mkdocs.yml names must exist
        (repo / folder).symlink_to(ROOT / folder)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "site")


def test_publish_refuses_a_working_tree_that_differs_from_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repo_with_site(tmp_path, monkeypatch)
    (tmp_path / "draft.md").write_text("not committed\n")
    with pytest.raises(ValueError, match=r"the working tree differs from its commit \(1 paths: draft.md\)"):
        publish(SECOND, repo=tmp_path, read_site=read_site_facts, settings=from_environment(os.environ))


@pytest.mark.parametrize(
    ("repository", "said"),
    [
        ("", "FLOORS_REPOSITORY is not set: an edition's lab pages open their notebooks in Colab"),
        ("https://gitlab.com/a-course/floors", "FLOORS_REPOSITORY: repo_url 'https://gitlab.com/a-course/floors'"),
    ],
)
def test_publish_refuses_colab_links_to_a_repository_it_was_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repository: str, said: str
) -> None:
    """`repo_url` in mkdocs.yml named a placeholder organisation, and an edition's Colab links were made from it
    (issue 59): they could never open. The repository is a setting, and publish refuses to start without it."""
    _repo_with_site(tmp_path, monkeypatch)
    with pytest.raises(ValueError, match=re.escape(said)):
        settings = from_environment(os.environ)
        publish(SECOND, repo=tmp_path, read_site=read_site_facts, settings=settings, repository=repository or None)
    assert published_versions(tmp_path, "gh-pages") == [], "refused before mike deployed anything"


def test_publish_refuses_an_edition_older_than_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _repo_with_site(tmp_path, monkeypatch)
    _commit_edition(tmp_path, "2027.01", ["latest"], "")
    with pytest.raises(ValueError, match=r"edition 2026\.01 is older than 2027\.01, the newest published"):
        publish("2026.01", repo=tmp_path, read_site=read_site_facts, settings=from_environment(os.environ))


def test_publish_stops_when_the_remote_cannot_be_read(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", str(tmp_path / "missing.git"))
    with pytest.raises(RuntimeError, match="cannot read the remote 'origin'"):
        publish(SECOND, repo=tmp_path, read_site=read_site_facts, settings=from_environment(os.environ), push=True)


COMPLETE_REPORT: dict[str, Any] = {"totals": {"blocks": 2, "ran": 1, "cached": 1, "skipped": 0, "failed": 0}}


def _commit_edition(
    repo: Path, edition: str, aliases: list[str], parent: str, report: dict[str, Any] | None = None
) -> str:
    """A `gh-pages` commit as mike leaves one, by plumbing: `versions.json` and an edition folder without pages."""
    files = {"versions.json": json.dumps([{"version": edition, "aliases": aliases}]), f"{edition}/manifest.json": "{}"}
    if report is not None:
        files[f"{edition}/build-report.json"] = json.dumps(report)
    index = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git/scratch-index")}
    for path, text in files.items():
        blob = git(repo, "hash-object", "-w", "--stdin", stdin=text).strip()
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], cwd=repo, env=index, check=True
        )
    tree = subprocess.run(["git", "write-tree"], cwd=repo, env=index, capture_output=True, text=True, check=True).stdout
    commit = git(repo, "commit-tree", tree.strip(), *(["-p", parent] if parent else []), "-m", "mike").strip()
    git(repo, "update-ref", "refs/heads/gh-pages", commit)
    (repo / ".git/scratch-index").unlink()
    return commit


def test_an_editions_handouts_are_committed_in_every_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The publish committed what `pdf/` and `packs/` held at the edition's root: the Chinese pages linked
    # `zh/pdf/…`, printed but never committed (tests/test_handouts.py reads the published edition's).
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    git(tmp_path, "init", "-q", "-b", "main")
    _commit_edition(tmp_path, SECOND, ["latest"], "")

    def print_and_pack(site: Path, *, edition: str) -> tuple[list[Path], list[Path]]:
        written = [site / "pdf/floor-1-program.pdf", site / "zh/pdf/floor-1-program.pdf", site / "zh/packs/1.zip"]
        for path in written:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{edition} {path.relative_to(site)}", encoding="utf-8")
        return written[:2], written[2:]

    monkeypatch.setattr(publish_module, "print_and_pack", print_and_pack)
    committed = publish_module.write_edition_handouts(tmp_path, "gh-pages", SECOND)
    expected = [
        f"{SECOND}/{name}" for name in ("pdf/floor-1-program.pdf", "zh/packs/1.zip", "zh/pdf/floor-1-program.pdf")
    ]
    assert sorted(committed) == expected
    for path in expected:
        assert git(tmp_path, "show", f"gh-pages:{path}") == f"{SECOND} {path.removeprefix(SECOND + '/')}"


@pytest.mark.parametrize(
    "case",
    [
        # A measured report beside no pages: an edition no floors build made (`verify`).
        (True, COMPLETE_REPORT, (ValueError, "is not verified.*not a built site")),
        (False, COMPLETE_REPORT, (ValueError, "is not verified.*not a built site")),
        (True, {"totals": {"blocks": 2, "ran": 0, "cached": 0, "skipped": 2}}, (ValueError, "is not measured")),
        (False, None, (ValueError, "has no build report")),
    ],
)
def test_a_publish_that_fails_after_mike_sets_the_branch_back(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[bool, dict[str, Any] | None, tuple[type[Exception], str]],
) -> None:
    # Else the edition would count as published (frozen) unmeasured or without its handouts, and could never
    # be made whole.
    first_edition, report, failure = case
    _repo_with_site(tmp_path, monkeypatch)
    before = "" if first_edition else _commit_edition(tmp_path, FIRST, ["latest"], "")
    real_run = subprocess.run

    def mike(args: list[str], **kwargs: object) -> object:
        # Stands in for mike: deploys an edition folder with no pages, so printing its handouts fails.
        if Path(args[0]).name != "mike":
            return real_run(args, **kwargs)  # type: ignore[call-overload]
        if args[1] == "deploy":
            _commit_edition(tmp_path, SECOND, ["latest"], before, report)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(subprocess, "run", mike)  # publish runs git and mike through it
    with pytest.raises(failure[0], match=failure[1]):
        publish(
            SECOND,
            repo=tmp_path,
            read_site=read_site_facts,
            settings=from_environment(os.environ),
            repository=REPOSITORY,
        )
    after = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "refs/heads/gh-pages"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    assert after == before
    assert f"gh-pages set back to {before or 'nothing'}" in capsys.readouterr().err


@pytest.mark.slow
def test_publish_deploys_both_editions_with_latest_on_the_newest(published: Published) -> None:
    versions = published_versions(published.repo, "origin/gh-pages")
    assert versions == published_versions(published.repo, "gh-pages")
    assert [(v["version"], v["aliases"]) for v in versions] == [(SECOND, ["latest"]), (FIRST, [])]
    assert (published.tree / "404.html").is_file() and (published.tree / "index.html").is_file()
    assert MARKER in (published.tree / SECOND / "floors/3-boundary/index.html").read_text(encoding="utf-8")
    assert MARKER not in (published.tree / FIRST / "floors/3-boundary/index.html").read_text(encoding="utf-8")
    cite = (published.tree / "latest/cite/index.html").read_text(encoding="utf-8")
    assert f"/{SECOND}/floors/3-boundary/" in cite and f"/{SECOND}/{SECOND}/" not in cite
    root_404 = (published.tree / "404.html").read_text(encoding="utf-8")
    assert f'"editions": ["{SECOND}", "{FIRST}", "latest"]' in root_404
    # The publish step leaves the project's own checkout as it was.
    assert git(published.repo, "status", "--porcelain") == ""
    assert git(published.repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


@pytest.mark.slow
@pytest.mark.parametrize("edition", [FIRST, SECOND])
def test_a_published_edition_carries_its_pdfs_and_its_pages_and_packs_hold_them(
    published: Published, edition: str
) -> None:
    folder = published.tree / edition
    expected = sorted([item.filename for item in handouts()] + [EDITION_PDF])
    assert sorted(path.name for path in (folder / HANDOUT_DIR).iterdir()) == expected
    for name in expected:
        assert len(PdfReader(folder / HANDOUT_DIR / name).pages) >= 1, name
    # The whole edition's contents page names the edition it was printed from.
    assert edition in PdfReader(folder / HANDOUT_DIR / EDITION_PDF).pages[0].extract_text()
    # `latest` is mike's alias of the newest edition: it hands out the same files.
    assert sorted(path.name for path in (published.tree / "latest" / HANDOUT_DIR).iterdir()) == expected
    cite = (folder / "cite/index.html").read_text(encoding="utf-8")
    for item in handouts():
        html = (folder / item.url / "index.html").read_text(encoding="utf-8")
        links = handout_context(item.src, page_url(item.src))
        assert links is not None and f'href="{links["pdf"]}"' in html, f"{edition}/{item.url} links no PDF"
        assert f'href="{links["edition_pdf"]}"' in html, f"{edition}/{item.url} links no whole-edition PDF"
        assert f"{HANDOUT_DIR}/{item.filename}" in cite, f"{edition}/cite/ links no {item.filename}"
        floor = floor_for_page(item.src)
        if floor is None:
            continue
        with zipfile.ZipFile(folder / PACK_DIR / pack_filename(floor)) as pack:
            inside = pack.read(f"floor-{floor.key}/{item.filename}")
        assert inside == (folder / HANDOUT_DIR / item.filename).read_bytes(), f"{floor.key}: pack holds another PDF"
    assert f"{HANDOUT_DIR}/{EDITION_PDF}" in cite
    # The Chinese pages link their own handouts and packs: they are published too.
    chinese = LANGUAGES[1]
    in_chinese = sorted([item.filename for item in handouts(chinese)] + [EDITION_PDF])
    assert sorted(path.name for path in (folder / chinese.folder / HANDOUT_DIR).iterdir()) == in_chinese
    assert len(list((folder / chinese.folder / PACK_DIR).glob("*.zip"))) == len(FLOORS)
    # One commit of the edition's handouts, made without checking the branch out.
    pdfs = len(expected) + len(in_chinese)
    assert f"Handouts of {edition}: {pdfs} PDFs" in git(published.repo, "log", "--format=%s", "gh-pages")


@pytest.mark.slow
def test_a_published_edition_is_frozen(published: Published, capsys: pytest.CaptureFixture[str]) -> None:
    before = git(published.repo, "rev-parse", "gh-pages")
    assert (
        main(
            [FIRST, "--repo", str(published.repo)],
            read_site=read_site_facts,
            read_settings=lambda: from_environment(os.environ),
        )
        == 1
    )
    assert f"edition {FIRST} is already published on gh-pages" in capsys.readouterr().err
    assert git(published.repo, "rev-parse", "gh-pages") == before


def test_a_publish_build_is_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    # mike starts `mkdocs build` itself, without --strict: strictness comes from the config it copies.
    monkeypatch.setenv("FLOORS_STRICT", "true")
    with inject_plugin(str(ROOT / "mkdocs.yml")) as config_file:
        assert load_config(config_file=config_file).strict is True
    monkeypatch.delenv("FLOORS_STRICT")
    assert load_config(config_file=str(ROOT / "mkdocs.yml")).strict is False


def _in_view(page: Page, anchor: str) -> None:
    expect(page.locator(f"[id='{anchor}']")).to_be_in_viewport()


def _follow(page: Page, start: str, *, ends_at: str) -> list[int]:
    """Open an address; wait until the browser settles on `ends_at`; return the statuses of the documents loaded."""
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if r.request.resource_type == "document" else None)
    page.goto(start)
    page.wait_for_url(ends_at)
    page.wait_for_load_state("load")
    return statuses


@pytest.mark.slow
@pytest.mark.browser
def test_every_cited_address_lands(browser: Browser, published: Published, output_dir: Path) -> None:
    base = published.url
    landed = []
    context = browser.new_context(viewport={"width": 1280, "height": 800})

    # 1. An unversioned section address goes to the same path under latest, anchor kept.
    page = context.new_page()
    statuses = _follow(
        page, f"{base}/floors/3-boundary/#crossing-cost", ends_at=f"{base}/latest/floors/3-boundary/#crossing-cost"
    )
    assert statuses[:1] == [404] and statuses[-1] == 200
    _in_view(page, "crossing-cost")
    expect(page.get_by_text(MARKER)).to_have_count(1)
    landed.append(page.url)

    # 2. A latest address is a file: it loads as is.
    page = context.new_page()
    statuses = _follow(
        page, f"{base}/latest/floors/4-dispatcher/#the-idea", ends_at=f"{base}/latest/floors/4-dispatcher/#the-idea"
    )
    assert statuses == [200]
    _in_view(page, "the-idea")
    landed.append(page.url)

    # 3. A frozen edition's address stays in that edition.
    page = context.new_page()
    statuses = _follow(
        page,
        f"{base}/{FIRST}/floors/3-boundary/#crossing-cost",
        ends_at=f"{base}/{FIRST}/floors/3-boundary/#crossing-cost",
    )
    assert statuses == [200]
    _in_view(page, "crossing-cost")
    expect(page.get_by_text(MARKER)).to_have_count(0)
    landed.append(page.url)

    # 4. An old alias anchor, cited without an edition, lands on the renamed section.
    page = context.new_page()
    _follow(page, f"{base}/floors/3-boundary/#tiny-add", ends_at=f"{base}/latest/floors/3-boundary/#tiny-add")
    _in_view(page, "tiny-add")
    _in_view(page, "tiny-add-three-ways")
    landed.append(page.url)

    # 5. A mistyped path ends on the site's own 404 text and the gauge, with status 404.
    page = context.new_page()
    statuses = _follow(page, f"{base}/floors/3-boundry/", ends_at=f"{base}/latest/floors/3-boundry/")
    assert statuses == [404, 404]
    expect(page.locator("#floors-not-found")).to_be_visible()
    expect(page.get_by_role("heading", name="This page is not in the building")).to_be_visible()
    gauge = page.get_by_role("navigation", name=re.compile("Depth gauge"))
    expect(gauge.get_by_role("link")).to_have_count(len(FLOORS))
    expect(gauge.get_by_role("link").nth(2)).to_have_attribute("href", "/latest/floors/3-boundary/")
    landed.append(page.url)
    page.screenshot(path=str(output_dir / "publish-root-404-desktop.png"))
    context.close()

    (output_dir / "publish-addresses.txt").write_text(
        "\n".join(
            f"{start} -> {end.removeprefix(base)}"
            for start, end in zip(
                [
                    "/floors/3-boundary/#crossing-cost",
                    "/latest/floors/4-dispatcher/#the-idea",
                    f"/{FIRST}/floors/3-boundary/#crossing-cost",
                    "/floors/3-boundary/#tiny-add",
                    "/floors/3-boundry/",
                ],
                landed,
                strict=True,
            )
        )
        + "\n",
        encoding="utf-8",
    )


@pytest.mark.slow
@pytest.mark.browser
def test_an_unknown_edition_goes_to_latest_with_a_note(
    browser: Browser, published: Published, output_dir: Path
) -> None:
    base = published.url
    page = browser.new_page(viewport={"width": 390, "height": 844})
    start = f"{base}/2025.01/floors/3-boundary/?from=syllabus#crossing-cost"
    _follow(page, start, ends_at=f"{base}/latest/floors/3-boundary/?from=syllabus#crossing-cost")
    note = page.locator(".floors-edition-note")
    expect(note).to_be_in_viewport()
    expect(note).to_contain_text("There is no edition 2025.01")
    expect(note).to_contain_text(f"latest edition, {SECOND}")
    _in_view(page, "crossing-cost")
    page.screenshot(path=str(output_dir / "publish-unknown-edition-mobile.png"))
    note.get_by_role("button", name="Dismiss").click()
    expect(note).to_have_count(0)
    # Shown once: the next page has no note.
    page.goto(f"{base}/latest/")
    expect(page.locator(".floors-edition-note")).to_have_count(0)
    page.close()


@pytest.mark.slow
@pytest.mark.browser
def test_a_removed_page_follows_the_redirect_maps_in_one_hop(browser: Browser, published: Published) -> None:
    page = browser.new_page()
    requested: list[str] = []
    page.on("request", lambda r: requested.append(urlsplit(r.url).path) if r.resource_type == "document" else None)
    _follow(page, f"{published.url}/floors/#how-to-read", ends_at=f"{published.url}/latest/#how-to-read")
    assert requested == ["/floors/", "/latest/"]
    page.close()


@pytest.mark.slow
@pytest.mark.browser
def test_a_page_missing_from_a_frozen_edition_offers_the_latest_one(browser: Browser, published: Published) -> None:
    page = browser.new_page()
    _follow(page, f"{published.url}/{FIRST}/floors/3-boundry/", ends_at=f"{published.url}/{FIRST}/floors/3-boundry/")
    expect(page.get_by_role("heading", name="This page is not in the building")).to_be_visible()
    expect(page.locator("#floors-elsewhere-link")).to_have_attribute("href", "/latest/floors/3-boundry/")
    page.close()


@pytest.mark.slow
@pytest.mark.browser
def test_without_javascript_the_404_still_links_to_the_latest_edition(
    browser: Browser, published: Published, output_dir: Path
) -> None:
    for scheme in ("light", "dark"):
        context = browser.new_context(
            java_script_enabled=False, color_scheme=scheme, viewport={"width": 390, "height": 844}
        )
        page = context.new_page()
        response = page.goto(f"{published.url}/floors/3-boundary/#crossing-cost")
        assert response is not None and response.status == 404
        expect(page.get_by_role("link", name="the latest edition")).to_have_attribute("href", "/latest/")
        expect(page.get_by_role("heading", name="This page is not in the building")).to_be_visible()
        expect(page.get_by_role("navigation", name=re.compile("Depth gauge")).get_by_role("link")).to_have_count(
            len(FLOORS)
        )
        page.screenshot(path=str(output_dir / f"publish-root-404-nojs-{scheme}.png"), full_page=True)
        context.close()


@pytest.mark.slow
@pytest.mark.browser
def test_the_root_404_has_no_serious_accessibility_violations(
    browser: Browser, published: Published, axe_core: str
) -> None:
    problems = []
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        page.goto(f"{published.url}/latest/nowhere/")
        problems += serious_violations(page, axe_core, f"[{scheme}]")
        context.close()
    assert problems == [], "\n".join(problems)


def _handed_out(tree: Path) -> list[str]:
    """Every address the latest edition hands out: sitemap, canonical links and copy links."""
    site = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert site is not None
    found = set(re.findall(r"<loc>([^<]+)</loc>", (tree / "latest/sitemap.xml").read_text(encoding="utf-8")))
    for html_file in (tree / "latest").rglob("index.html"):
        html = html_file.read_text(encoding="utf-8")
        # A redirect page (mkdocs-redirects) has a relative canonical link: read it from where the page is.
        here = urljoin(site[1], f"{SECOND}/{html_file.parent.relative_to(tree / 'latest').as_posix()}/")
        found.update(urljoin(here, href) for href in re.findall(r'<link rel="canonical" href="([^"]+)"', html))
        found.update(re.findall(r'data-floors-copy="([^"]+)"', html))
    assert len(found) > 100, "expected every page and section address"
    return sorted(found)


@pytest.mark.slow
@pytest.mark.browser
def test_addresses_the_site_hands_out_carry_the_edition_and_land_without_it(
    browser: Browser, published: Published
) -> None:
    page = browser.new_page()
    page.goto(f"{published.url}/nowhere/")
    failures = []
    for address in _handed_out(published.tree):
        parts = urlsplit(address)
        # mike builds each edition with site_url + edition, so what the site hands out is pinned ...
        if not parts.path.startswith(f"/{SECOND}/"):
            failures.append(f"{address}: no edition in it")
            continue
        # ... and the same address with the edition cut off lands through the root 404.
        unversioned = parts.path.removeprefix(f"/{SECOND}")
        hash_ = f"#{parts.fragment}" if parts.fragment else ""
        route = page.evaluate("([p, q, h]) => window.floorsResolve(p, q, h)", [unversioned, "", hash_])
        target = urlsplit(route.get("target", ""))
        html_file = published.tree / target.path.lstrip("/") / "index.html"
        if route["kind"] != "move" or target.fragment != parts.fragment or not html_file.is_file():
            failures.append(f"{unversioned}{hash_} -> {route}")
        elif parts.fragment and f'id="{parts.fragment}"' not in html_file.read_text(encoding="utf-8"):
            failures.append(f"{unversioned}{hash_} -> {target.path}, which has no #{parts.fragment}")
    page.close()
    assert failures == []
