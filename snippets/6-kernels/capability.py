"""One add kernel, compiled once per CPU capability: torch.add under ATEN_CPU_CAPABILITY=default, avx2 and unset."""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
from pathlib import Path
from statistics import median

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import CAPABILITIES, detect_device, dispatch_stub_slots, stub_name, torch_cpu_library

# Run in a fresh process per setting: torch reads ATEN_CPU_CAPABILITY once, at the first kernel it dispatches.
# Each rate is the fastest of several samples: the one least disturbed by other work on the machine. The child
# imports torch alone, as a reader's download starts it with nothing else installed: `best_seconds` is
# `time_call(...).best` on the CPU written out (warm up, batch calls to 2 ms a sample, keep the fastest sample).
CHILD = """
import time
import torch
def best_seconds(fn, samples):
    for _ in range(3):
        fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= 2e-3 or number >= 1 << 20:
            break
        number *= 2
    best = float("inf")
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best
def add_rate(n, samples):
    a, b, c = torch.full((n,), 1.5), torch.full((n,), 0.25), torch.empty(n)
    return 3 * n * 4 / best_seconds(lambda: torch.add(a, b, out=c), samples)
m = torch.rand(256, 256)
mm = 2 * 256**3 / best_seconds(lambda: m @ m, 9)
print(torch.backends.cpu.get_cpu_capability(), add_rate(IN_CACHE, 15), add_rate(FROM_MEMORY, 3), mm)
"""

IN_CACHE = 1 << 16  # three 256 KiB arrays: in a current core's caches, so the loop, not memory, sets the rate
FROM_MEMORY = 1 << 24  # three 64 MiB arrays: beyond the caches, so memory sets the rate
ROUNDS = 3  # every setting once per round, so a burst of other work lands on all settings alike


FORCED = os.environ.get("ATEN_CPU_CAPABILITY", "").strip()
"""The value this build runs under, if any: a tier that stands for another CPU (`avx2`, `default`) sets it."""


def settings() -> tuple[str, ...]:
    """The values of ATEN_CPU_CAPABILITY to compare ("" = this build's own: unset, or the value it runs under).

    Under a tier that stands for another CPU, "this build's own" keeps the tier's value: stripping it
    would run this processor's widest kernels, which the CPU the tier stands for does not have.
    """
    if platform.machine().lower() in {"x86_64", "amd64"}:
        return ("default", "avx2", "")
    return ("default", "")


def run_with(capability: str) -> tuple[str, float, float, float]:
    """`(capability torch reports, add bytes/s in cache, add bytes/s from memory, 256² matmul FLOP/s)`, one thread."""
    env = {key: value for key, value in os.environ.items() if key != "ATEN_CPU_CAPABILITY"}
    if capability or FORCED:
        env["ATEN_CPU_CAPABILITY"] = capability or FORCED
    env["OMP_NUM_THREADS"] = "1"  # one thread: the comparison is about vector width, not cores
    env.pop("FLOORS_OUTPUT", None)
    code = CHILD.replace("IN_CACHE", str(IN_CACHE)).replace("FROM_MEMORY", str(FROM_MEMORY))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    name, cache, memory, mm = done.stdout.split()
    return name, float(cache), float(memory), float(mm)


def measure(rounds: int = ROUNDS) -> dict[str, list[tuple[str, float, float, float]]]:
    """Each setting's runs: DEFAULT and the CPU's own `rounds` times over, interleaved; the others once.

    The comparisons that claims make are between DEFAULT and the CPU's own build; a setting in
    between (`avx2` on an AVX-512 processor) only shows that the variable is taken as given.
    """
    runs: dict[str, list[tuple[str, float, float, float]]] = {choice: [] for choice in settings()}
    for round_number in range(rounds):
        for choice, results in runs.items():
            if choice in {"default", ""} or round_number == 0:
                results.append(run_with(choice))
    return runs


SLOT_STUBS = ("add_stub", "sum_stub", "exp_stub")
"""The add this page times, the sum it walks, and one registered for AVX-512 too (`ALSO_REGISTER_AVX512_DISPATCH`)."""


def kernel_slots(library: Path, stubs: tuple[str, ...] = SLOT_STUBS) -> dict[str, dict[str, bool]]:
    """Which capability slots of each of `stubs` the library fills: stub -> capability -> filled.

    Read by `dispatch_stub_slots` (`pytorch_floors.measure`) from the library's ELF symbol table.
    """
    found = {stub_name(mangled.encode()): filled for mangled, filled in dispatch_stub_slots(library).items()}
    return {stub: found.get(stub, {}) for stub in stubs}


def log_distance(ratio: float) -> float:
    """How far a ratio is from 1, either way, on a log scale (2x and 0.5x are equally far)."""
    return abs(math.log(ratio))


