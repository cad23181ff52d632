"""PyTorch Floors: the package behind the site.

It holds the floor registry (the single source of truth for the floors),
the measurement helpers the proofs use, the depth gauge, small SVG charts, the
build's provenance, and the machinery that executes the proofs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytorch_floors._lazy import lazy_attributes

if TYPE_CHECKING:
    from pytorch_floors.execution.provenance import Provenance, collect
    from pytorch_floors.floors import FLOORS, MAP_PAGE, Floor, floor_by_number, floor_for_page
    from pytorch_floors.measure import (
        Timing,
        cuda_event_seconds,
        detect_device,
        human_bytes,
        human_seconds,
        same_storage,
        seconds_per_call,
        storage_bytes,
        synchronize,
        tensor_bytes,
        time_call,
    )
    from pytorch_floors.plot import Series, bar_chart, line_chart
    from pytorch_floors.render.gauge import render_gauge

__version__ = "0.1.0"

# Imported on first use: a proof's worker imports this package, and must get torch and no more.
_LAZY = {
    "FLOORS": "pytorch_floors.floors",
    "Floor": "pytorch_floors.floors",
    "MAP_PAGE": "pytorch_floors.floors",
    "Provenance": "pytorch_floors.execution.provenance",
    "Series": "pytorch_floors.plot",
    "Timing": "pytorch_floors.measure",
    "bar_chart": "pytorch_floors.plot",
    "collect": "pytorch_floors.execution.provenance",
    "cuda_event_seconds": "pytorch_floors.measure",
    "detect_device": "pytorch_floors.measure",
    "floor_by_number": "pytorch_floors.floors",
    "floor_for_page": "pytorch_floors.floors",
    "human_bytes": "pytorch_floors.measure",
    "human_seconds": "pytorch_floors.measure",
    "line_chart": "pytorch_floors.plot",
    "render_gauge": "pytorch_floors.render.gauge",
    "same_storage": "pytorch_floors.measure",
    "seconds_per_call": "pytorch_floors.measure",
    "storage_bytes": "pytorch_floors.measure",
    "synchronize": "pytorch_floors.measure",
    "tensor_bytes": "pytorch_floors.measure",
    "time_call": "pytorch_floors.measure",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "FLOORS",
    "MAP_PAGE",
    "Floor",
    "Provenance",
    "Series",
    "Timing",
    "bar_chart",
    "collect",
    "cuda_event_seconds",
    "detect_device",
    "floor_by_number",
    "floor_for_page",
    "human_bytes",
    "human_seconds",
    "line_chart",
    "render_gauge",
    "same_storage",
    "seconds_per_call",
    "storage_bytes",
    "synchronize",
    "tensor_bytes",
    "time_call",
]
