"""What changed inside PyTorch: one proof's facts as each torch measured them, joined by torch version.

The page `inside-torch.md` runs one proof (`snippets/inside-torch/facts.py`) that prints one fact a line,
`name: value`. This build's run gives its torch's column; each recording of the same proof (a torch
tier's, `recordings/<tier>/recording.json`) whose digest is this build's block's gives another torch's.
The columns are ordered by release, each row is one fact across them, and a difference between two
releases side by side is said in a sentence made from the values; a release whose recording holds no
current run of the proof is named as not recorded, never filled in.

A recording is another machine's word: its output was checked when it was read (`recordings.schema`),
and here each value is checked against its fact's kind before anything is rendered. The values reach
the page only through the template `inside_torch.html`, escaped, never as Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Literal

from packaging.version import InvalidVersion, Version

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.i18n.messages import t
from pytorch_floors.recordings.compare import tiers_for
from pytorch_floors.recordings.schema import FILE_NAME, Recording
from pytorch_floors.render.templates import render

__all__ = [
    "BLOCK_ID",
    "FACTS",
    "MARKER",
    "PAGE",
    "PROOF",
    "TITLE",
    "Column",
    "Difference",
    "Fact",
    "Row",
    "TorchFactsError",
    "fact_rows",
    "inside_torch_html",
    "parse_facts",
    "release",
    "torch_columns",
]

PAGE = "inside-torch.md"
"""The page that runs the facts' proof, relative to `docs/`."""

TITLE = "What changed inside PyTorch"
"""Its title, as the navigation gives it (the catalog has its Chinese)."""

BLOCK_ID = "torch-facts"
"""The id of its block: what a recording of the proof is found by."""

PROOF = "snippets/inside-torch/facts.py"
"""The proof the block runs, relative to the project."""

MARKER = "inside-torch"
"""The name of the page's marker (`<!-- floors:inside-torch -->`) where the table goes."""

Kind = Literal["text", "count", "bytes", "seconds", "list"]


@dataclass(frozen=True)
class Fact:
    """One line the proof prints.

    Attributes:
        name: Its name, as printed (`operators.overloads`).
        label: What it is, in English words (the catalog has its Chinese).
        kind: How its value is read, shown and compared: `count` (a whole number), `bytes`, `seconds`
            (timed, so shown but never compared: each column ran under its own load), `text` or `list`
            (comma-separated items).
        compared: Whether a difference between two releases is said in a sentence: not for the
            version itself, which names the column, nor for a timing.
    """

    name: str
    label: str
    kind: Kind
    compared: bool = True


FACTS: tuple[Fact, ...] = (
    Fact("torch.version", "torch.__version__", "text", compared=False),
    Fact("torch.build", "Build", "text"),
    Fact("operators.overloads", "Operator overloads registered", "count"),
    Fact("operators.namespaces", "Operator namespaces", "count"),
    Fact("operators.namespace_names", "The namespaces", "list"),
    Fact("operators.aten_overloads", "aten overloads", "count"),
    Fact("operators.aten_operators", "aten operators (overloads merged)", "count"),
    Fact("operators.aten_with_cpu_kernel", "aten overloads with a CPU kernel", "count"),
    Fact("operators.aten_with_meta_kernel", "aten overloads with a Meta kernel", "count"),
    Fact("dispatch_keys.cpu_tensor", "Dispatch keys of torch.ones(3)", "list"),
    Fact("stubs.count", "Kernel stubs (DispatchStub) in libtorch_cpu.so", "count"),
    Fact("stubs.with_default", "Stubs with a DEFAULT kernel", "count"),
    Fact("stubs.with_avx2", "Stubs with an AVX2 kernel", "count"),
    Fact("stubs.with_avx512", "Stubs with an AVX512 kernel", "count"),
    Fact("stubs.add_stub", "add_stub's kernels", "list"),
    Fact("stubs.sum_stub", "sum_stub's kernels", "list"),
    Fact("stubs.exp_stub", "exp_stub's kernels", "list"),
    Fact("import.seconds", "import torch, seconds (median of 3)", "seconds", compared=False),
    Fact("import.modules", "Modules import torch loads", "count"),
    Fact("import.torch_modules", "of them torch.*", "count"),
    Fact("library.libtorch_cpu.so", "libtorch_cpu.so", "bytes"),
    Fact("library.libtorch_python.so", "libtorch_python.so", "bytes"),
    Fact("library.libc10.so", "libc10.so", "bytes"),
    Fact("library.libtorch_cuda.so", "libtorch_cuda.so", "bytes"),
    Fact("library.torch_package", "The torch package folder", "bytes"),
    Fact("linear.make_fx", "nn.Linear under make_fx", "list"),
    Fact("linear.pre_dispatch", "nn.Linear under make_fx(pre_dispatch=True)", "list"),
    Fact("dynamo.recompile_limit", "torch._dynamo.config.recompile_limit", "text"),
    Fact("dynamo.assume_static_by_default", "torch._dynamo.config.assume_static_by_default", "text"),
    Fact("dynamo.automatic_dynamic_shapes", "torch._dynamo.config.automatic_dynamic_shapes", "text"),
    Fact("dynamo.fail_on_recompile_limit_hit", "torch._dynamo.config.fail_on_recompile_limit_hit", "text"),
    Fact("inductor.cpp.min_chunk_size", "torch._inductor.config.cpp.min_chunk_size", "text"),
    Fact("guards.count", "Guards of the compile page's example", "count"),
    Fact("guards.kinds", "Their kinds", "list"),
)
"""Every fact the proof prints, in the table's order."""

