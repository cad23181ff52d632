"""What torch says about the build machine, asked of a block's process: the build never imports torch.

Importing torch costs the MkDocs process more than a second and hundreds of modules, and its
answers (thread count, kernels) depend on the environment a block runs with, not the build's.
So the facts that provenance lines and cache keys state are measured the way a proof would
measure them: in a process forked from the proof server, with a block's environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.process.runner import BlockProcess, BlockRequest
from pytorch_floors.execution.process.sandbox import block_environment

__all__ = ["FactsError", "TorchFacts", "torch_facts"]

_CODE = "from pytorch_floors.execution.process.worker import print_torch_facts\nprint_torch_facts()\n"


class FactsError(FloorsError, RuntimeError):
    """The process asked for torch's facts failed or answered something else than the facts."""


@dataclass(frozen=True)
class TorchFacts:
    """Torch's view of the machine, as a block sees it.

    Attributes:
        torch_version: `torch.__version__`.
        cpu_capability: The SIMD level torch's CPU kernels dispatch to (`AVX2`, `AVX512`, ...).
        threads: Torch's intra-op thread count in a block's process.
        accelerator: The accelerator in words (`cuda: NVIDIA H100 ...`, `mps (Apple GPU)`) or `none`.
        device: The device outputs depend on: the CUDA device's name, `mps` or `cpu`.
    """

    torch_version: str
    cpu_capability: str
    threads: int
    accelerator: str
    device: str


def torch_facts(env: Mapping[str, str] | None = None, timeout: float = 120.0) -> TorchFacts:
    """Ask a fresh block process what torch reports.

    Args:
        env: The environment the process runs with (default: a text block's, from this process's).
        timeout: Seconds the answer may take (the first one starts the proof server, which imports torch).

    Returns:
        The facts.

    Raises:
        FactsError: If the process failed or its answer is not the facts.
    """
    request = BlockRequest(
        code=_CODE,
        filename="<torch facts>",
        env=dict(env if env is not None else block_environment(html=False, width=None)),
        cwd=os.getcwd(),
        file=None,
        max_output=1 << 16,
        limit=timeout,
    )
    process = BlockProcess()
    try:
        reply = process.run(request, timeout)
    finally:
        process.close()
    if reply.error is not None:
        raise FactsError(f"asking torch about the machine failed: {reply.error.type}: {reply.error.message}")
    try:
        answer = json.loads(reply.output)
        expected = {field.name for field in fields(TorchFacts)}
        if not isinstance(answer, dict) or set(answer) != expected:
            raise ValueError(f"expected the fields {sorted(expected)}")
        return TorchFacts(**answer)
    except ValueError as error:
        raise FactsError(f"torch's facts came back unreadable ({error}): {reply.output[:200]!r}") from None
