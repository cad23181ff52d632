"""Floor 2 in one number: the torch._C module Python imports is a tiny stub in front of large compiled libraries."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from pytorch_floors.claims import claim


def library_sizes() -> tuple[int, dict[str, int]]:
    """Bytes of the torch._C stub file, and of each shared library in torch/lib."""
    stub = Path(torch._C.__file__ or "")
    lib = Path(torch.__file__).parent / "lib"
    libraries = {
        path.name: path.stat().st_size
        for path in sorted(lib.iterdir())
        if path.is_file() and not path.is_symlink() and any(ext in path.name for ext in (".so", ".dylib", ".dll"))
    }
    return stub.stat().st_size, libraries


def main() -> None:
    stub_bytes, libraries = library_sizes()
    total = sum(libraries.values())
    biggest = max(libraries, key=libraries.__getitem__)
    stub_name = os.path.basename(torch._C.__file__ or "")
    print(f"torch._C -> {stub_name}: {stub_bytes:,} bytes")
    print(f"torch/lib: {len(libraries)} compiled libraries, {total:,} bytes")
    print(f"the largest: {biggest}, {libraries[biggest]:,} bytes")
    print(f"the libraries are {total / stub_bytes:,.0f} times the size of the stub")
    claim(
        "the compiled libraries dwarf the stub Python imports",
        held=libraries[biggest] > 1000 * stub_bytes,
        detail=f"the largest alone is {libraries[biggest] / stub_bytes:,.0f}x the stub",
    )


if __name__ == "__main__":
    main()
