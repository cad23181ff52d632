from pathlib import Path

import pytest

from pytorch_floors.floors import FLOORS, MAP_PAGE, floor_by_number, floor_for_page

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_eight_floors_numbered_top_to_bottom() -> None:
    assert [f.number for f in FLOORS] == list(range(1, 9))


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


def test_lookup_by_number_and_page() -> None:
    assert floor_by_number(3).slug == "boundary"
    assert floor_for_page("floors/3-boundary.md") == floor_by_number(3)
    assert floor_for_page("labs/7-memory.py") == floor_by_number(7)
    assert floor_for_page("index.md") is None
    with pytest.raises(KeyError, match="floors are 1 to 8"):
        floor_by_number(9)
