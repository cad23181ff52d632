"""PyTorch Floors: the package behind the site.

It holds the floor registry (the single source of truth for the eight floors),
the measurement helpers the proofs use, the depth gauge, small SVG charts, the
build's provenance, and the machinery that executes the proofs.
"""

from pytorch_floors.floors import FLOORS, MAP_PAGE, Floor, floor_by_number, floor_for_page
from pytorch_floors.gauge import render_gauge
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
from pytorch_floors.provenance import Provenance, collect

__version__ = "0.1.0"

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
