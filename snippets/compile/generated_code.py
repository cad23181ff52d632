"""Inductor at floor 6: the C++ it writes for a four-operation elementwise chain on the CPU, fused into one kernel."""

from __future__ import annotations

import re

import torch
import torch._dynamo
import torch._inductor.config
from torch._inductor.cpu_vec_isa import pick_vec_isa
from torch._inductor.utils import parallel_num_threads, run_and_get_code
from torch.utils._python_dispatch import TorchDispatchMode

from pytorch_floors.claims import claim, not_applicable
from pytorch_floors.compiling import cpp_compiler, fresh_inductor_cache

STATEMENTS = (
    "Inductor generates one C++ kernel for the whole four-operation chain",
    "the kernel's name lists the operations it fused",
    "eager runs four aten kernels and makes four tensors; the compiled call allocates only its output",
    "the kernel uses vector registers exactly when Inductor picked a vector instruction set",
    "the compiled result matches the eager one to float32 rounding",
    "the kernel opens an OpenMP parallel region exactly when it was compiled for more than one thread",
)


def chain(x: torch.Tensor) -> torch.Tensor:
    """Four elementwise operations: the function every proof of this page compiles."""
    return torch.relu(torch.sin(x) * 2 + 1)


class OpLog(TorchDispatchMode):
    """Records each aten operator eager mode runs, and how many tensors it returns."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []
        self.tensors = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        self.ops.append(str(func.overloadpacket.__name__))
        self.tensors += sum(isinstance(t, torch.Tensor) for t in (out if isinstance(out, tuple) else (out,)))
        return out


def kernel_sources(module: str) -> dict[str, str]:
    """Each C++ kernel the generated module defines, by name: the raw string given to `cpp_pybinding`."""
    found = re.finditer(r"^(?P<name>\w+) = async_compile\.cpp_pybinding\(.*?r'''(?P<src>.*?)'''", module, re.M | re.S)
    return {match["name"]: match["src"].strip("\n") for match in found}


def call_body(module: str) -> str:
    """The generated `call` function: what runs on every call of the compiled graph."""
    match = re.search(
        r"^(?P<indent> *)def call\(self, args\):\n(?P<body>.*?^(?P=indent) +return \(.*?\)\n)", module, re.M | re.S
    )
    return match[0].rstrip() if match else ""


def main() -> None:
    torch._dynamo.reset()
    compiler = cpp_compiler()
    if compiler is None:
        print("No C++ compiler found (cpp_builder.get_cpp_compiler): Inductor's CPU backend cannot run here.")
        for statement in STATEMENTS:
            not_applicable(statement, why="no C++ compiler on this machine")
        return
    torch._inductor.config.compile_threads = 1  # compile in this process: no pool of compiler workers
    x = torch.linspace(-3, 3, 1 << 16)
    try:
        with fresh_inductor_cache():
            out, modules = run_and_get_code(torch.compile(chain), x)
    except torch._dynamo.exc.BackendCompilerFailed as error:
        why = f"Inductor could not build a C++ kernel with {compiler} here: {str(error).splitlines()[0][:120]}"
        for statement in STATEMENTS:
            not_applicable(statement, why=why)
        return
    module = modules[0]
    kernels = kernel_sources(module)
    chosen = pick_vec_isa()  # false for InvalidVecISA: no vector instruction set, scalar loops
    isa = str(chosen) if chosen else "none: scalar loops"
    print(f"C++ compiler: {compiler}; vector instruction set Inductor picked: {isa}")
    print(f"kernels in the generated module: {len(kernels)} ({', '.join(kernels)})")
    for name, source in kernels.items():
        print(f"\nThe C++ of {name}:")
        print(source)
    body = call_body(module)
    print("\nThe Python that calls it on every call of the compiled graph:")
    print(body or "(not found in the generated module)")
    with OpLog() as log:
        expected = chain(x)
    print(f"\neager: {len(log.ops)} aten operators ({', '.join(log.ops)}), {log.tensors} new tensors")
    allocations = len(re.findall(r"\bempty_strided_cpu\(\(", body))
    print(f"compiled: {len(kernels)} kernel, {allocations} buffer allocated per call")
    (name, source), *_ = kernels.items() if kernels else (("", ""),)
    claim(STATEMENTS[0], held=len(kernels) == 1, detail=f"{len(kernels)} kernels")
    claim(STATEMENTS[1], held=all(op in name for op in ("sin", "mul", "add", "relu")), detail=name)
    claim(
        STATEMENTS[2],
        held=len(log.ops) == 4 and log.tensors == 4 and allocations == 1,
        detail=f"eager {len(log.ops)} ops and {log.tensors} tensors, compiled {allocations} allocation",
    )
    vectorized = "Vectorized" in source
    claim(
        STATEMENTS[3],
        held=vectorized == bool(chosen),
        detail=f"instruction set {isa!r}, at::vec::Vectorized in the kernel: {vectorized}",
    )
    claim(STATEMENTS[4], held=torch.allclose(out, expected, rtol=1e-5, atol=1e-6))
    # Inductor splits a loop across threads only when it compiles for more than one (torch.get_num_threads()
    # at compile time) and each thread's share is at least `min_chunk_size` elements; this proof's is far over.
    threads = parallel_num_threads()
    parallel = "#pragma omp parallel" in source
    big_enough = x.numel() // max(threads, 1) >= torch._inductor.config.cpp.min_chunk_size
    print(f"threads Inductor compiled for: {threads}; OpenMP parallel region in the kernel: {parallel}")
    claim(
        STATEMENTS[5],
        held=parallel == (threads > 1),
        detail=f"{threads} threads, #pragma omp parallel: {parallel}",
        applies=big_enough,
        why_not=f"{x.numel()} elements over {threads} threads is under Inductor's chunk of "
        f"{torch._inductor.config.cpp.min_chunk_size}",
    )
    torch._dynamo.reset()


if __name__ == "__main__":
    main()
