"""Helpers for the proofs that run `torch.compile`'s default backend, Inductor, on the CPU.

Inductor writes C++ and compiles it with the machine's compiler, keeping what it built in a cache
folder that outlives the process. A proof that measures compiling must find out first whether there
is a compiler (and say "not applicable" where there is none), and must compile into a folder of its
own, or a second run would time a cache hit instead of a compile.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cpp_compiler", "fresh_inductor_cache"]

CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"
"""The environment variable Inductor reads for its cache folder (`torch/_inductor/runtime/cache_dir_utils.py`)."""


def cpp_compiler() -> str | None:
    """The C++ compiler Inductor's CPU backend would use, or None where it finds none.

    Returns:
        The compiler's command (`g++`, `clang++`), as Inductor's own `get_cpp_compiler` chooses it.
    """
    from torch._inductor.cpp_builder import get_cpp_compiler  # noqa: PLC0415  (Inductor is heavy to import)

    try:
        compiler: str = get_cpp_compiler()
    except (RuntimeError, OSError):  # InvalidCxxCompiler is a RuntimeError
        return None
    return compiler


@contextmanager
def fresh_inductor_cache() -> Iterator[None]:
    """Compile into an empty cache folder of this run's own, removed afterwards, so nothing compiled earlier is reused.

    Yields:
        Nothing; the variable is set back as it was when the block ends.
    """
    saved = os.environ.get(CACHE_VARIABLE)
    with tempfile.TemporaryDirectory(prefix="floors-inductor-") as folder:
        os.environ[CACHE_VARIABLE] = folder
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop(CACHE_VARIABLE, None)
            else:
                os.environ[CACHE_VARIABLE] = saved
