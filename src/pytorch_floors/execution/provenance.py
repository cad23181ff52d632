"""What a build ran on, stated once per page next to the measured numbers.

The build process never imports torch: torch's own facts (version, kernels, threads,
accelerator) are asked of a block's process ([`torch_facts`][pytorch_floors.execution.facts.torch_facts]).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from datetime import date
from typing import get_type_hints

from pytorch_floors.execution.facts import TorchFacts, torch_facts

__all__ = ["Provenance", "collect", "cpu_model", "of_outputs"]


def cpu_model() -> str:
    """Return the CPU's model name, as the operating system reports it.

    Returns:
        The model name, or the architecture when the name cannot be read.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@dataclass(frozen=True)
class Provenance:
    """The facts that make a measured number reproducible.

    Attributes:
        torch_version: `torch.__version__` of the build.
        python_version: The Python version, such as `3.11.7`.
        platform: Operating system and architecture.
        cpu: The CPU's model name.
        cpu_capability: The CPU capability torch chose (`AVX2`, `AVX512`, ...): the widest build its CPU
            kernels may use, a ceiling (a kernel without a build for it runs a narrower one).
        threads: Torch's intra-op thread count.
        cores: Logical CPUs visible to the process.
        accelerator: The accelerator in use (`cuda: NVIDIA H100 ...`, `mps`) or `none`.
        built: The date of the build (ISO format).
    """

    torch_version: str
    python_version: str
    platform: str
    cpu: str
    cpu_capability: str
    threads: int
    cores: int
    accelerator: str
    built: str

    def line(self) -> str:
        """One human-readable line, as shown on every page.

        Returns:
            The provenance sentence.
        """
        threads = f"{self.threads} thread" + ("" if self.threads == 1 else "s")
        return (
            f"torch {self.torch_version} · Python {self.python_version} · {self.cpu} "
            f"(CPU capability {self.cpu_capability}, {threads}) · accelerator: {self.accelerator} · "
            f"built {self.built}"
        )

    def as_dict(self) -> dict[str, str | int]:
        """Return the fields as a plain dictionary (for JSON and templates).

        Returns:
            Field names mapped to values.
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, stored: object) -> Provenance:
        """Read back what `as_dict` wrote (a cache entry's JSON, say), every field with its type.

        Args:
            stored: The dictionary.

        Returns:
            The provenance.

        Raises:
            ValueError: If it is not a dictionary of exactly these fields, each of its type.
        """
        if not isinstance(stored, dict) or set(stored) != set(_FIELD_TYPES):
            raise ValueError("provenance is not a provenance record")
        for name, value in stored.items():
            if isinstance(value, bool) or not isinstance(value, _FIELD_TYPES[name]):
                raise ValueError(f"provenance field {name} is {value!r}")
        return cls(**stored)


_FIELD_TYPES: dict[str, type[str] | type[int]] = {
    field.name: int if get_type_hints(Provenance)[field.name] is int else str for field in fields(Provenance)
}


def of_outputs(measured: Iterable[Provenance | None], build: Provenance) -> list[Provenance]:
    """The provenances of the outputs a page shows, oldest first.

    A cached output was measured by an earlier build, maybe on another day or machine: the page
    must say so rather than print today's line beside it.

    Args:
        measured: The provenance stored with each output on the page (`None` where unknown).
        build: This build's provenance, for a page with no outputs.

    Returns:
        Each distinct provenance once, oldest build date first; `[build]` when the page shows no output.
    """
    distinct = dict.fromkeys(p for p in measured if p is not None)
    return sorted(distinct, key=lambda p: p.built) or [build]


def collect(facts: TorchFacts | None = None) -> Provenance:
    """Read the provenance of this machine, as a block sees it.

    Args:
        facts: Torch's facts, when the caller already has them; otherwise a block's process is asked.

    Returns:
        The provenance record.
    """
    facts = facts if facts is not None else torch_facts()
    return Provenance(
        torch_version=facts.torch_version,
        python_version=platform.python_version(),
        platform=f"{platform.system()} {platform.machine()}",
        cpu=cpu_model(),
        cpu_capability=facts.cpu_capability,
        threads=facts.threads,
        cores=os.cpu_count() or 1,
        accelerator=facts.accelerator,
        built=date.today().isoformat(),
    )


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(collect().line() + "\n")