NOT_MEASURED = "not measured ("
"""How a value the proof could not read on its machine starts (`not measured (not an x86-64 Linux build)`)."""
ABSENT = frozenset({"-", "absent"})
"""Values that say the thing is not in that torch (a library a CPU build lacks, a setting a release dropped)."""

MAX_VALUE = 1000
"""Characters a value may hold: the longest list the proof prints (the namespaces, about 300), with room to grow."""

_LINE = re.compile(r"(?P<name>[a-z0-9_.]+): (?P<value>.*)")
_COUNT = re.compile(r"\d{1,12}")
_SECONDS = re.compile(r"\d{1,5}(?:\.\d{1,6})?")
# What the proof prints: versions, words, Python's reprs of numbers and booleans, operator and key names.
# No markup: a value reaches the page escaped, and a value that looks like markup is no run's.
_TEXT = re.compile(r"[\w .:+()'\-,/=]+")
_ITEM = re.compile(r"[\w.:\-]+(?: x\d{1,6})?")


class TorchFactsError(FloorsError):
    """A run of the facts' proof printed what its page cannot show; the message names the file or the build."""


def release(version: str, where: str) -> Version:
    """A torch version's release, without its local build label (`2.14.1+cu128` -> `2.14.1`).

    Raises:
        TorchFactsError: If it is not a version (named with `where`, the run that says it).
    """
    try:
        parsed = Version(version)
    except InvalidVersion:
        raise TorchFactsError(f"{where}: {version[:80]!r} is not a torch version") from None
    return Version(parsed.public)


def _checked(fact: Fact, value: str, where: str) -> str:
    if len(value) > MAX_VALUE:
        raise TorchFactsError(f"{where}: {fact.name}: a value of {len(value)} characters, more than {MAX_VALUE}")
    if value in ABSENT or (value.startswith(NOT_MEASURED) and value.endswith(")") and _TEXT.fullmatch(value)):
        return value
    pattern = {"count": _COUNT, "bytes": _COUNT, "seconds": _SECONDS}.get(fact.kind)
    if pattern is not None:
        ok = pattern.fullmatch(value) is not None
    elif fact.kind == "list":
        ok = all(_ITEM.fullmatch(item) for item in value.split(", "))
    else:
        ok = _TEXT.fullmatch(value) is not None
    if not ok:
        raise TorchFactsError(f"{where}: {fact.name}: {value[:80]!r} is not a {fact.kind} value")
    return value


def parse_facts(output: str, where: str) -> dict[str, str]:
    """The facts one run printed, each value checked against its kind.

    Args:
        output: The block's output, as the page shows it.
        where: What printed it, for a refusal (`recordings/torch-2.15.0/recording.json`, or this build).

    Returns:
        Fact name -> value, for every fact of `FACTS`.

    Raises:
        TorchFactsError: If a line is not `name: value`, names no fact or one twice, a value is not of its
            fact's kind, or a fact is missing.
    """
    known = {fact.name: fact for fact in FACTS}
    found: dict[str, str] = {}
    for number, line in enumerate(output.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line)
        if match is None or match["name"] not in known:
            raise TorchFactsError(f"{where}: line {number} is not one of the facts the page shows: {line[:80]!r}")
        if match["name"] in found:
            raise TorchFactsError(f"{where}: {match['name']} is printed twice")
        found[match["name"]] = _checked(known[match["name"]], match["value"], where)
    missing = [name for name in known if name not in found]
    if missing:
        raise TorchFactsError(f"{where}: the facts lack {', '.join(missing)}")
    return found


