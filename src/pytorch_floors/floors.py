"""The floor registry: the single source of truth for the floors.

The gauge, the navigation, the page titles, the labs and the tests all read
the floors from here. Nothing else in the project lists them.

It also holds `COMPILER`, the one page that is no floor but rides through several
(`torch.compile`), and the floors it stops at: the gauge marks them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CITABLE_PAGES",
    "COMPILER",
    "FLOORS",
    "MAP_PAGE",
    "MAP_TITLE",
    "Elevator",
    "Floor",
    "Stop",
    "floor_by_number",
    "floor_for_page",
]

MAP_PAGE = "index.md"
"""Source path (relative to `docs/`) of Part 0, the map."""

MAP_TITLE = "Part 0 · The map"
"""Title of Part 0, as its page heading, the handouts and the "what changed" page show it."""


@dataclass(frozen=True)
class Floor:
    """One floor of the building, numbered from your program (1) downwards.

    Attributes:
        number: Position from the top, counting from 1.
        slug: Short lowercase name used in paths and anchors.
        title: The floor's title as shown in the gauge, the navigation and the page heading.
        summary: One sentence saying what the floor explains; also the page's meta description.
    """

    number: int
    slug: str
    title: str
    summary: str

    @property
    def key(self) -> str:
        """The floor's path stem, such as `3-boundary`."""
        return f"{self.number}-{self.slug}"

    @property
    def page(self) -> str:
        """Source path of the floor's page, relative to `docs/`."""
        return f"floors/{self.key}.md"

    @property
    def lab(self) -> str:
        """Source path of the floor's lab notebook (percent-format `.py`), relative to `docs/`."""
        return f"labs/{self.key}.py"

    @property
    def snippets_dir(self) -> str:
        """Directory of the floor's proof scripts, relative to the project root."""
        return f"snippets/{self.key}"

    @property
    def heading(self) -> str:
        """The page heading: `Floor 3 · The boundary`."""
        return f"Floor {self.number} · {self.title}"


FLOORS: tuple[Floor, ...] = (
    Floor(
        1,
        "program",
        "Your program",
        "Tensors as you meet them: creation, dtype, shape, NumPy interop, and which floor each line lands on.",
    ),
    Floor(
        2,
        "python",
        "Python",
        "What torch is on disk: a thin Python layer over large compiled libraries, and what importing it costs.",
    ),
    Floor(
        3,
        "boundary",
        "The boundary",
        "How a call leaves Python: generated bindings, argument parsing, and the fixed cost of every eager op.",
    ),
    Floor(
        4,
        "dispatcher",
        "The dispatcher",
        "Operator schemas, dispatch keys, every aten op a program calls, and shapes without data on the meta device.",
    ),
    Floor(
        5,
        "autograd",
        "Autograd: the graph",
        "Autograd's recorded graph: grad_fn, saved tensors and their memory, backward, and turning recording off.",
    ),
    Floor(
        6,
        "kernels",
        "Kernels",
        "How a kernel is chosen and how fast it runs: BLAS, FLOP/s, bandwidth, and the roofline.",
    ),
    Floor(
        7,
        "memory",
        "Memory",
        "Bytes, storage, strides, views versus copies, and the memory of one training step, estimated and measured.",
    ),
    Floor(
        8,
        "chip",
        "The chip and the two clocks",
        "Host time versus device time, synchronisation, copies, threads and memory bandwidth.",
    ),
)
"""The floors, top (your program) to bottom."""


@dataclass(frozen=True)
class Stop:
    """A floor where an elevator's passenger gets off: one stage of a tool that works on that floor.

    Attributes:
        floor: The number of the floor (a floor of `FLOORS`).
        stage: The name of the stage that works there ("Dynamo").
        work: What it does on that floor, in one phrase.
        section: The anchor of the elevator page's section about it.
    """

    floor: int
    stage: str
    work: str
    section: str


@dataclass(frozen=True)
class Elevator:
    """A page that is no floor but rides through several: a tool that works on some floors and skips the rest.

    The floors stay as they are; the elevator names the floors it stops at, and the gauge marks them on
    its page and links the page from each of them.

    Attributes:
        slug: Short lowercase name, the stem of its page and of its proofs' folder.
        title: The page's title, as its heading and the navigation show it.
        summary: One sentence saying what the page explains; also its meta description.
        stops: The floors it stops at, top to bottom.
    """

    slug: str
    title: str
    summary: str
    stops: tuple[Stop, ...]

    @property
    def page(self) -> str:
        """Source path of the elevator's page, relative to `docs/`."""
        return f"{self.slug}.md"

    @property
    def snippets_dir(self) -> str:
        """Directory of its proof scripts, relative to the project root."""
        return f"snippets/{self.slug}"

    def stop_at(self, floor: Floor) -> Stop | None:
        """The elevator's stop on `floor`, or `None` where it rides past."""
        for stop in self.stops:
            if stop.floor == floor.number:
                return stop
        return None


COMPILER = Elevator(
    "compile",
    "The express elevator: torch.compile",
    "How torch.compile captures Python as graphs, traces the backward ahead of time, fuses kernels, and what it costs.",
    (
        Stop(2, "Dynamo", "captures Python frames as FX graphs", "graph-capture"),
        Stop(5, "AOTAutograd", "traces the backward ahead of time", "aot-autograd"),
        Stop(6, "Inductor", "fuses operators into generated kernels", "generated-code"),
    ),
)
"""`torch.compile`: not a floor of its own, but an express ride that stops only at the floors its stages work on."""

CITABLE_PAGES: tuple[str, ...] = (MAP_PAGE, *(floor.page for floor in FLOORS), COMPILER.page)
"""Source paths of the pages whose sections are citable (every h2–h4 has an explicit id)."""


def floor_by_number(number: int) -> Floor:
    """Return the floor with the given number.

    Args:
        number: A floor number, 1 to `len(FLOORS)`.

    Returns:
        The matching floor.

    Raises:
        KeyError: If no floor has that number.
    """
    for floor in FLOORS:
        if floor.number == number:
            return floor
    raise KeyError(f"no floor number {number}; floors are 1 to {len(FLOORS)}")


def floor_for_page(src_path: str) -> Floor | None:
    """Return the floor whose page or lab is `src_path`, or `None` for any other page.

    Args:
        src_path: A page's source path relative to `docs/`, with `/` separators.

    Returns:
        The floor the page belongs to, or `None` (the map, the reference, ...).
    """
    for floor in FLOORS:
        if src_path in (floor.page, floor.lab):
            return floor
    return None
