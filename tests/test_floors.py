import re
from pathlib import Path

import pytest
import test_floor_proofs
from floor_proofs import MAP_FOLDER, SNIPPETS, proof_folders, proof_pages, proofs, specific_checks

from pytorch_floors.execution.scan import scan_markdown
from pytorch_floors.floors import (
    ANNEXES,
    FLOORS,
    MAP_PAGE,
    Elevator,
    Floor,
    annex_for_page,
    floor_by_number,
    floor_for_page,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_floors_numbered_top_to_bottom() -> None:
    assert [f.number for f in FLOORS] == list(range(1, len(FLOORS) + 1))


def test_slugs_titles_and_summaries_are_unique_and_filled() -> None:
    assert len({f.slug for f in FLOORS}) == len(FLOORS)
    assert len({f.title for f in FLOORS}) == len(FLOORS)
    for floor in FLOORS:
        assert floor.slug.isidentifier() and floor.slug.islower()
        assert floor.summary.endswith(".") and len(floor.summary) > 40


def test_every_floor_page_and_snippet_folder_exists() -> None:
    for floor in FLOORS:
        assert (DOCS / floor.page).is_file(), floor.page
        assert (DOCS.parent / floor.snippets_dir).is_dir(), floor.snippets_dir
    assert (DOCS / MAP_PAGE).is_file()


def test_floor_pages_have_no_title_of_their_own() -> None:
    # The registry is the only place a floor's title is written.
    for floor in FLOORS:
        text = (DOCS / floor.page).read_text(encoding="utf-8")
        assert not any(line.startswith("# ") for line in text.splitlines()), floor.page
        assert floor.title not in text.splitlines()[0]


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_lookup_by_number_and_page(floor: Floor) -> None:
    assert floor_by_number(floor.number) == floor
    assert floor_for_page(floor.page) == floor_for_page(floor.lab) == floor


def test_lookup_of_what_is_no_floor() -> None:
    assert floor_for_page(MAP_PAGE) is None
    with pytest.raises(KeyError, match=f"floors are 1 to {len(FLOORS)}'"):
        floor_by_number(len(FLOORS) + 1)


@pytest.mark.parametrize("annex", ANNEXES, ids=lambda annex: annex.slug)
def test_an_annex_is_no_floor_and_stops_only_at_floors_of_the_registry(annex: Elevator) -> None:
    """`torch.compile` and `torch.distributed` ride through the building: their stops are floors, top to bottom."""
    stops = [stop.floor for stop in annex.stops]
    assert stops == sorted(set(stops)) and set(stops) <= {f.number for f in FLOORS}
    assert len({stop.section for stop in annex.stops}) == len(stops)
    assert floor_for_page(annex.page) is None
    assert all(annex.stop_at(f) == next((s for s in annex.stops if s.floor == f.number), None) for f in FLOORS)
    assert (DOCS / annex.page).is_file() and (DOCS.parent / annex.snippets_dir).is_dir()
    assert annex_for_page(annex.page) is annex and len({a.slug for a in ANNEXES}) == len(ANNEXES)


@pytest.mark.parametrize("annex", ANNEXES, ids=lambda annex: annex.slug)
def test_an_annex_page_has_the_registrys_title_and_a_section_per_stop_linking_its_floor(annex: Elevator) -> None:
    text = (DOCS / annex.page).read_text(encoding="utf-8")
    titles = [line for line in text.splitlines() if line.startswith("# ")]
    assert len(titles) == 1 and titles[0].startswith(f"# {annex.title} {{ #")
    assert f"description: {annex.summary}" in text
    for stop in annex.stops:
        assert f"{{ #{stop.section} }}" in text, stop.section
        assert f"]({floor_by_number(stop.floor).page})" in text, stop.floor


@pytest.mark.parametrize("annex", ANNEXES, ids=lambda annex: annex.slug)
def test_the_navigation_lists_each_annex_by_the_registrys_title(annex: Elevator) -> None:
    config = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    assert f'- "{annex.title}": {annex.page}' in config


def test_every_proof_lives_in_part_0s_folder_or_a_floors() -> None:
    """A proof anywhere else under `snippets/` belongs to no page of the registry: named, to move or give a floor."""
    folders = proof_folders()
    astray = [proof for proof in proofs() if proof.count("/") != 1 or proof.split("/")[0] not in folders]
    assert not astray, f"proofs outside snippets/{MAP_FOLDER}/ and the floors' folders {folders}: {astray}"
    empty = [folder for folder in folders if not any((SNIPPETS / folder).glob("*.py"))]
    assert not empty, f"folders with no proof (every floor proves something): {empty}"


def test_every_proof_is_shown_by_a_page() -> None:
    """Each proof on disk is included by Part 0, a floor's page or the elevator's: none runs that no reader sees."""
    shown = {
        proof.removeprefix("snippets/")
        for page in proof_pages()
        for block in scan_markdown((DOCS / page).read_text(encoding="utf-8"), page, DOCS.parent)
        for proof in block.proofs
    }
    unshown = [proof for proof in proofs() if proof not in shown]
    assert not unshown, f"proofs no page includes (give each a block on its floor's page, or delete it): {unshown}"


def test_the_claims_test_runs_every_proof_on_disk() -> None:
    """A new proof must not escape the pattern tests: the one claims test is given every `.py` under `snippets/`."""
    marks: list[pytest.Mark] = test_floor_proofs.test_the_proofs_claims_hold.pytestmark  # type: ignore[attr-defined]
    (mark,) = [m for m in marks if m.name == "parametrize"]
    on_disk = {path.relative_to(SNIPPETS).as_posix() for path in SNIPPETS.rglob("*.py")}
    assert sorted(mark.args[1]) == sorted(on_disk)


def test_the_pattern_tests_check_only_proofs_that_exist() -> None:
    """A test's own checks of a proof (`load_proof("…")` in `tests/test_floor_*.py`) name a proof on disk."""
    checks, unnamed = specific_checks()
    assert not unnamed, f"load_proof with a name not written out, so it cannot be checked here: {unnamed}"
    on_disk = set(proofs())
    missing = {proof: tests for proof, tests in checks.items() if proof not in on_disk}
    assert not missing, f"tests load proofs that are not under snippets/: {missing}"
    assert checks, "the pattern tests check something beyond the claims"


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")
COUNT_OF_FLOORS = re.compile(rf"\b(?P<count>\d+|{'|'.join(NUMBER_WORDS)})\s+(?:floors|storeys)\b", re.IGNORECASE)
PROSE = ("README.md", "mkdocs.yml", "docs/**/*.md", "docs/**/*.css", "src/pytorch_floors/**/*.py", "snippets/**/*.py")
"""What the reader reads (pages, the site's description, the API reference's docstrings, proofs) or edits."""


def test_prose_that_counts_the_floors_counts_the_registrys() -> None:
    """Text that says how many floors there are says what the registry holds, so a floor added or removed is named.

    Better still, it says "the floors" or "every floor": then nothing goes stale when one is added.
    """
    root = DOCS.parent
    count = len(FLOORS)
    right = {str(count), NUMBER_WORDS[count] if count < len(NUMBER_WORDS) else str(count)}
    wrong = [
        f"{path.relative_to(root)}: '{' '.join(match[0].split())}'"
        for pattern in PROSE
        for path in sorted(root.glob(pattern))
        for match in COUNT_OF_FLOORS.finditer(path.read_text(encoding="utf-8"))
        if match["count"].lower() not in right
    ]
    assert not wrong, f"the registry holds {count} floors; this text counts otherwise: {wrong}"
