"""Bisecting the backends: each rung of eager, aot_eager, decompositions and inductor against eager mode's result."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import torch
import torch._dynamo
import torch._inductor
import torch._inductor.config
import torch.fx
from torch._dynamo.backends.debugging import aot_eager, boxed_nop
from torch._dynamo.utils import counters
from torch._inductor.decomposition import select_decomp_table
from torch._inductor.utils import run_and_get_code
from torch.fx.experimental.proxy_tensor import make_fx

from pytorch_floors.claims import claim, not_applicable
from pytorch_floors.compiling import cpp_compiler, fresh_inductor_cache

RUNGS = {
    "eager": "Dynamo's graph, run by eager PyTorch, operator by operator",
    "aot_eager": "+ AOTAutograd: aten operators, functionalised (no in-place ops), run eagerly",
    "aot_eager_decomp_partition": "+ the decompositions Inductor lowers from, still run eagerly",
    "inductor": "+ Inductor: lowering, fusion and generated C++",
}
"""Each backend of the ladder, by the name `torch.compile` knows it, and what it adds to the rung before."""

INDUCTOR = "Inductor's generated code agrees with eager mode to float32 tolerance"

RTOL, ATOL = 1.3e-6, 1e-5
"""float32 tolerance: `torch.testing.assert_close`'s defaults for float32."""


def chain(x: torch.Tensor) -> torch.Tensor:
    """Pointwise operations, one of them in place, and a sum over each row."""
    y = torch.sin(x)
    y.mul_(2)
    return (y + x.exp()).relu().sum(-1)


def normed(x: torch.Tensor) -> torch.Tensor:
    """A layer norm, which Inductor's decompositions rewrite into smaller operators, then a sigmoid and a row sum."""
    return torch.nn.functional.layer_norm(x, x.shape[-1:]).sigmoid().sum(-1)


FUNCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"chain": chain, "normed": normed}


def difference(out: torch.Tensor, expected: torch.Tensor) -> float:
    """The largest absolute difference between two results."""
    return float((out - expected).abs().max())


