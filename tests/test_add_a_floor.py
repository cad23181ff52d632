"""Adding a floor takes the files CONTRIBUTING's "Add a floor" lists, and no others: a ninth floor, built.

The project is copied (what git would commit), given a ninth floor by the list's steps
(`ninth_floor.add_ninth_floor`), and built render-only from a copy of the proof cache, so that the
cost is rendering alone: no proof runs, the new floor's blocks and every lab render as skipped. The
copy's own package builds it (its registry is not this process's), and its own tests that enumerate
the floors run against it: each names what a step left out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ninth_floor import NewFloor, add_ninth_floor, copy_project

from conftest import PROJECT_CACHE, ROOT, run_mkdocs, trimmed_log
from pytorch_floors.floors import FLOORS

REGISTRY_TESTS = (
    "tests/test_floors.py::test_floors_numbered_top_to_bottom",
    "tests/test_floors.py::test_slugs_titles_and_summaries_are_unique_and_filled",
    "tests/test_floors.py::test_every_floor_page_and_snippet_folder_exists",
    "tests/test_floors.py::test_floor_pages_have_no_title_of_their_own",
    "tests/test_floors.py::test_every_proof_lives_in_part_0s_folder_or_a_floors",
    "tests/test_floors.py::test_every_proof_is_shown_by_a_page",
    "tests/test_floors.py::test_prose_that_counts_the_floors_counts_the_registrys",
    "tests/test_floor_0.py::test_the_walk_down_has_a_section_for_every_floor_in_order",
    "tests/test_floor_0.py::test_the_building_links_every_floor_in_registry_order_as_mkdocs_addresses_it",
    "tests/test_labs.py::test_one_lab_per_floor_named_by_the_registry",
    "tests/test_labs.py::test_lab_title_comes_from_the_registry[{key}]",
    "tests/test_labs.py::test_every_heading_has_a_stable_unique_id[{key}]",
    "tests/test_labs.py::test_exercises_have_self_checks_and_folded_explanations[{key}]",
    "tests/test_labs.py::test_every_lab_import_is_pinned[{key}]",
    "tests/test_lab_grading.py::test_every_exercise_has_an_answer_a_solution_and_a_check[{key}]",
    "tests/test_lab_grading.py::test_every_change_prompt_is_tried[{key}]",
    "tests/test_lab_grading.py::test_an_exercise_run_again_after_the_whole_lab_reads_what_it_measured[{key}]",
    "tests/test_translations.py::test_every_english_page_has_a_chinese_twin",
    "tests/test_translations.py::test_each_translation_keeps_its_pages_headings_code_links_and_terms[zh/floors/{key}.md]",
    "tests/test_translations.py::test_each_translation_keeps_its_pages_headings_code_links_and_terms[zh/labs/{key}.py]",
    "tests/test_translations.py::test_each_translation_keeps_its_pages_headings_code_links_and_terms[zh/index.md]",
    "tests/test_anchors.py::test_every_citable_heading_has_an_explicit_id[floors/{key}.md]",
    "tests/test_anchors.py::test_lock_is_sorted_and_covers_every_floor",
    "tests/test_section_cite.py::test_every_citable_page_is_cited_by_its_own_title_and_key",
)
"""The copy's tests that read the registry and the files a floor brings: those of every floor, and the new
floor's own cases. Named one by one (a name pytest does not find fails the run), and fast: the copy's whole
modules hold timing and building tests that took 10 s of CPU here for nothing a new floor changes."""


def _copy_environment(project: Path) -> dict[str, str]:
    """The environment of a command run for the copy: its package first, its own cache, and no test run's state."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_", "FLOORS_"))}
    return {**env, "PYTHONPATH": str(project / "src"), "FLOORS_CACHE_DIR": str(project / ".cache")}