def main() -> None:
    print(f"this process: get_cpu_capability() = {torch.backends.cpu.get_cpu_capability()}", end="")
    print(f" (ATEN_CPU_CAPABILITY={FORCED} is set for it: the row 'this build' keeps it)" if FORCED else "")
    print()
    print(f"each row: the best of its fresh processes ({ROUNDS} for DEFAULT and unset, interleaved), 1 thread;")
    print(f"add on 2^{IN_CACHE.bit_length() - 1} float32 elements (in cache) and on 2^{FROM_MEMORY.bit_length() - 1}")
    print("(from main memory), out= given; matmul 256 x 256 float32")
    # Printed for a phone's 46 columns: the columns headed by short names, what they hold spelled out above.
    print("variable: the value of ATEN_CPU_CAPABILITY;")
    print("reported: the capability torch reported under it")
    print(f"{'':<10} {'':<8} {'add GB/s':>14} {'matmul':>8}")
    print(f"{'variable':<10} {'reported':<8} {'cache':>6} {'memory':>7} {'GFLOP/s':>8}")
    runs = measure()
    rows = {}
    for choice, results in runs.items():
        names = {name for name, *_ in results}
        rows[choice] = (
            "/".join(sorted(names)),
            max(r[1] for r in results),
            max(r[2] for r in results),
            max(r[3] for r in results),
        )
        name, cache, memory, mm = rows[choice]
        # The line above the table names the value a forced build keeps.
        label = choice or ("this build" if FORCED else "(not set)")
        print(f"{label:<10} {name:<8} {cache / 1e9:>6.1f} {memory / 1e9:>7.1f} {mm / 1e9:>8.1f}")
    best, lowest = rows[""], rows["default"]
    vector = best[0] != "DEFAULT"
    cache_gain, memory_gain, mm_ratio = best[1] / lowest[1], best[2] / lowest[2], best[3] / lowest[3]
    # Round by round, the CPU's own build against DEFAULT on the in-cache add.
    per_round = [own[1] / scalar[1] for own, scalar in zip(runs[""], runs["default"], strict=True)]
    print()
    if vector:
        print(f"add under capability {best[0]}: {cache_gain:.1f}x the rate of the DEFAULT build in cache,")
        rounds = ", ".join(f"{gain:.1f}x" for gain in per_round)
        print(f"{memory_gain:.1f}x from main memory (round by round in cache: {rounds})")
        print(f"matmul: {mm_ratio:.2f}x (ATEN_CPU_CAPABILITY does not reach the BLAS library)")
    elif FORCED:
        print(f"this build runs with ATEN_CPU_CAPABILITY={FORCED}: it stands for a CPU with no vector build above it")
    else:
        print("unset, torch chose DEFAULT here: this processor has no vector build above it to compare")
    expected = {"default": "DEFAULT", "avx2": "AVX2"}
    claim(
        "ATEN_CPU_CAPABILITY is taken as given: each value selects the kernels it names",
        held=all(rows[choice][0] == name for choice, name in expected.items() if choice in rows),
        detail=", ".join(
            f"{choice or ('this build' if FORCED else 'unset')} -> {row[0]}" for choice, row in rows.items()
        ),
    )
    why = (
        f"this build runs with ATEN_CPU_CAPABILITY={FORCED}, standing for a CPU with no vector build above "
        "DEFAULT, so there is no wider loop to compare"
        if FORCED
        else "this processor has no vector build above DEFAULT, so there is no wider loop to compare"
    )
    claim(
        "in cache, the vector build adds faster than the DEFAULT build, in every round",
        held=min(per_round) > 1,
        detail=f"slowest round {min(per_round):.1f}x, median {median(per_round):.1f}x",
        applies=vector,
        why_not=why,
    )
    claim(
        "vector width pays off less from main memory, where the core waits on bytes, than in cache",
        held=memory_gain < cache_gain,
        detail=f"{cache_gain:.1f}x in cache, {memory_gain:.1f}x from memory",
        applies=vector,
        why_not=why,
    )
    claim(
        "the BLAS matmul moves much less than the add: its factor is nearer 1 than the add's square root",
        held=log_distance(mm_ratio) < log_distance(cache_gain) / 2,
        detail=f"matmul {mm_ratio:.2f}x, add {cache_gain:.1f}x",
        applies=vector,
        why_not=why,
    )
    slots_claim()
    if detect_device().type == "cuda":
        print("(CPU capability is a CPU matter; this build's CUDA kernels were compiled for")
        print(f"{' '.join(torch.cuda.get_arch_list())})")


def slots_claim() -> None:
    """Which builds of add and sum (and of exp) this library holds, printed and claimed."""
    library = torch_cpu_library() if platform.machine().lower() in {"x86_64", "amd64"} else None
    statement = (
        "this build has no AVX-512 add or sum (their AVX512 slots are empty, so an AVX512 run uses the AVX2 "
        "loops), while exp has one"
    )
    ceiling = "AVX512 is a ceiling most CPU kernels stay below: fewer than half of them have an AVX-512 build"
    if library is None:
        for stated in (statement, ceiling):
            claim(
                stated,
                held=True,
                applies=False,
                why_not="not an x86-64 Linux build of torch: no AVX-512 kernels, no ELF library to read",
            )
        return
    census = [filled for filled in dispatch_stub_slots(library).values() if any(filled.values())]
    wide = sum(filled.get("AVX512", False) for filled in census)
    fallback = sum(filled.get("AVX2", False) and not filled.get("AVX512", False) for filled in census)
    print()
    print(f"of this library's {len(census)} CPU kernels (DispatchStubs), {wide} have an AVX512 build;")
    print(f"{fallback} others run their AVX2 code under capability AVX512")
    claim(ceiling, held=2 * wide < len(census), detail=f"{wide} of {len(census)} have an AVX512 build")
    slots = kernel_slots(library)
    for stub, filled in slots.items():
        builds = ", ".join(capability for capability in CAPABILITIES if filled.get(capability))
        empty = ", ".join(capability for capability in CAPABILITIES if capability in filled and not filled[capability])
        print(f"{stub.removesuffix('_stub')}: kernels built for {builds}" + (f"; empty slot: {empty}" if empty else ""))
    add, total, exp = slots["add_stub"], slots["sum_stub"], slots["exp_stub"]
    claim(
        statement,
        held=all(stub.get("AVX2") is True and stub.get("AVX512") is False for stub in (add, total))
        and exp.get("AVX512") is True,
        detail=f"add {add}, sum {total}, exp {exp}",
    )


if __name__ == "__main__":
    main()
