"""The source tree's top directories, found again in the installed package: what each became and how big it is."""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes


def python_bytes(package_dir: Path) -> tuple[int, int]:
    """Number and total bytes of the `.py` files under a package directory."""
    files = [p for p in package_dir.rglob("*.py") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def library(name: str) -> Path | None:
    """The shared library in torch/lib whose file name starts with `name` + '.' (None when absent)."""
    lib = Path(torch.__file__).parent / "lib"
    found = sorted(p for p in lib.iterdir() if p.name.startswith(name + ".") and not p.is_symlink())
    return found[0] if found else None


def blas() -> str:
    """The BLAS library this build of torch was configured with (from torch.__config__.show())."""
    match = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return match.group(1) if match else "unknown"


def main() -> None:
    torch_dir = Path(torch.__file__).parent
    rows: list[tuple[str, str, str]] = []
    count, size = python_bytes(torch_dir)
    rows.append(("torch/", f"{count:,} .py files under torch/", human_bytes(size)))
    for source, name in (("torch/csrc/", "libtorch_python"), ("aten/", "libtorch_cpu"), ("c10/", "libc10")):
        path = library(name)
        where = f"lib/{path.name}" if path else f"{name} (not found)"
        rows.append((source, where, human_bytes(path.stat().st_size) if path else "-"))
    spec = find_spec("torchgen")
    if spec is not None and spec.origin is not None:
        count, size = python_bytes(Path(spec.origin).parent)
        rows.append(("torchgen/", f"the torchgen package, {count:,} .py files", human_bytes(size)))
    lib = torch_dir / "lib"
    separate = [p.name for p in lib.iterdir() if re.search(r"blas|mkl|lapack", p.name, re.IGNORECASE)]
    rows.append(("BLAS", f"{blas()}: " + (", ".join(separate) if separate else "no file of its own in lib/"), "-"))
    cpu, python = library("libtorch_cpu"), library("libtorch_python")
    # Printed for a phone's 46 columns: each source with its size, and what it is installed as under it.
    print(f"{'source':12} size\n  installed as")
    for source, where, size_text in rows:
        print(f"{source:12} {size_text}\n  {where}")
    claim(
        "the kernels (libtorch_cpu) outweigh the Python bindings (libtorch_python)",
        held=cpu is not None and python is not None and cpu.stat().st_size > python.stat().st_size,
    )


if __name__ == "__main__":
    main()
