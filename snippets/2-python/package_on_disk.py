"""The installed torch package measured file by file: a thin Python layer over large compiled libraries, to scale."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes
from pytorch_floors.plot import bar_chart, show

# First bytes of machine-code files: ELF (Linux), Mach-O (macOS, thin and universal), PE (Windows).
MAGICS = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ")


def is_compiled(path: Path) -> bool:
    """Whether a file holds machine code, judged by its first bytes (not by its name)."""
    with path.open("rb") as handle:
        head = handle.read(4)
    if head.startswith(b"MZ"):
        return path.suffix.lower() in {".dll", ".pyd", ".exe"}
    return head in MAGICS


def classify(package: Path) -> dict[str, list[tuple[str, int]]]:
    """Sort every regular file of the package into kinds; each kind lists (relative path, bytes)."""
    stub = Path(torch._C.__file__ or "").resolve()
    kinds: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for root, _, files in os.walk(package):
        for name in files:
            path = Path(root, name)
            if path.is_symlink() or not path.is_file():
                continue
            relative = path.relative_to(package).as_posix()
            size = path.stat().st_size
            if path.resolve() == stub:
                kind = "stub"
            elif name.endswith(".py"):
                kind = "python"
            elif name.endswith(".pyc"):
                kind = "bytecode"
            elif is_compiled(path):
                kind = "library" if relative.startswith("lib/") else "other compiled"
            elif relative.startswith("include/"):
                kind = "headers"
            else:
                kind = "other"
            kinds[kind].append((relative, size))
    return kinds


def totals(kinds: dict[str, list[tuple[str, int]]]) -> dict[str, int]:
    """Bytes per kind, plus 'compiled' (every file of machine code, the stub included)."""
    out = {kind: sum(size for _, size in files) for kind, files in kinds.items()}
    out["compiled"] = out.get("stub", 0) + out.get("library", 0) + out.get("other compiled", 0)
    return out


def main() -> None:
    package = Path(torch.__file__).parent
    kinds = classify(package)
    total = totals(kinds)
    libraries = sorted(kinds["library"], key=lambda item: -item[1])
    (first, first_size), (second, second_size) = libraries[0], libraries[1]
    rest = libraries[2:]
    rest_size = sum(size for _, size in rest)
    stub_path, stub_size = kinds["stub"][0]
    n_python = len(kinds["python"])
    n_other = len(kinds["other compiled"])

    bars = [
        ("torch._C stub", stub_size),
        ("Python source (.py)", total["python"]),
        (first, first_size),
        (second, second_size),
        ("other libraries in lib/", rest_size),
        ("test programs and tools", total.get("other compiled", 0)),
    ]
    notes = [
        stub_path,
        f"{n_python:,} files",
        "shared library",
        "shared library",
        f"{len(rest)} files",
        f"{n_other} programs in test/, bin/",
    ]
    mb = [(label, size / 1e6) for label, size in bars]
    chart = bar_chart(
        mb,
        title="The installed torch package, drawn to scale by file size",
        value_label="size on disk (MB, 1 MB = 10^6 bytes)",
        description="Horizontal bars: the torch._C stub and all Python source (highlighted) "
        "against the compiled libraries and programs, which are far larger.",
        value_format="{:,.2f} MB",
        highlight=[mb[0][0], mb[1][0]],
    )
    # Printed for a phone's 46 columns: each row's note on the line under it.
    lines = []
    for (label, size), note in zip(bars, notes, strict=True):
        lines += [f"{label:24} {human_bytes(size):>10}", f"  {note}"]
    lines.append("")
    lines += [f"{'all compiled files':24} {human_bytes(total['compiled']):>10}", "  every file of machine code"]
    lines += [f"{'bytecode caches (.pyc)':24} {human_bytes(total.get('bytecode', 0)):>10}", "  not counted as Python"]
    lines += [f"{'C++ headers (include/)':24} {human_bytes(total.get('headers', 0)):>10}", "  for building extensions"]
    lines.append("")
    share = total["python"] / total["compiled"]
    share_lib = total["python"] / total["library"]
    lines.append(f"Python source = {share:.1%} of all compiled bytes")
    lines.append(f"              = {share_lib:.1%} of the libraries in lib/ alone")
    show(chart, text="\n".join(lines), name="package_on_disk")
    claim("Python source is a small fraction of the compiled bytes", held=share < 0.10, detail=f"{share:.1%}")
    claim(
        "the torch._C stub is tiny next to the libraries",
        held=stub_size < 0.001 * total["library"],
        detail=f"{stub_size / total['library']:.3%} of lib/",
    )
    claim("one compiled library outweighs all the Python source", held=first_size > total["python"])


if __name__ == "__main__":
    main()
