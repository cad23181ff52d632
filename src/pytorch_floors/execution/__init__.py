"""Executing the site's proofs: cached, isolated per page, time-limited, failing loudly.

markdown-exec runs code blocks inside the build process with no cache, no time
limit and errors that only warn; this subpackage keeps its fences and rendering
and replaces how the code runs.
"""

from pytorch_floors.execution.cache import OutputCache, environment_fingerprint
from pytorch_floors.execution.engine import Engine, ProofFailure
from pytorch_floors.execution.fence import activate, active_engine, formatter
from pytorch_floors.execution.result import BlockResult, Status
from pytorch_floors.execution.scan import ExecBlock, ScanError, scan_markdown

__all__ = [
    "BlockResult",
    "Engine",
    "ExecBlock",
    "OutputCache",
    "ProofFailure",
    "ScanError",
    "Status",
    "activate",
    "active_engine",
    "environment_fingerprint",
    "formatter",
    "scan_markdown",
]
