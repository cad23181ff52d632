"""The tiers themselves: each kind of machine as an environment, a CPU affinity, a load and a Python."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's CPU wheel index (tools/setup_env.py names the same)."""

HOG = "while True: pass"
"""What a hog runs (`python -c`): a core kept busy in user space, with no I/O, until it is killed."""


@dataclass(frozen=True)
class TierEnvironment:
    """A virtual environment of the tier's own, made on demand in the project (ignored by git).

    Attributes:
        folder: Its folder, relative to the project (`.venv-cuda`).
        python: The Python minor version it is made with (`3.12`), or `""` for the one running this.
        pypi_torch: torch from PyPI only: pip's configuration (local wheels, mirrors, constraints) is
            ignored, so on Linux the pin `torch==X` is PyPI's CUDA build.
        cuda_build: The environment must hold a CUDA build of torch (checked once it is made).
        torch: The torch release it holds in place of requirements.txt's pin (`2.15.0`), or `""` for the
            pin itself. That release and no other is installed (`torch===X`: not a local `X+cpu` wheel,
            which would otherwise satisfy `torch==X`), with pip's configuration as it is but for a
            constraint that caps torch below it (`tiers.python.lifted_constraints`).
    """

    folder: str
    python: str = ""
    pypi_torch: bool = False
    cuda_build: bool = False
    torch: str = ""


@dataclass(frozen=True)
class Tier:
    """One kind of machine: extra environment, a CPU affinity, the load beside the run, its own Python.

    Attributes:
        name: The tier's name.
        stands_for: The machines it stands for, in words.
        env: Environment variables the run gets.
        cpus: The CPUs the run is pinned to (`taskset -c` syntax, such as `0`), or `None`.
        hogs: Processes that keep a core busy each while the run lasts.
        hogs_per_core: As many more for each core this process may use.
        neighbour: A neighbour builds a copy of the site cold, again and again, while the run lasts.
        venv: The environment the run's Python comes from, or `None` for the one running this.
        stands_for_zh: The machines it stands for, in the Chinese edition's words.
    """

    name: str
    stands_for: str
    env: dict[str, str] = field(default_factory=dict)
    cpus: str | None = None
    hogs: int = 0
    hogs_per_core: int = 0
    neighbour: bool = False
    venv: TierEnvironment | None = None
    stands_for_zh: str = ""

    def stands_for_in(self, language: str) -> str:
        """The machines it stands for, in a language (`en`, `zh`)."""
        return self.stands_for_zh if language == "zh" and self.stands_for_zh else self.stands_for


def torch_tier(version: str, released: str, released_zh: str) -> Tier:
    """A tier that runs every proof on another torch release: PyPI's wheel of it, with no GPU in view.

    Args:
        version: The release (`2.15.0`); the tier is named `torch-<version>`, and its tab says so.
        released: When it was released, in words (`October 2026`).
        released_zh: The same in the Chinese edition's words (`2026 年 10 月`).

    Returns:
        The tier: its own environment `.venv-torch-<version>` and `CUDA_VISIBLE_DEVICES=` (on Linux
        PyPI's wheel is the CUDA build, run on the CPU as a reader without a GPU runs it).
    """
    return Tier(
        f"torch-{version}",
        f"torch {version} (PyPI, {released})",
        {"CUDA_VISIBLE_DEVICES": ""},
        venv=TierEnvironment(f".venv-torch-{version}", torch=version),
        stands_for_zh=f"torch {version}（PyPI，{released_zh}）",
    )


TIERS = (
    Tier("as-is", "a laptop or workstation as it is", stands_for_zh="一台原样的笔记本电脑或工作站"),
    Tier(
        "one-core-scalar",
        "a single-vCPU runner without AVX2 or AVX-512 kernels",
        {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"},
        cpus="0",
        stands_for_zh="只有一个 vCPU、不用 AVX2 或 AVX-512 内核的运行器",
    ),
    Tier("loaded", "a busy CI host", hogs=2, stands_for_zh="一台繁忙的 CI 主机"),
    Tier(
        "crowded",
        "a shared JupyterHub node or an oversubscribed CI host",
        hogs_per_core=2,
        neighbour=True,
        stands_for_zh="共享的 JupyterHub 节点或超额分配的 CI 主机",
    ),
    Tier(
        "spawn",
        "Windows or macOS Python (no fork server)",
        {"FLOORS_START_METHOD": "spawn"},
        stands_for_zh="Windows 或 macOS 上的 Python（没有 fork 服务器）",
    ),
    Tier(
        "avx2",
        "an AVX2-only CPU (emulated: torch's kernels capped at AVX2)",
        {"ATEN_CPU_CAPABILITY": "avx2"},
        stands_for_zh="只有 AVX2 的 CPU（模拟：torch 的内核上限为 AVX2）",
    ),
    Tier(
        "cuda-build-no-gpu",
        "PyPI's CUDA build of torch on a machine without a GPU",
        {"CUDA_VISIBLE_DEVICES": ""},
        venv=TierEnvironment(".venv-cuda", pypi_torch=True, cuda_build=True),
        stands_for_zh="没有 GPU 的机器上的 PyPI CUDA 版 torch",
    ),
    Tier(
        "python3.12",
        "a stock Python 3.12 (Ubuntu 24.04)",
        venv=TierEnvironment(".venv-py3.12", "3.12"),
        stands_for_zh="系统自带的 Python 3.12（Ubuntu 24.04）",
    ),
    Tier(
        "python3.13",
        "a stock Python 3.13 (Homebrew, Debian 13)",
        venv=TierEnvironment(".venv-py3.13", "3.13"),
        stands_for_zh="系统自带的 Python 3.13（Homebrew、Debian 13）",
    ),
    torch_tier("2.14.1", "September 2026", "2026 年 9 月"),
    torch_tier("2.15.0", "October 2026", "2026 年 10 月"),
)
"""Every tier, in the order `make machines` builds them."""


def tier_named(name: str) -> Tier | None:
    """The tier of that name, or `None` (the name of a real machine, recorded as it is).

    Args:
        name: A tier's name.

    Returns:
        The tier, or `None`.
    """
    return next((tier for tier in TIERS if tier.name == name), None)


def _cpus(written: str) -> set[int]:
    chosen: set[int] = set()
    for part in written.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return chosen


def _cores() -> int:
    """The cores this process may run on (its affinity: a container's share), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def hog_count(tier: Tier) -> int:
    """How many hogs spin beside a run as `tier` on this machine.

    Args:
        tier: The tier.

    Returns:
        Its fixed hogs and its hogs per core times the cores this process may use.
    """
    return tier.hogs + tier.hogs_per_core * _cores()


# ---------------------------------------------------------------------------------------------------
# The crowded tier's neighbour
# ---------------------------------------------------------------------------------------------------
