"""One site build's parts, one concern each: [`SiteBuild`][pytorch_floors.plugin.build.SiteBuild] conducts them.

Each part keeps what its concern gathers during one build and has only the hooks it needs; its page
hooks take the page's [`PageFacts`][pytorch_floors.page_facts.PageFacts], computed once in
`on_files`. The parts are the plugin's: they may import MkDocs' world, nothing outside `plugin/` may.
"""

from __future__ import annotations

from pytorch_floors.plugin.parts.editions import Editions
from pytorch_floors.plugin.parts.labs import Labs
from pytorch_floors.plugin.parts.proofs import Proofs
from pytorch_floors.plugin.parts.recordings import Recordings
from pytorch_floors.plugin.parts.registry import Registry
from pytorch_floors.plugin.parts.serving import Serving
from pytorch_floors.plugin.parts.translations import Translations

__all__ = ["Editions", "Labs", "Proofs", "Recordings", "Registry", "Serving", "Translations"]
