"""Other machines' runs of the proofs: read once, shown beside each proof and on the Machines page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytorch_floors.execution.engine import Engine
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.plugin.config import Settings
from pytorch_floors.plugin.pages import MACHINES_MARKER, fill_markers, marker
from pytorch_floors.plugin.serve.changes import Memo
from pytorch_floors.recordings.report import machines_html, page_tiers, recordings_json, recordings_summary
from pytorch_floors.recordings.schema import FILE_NAME, Recording, read_recordings
from pytorch_floors.recordings.tabs import LazyOutputs
from pytorch_floors.recordings.torch_changes import MARKER as INSIDE_TORCH
from pytorch_floors.recordings.torch_changes import inside_torch_html

__all__ = ["Recordings"]


class Recordings:
    """One build's recordings (`recordings/<tier>/recording.json`) and the outputs its tabs load on demand."""

    def __init__(self, project_dir: Path, settings: Settings, memo: Memo | None = None) -> None:
        """Read the recordings once (a serve session's `memo`: once while no recording changes).

        Raises:
            FloorsError: If a recording cannot be read.
        """
        self.folder = project_dir / (settings.recordings or "recordings")
        self.recordings = self._read(memo) if settings.recordings else ()
        self.lazy_outputs = LazyOutputs()

    def _read(self, memo: Memo | None) -> tuple[Recording, ...]:
        """Every tier's recording: read and checked again only where a file or a tier's folder changed."""

        def compute() -> tuple[tuple[Recording, ...], list[Path]]:
            read = read_recordings(self.folder)  # first: it refuses a tier's folder with no recording
            tiers = [folder for folder in self.folder.iterdir() if folder.is_dir()] if self.folder.is_dir() else []
            return read, [self.folder, *tiers, *(folder / FILE_NAME for folder in tiers)]

        return (memo if memo is not None else Memo()).get(("recordings", self.folder), compute)

    def on_page_context(self, context: dict[str, Any], src_uri: str, engine: Engine) -> None:
        """The machines the page's proofs were recorded on, besides this build's."""
        context["floors_tiers"] = page_tiers(engine.records, self.recordings, src_uri)

    def machines(
        self,
        content: str,
        engine: Engine,
        planned: list[tuple[str, str]],
        url_of: Callable[[str], str],
        language: PageLanguage,
    ) -> str:
        """The page's HTML with the Machines table, or the facts by torch release, where it asks for it.

        `url_of` gives a claim's page, in the page's language.

        Raises:
            FloorsError: If a run of the facts' proof printed what the page cannot show.
        """
        return fill_markers(
            content,
            {
                MACHINES_MARKER: lambda: machines_html(engine.records, self.recordings, planned, url_of, language),
                marker(INSIDE_TORCH): lambda: inside_torch_html(
                    engine.records, self.recordings, self.folder, language.code
                ),
            },
        )

    def report(self, engine: Engine, planned: list[tuple[str, str]]) -> dict[str, object]:
        """The build report's `recordings` section."""
        return recordings_json(engine.records, self.recordings, planned)

    def summary(self, engine: Engine, planned: list[tuple[str, str]]) -> str | None:
        """The log's line on the recordings, if there are any."""
        return recordings_summary(engine.records, self.recordings, planned) if self.recordings else None

    def on_post_build(self, site_dir: Path) -> None:
        """Write the outputs the pages' tabs load when opened."""
        for path, text in self.lazy_outputs.files().items():
            Path(site_dir, path).write_text(text, encoding="utf-8")
