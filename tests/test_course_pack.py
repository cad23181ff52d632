"""A course pack per floor: the lab (student and full notebook, text), the proofs and, when printed, the PDF."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pytorch_floors.editions.course_pack import PACK_DIR, pack_filename, write_packs
from pytorch_floors.editions.handouts import handout_context
from pytorch_floors.floors import FLOORS, MAP_PAGE, Floor
from pytorch_floors.labs.launch import notebook_names


def _fake_site(site: Path) -> None:
    """The files a build writes that the packs take: notebooks, the lab's text, standalone proofs."""
    for floor in FLOORS:
        lab_dir = site / floor.lab.removesuffix(".py")
        lab_dir.mkdir(parents=True)
        for name in (*notebook_names(floor), Path(floor.lab).name):
            (lab_dir / name).write_text(f"{floor.key} {name}", encoding="utf-8")
        proofs = site / floor.snippets_dir
        proofs.mkdir(parents=True)
        (proofs / "first.py").write_text(f"print('{floor.key}')\n", encoding="utf-8")
        (proofs / "second.py").write_text("print(2)\n", encoding="utf-8")


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_each_floor_gets_a_pack_with_its_lab_and_proofs(tmp_path: Path, floor: Floor) -> None:
    _fake_site(tmp_path)
    packs = write_packs(tmp_path, language="en")
    assert packs == [tmp_path / PACK_DIR / pack_filename(f) for f in FLOORS]
    with zipfile.ZipFile(packs[FLOORS.index(floor)]) as pack:
        names = pack.namelist()
        student, full = notebook_names(floor)
        wanted = ["README.txt", f"lab/{student}", f"lab/{full}", f"lab/{floor.key}.py"]
        wanted += ["proofs/first.py", "proofs/second.py"]
        assert names == [f"floor-{floor.key}/{name}" for name in wanted]
        proof = (tmp_path / floor.snippets_dir / "first.py").read_bytes()
        assert pack.read(f"floor-{floor.key}/proofs/first.py") == proof
        assert pack.read(f"floor-{floor.key}/lab/{full}").decode() == f"{floor.key} {full}"
        readme = pack.read(f"floor-{floor.key}/README.txt").decode()
        assert readme.startswith(floor.heading) and "proofs/second.py" in readme and ".pdf" not in readme


def test_a_printed_pdf_goes_first_and_packs_are_reproducible(tmp_path: Path) -> None:
    _fake_site(tmp_path)
    pdfs = {}
    for floor in FLOORS:
        pdfs[floor.key] = tmp_path / "pdf" / f"handout-{floor.key}.pdf"
        pdfs[floor.key].parent.mkdir(exist_ok=True)
        pdfs[floor.key].write_bytes(b"%PDF-1.7 " + floor.key.encode())
    first = [p.read_bytes() for p in write_packs(tmp_path, pdfs, language="en")]
    second = [p.read_bytes() for p in write_packs(tmp_path, pdfs, language="en")]
    assert first == second, "the same build gives the same bytes"
    for floor in FLOORS:
        with zipfile.ZipFile(tmp_path / PACK_DIR / pack_filename(floor)) as pack:
            assert pack.namelist()[1] == f"floor-{floor.key}/handout-{floor.key}.pdf"


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_a_floor_without_a_lab_has_no_pack(tmp_path: Path, floor: Floor) -> None:
    _fake_site(tmp_path)
    lab = floor.lab
    (tmp_path / lab.removesuffix(".py") / Path(lab).name).unlink()
    assert [p.name for p in write_packs(tmp_path, language="en")] == [pack_filename(f) for f in FLOORS if f != floor]


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_a_missing_member_stops_the_pack_loudly(tmp_path: Path, floor: Floor) -> None:
    _fake_site(tmp_path)
    (tmp_path / floor.lab.removesuffix(".py") / notebook_names(floor)[1]).unlink()
    with pytest.raises(FileNotFoundError, match=rf"{floor.heading}: the course pack misses .*-solutions\.ipynb"):
        write_packs(tmp_path, language="en")


@pytest.mark.parametrize("floor", FLOORS, ids=lambda f: f.key)
def test_floor_pages_link_their_pack_and_part_0_has_none(floor: Floor) -> None:
    context = handout_context(floor.page, f"floors/{floor.key}/")
    assert context is not None and context["pack"] == f"../../{PACK_DIR}/{pack_filename(floor)}"
    part0 = handout_context(MAP_PAGE, "./")
    assert part0 is not None and "pack" not in part0
