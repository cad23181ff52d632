"""A page's facts, computed once from its source path: its English source, language, floor and kind.

The plugin computes them for every page when the build finds its files and hands them to whatever
needs them; no hook works a page's language, twin or floor out again from its path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytorch_floors.floors import Floor, Lab, annex_for_page, floor_for_page, lab_for_page
from pytorch_floors.i18n.languages import DEFAULT, Language, english_source, language_of, twin_uri

__all__ = ["PageFacts", "PageKind", "page_facts"]

PageKind = Literal["floor", "lab", "annex", "reference", "site"]
"""A floor's page, a lab (a floor's or an annex's), an annex (a page beside the floors: the compile elevator), the API
reference, or a page of the site (the map, Proofs, Cite, What changed, ...)."""


@dataclass(frozen=True)
class PageFacts:
    """What a page is, by its source path.

    Attributes:
        src_uri: Its source, relative to `docs/` (`zh/floors/4-dispatcher.md`).
        source: The English page it is, or translates (`floors/4-dispatcher.md`).
        language: Its language.
        floor: The floor whose page or lab it is, if any.
        kind: What kind of page it is (`PageKind`).
        lab: The lab it is (a floor's or an annex's), if it is one.
    """

    src_uri: str
    source: str
    language: Language
    floor: Floor | None
    kind: PageKind
    lab: Lab | None = None

    @property
    def translated(self) -> bool:
        """It is a translation of another page (its `source`)."""
        return self.language != DEFAULT

    def twin(self, language: Language) -> str:
        """Its twin's source path in another language (which may not exist)."""
        return twin_uri(self.src_uri, language)


def page_facts(src_uri: str) -> PageFacts:
    """The facts of the page at `src_uri` (relative to `docs/`).

    Args:
        src_uri: The page's source path.

    Returns:
        Its facts.
    """
    source = english_source(src_uri)
    floor = floor_for_page(source)
    lab = lab_for_page(source)
    kind: PageKind
    if lab is not None:
        kind = "lab"
    elif floor is not None:
        kind = "floor"
    elif annex_for_page(source) is not None:
        kind = "annex"
    elif source.startswith("reference/"):
        kind = "reference"
    else:
        kind = "site"
    return PageFacts(src_uri, source, language_of(src_uri), floor, kind, lab)
