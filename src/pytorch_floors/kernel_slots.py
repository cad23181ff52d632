"""Which CPU capabilities each of torch's kernel stubs was built for, read from `libtorch_cpu.so` without running it.

ATen declares each CPU kernel family as a `DispatchStub` (`aten/src/ATen/native/DispatchStub.h`) with one
exported pointer per capability (`DispatchStub<..., add_stub_DECLARE_DISPATCH_type>::AVX512`). A slot the
build registered a kernel for starts as that kernel's address, so the linker puts it in a data section; a
slot left empty is a zero and goes to `.bss`, a section with no bytes in the file. `REGISTER_DISPATCH`
leaves the AVX512 slot empty on purpose, and at run time `choose_cpu_impl` falls back to the AVX2
kernel. Reading the ELF dynamic symbol table tells the two apart for every stub at once.

A helper proofs import (standard library only), so a proof's download carries it.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

__all__ = ["CAPABILITIES", "all_stub_slots", "stub_name"]

CAPABILITIES = ("DEFAULT", "AVX2", "AVX512")
"""The x86-64 capabilities a stub has a slot for, lowest first (`DispatchStub.h`'s `CPUCapability`)."""

SHT_DYNSYM, SHT_NOBITS = 11, 8
"""The ELF section types of the dynamic symbol table and of a section without bytes in the file (`.bss`)."""

_SUFFIX = b"_DECLARE_DISPATCH_type"


def stub_name(mangled: bytes) -> str | None:
    """The stub a mangled `DispatchStub` symbol belongs to (`add_stub`), or `None` for another symbol.

    The Itanium ABI writes each name after its length (`30exp_stub_DECLARE_DISPATCH_type`), so the name is
    the one whose length stands just before it: `frexp_stub` and `exp_stub` end with the same characters,
    and a name may start with a digit-like run (`50_segment_reduce_lengths_stub`) that is not its length.
    """
    end = mangled.find(_SUFFIX)
    if end < 0:
        return None
    end += len(_SUFFIX)
    start = end - len(_SUFFIX)
    while start > 0 and (mangled[start - 1 : start].isalnum() or mangled[start - 1 : start] == b"_"):
        start -= 1
        length = str(end - start).encode()
        if mangled[start - len(length) : start] == length:
            return mangled[start : end - len(_SUFFIX)].decode("ascii")
    return None


def all_stub_slots(library: Path) -> list[tuple[str, dict[str, bool]]]:
    """Every `DispatchStub` of an x86-64 ELF library: its name, and per capability whether its slot holds a kernel.

    Args:
        library: The library (`torch/lib/libtorch_cpu.so`).

    Returns:
        `(stub name, capability -> filled)` per stub, sorted by name; a capability the library has no
        symbol for is absent. Two stubs may share a name in different namespaces (`copy_stub` and
        `cpublas::copy_stub`): each is listed.

    Raises:
        ValueError: If the file is not a little-endian 64-bit ELF file with a dynamic symbol table.
    """
    # Keyed by the symbol without its member: one entry per stub, whatever its namespace.
    found: dict[bytes, tuple[str, dict[str, bool]]] = {}
    endings = {f"{len(capability)}{capability}E".encode(): capability for capability in CAPABILITIES}
    with library.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as elf:
        if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
            raise ValueError(f"{library.name} is not a little-endian 64-bit ELF file")
        (section_offset,) = struct.unpack_from("<Q", elf, 0x28)
        entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", elf, section_offset + i * entry_size) for i in range(count)]
        nobits = {i for i, section in enumerate(sections) if section[1] == SHT_NOBITS}
        symbols = next((section for section in sections if section[1] == SHT_DYNSYM), None)
        if symbols is None:
            raise ValueError(f"{library.name} has no dynamic symbol table")
        strings = sections[symbols[6]]
        for start in range(symbols[4], symbols[4] + symbols[5], symbols[9]):
            name_at, _, _, index, _, _ = struct.unpack_from("<IBBHQQ", elf, start)
            begin = strings[4] + name_at
            name = elf[begin : elf.find(b"\0", begin)]
            if b"DispatchStub" not in name:
                continue
            ending = next((ending for ending in endings if name.endswith(ending)), None)
            stub = stub_name(name) if ending else None
            if stub is not None and ending is not None:
                entry = found.setdefault(name[: -len(ending)], (stub, {}))
                entry[1][endings[ending]] = index not in nobits
    return sorted(found.values(), key=lambda entry: entry[0])