def agrees(out: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether two results agree to float32 tolerance (`RTOL`, `ATOL`)."""
    return torch.allclose(out, expected, rtol=RTOL, atol=ATOL)


def calls(gm: torch.fx.GraphModule) -> list[str]:
    """The names of the operators and methods a graph calls, without the `getitem`s that unpack results."""
    called = [node.target for node in gm.graph.nodes if node.op in ("call_function", "call_method")]
    names = [getattr(target, "__name__", str(target)) for target in called]
    return [name.split(".")[0] for name in names if name != "getitem"]


class Keeper:
    """A backend compiler that keeps the graph it is handed and runs it unchanged."""

    def __init__(self) -> None:
        self.graph: torch.fx.GraphModule | None = None

    def dynamo(self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., object]:
        """As the `eager` backend: keep Dynamo's graph and run its `forward`."""
        self.graph = gm
        return gm.forward

    def aot(self, gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., object]:
        """As `aot_eager`'s forward compiler: keep AOTAutograd's graph and run it boxed."""
        self.graph = gm
        return boxed_nop(gm, example_inputs)


def graphs(x: torch.Tensor) -> dict[str, list[str]]:
    """The operators `chain` is made of for Dynamo, for AOTAutograd, and `normed` before and after decompositions."""
    found = {}
    for name, make in (
        ("Dynamo", lambda keeper: keeper.dynamo),
        ("AOTAutograd", lambda keeper: partial(aot_eager, fw_compiler=keeper.aot)),
    ):
        torch._dynamo.reset()
        keeper = Keeper()
        torch.compile(chain, backend=make(keeper))(x)
        assert keeper.graph is not None
        found[f"chain, {name}'s graph"] = calls(keeper.graph)
    torch._dynamo.reset()
    found["normed, in aten operators"] = calls(make_fx(normed)(x))
    found["normed, decomposed"] = calls(make_fx(normed, decomposition_table=select_decomp_table())(x))
    return found


def kernels(module: str) -> int:
    """How many C++ kernels a module Inductor generated defines."""
    return len(re.findall(r"^\w+ = async_compile\.cpp_pybinding\(", module, re.M))


def ladder(x: torch.Tensor, inductor: bool) -> tuple[dict[str, dict[str, float]], dict[str, bool], dict[str, int]]:
    """Each function compiled by each rung: the largest difference from eager mode, and whether it is within tolerance.

    Returns:
        Differences by rung and function; whether each rung's results agreed with eager mode's to float32 tolerance
        (`agrees`); the C++ kernels Inductor generated for each function (when `inductor`).
    """
    expected = {name: fn(x) for name, fn in FUNCTIONS.items()}
    differences: dict[str, dict[str, float]] = {}
    close = dict.fromkeys(RUNGS, True)
    generated = {}
    for rung in RUNGS:
        if rung == "inductor" and not inductor:
            continue
        differences[rung] = {}
        for name, fn in FUNCTIONS.items():
            torch._dynamo.reset()
            compiled = torch.compile(fn, backend=rung)
            if rung == "inductor":
                with fresh_inductor_cache():
                    out, modules = run_and_get_code(compiled, x)
                generated[name] = sum(kernels(module) for module in modules)
            else:
                out = compiled(x)
            differences[rung][name] = difference(out, expected[name])
            close[rung] = close[rung] and agrees(out, expected[name])
    torch._dynamo.reset()
    return differences, close, generated


def reduce_overhead() -> None:
    """What `mode="reduce-overhead"` changes, and, with a CUDA device, a run of it against eager mode."""
    options = torch._inductor.list_mode_options("reduce-overhead")
    print(f'\nmode="reduce-overhead" sets {options}')
    claim(
        "reduce-overhead changes one thing: it turns on Inductor's CUDA graphs",
        held=options == {"triton.cudagraphs": True},
        detail=str(options),
    )
    statement = "reduce-overhead replays a CUDA graph, with the results eager mode gives"
    if not torch.cuda.is_available():
        not_applicable(statement, why="no CUDA device")
        return
    x = torch.linspace(-3, 3, 1 << 16, device="cuda").reshape(256, -1)
    torch._dynamo.reset()
    compiled = torch.compile(chain, mode="reduce-overhead")
    before = counters["inductor"]["cudagraph_skips"]  # Inductor counts each graph it could not record
    with fresh_inductor_cache():
        outs = [compiled(x).clone() for _ in range(3)]  # a warm-up, a recording, a replay
    torch._dynamo.reset()
    skipped = counters["inductor"]["cudagraph_skips"] - before
    worst = max(difference(out, chain(x)) for out in outs)
    print(f"on a CUDA device: largest difference from eager mode {worst:.1e}, CUDA graph skips {skipped}")
    claim(
        statement,
        held=skipped == 0 and all(agrees(out, chain(x)) for out in outs),
        detail=f"{worst:.1e}, {skipped} skips",
    )


def main() -> None:
    torch._dynamo.reset()
    torch.manual_seed(0)
    x = torch.randn(128, 128)
    compiler = cpp_compiler()
    torch._inductor.config.compile_threads = 1  # compile in this process: no pool of compiler workers
    print("the rungs, each adding to the one before:")
    for rung, adds in RUNGS.items():
        # Printed for a phone's 46 columns: what each rung adds, and each graph's operators, under its name.
        print(f"  {rung}")
        print(f"    {adds}")
    print("\nwhat the graphs are made of (normed traced by make_fx, without and with Inductor's decomposition table):")
    found = graphs(x)
    for label, names in found.items():
        print(f"  {label}:")
        print(f"    {', '.join(names)}")
    if compiler is None:
        print("\nNo C++ compiler found (cpp_builder.get_cpp_compiler): the inductor rung cannot run here.")
    try:
        differences, close, generated = ladder(x, inductor=compiler is not None)
        failure = ""
    except torch._dynamo.exc.BackendCompilerFailed as error:
        failure = f"Inductor could not build a C++ kernel with {compiler} here: {str(error).splitlines()[0][:120]}"
        differences, close, generated = ladder(x, inductor=False)
    scale = ", ".join(f"{name} {float(fn(x).abs().max()):.1e}" for name, fn in FUNCTIONS.items())
    print(f"\nlargest difference from eager mode, on {tuple(x.shape)} float32 inputs (largest result: {scale}):")
    print(f"  {'rung':<26}" + "".join(f"{name:>9}" for name in FUNCTIONS))
    for rung, by_function in differences.items():
        print(f"  {rung:<26}" + "".join(f"{value:>9.1e}" for value in by_function.values()))
    for name in FUNCTIONS:
        first = next((rung for rung, by in differences.items() if by[name] != 0), "none of them")
        print(f"  first rung whose {name} differs: {first}")
    if generated:
        print(f"C++ kernels Inductor generated: {generated}")
    same = [differences[rung][name] for rung in ("eager", "aot_eager") for name in FUNCTIONS]
    claim(
        "the eager and aot_eager rungs reproduce eager mode bit for bit: they run the same aten kernels",
        held=all(value == 0 for value in same),
        detail=", ".join(f"{value:.1e}" for value in same),
    )
    dynamo, aten = found["chain, Dynamo's graph"], found["chain, AOTAutograd's graph"]
    claim(
        "AOTAutograd functionalises the graph: Dynamo's in-place mul_ becomes an out-of-place mul",
        held="mul_" in dynamo and "mul_" not in aten and "mul" in aten,
        detail=f"Dynamo: {', '.join(dynamo)}; AOTAutograd: {', '.join(aten)}",
    )
    before, after = found["normed, in aten operators"], found["normed, decomposed"]
    claim(
        "Inductor's decompositions rewrite the layer norm into smaller aten operators",
        held="native_layer_norm" in before and "native_layer_norm" not in after and "var_mean" in after,
        detail=f"{len(before)} operators before, {len(after)} after",
    )
    claim(
        "the decompositions' rung still agrees with eager mode to float32 tolerance",
        held=close["aot_eager_decomp_partition"],
        detail=", ".join(f"{name}: {value:.1e}" for name, value in differences["aot_eager_decomp_partition"].items()),
    )
    if compiler is None:
        not_applicable(INDUCTOR, why="no C++ compiler on this machine")
    elif failure:
        not_applicable(INDUCTOR, why=failure)
    else:
        claim(
            INDUCTOR,
            held=close["inductor"],
            detail=", ".join(f"{name}: {value:.1e}" for name, value in differences["inductor"].items()),
        )
    reduce_overhead()
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