def _run(project: Path, *args: str) -> str:
    """`python -m pytorch_floors ARGS` in the copy, with its package; fails the test with its output if it fails."""
    done = subprocess.run(
        [sys.executable, "-m", "pytorch_floors", *args],
        cwd=project,
        env=_copy_environment(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def _nav_titles(html: str) -> list[str]:
    """The titles of the navigation's links, in order."""
    found = re.findall(r'class="md-nav__link[^"]*"[^>]*>\s*<span class="md-ellipsis">\s*(.*?)\s*</span>', html, re.S)
    return [" ".join(title.split()) for title in found]


@pytest.mark.slow
def test_a_ninth_floor_added_as_contributing_says_builds_in_both_languages(tmp_path: Path) -> None:
    project = copy_project(ROOT, tmp_path / "project", PROJECT_CACHE)
    floor: NewFloor = add_ninth_floor(project)
    key = floor.key
    # 9. The translations' lock, for the twins written.
    _run(project, "translations", "stamp", f"zh/floors/{key}.md", f"zh/labs/{key}.py", "zh/index.md")

    site = project / "site"
    env = {**_copy_environment(project), "FLOORS_EXEC": "off"}
    build = run_mkdocs(project, site, strict=True, env=env, timeout=600)
    assert build.returncode == 0, trimmed_log(build.log)

    # 10. `make anchors`: the build, then the lock gains the new pages' anchors.
    _run(project, "anchors", "update", "--site", str(site))
    lock = (project / "anchors.lock").read_text(encoding="utf-8").splitlines()
    for anchor in (
        f"floors/{key}/",
        f"floors/{key}/#float-bits",
        f"labs/{key}/",
        f"zh/floors/{key}/",
        f"./#walk-{floor.slug}",
    ):
        assert anchor in lock, anchor
    _run(project, "anchors", "check", "--site", str(site))
    _run(project, "verify", str(site), "--partial")  # render-only: the new blocks and the labs are left out
    _run(project, "translations", "check")

    english, chinese = f"Floor {floor.number} · {floor.title}", f"第 {floor.number} 层 · {floor.title_in('zh')}"
    page = (site / "floors" / key / "index.html").read_text(encoding="utf-8")
    assert re.search(rf"<h1[^>]*>{english}</h1>", page), "the page's title is the registry's"
    assert f'href="../../labs/{key}/"' in page, "the floor links its lab"
    assert 'id="float-bits"' in page and "float_bits.py" in page, "its proof's block is on the page"
    zh_page = (site / "zh" / "floors" / key / "index.html").read_text(encoding="utf-8")
    assert re.search(rf"<h1[^>]*>{chinese}</h1>", zh_page), "the twin's title is the registry's Chinese one"
    assert "自检" in zh_page, "the twin shows its own translation (stamped), not the English page"
    for language, code in (("", "en"), ("zh/", "zh")):
        lab = site / language / "labs" / key
        assert floor.lab_title_in(code) in (lab / "index.html").read_text(encoding="utf-8"), code
        assert {f"{key}.ipynb", f"{key}-solutions.ipynb", f"{key}.py"} <= {path.name for path in lab.iterdir()}
    above = FLOORS[-1]  # this process's registry: the copy's, less the floor added
    for language, code in (("", "en"), ("zh/", "zh")):
        proofs = (site / language / "proofs" / "index.html").read_text(encoding="utf-8")  # no gauge in its sidebar
        assert f'snippets/{key}/float_bits.py"' in proofs, f"{code} Proofs page lists the floor's proof"
        titles = _nav_titles(proofs)
        floor_title, lab_title = f"{floor.number} · {floor.title_in(code)}", floor.lab_title_in(code)
        assert floor_title in titles and lab_title in titles, f"{code} navigation: {titles}"
        assert titles.index(floor_title) == titles.index(f"{above.number} · {above.title_in(code)}") + 1, titles
        assert titles.index(lab_title) == titles.index(above.lab_title_in(code)) + 1, titles
    first = (site / "floors" / "1-program" / "index.html").read_text(encoding="utf-8")
    gauge = first[first.index('<nav class="floors-gauge') :]
    gauge = gauge[: gauge.index("</nav>")]
    assert len(re.findall(r'class="floors-gauge__floor[ "]', gauge)) == floor.number, "the gauge has a floor more"
    assert f'href="../{key}/"' in gauge and f"floor 1 of {floor.number}" in gauge
    assert f'href="floors/{key}/"' in (site / "index.html").read_text(encoding="utf-8"), "Part 0 walks down to it"
    lost = (site / "404.html").read_text(encoding="utf-8")  # the whole building's gauge: down to the new floor
    assert f"Depth gauge: the {floor.number} floors, from your program to {floor.title.lower()}" in lost
    assert (site / "snippets" / key / "float_bits.py").is_file(), "its proof is offered for download"

    # 6. Part 0's building has a reading for it: its proof, run on its own, says every claim held.
    building = subprocess.run(
        [sys.executable, "snippets/0-map/building.py"],
        cwd=project,
        env=_copy_environment(project),
        capture_output=True,
        text=True,
        check=False,
    )
    claims = [line for line in building.stdout.splitlines() if line.startswith("claim ")]
    assert building.returncode == 0 and claims, building.stdout + building.stderr
    assert all(line.startswith("claim held: ") for line in claims), claims

    # The copy's own tests that enumerate the floors: each names what a step of the list left out.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'pytest'}",
            *(test.format(key=key) for test in REGISTRY_TESTS),
        ],
        cwd=project,
        env=_copy_environment(project),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