@dataclass(frozen=True)
class Column:
    """One torch release's column.

    Attributes:
        version: The release (`2.14.1`).
        source: `None` for this build's run, else the tier whose recording it is.
        recorded: The day it was recorded (a tier's), or `None`.
        values: The facts, or `None` when this release has no current run of the proof.
        stale_tiers: Tiers of this release whose recording is of an earlier version of the proof.
        without_tiers: Tiers of this release whose recording holds no run of the proof at all.
    """

    version: str
    source: str | None
    recorded: str | None
    values: dict[str, str] | None
    stale_tiers: tuple[str, ...] = ()
    without_tiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Difference:
    """A difference between two releases side by side, as a message and its fields (`t` words it)."""

    message: str
    fields: dict[str, str] = field(default_factory=dict)

    def words(self, language: str) -> str:
        """The sentence in a language."""
        return t(self.message, language, **self.fields)


@dataclass(frozen=True)
class Row:
    """One fact across the columns: each column's value (`None`: not recorded) and what differs."""

    fact: Fact
    values: tuple[str | None, ...]
    differences: tuple[Difference, ...]


def torch_columns(own: BlockResult | None, recordings: Sequence[Recording], recordings_dir: Path) -> list[Column]:
    """This build's column and one per other torch release recorded, ordered by release.

    A release this build runs is this build's column; another is the current recording of the tier
    first by name among those of that release. A release whose recordings of the proof are all stale
    is a column without values.

    Args:
        own: This build's result of the facts' block (`None`, or not run: its column has no values).
        recordings: Every tier's recording.
        recordings_dir: The recordings' folder, to name a recording whose values are refused.

    Raises:
        TorchFactsError: If a run printed what the page cannot show (naming the recording's file).
    """
    columns: dict[Version, Column] = {}
    if own is not None and own.provenance is not None:
        own_run = f"this build's run of {PAGE} › {BLOCK_ID}"
        mine = release(own.provenance.torch_version, own_run)
        ran = own.status in {"ran", "cached"}
        columns[mine] = Column(str(mine), None, None, parse_facts(own.output, own_run) if ran else None)
        shown = tiers_for(own, recordings)
        for tier in sorted(shown.current, key=lambda tier: tier.tier):
            where = f"{recordings_dir / tier.tier / FILE_NAME}: {PAGE} › {BLOCK_ID}"
            version = release(tier.block.provenance.torch_version, where)
            if version in columns and columns[version].values is not None:
                continue
            recorded = next(r.recorded for r in recordings if r.tier == tier.tier)
            columns[version] = Column(str(version), tier.tier, recorded, parse_facts(tier.block.output, where))
        # A release no current run measured is named, with the tiers that recorded it otherwise.
        stale = {tier.tier for tier in shown.stale}
        for recording in sorted(recordings, key=lambda recording: recording.tier):
            where = str(recordings_dir / recording.tier / FILE_NAME)
            version = release(recording.machine.torch_version, where)
            column = columns.setdefault(version, Column(str(version), None, None, None))
            if column.values is not None or column.source == recording.tier:
                continue
            if recording.tier in stale:
                columns[version] = replace(column, stale_tiers=(*column.stale_tiers, recording.tier))
            elif recording.block(PAGE, BLOCK_ID) is None:
                columns[version] = replace(column, without_tiers=(*column.without_tiers, recording.tier))
    return [columns[version] for version in sorted(columns)]


def _count(value: str) -> int | None:
    return int(value) if _COUNT.fullmatch(value) else None


def _size(count: int) -> str:
    """A number of bytes in words: MB from a million on, kB from a thousand, else bytes."""
    if count >= 1_000_000:
        return f"{count / 1e6:,.1f} MB"
    return f"{count / 1e3:.1f} kB" if count >= 1000 else f"{count} bytes"


