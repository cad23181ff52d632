"""The C++ function behind `torch.randn` is in the compiled library and in no source file that ships with torch."""

from __future__ import annotations

import inspect
import re
import struct
import textwrap
from pathlib import Path
from typing import NamedTuple

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes

NAME = "THPVariable_randn"
TORCH_DIR = Path(torch.__file__).resolve().parent
# torch::autograd::THPVariable_<op>(PyObject* self, PyObject* args, PyObject* kwargs), internal linkage ("L")
BINDING = re.compile(rb"^_ZN5torch8autogradL\d+THPVariable_(\w+?)EP7_objectS2_S2_$")


def source_files(root: Path = TORCH_DIR) -> list[Path]:
    """Every Python file, type stub and C++ header shipped inside the torch package."""
    return sorted(p for pattern in ("*.py", "*.pyi", "*.h", "*.hpp", "*.cuh") for p in root.rglob(pattern))


def files_mentioning(needle: str, files: list[Path]) -> list[Path]:
    """The files whose bytes contain `needle`."""
    data = needle.encode()
    return [p for p in files if data in p.read_bytes()]


def python_library(root: Path = TORCH_DIR) -> Path:
    """The shared library that holds the Python side of the boundary (`libtorch_python`)."""
    candidates = sorted((root / "lib").glob("*torch_python*"))
    if not candidates:
        raise FileNotFoundError("no torch_python library under torch/lib")
    return candidates[0]


class Symbol(NamedTuple):
    """One entry of an ELF symbol table."""

    name: bytes
    kind: str  # FUNC, OBJECT, ...
    binding: str  # LOCAL, GLOBAL, WEAK
    size: int


_KINDS = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 10: "IFUNC"}
_BINDINGS = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "UNIQUE"}


def elf_symbols(data: bytes) -> dict[str, list[Symbol]]:
    """Read the symbol tables of a 64-bit little-endian ELF file: `.dynsym` (exported) and `.symtab` (all).

    Returns an empty dict for anything that is not such a file (a macOS or Windows build).
    A table the build stripped away is simply missing from the result.
    """
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return {}
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = sections[shstrndx][4]

    def section_name(header: tuple[int, ...]) -> bytes:
        start = names_at + header[0]
        return data[start : data.index(b"\0", start)]

    tables: dict[str, list[Symbol]] = {}
    for header in sections:
        name = section_name(header).decode()
        if name not in {".symtab", ".dynsym"}:
            continue
        offset, size, link = header[4], header[5], header[6]
        strings_at = sections[link][4]
        symbols = []
        for st_name, st_info, _other, _shndx, _value, st_size in struct.iter_unpack(
            "<IBBHQQ", data[offset : offset + size]
        ):
            start = strings_at + st_name
            symbols.append(
                Symbol(
                    data[start : data.index(b"\0", start)],
                    _KINDS.get(st_info & 0xF, str(st_info & 0xF)),
                    _BINDINGS.get(st_info >> 4, str(st_info >> 4)),
                    st_size,
                )
            )
        tables[name] = symbols
    return tables


def signature_strings(data: bytes, op: str) -> list[str]:
    """The argument-parser signatures for `op` stored as C strings in the library.

    For example `randn(SymIntArrayRef size, *, ...)`: each is a NUL-terminated string.
    """
    pattern = re.compile(rb"\0(" + re.escape(op.encode()) + rb"\([^\0\n]*\))\0")
    return sorted({m.group(1).decode() for m in pattern.finditer(data)})


def main() -> None:
    try:
        inspect.getsource(torch.randn)
        source_note = "inspect.getsource found Python source (unexpected)"
    except TypeError as error:
        source_note = f"inspect.getsource raises TypeError: {error}"
    print(textwrap.fill(f"torch.randn is {type(torch.randn).__name__}; {source_note}", width=88))
    print()

    files = source_files()
    py = sum(p.suffix in {".py", ".pyi"} for p in files)
    hits = files_mentioning(NAME, files)
    print(f"Search 1: the {py:,} Python files and type stubs and {len(files) - py:,} C++ headers inside torch/")
    print(f"  files containing {NAME!r}: {len(hits)}")
    for path in hits:
        print(f"    {path.relative_to(TORCH_DIR)}")

    lib = python_library()
    data = lib.read_bytes()
    print()
    print(f"Search 2: torch/{lib.relative_to(TORCH_DIR)} ({human_bytes(len(data))} of machine code and data)")
    tables = elf_symbols(data)
    exported, found, bindings, bindings_local = [], [], [], 0
    if ".dynsym" in tables:
        exported = [s for s in tables[".dynsym"] if NAME.encode() in s.name]
        print(f"  exported symbol table (.dynsym): {len(tables['.dynsym']):,} symbols, {len(exported)} named {NAME}")
    if ".symtab" in tables:
        symtab = tables[".symtab"]
        found = [s for s in symtab if (m := BINDING.match(s.name)) and m.group(1) == b"randn" and s.kind == "FUNC"]
        bindings = [s for s in symtab if BINDING.match(s.name) and s.kind == "FUNC"]
        print(f"  full symbol table (.symtab): {len(symtab):,} symbols, kept because this build is not stripped")
        for s in found:
            print(f"    {s.name.decode()}")
            print(f"    = torch::autograd::{NAME}(PyObject* self, PyObject* args, PyObject* kwargs)")
            print(f"      {s.kind}, {s.binding} (static: never exported), {s.size:,} bytes of machine code")
        bindings_local = sum(s.binding == "LOCAL" for s in bindings)
        print(f"  functions named torch::autograd::THPVariable_<name>(self, args, kwargs): {len(bindings):,}")
        print(f"    of which LOCAL (static): {bindings_local:,}")
    elif tables:
        print("  this build's library is stripped: no full symbol table")
        print(f"  occurrences of {NAME!r} anywhere in its bytes: {data.count(NAME.encode())}")
    else:
        print("  not an ELF file (macOS or Windows build): symbol tables not read")
        print(f"  occurrences of {NAME!r} anywhere in its bytes: {data.count(NAME.encode())}")
    signatures = signature_strings(data, "randn")
    print(f"  the parser's signature strings for randn stored in the library: {len(signatures)}")
    for signature in signatures:
        print(textwrap.fill(signature, width=88, initial_indent="    ", subsequent_indent="        "))
    claim(f"no Python file or header shipped in torch/ mentions {NAME}", held=hits == [], detail=f"{len(hits)} files")
    claim(
        "the library holds randn's signature strings for the parser",
        held=bool(signatures) and all(s.startswith("randn(") and "size" in s for s in signatures),
        detail=f"{len(signatures)} strings",
    )
    not_elf = "the library is not an ELF file (a macOS or Windows build): its symbol tables were not read"
    claim(
        f"the binding is never exported ({NAME} is not in .dynsym)",
        held=".dynsym" in tables and not exported,
        applies=".dynsym" in tables,
        why_not=not_elf if not tables else "the library has no .dynsym table",
    )
    symbols = ".symtab" in tables
    claim(
        "every THPVariable_ binding is a local (static) function, over a thousand of them",
        held=symbols and len(bindings) > 1000 and bindings_local == len(bindings) and bool(found),
        detail=f"{bindings_local:,} of {len(bindings):,} local" if symbols else "",
        applies=symbols,
        why_not=not_elf if not tables else "this build's library is stripped: it has no full symbol table",
    )


if __name__ == "__main__":
    main()
