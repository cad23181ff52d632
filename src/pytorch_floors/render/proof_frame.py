"""What a page shows around a proof's output: the claims it checked, and the banner of a failure."""

from __future__ import annotations

from functools import cache
from html import escape

from jinja2 import Template

from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.render.templates import template

__all__ = ["claims_html", "failure_banner"]


@cache
def _claims_template() -> Template:
    return template("proof_claims.html")


def claims_html(result: BlockResult | None) -> str:
    """The claims a block checked, for the page: each with its outcome in words.

    Held, did not hold on this machine, or not applicable on this machine and why.

    Args:
        result: The block's result in this build.

    Returns:
        The rendered partial, or nothing when the block stated no claims.
    """
    if result is None or not result.claims:
        return ""
    outcomes = [c.outcome for c in result.claims]
    return _claims_template().render(
        claims=result.claims,
        held=outcomes.count("held"),
        applied=len(outcomes) - outcomes.count("not applicable"),
        not_applicable=outcomes.count("not applicable"),
        missed="missed" in outcomes,
        cached=result.status == "cached",
    )


def failure_banner(failure: ProofFailure) -> str:
    """The alert shown in place of a failed proof's output: what failed, where, and why."""
    return (
        '<div class="admonition failure floors-proof-failure" role="alert">'
        '<p class="admonition-title">This proof failed to run</p>'
        f"<pre><code>{escape(str(failure))}</code></pre></div>"
    )