def _difference(fact: Fact, old: str, new: str, before: str, after: str) -> Difference | None:
    """What changed in one fact from release `old` (value `before`) to release `new` (value `after`)."""
    if before == after or not fact.compared:
        return None  # a timing differs on every run: each column was timed under its own load
    versions = {"old": old, "new": new}
    if (before in ABSENT) != (after in ABSENT):  # one release has it (a library, a setting), the other not
        had = before not in ABSENT
        message = "{old} has it ({value}), {new} does not" if had else "{new} has it ({value}), {old} does not"
        return Difference(message, {**versions, "value": _shown(fact, before if had else after, "en")})
    a, b = _count(before), _count(after)
    if fact.kind in {"count", "bytes"} and a is not None and b is not None:
        return _numeric(fact, versions, a, b)
    if fact.kind == "list" and before not in ABSENT:
        return _listed(versions, before.split(", "), after.split(", "))
    return Difference("{before} in {old}, {after} in {new}", {**versions, "before": before, "after": after})


def _numeric(fact: Fact, versions: dict[str, str], a: int, b: int) -> Difference:
    """A count's or a size's change, by how much."""
    if fact.kind == "count":
        message = "{count} more in {new} than in {old}" if b > a else "{count} fewer in {new} than in {old}"
        return Difference(message, {**versions, "count": f"{abs(b - a):,}"})
    message = "{size} larger in {new} than in {old}" if b > a else "{size} smaller in {new} than in {old}"
    return Difference(message, {**versions, "size": _size(abs(b - a))})


def _listed(versions: dict[str, str], first: list[str], second: list[str]) -> Difference:
    """A list's change: what the newer release adds and drops, or the same items reordered."""
    added = [item for item in second if item not in first]
    dropped = [item for item in first if item not in second]
    if not added and not dropped:
        return Difference("the same items in another order in {new} than in {old}", versions)
    if added and dropped:
        message = "{new} adds {added} and drops {dropped}, against {old}"
    elif added:
        message = "{new} adds {added}, against {old}"
    else:
        message = "{new} drops {dropped}, against {old}"
    return Difference(message, {**versions, "added": ", ".join(added), "dropped": ", ".join(dropped)})


def fact_rows(columns: Sequence[Column]) -> list[Row]:
    """Every fact across the columns, with a difference for each pair of recorded releases side by side."""
    rows = []
    for fact in FACTS:
        values = tuple(None if column.values is None else column.values[fact.name] for column in columns)
        recorded = [(column.version, value) for column, value in zip(columns, values, strict=True) if value is not None]
        differences = []
        for (old, before), (new, after) in pairwise(recorded):
            difference = _difference(fact, old, new, before, after)
            if difference is not None:
                differences.append(difference)
        rows.append(Row(fact, values, tuple(differences)))
    return rows


def _shown(fact: Fact, value: str | None, language: str) -> str:
    """A cell's words: a count with its thousands, a size in MB, or the value as printed."""
    if value is None:
        return t("not recorded", language)
    count = _count(value)
    if fact.kind == "count" and count is not None:
        return f"{count:,}"
    if fact.kind == "bytes" and count is not None:
        return _size(count)
    return value


def inside_torch_html(
    records: Sequence[BlockResult], recordings: Sequence[Recording], recordings_dir: Path, language: str
) -> str:
    """The page's table of facts by torch release, and the differences, in the page's language.

    Args:
        records: This build's results (the facts' block among them, once the page has run it).
        recordings: Every tier's recording.
        recordings_dir: The recordings' folder, to name a recording whose values are refused.
        language: The page's language (`en`, `zh`).

    Returns:
        HTML (`render/templates/inside_torch.html`).

    Raises:
        TorchFactsError: If a run printed what the page cannot show.
    """
    own = next((r for r in records if (r.page, r.block_id) == (PAGE, BLOCK_ID)), None)
    columns = torch_columns(own, recordings, recordings_dir)
    rows = fact_rows(columns)
    builds = sorted({value for row in rows if row.fact.name == "torch.build" for value in row.values if value})
    return render(
        "inside_torch.html",
        language,
        columns=columns,
        recorded=[column for column in columns if column.values is not None],
        rows=[
            {
                "name": row.fact.name,
                "label": t(row.fact.label, language),
                "cells": [_shown(row.fact, value, language) for value in row.values],
                "differences": [difference.words(language) for difference in row.differences],
            }
            for row in rows
        ],
        changed=sum(1 for row in rows if row.differences),
        builds=builds if len(builds) > 1 else [],
    )
