"""Pattern tests for Part 0, the map: what its page says that is not a claim of its proofs.

The patterns are stated once, as claims in the proofs (the build checks them too), and
`tests/test_floor_proofs.py` runs every proof and requires each claim to hold; these tests check
what is not a claim of the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

import torch
from mkdocs.config import load_config
from mkdocs.structure.files import File

from conftest import ROOT
from pytorch_floors.execution.output import html_problem
from pytorch_floors.floors import FLOORS

Load = Callable[[str], ModuleType]


def test_every_operator_of_the_step_is_an_aten_operator(load_proof: Load) -> None:
    proof = load_proof("0-map/walk_4_dispatcher.py")
    names = proof.ops_of_one_step(batch=4, features=6, classes=3)
    assert names and all(name.startswith("aten::") for name in names)


def test_territory_names_a_blas(load_proof: Load) -> None:
    proof = load_proof("0-map/territory.py")
    assert proof.blas() != "unknown"


def test_the_building_links_every_floor_in_registry_order_as_mkdocs_addresses_it(load_proof: Load) -> None:
    proof = load_proof("0-map/building.py")
    html = proof.drawing(proof.readings())
    config = load_config(str(ROOT / "mkdocs.yml"))
    pages = [File(floor.page, config.docs_dir, config.site_dir, config.use_directory_urls).url for floor in FLOORS]
    assert re.findall(r'<a [^>]*href="([^"]*)"', html) == pages
    assert re.findall(r'class="floors-building__number">Floor (\d+)<', html) == [str(f.number) for f in FLOORS]
    assert html_problem(html) is None


def test_the_building_shows_the_walk_downs_own_numbers(load_proof: Load) -> None:
    building = load_proof("0-map/building.py")
    program, graph = load_proof("0-map/the_program.py"), load_proof("0-map/walk_5_graph.py")
    found = building.readings()
    assert found["program"].value == f"{program.run_program().loss.item():.4f}"
    assert found["autograd"].value == str(len(graph.graph_nodes(graph.program_loss())))


def test_the_walk_down_has_a_section_for_every_floor_in_order() -> None:
    # A ninth floor in the registry went unnoticed here: Part 0 walks the building floor by floor.
    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    start = page.index("## A walk down the floors")
    end = page.find("\n## ", start + 1)
    walk = page[start : end if end > 0 else len(page)]
    found = re.findall(r"^### (.+?) \{ #walk-[a-z0-9-]+ \}$", walk, re.MULTILINE)
    for floor in FLOORS:
        assert floor.heading in found, (
            f"docs/index.md's 'A walk down the floors' has no section for {floor.heading}: add "
            f"'### {floor.heading} {{ #walk-{floor.slug} }}' with one measured number from its floor "
            f"(a proof in snippets/0-map/walk_{floor.number}_*.py), after the section of the floor above it"
        )
    floors = [heading for heading in found if heading.startswith("Floor ")]
    assert floors == [floor.heading for floor in FLOORS], "the walk goes down the floors in the registry's order"


def test_the_kernels_storey_says_the_capability_is_a_ceiling_with_counts(load_proof: Load) -> None:
    """Issue 60 (K1): the storey read "AVX512 vector instructions of the CPU kernels"; the capability is a
    ceiling (112 of 450 kernels had an AVX-512 build in torch 2.13), so the storey says so with the counts."""
    proof = load_proof("0-map/building.py")
    reading = proof.capability_reading()
    assert reading.value == torch.backends.cpu.get_cpu_capability()
    assert "vector instructions of the CPU kernels" not in reading.what
    counted = re.search(r"a ceiling: (\d+) of (\d+) kernels have it", reading.what)
    if counted is None:
        assert reading.what == "the CPU capability torch chose: the widest build its kernels may use"
        return
    built, kernels = int(counted[1]), int(counted[2])
    assert 0 < built <= kernels
    if reading.value == "AVX512":
        fallback = re.search(r", (\d+) run AVX2$", reading.what)
        assert fallback is not None and built + int(fallback[1]) <= kernels
