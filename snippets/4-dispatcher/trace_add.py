"""One call, `a + b`, traced through every layer, with what the running torch reports at each step."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

import torch

from pytorch_floors.claims import claim
from pytorch_floors.plot import chart_figure, show

SOURCE = "https://github.com/pytorch/pytorch/blob"
# Where a kernel was registered, as the dispatcher records it: "<path>:<line>" inside a build tree.
REGISTERED = re.compile(r"registered at (?P<path>\S+):(?P<line>\d+)")


@dataclass(frozen=True)
class Step:
    """One layer the call passes through: its name, what this torch reports, where it lives."""

    layer: str
    seen: str
    where: str


def dispatch_table(op: str = "aten::add.Tensor") -> dict[str, str]:
    """The operator's kernel per dispatch key, as `key -> registration` (path and line) or `fallthrough`."""
    table = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, entry = line.partition(":")
        found = REGISTERED.search(entry)
        if not found:
            continue
        path = found["path"]
        for root in ("/pytorch/", "/site-packages/"):  # drop the build machine's directories
            path = path.rsplit(root, 1)[-1]
        kind = "fallthrough" if "fallthrough" in entry else "kernel"
        table[key.strip()] = f"{kind} {path}:{found['line']}"
    return table


def source_link(path: str, line: str | None = None) -> str:
    """A link to `path` in the PyTorch source this torch was built from (its git commit)."""
    anchor = f"#L{line}" if line else ""
    return f"{SOURCE}/{torch.version.git_version}/{path}{anchor}"


def registration_source(entry: str) -> str | None:
    """A link to a registration inside the repository; None for one generated while torch was built."""
    location = entry.split(" ", 1)[1]
    path, _, line = location.rpartition(":")
    if path.startswith(("build/", "torch/csrc/autograd/generated/")):
        return None
    return source_link(path, line)


def key_names(keys: torch._C.DispatchKeySet) -> list[str]:
    """The names in a key set, lowest priority first (the order torch prints them)."""
    inside = str(keys).removeprefix("DispatchKeySet(").removesuffix(")")
    return [name for name in inside.split(", ") if name]


def call_keys(*tensors: torch.Tensor) -> list[str]:
    """The keys the dispatcher considers for a call on `tensors` here and now, highest priority first.

    The tensors' keys ORed together, plus this thread's included keys, minus its excluded keys
    (the computation of `DispatchKeyExtractor`), then read off from the highest priority down.
    """
    keys = torch._C._dispatch_keys(tensors[0])
    for tensor in tensors[1:]:
        keys = keys | torch._C._dispatch_keys(tensor)
    keys = (keys | torch._C._dispatch_tls_local_include_set()) - torch._C._dispatch_tls_local_exclude_set()
    order = []
    while True:
        key = keys.highestPriorityTypeId()
        name = torch._C._dispatch_key_name(key)
        if name == "Undefined":
            return order
        order.append(name)
        keys = keys.remove(key)


def thread_sets() -> tuple[list[str], list[str]]:
    """The names in this thread's included and excluded key sets."""
    return (
        key_names(torch._C._dispatch_tls_local_include_set()),
        key_names(torch._C._dispatch_tls_local_exclude_set()),
    )


def trace() -> list[Step]:
    """Run `a + b` with `a` requiring grad and collect, layer by layer, what can be observed of it."""
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(2, 1, dtype=torch.float64)
    c = a + b
    table = dispatch_table()
    # DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU): printed lowest priority first
    order = key_names(torch._C._dispatch_keys(a) | torch._C._dispatch_keys(b))
    skip = {"kernel": "kernel", "fallthrough": "skip"}
    visited = [f"{key} {skip[table[key].split()[0]]}" for key in call_keys(a, b) if key in table]
    method = torch.Tensor.__add__
    promoted = f"{tuple(c.shape)} {str(c.dtype).removeprefix('torch.')}"
    same_keys = torch._C._dispatch_keys(torch.ones(3, dtype=torch.int64)) == torch._C._dispatch_keys(torch.ones(3))
    return [
        Step(
            "1. binding",
            f"Tensor.__add__ is a {type(method).__name__} of {method.__objclass__.__name__}",
            "tools/autograd/templates/python_variable_methods.cpp",
        ),
        Step("2. key set", f"a's and b's keys: {', '.join(order)}", "c10/core/DispatchKeySet.h"),
        Step("3. dispatch table", " > ".join(visited), "aten/src/ATen/core/dispatch/Dispatcher.h"),
        Step(
            "4. autograd kernel",
            f"c.grad_fn = {type(c.grad_fn).__name__}, saved: "
            f"{[n for n in dir(c.grad_fn) if n.startswith('_saved_')] or 'nothing'}",
            "tools/autograd/gen_variable_type.py",
        ),
        Step(
            "5. redispatch",
            "below autograd, ADInplaceOrView and BackendSelect fall through to CPU",
            "aten/src/ATen/core/VariableFallbackKernel.cpp",
        ),
        Step(
            "6. TensorIterator",
            f"{tuple(a.shape)} float32 + {tuple(b.shape)} float64 -> {promoted}",
            "aten/src/ATen/TensorIterator.cpp",
        ),
        Step(
            "7. dtype switch",
            f"int64 and float32 tensors: same keys ({same_keys}); the dtype is chosen inside",
            "aten/src/ATen/Dispatch.h",
        ),
        Step(
            "8. vectorized loop",
            f"CPU capability {torch.backends.cpu.get_cpu_capability()}; at its first call add takes the widest"
            " build it has up to that (floor 6)",
            "aten/src/ATen/native/cpu/Loops.h",
        ),
    ]


