"""The floor registry: the single source of truth for the floors.

The gauge, the navigation, the page titles, the labs and the tests all read
the floors from here. Nothing else in the project lists them.

It also holds the annexes (`ANNEXES`), the pages that are no floor but ride through several:
`COMPILER` (`torch.compile`) and `DISTRIBUTED` (`torch.distributed`), and the floors each stops at:
the gauge marks them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANNEXES",
    "CITABLE_PAGES",
    "COMPILER",
    "DISTRIBUTED",
    "DISTRIBUTED_LAB",
    "FLOORS",
    "LABS",
    "MAP_PAGE",
    "MAP_TITLE",
    "MAP_TITLE_ZH",
    "Elevator",
    "Floor",
    "Lab",
    "Stop",
    "annex_for_page",
    "floor_by_number",
    "floor_for_page",
    "lab_for_page",
]

MAP_PAGE = "index.md"
"""Source path (relative to `docs/`) of Part 0, the map."""

MAP_TITLE = "Part 0 · The map"
"""Title of Part 0, as its page heading, the handouts and the "what changed" page show it."""

MAP_TITLE_ZH = "第 0 部分 · 地图"
"""Title of Part 0 in the Chinese edition."""


@dataclass(frozen=True)
class Floor:
    """One floor of the building, numbered from your program (1) downwards.

    Attributes:
        number: Position from the top, counting from 1.
        slug: Short lowercase name used in paths and anchors.
        title: The floor's title as shown in the gauge, the navigation and the page heading.
        summary: One sentence saying what the floor explains; also the page's meta description.
        title_zh: The title in the Chinese edition.
        summary_zh: The summary in the Chinese edition.
    """

    number: int
    slug: str
    title: str
    summary: str
    title_zh: str
    summary_zh: str

    def title_in(self, language: str) -> str:
        """The title in a language (`en`, `zh`)."""
        return self.title_zh if language == "zh" else self.title

    def summary_in(self, language: str) -> str:
        """The summary in a language (`en`, `zh`)."""
        return self.summary_zh if language == "zh" else self.summary

    def heading_in(self, language: str) -> str:
        """The page heading in a language: `Floor 3 · The boundary`, `第 3 层 · 边界`."""
        return f"第 {self.number} 层 · {self.title_zh}" if language == "zh" else self.heading

    def lab_title_in(self, language: str) -> str:
        """The lab's title in a language: `Lab 3 · The boundary`, `实验 3 · 边界`."""
        return f"实验 {self.number} · {self.title_zh}" if language == "zh" else f"Lab {self.number} · {self.title}"

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
        "你的程序",
        "初见张量：创建、数据类型、形状、与 NumPy 互通，以及程序的每一行落在哪一层。",
    ),
    Floor(
        2,
        "python",
        "Python",
        "What torch is on disk: a thin Python layer over large compiled libraries, and what importing it costs.",
        "Python",
        "torch 在磁盘上是什么：薄薄一层 Python 包着庞大的编译库，以及导入它要付出的代价。",
    ),
    Floor(
        3,
        "boundary",
        "The boundary",
        "How a call leaves Python: generated bindings, argument parsing, and the fixed cost of every eager op.",
        "边界",
        "一次调用如何离开 Python：生成的绑定、参数解析，以及每个 eager 算子的固定开销。",
    ),
    Floor(
        4,
        "dispatcher",
        "The dispatcher",
        "Operator schemas, dispatch keys, every aten op a program calls, and shapes without data on the meta device.",
        "分发器",
        "schema、分发键、程序调用的每个 aten 算子，以及 meta 设备上没有数据的形状。",
    ),
    Floor(
        5,
        "autograd",
        "Autograd: the graph",
        "Autograd's recorded graph: grad_fn, saved tensors and their memory, backward, and turning recording off.",
        "自动求导：计算图",
        "自动求导记录下的计算图：grad_fn、保存的张量及其内存、反向传播，以及如何关闭记录。",
    ),
    Floor(
        6,
        "kernels",
        "Kernels",
        "How a kernel is chosen and how fast it runs: BLAS, FLOP/s, bandwidth, and the roofline.",
        "内核",
        "内核如何被选中、跑得多快：BLAS、FLOP/s、带宽与 roofline 模型。",
    ),
    Floor(
        7,
        "memory",
        "Memory",
        "Bytes, storage, strides, views versus copies, and the memory of one training step, estimated and measured.",
        "内存",
        "字节、存储、步长、视图与复制，以及一个训练步的内存：先估算，再实测。",
    ),
    Floor(
        8,
        "chip",
        "The chip and the two clocks",
        "Host time versus device time, synchronisation, copies, threads and memory bandwidth.",
        "芯片与两个时钟",
        "主机时间与设备时间、同步、复制、线程与内存带宽。",
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
        work_zh: The phrase in the Chinese edition.
    """

    floor: int
    stage: str
    work: str
    section: str
    work_zh: str

    def work_in(self, language: str) -> str:
        """What the stage does on its floor, in a language (`en`, `zh`)."""
        return self.work_zh if language == "zh" else self.work


@dataclass(frozen=True)
class Elevator:
    """A page that is no floor but rides through several: a tool that works on some floors and skips the rest.

    The floors stay as they are; the elevator names the floors it stops at, and the gauge marks them on
    its page and links the page from each of them.

    Attributes:
        slug: Short lowercase name, the stem of its page and of its proofs' folder.
        title: The page's title, as its heading and the navigation show it.
        summary: One sentence saying what the page explains; also its meta description.
        title_zh: The title in the Chinese edition.
        summary_zh: The summary in the Chinese edition.
        stops: The floors it stops at, top to bottom.
        link: What a floor page's gauge says in its link to the stop's section, with the `{stage}` and its
            `{work}` (a message of `i18n/messages.zh.yml`).
    """

    slug: str
    title: str
    summary: str
    title_zh: str
    summary_zh: str
    stops: tuple[Stop, ...]
    link: str = "Express elevator: {stage} {work}"

    def title_in(self, language: str) -> str:
        """The title in a language (`en`, `zh`)."""
        return self.title_zh if language == "zh" else self.title

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
    "直达电梯：torch.compile",
    "torch.compile 如何把 Python 捕获成图、提前追踪反向传播、融合内核，以及它的代价。",
    (
        Stop(2, "Dynamo", "captures Python frames as FX graphs", "graph-capture", "把 Python 帧捕获成 FX 计算图"),
        Stop(5, "AOTAutograd", "traces the backward ahead of time", "aot-autograd", "提前追踪反向传播"),
        Stop(6, "Inductor", "fuses operators into generated kernels", "generated-code", "把算子融合进生成的内核"),
    ),
)
"""`torch.compile`: not a floor of its own, but an express ride that stops only at the floors its stages work on."""

DISTRIBUTED = Elevator(
    "distributed",
    "Many chips: torch.distributed",
    "How ranks meet, what a collective costs, and how DDP, FSDP2 and DTensor split a model's work and memory, "
    "proved with several processes on one CPU.",
    "多芯片：torch.distributed",
    "rank 如何会合、一次集合通信的代价，以及 DDP、FSDP2 和 DTensor 如何切分模型的计算与内存；"
    "全部在一台 CPU 上用多个进程证明。",
    (
        Stop(4, "c10d", "collectives are dispatcher operators", "process-groups", "集合通信是分发器里的算子"),
        Stop(5, "DDP", "all-reduces gradient buckets during backward", "ddp", "在反向传播途中对梯度桶做 all-reduce"),
        Stop(7, "FSDP2", "keeps 1/p of the parameters and state per rank", "fsdp", "每个 rank 只保存 1/p 的参数和状态"),
        Stop(
            8,
            "gloo",
            "prices a collective: latency, plus bytes over bandwidth",
            "collective-cost",
            "给集合通信计价：延迟加上字节数除以带宽",
        ),
    ),
    link="Annex: {stage} {work}",
)
"""`torch.distributed`: an annex beside the building, reached from the floors its parts stand on."""

ANNEXES: tuple[Elevator, ...] = (COMPILER, DISTRIBUTED)
"""The pages that are no floor, in reading order after the floors: each stands on some of them."""


@dataclass(frozen=True)
class Lab:
    """A lab notebook: a floor's (`labs/3-boundary.py`) or an annex's (`labs/distributed.py`).

    A floor's lab is numbered as its floor; an annex's lab is no floor's, so the build's labs are
    this list, not the floors (`LABS`).

    Attributes:
        key: The lab's path stem (`3-boundary`, `distributed`).
        title: The lab's title, as its heading and the navigation show it (`Lab 3 · The boundary`).
        title_zh: The title in the Chinese edition.
        subject: What it practises, as its description names it (the floor's or the annex's title).
        subject_zh: The subject in the Chinese edition.
        floor: The floor it practises, or `None` for an annex's lab.
        annex: The annex page it practises (`distributed.md`), or `None` for a floor's lab.
    """

    key: str
    title: str
    title_zh: str
    subject: str
    subject_zh: str
    floor: Floor | None = None
    annex: str | None = None

    @property
    def lab(self) -> str:
        """Source path of the lab notebook (percent-format `.py`), relative to `docs/`."""
        return f"labs/{self.key}.py"

    def lab_title_in(self, language: str) -> str:
        """The lab's title in a language (`en`, `zh`)."""
        return self.title_zh if language == "zh" else self.title

    def title_in(self, language: str) -> str:
        """What the lab practises, in a language (`en`, `zh`)."""
        return self.subject_zh if language == "zh" else self.subject


def _floor_lab(floor: Floor) -> Lab:
    return Lab(floor.key, floor.lab_title_in("en"), floor.lab_title_in("zh"), floor.title, floor.title_zh, floor=floor)


DISTRIBUTED_LAB = Lab(
    "distributed",
    "Annex lab · Many chips: torch.distributed",
    "附楼实验 · 多芯片：torch.distributed",
    "Many chips (torch.distributed)",
    "多芯片（torch.distributed）",
    annex="distributed.md",
)
"""The lab of the annex on `torch.distributed`: ranks started as processes on one machine (gloo, CPU)."""

LABS: tuple[Lab, ...] = (*(_floor_lab(floor) for floor in FLOORS), DISTRIBUTED_LAB)
"""Every lab the site builds, in the navigation's order: the floors' labs, then the annexes'."""


CITABLE_PAGES: tuple[str, ...] = (MAP_PAGE, *(floor.page for floor in FLOORS), *(annex.page for annex in ANNEXES))
"""Source paths of the pages whose sections are citable (every h2–h4 has an explicit id)."""


def annex_for_page(src_path: str) -> Elevator | None:
    """Return the annex (`ANNEXES`) whose page is `src_path`, or `None`.

    Args:
        src_path: A page's source path relative to `docs/`, with `/` separators.

    Returns:
        The annex, or `None` for any other page.
    """
    return next((annex for annex in ANNEXES if annex.page == src_path), None)


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


def lab_for_page(src_path: str) -> Lab | None:
    """Return the lab whose notebook is `src_path`, or `None` for any other page.

    Args:
        src_path: A page's source path relative to `docs/`, with `/` separators.

    Returns:
        The lab (a floor's or an annex's), or `None`.
    """
    return next((lab for lab in LABS if lab.lab == src_path), None)
