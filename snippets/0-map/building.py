"""The building: every floor of the registry, from your program down to the chip, each with one number read here."""

from __future__ import annotations

import os
import re
from html import escape
from pathlib import Path
from typing import NamedTuple

import torch

from pytorch_floors.claims import claim
from pytorch_floors.floors import FLOORS, Floor
from pytorch_floors.measure import CAPABILITIES, dispatch_stub_slots, human_bytes, tensor_bytes, torch_cpu_library


class Reading(NamedTuple):
    """One storey's number and what it counts."""

    value: str
    what: str


def program() -> tuple[torch.Tensor, torch.Tensor]:
    """The one-page program's batch and loss (forward pass), seeded and ordered as the program on this page."""
    torch.manual_seed(0)
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))
    model = torch.nn.Linear(784, 10)
    return x, torch.nn.functional.cross_entropy(model(x), y)


def graph_size(loss: torch.Tensor) -> int:
    """How many nodes autograd recorded behind `loss` (every node reachable from its grad_fn)."""
    seen: dict[int, object] = {}  # the nodes held, not only their ids, which a freed node's object would free
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen[id(node)] = node
            stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def compiled_bytes() -> int:
    """Bytes of the compiled libraries in torch/lib (the real code behind the Python package)."""
    lib = Path(torch.__file__).parent / "lib"
    suffixes = (".so", ".dylib", ".dll")
    return sum(
        p.stat().st_size
        for p in lib.iterdir()
        if p.is_file() and not p.is_symlink() and any(s in p.name for s in suffixes)
    )


def readings() -> dict[str, Reading]:
    """Each floor's number, by the floor's slug: facts of this torch and this machine, not timings.

    A floor added to the registry needs its reading here: until it has one, its storey says so and the
    claim that every storey shows a reading does not hold (a strict build fails, naming the floor).
    """
    x, loss = program()
    bindings = [name for name in dir(torch._C._VariableFunctions) if not name.startswith("__")]
    operators = [name for name in torch._C._dispatch_get_all_op_names() if name.startswith("aten::")]
    return {
        "program": Reading(f"{loss.item():.4f}", "the loss of your five lines"),
        "python": Reading(human_bytes(compiled_bytes()), "of compiled code behind import torch"),
        "boundary": Reading(f"{len(bindings):,}", "bindings in torch._C._VariableFunctions"),
        "dispatcher": Reading(f"{len(operators):,}", "aten operators in the dispatcher"),
        "autograd": Reading(f"{graph_size(loss)}", "graph nodes behind the loss"),
        "kernels": capability_reading(),
        "memory": Reading(human_bytes(tensor_bytes(x)), f"behind the batch x, strides {tuple(x.stride())}"),
        "chip": Reading(f"{torch.get_num_threads()}", f"threads per op, {os.cpu_count()} logical cores"),
    }


def capability_reading() -> Reading:
    """The CPU capability torch chose, said as the ceiling it is, with how many kernels reach it.

    The capability (`AVX512`) is the widest build a kernel may use, not the one every kernel has: a
    stub registered with `REGISTER_DISPATCH` leaves its AVX512 slot empty and runs its AVX2 code. Where
    torch's CPU library can be read (x86-64 Linux), the slots are counted from its symbol table.
    """
    capability = torch.backends.cpu.get_cpu_capability()
    library = torch_cpu_library()
    if library is None or capability not in CAPABILITIES:
        return Reading(capability, "the CPU capability torch chose: the widest build its kernels may use")
    try:
        slots = dispatch_stub_slots(library).values()
    except ValueError:  # not an ELF file: no slots to count
        return Reading(capability, "the CPU capability torch chose: the widest build its kernels may use")
    kernels = [filled for filled in slots if any(filled.values())]
    built = sum(filled.get(capability, False) for filled in kernels)
    # Short: on a phone a storey that wraps to three lines pushed the building's middle off the first screen.
    what = f"the CPU capability, a ceiling: {built} of {len(kernels)} kernels have it"
    if capability == "AVX512":
        fallback = sum(filled.get("AVX2", False) and not filled.get("AVX512", False) for filled in kernels)
        what += f", {fallback} run AVX2"
    return Reading(capability, what)


def href(floor: Floor) -> str:
    """The floor page's address relative to Part 0 (MkDocs' directory URLs: `floors/3-boundary/`)."""
    return floor.page.removesuffix(".md") + "/"


def storey(floor: Floor, reading: Reading) -> str:
    """One floor of the drawing: a link to its page showing its number, title and reading."""
    return (
        f'<li class="floors-building__storey" style="--floors-depth: {floor.number}">'
        f'<a class="floors-building__link" href="{escape(href(floor))}">'
        f'<span class="floors-building__number">Floor {floor.number}</span>'
        f'<span class="floors-building__title">{escape(floor.title)}</span>'
        '<span class="floors-building__reading">'
        f'<strong class="floors-building__value">{escape(reading.value)}</strong> {escape(reading.what)}'
        "</span></a></li>"
    )


NO_READING = Reading("", "no reading yet")
"""What a storey shows for a floor that `readings` does not know."""


def drawing(found: dict[str, Reading]) -> str:
    """The building as HTML: the surface on top, the floors below it in registry order, the chip at the bottom."""
    storeys = "".join(storey(floor, found.get(floor.slug, NO_READING)) for floor in FLOORS)
    return (
        '<figure class="floors-building" id="the-building">'
        '<p class="floors-building__ground">Surface: the line you type</p>'
        f'<ol class="floors-building__storeys">{storeys}</ol>'
        '<p class="floors-building__ground floors-building__ground--bottom">Bedrock: the silicon</p>'
        "<figcaption>Each floor links to its page. Its number was read from this torch on this machine "
        "when the page was built.</figcaption></figure>"
    )


def main() -> None:
    found = readings()
    html = drawing(found)
    if os.environ.get("FLOORS_OUTPUT") == "html":
        print(html)
    else:
        print("the surface: the line you type")
        for floor in FLOORS:
            reading = found.get(floor.slug, NO_READING)
            print(f"  floor {floor.number} {floor.title:<28} {reading.value} {reading.what}")
        print("the bedrock: the silicon")
    claim(
        "one storey per floor of the registry, top to bottom, each linking to its page",
        held=html.count("<li ") == len(FLOORS) and re.findall(r'href="([^"]*)"', html) == [href(f) for f in FLOORS],
        detail=f"{html.count('<li ')} storeys, {html.count('<a ')} links, {len(FLOORS)} floors",
    )
    problems = [
        f"no reading for floor {f.number} ({f.slug})" for f in FLOORS if not found.get(f.slug, NO_READING).value.strip()
    ]
    problems += [f"a reading for no floor: {slug}" for slug in sorted(set(found) - {f.slug for f in FLOORS})]
    claim("every storey shows a reading taken on this machine", held=not problems, detail="; ".join(problems))


if __name__ == "__main__":
    main()
