"""Executing the site's proofs: cached, isolated per page, time-limited, failing loudly.

markdown-exec runs code blocks inside the build process with no cache, no time
limit and errors that only warn; this subpackage replaces how the code runs, and
knows nothing of MkDocs or Markdown (the plugin's fence hands it each block).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytorch_floors._lazy import lazy_attributes

if TYPE_CHECKING:
    from pytorch_floors.execution.cache import OutputCache
    from pytorch_floors.execution.engine import Engine, ProofFailure
    from pytorch_floors.execution.facts import TorchFacts, torch_facts
    from pytorch_floors.execution.result import BlockResult, Status
    from pytorch_floors.execution.scan import ExecBlock, ScanError, scan_markdown

# Imported on first use: the fork server imports `worker`, and must not drag in MkDocs and Markdown.
_LAZY = {
    "BlockResult": "pytorch_floors.execution.result",
    "Engine": "pytorch_floors.execution.engine",
    "ExecBlock": "pytorch_floors.execution.scan",
    "OutputCache": "pytorch_floors.execution.cache",
    "ProofFailure": "pytorch_floors.execution.engine",
    "ScanError": "pytorch_floors.execution.scan",
    "Status": "pytorch_floors.execution.result",
    "TorchFacts": "pytorch_floors.execution.facts",
    "scan_markdown": "pytorch_floors.execution.scan",
    "torch_facts": "pytorch_floors.execution.facts",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "BlockResult",
    "Engine",
    "ExecBlock",
    "OutputCache",
    "ProofFailure",
    "ScanError",
    "Status",
    "TorchFacts",
    "scan_markdown",
    "torch_facts",
]