def draw(steps: list[Step]) -> str:
    """The call path as a list of its layers, top to bottom, each with what the running torch reported for it.

    Words more than a drawing, so HTML: it wraps on any screen. A file's path may break after a "/".
    """
    items = []
    for index, step in enumerate(steps):
        where = "/<wbr>".join(escape(part) for part in step.where.split("/"))
        items.append(
            f'<li class="floors-path__step floors-path__step--{index % 6}">'
            f'<strong class="floors-path__layer">{escape(step.layer)}</strong>'
            f'<span class="floors-path__seen">{escape(step.seen)}</span>'
            f'<code class="floors-path__where">{where}</code></li>'
        )
    return chart_figure(
        f'<ol class="floors-path">{"".join(items)}</ol>',
        title="a + b, from Python to the vector loop (reported by this torch)",
        kind="path",
    )


def main() -> None:
    steps = trace()
    lines = [
        f"torch {torch.__version__}; paths below are in the PyTorch source at the commit it was built from:",
        f"{SOURCE}/{torch.version.git_version}/",
        "",
    ]
    # Printed for a phone's 46 columns: each layer's name on a line, what this torch reports and the file under it.
    for step in steps:
        lines.append(step.layer)
        lines.append(f"   {step.seen}")
        lines.append(f"   {step.where}")
        if step.layer == "2. key set":
            included, excluded = thread_sets()
            tensor_keys = step.seen.split(": ", 1)[1].split(", ")
            dropped = [key for key in tensor_keys if key in excluded]
            lines.append(f"   the thread adds {', '.join(included)}; of the tensors' keys it excludes")
            lines.append(f"   {', '.join(dropped) or 'none'} (its default excluded set)")
    lines.append("")
    lines.append("where the dispatcher says each kernel of aten::add.Tensor was registered:")
    visited_keys = [entry.split()[0] for entry in steps[2].seen.split(" > ")]
    for key, entry in dispatch_table().items():
        if key in {"CPU", "AutogradCPU", "ADInplaceOrView", "BackendSelect", "AutocastCPU", "Meta"}:
            note = " (generated at build time: in no repository)" if registration_source(entry) is None else ""
            if key not in visited_keys and key != "Meta":
                note += " (not visited by this call: the thread excludes the key)"
            # Each key on a line, where its kernel was registered under it.
            lines.append(f"   {key}")
            lines.append(f"     {entry}{note}")
    show(draw(steps), text="\n".join(lines), name="trace_add")
    table = dispatch_table()
    visited = steps[2].seen.split(" > ")
    tensor_keys = steps[1].seen.split(": ", 1)[1].split(", ")
    _, excluded = thread_sets()
    claim(
        "the autograd kernel runs first and the backend kernel last",
        held=visited.index("AutogradCPU kernel") == 0 and visited.index("CPU kernel") == len(visited) - 1,
    )
    claim(
        "AutocastCPU is on the tensors, but the thread's default excluded set holds it, so the call skips it",
        held="AutocastCPU" in tensor_keys and "AutocastCPU" in excluded and not any("Autocast" in v for v in visited),
        detail=" > ".join(visited),
    )
    claim(
        "between autograd and the CPU kernel, ADInplaceOrView and BackendSelect are fallthroughs",
        held=visited == ["AutogradCPU kernel", "ADInplaceOrView skip", "BackendSelect skip", "CPU kernel"],
    )
    claim("autograd records AddBackward0", held="AddBackward0" in steps[3].seen)
    claim("TensorIterator broadcasts and promotes to (2, 3) float64", held="(2, 3) float64" in steps[5].seen)
    claim("the dtype is chosen inside the kernel, not by a dispatch key", held="same keys (True)" in steps[6].seen)
    claim(
        "out-of-place add falls through ADInplaceOrView",
        held=table["ADInplaceOrView"].startswith("fallthrough ") and table["CPU"].startswith("kernel "),
    )


if __name__ == "__main__":
    main()
