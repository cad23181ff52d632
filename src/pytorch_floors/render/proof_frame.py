"""What a page shows around a proof's output: the claims it checked, and the banner of a failure."""

from __future__ import annotations

from pytorch_floors.claims import Claim
from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.render.templates import render

__all__ = ["claims_html", "failure_banner", "proof_frame_html", "recorded_claims_html"]


def claims_html(result: BlockResult | None, language: str | PageLanguage) -> str:
    """The claims a block checked, for the page: each with its outcome in words.

    Held, did not hold on this machine, or not applicable on this machine and why.

    Args:
        result: The block's result in this build.
        language: The page's language (its `PageLanguage` shows the claims it translates in it).

    Returns:
        The rendered partial, or nothing when the block stated no claims.
    """
    if result is None:
        return ""
    return _claims_list("proof_claims.html", result.claims, language, cached=result.status == "cached")


def recorded_claims_html(claims: tuple[Claim, ...], recorded_on: str, language: str | PageLanguage) -> str:
    """The claims a tier's recording checked, for its tab: each with its outcome on that machine.

    Args:
        claims: The recording's claims.
        recorded_on: The tier, by its name (its machine in words opens its tab).
        language: The page's language.

    Returns:
        The rendered partial, or nothing when the block stated no claims.
    """
    return _claims_list("tier_claims.html", claims, language, recorded_on=recorded_on)


def _claims_list(name: str, claims: tuple[Claim, ...], language: str | PageLanguage, **context: object) -> str:
    if not claims:
        return ""
    outcomes = [c.outcome for c in claims]
    return render(
        name,
        language,
        claims=claims,
        held=outcomes.count("held"),
        applied=len(outcomes) - outcomes.count("not applicable"),
        not_applicable=outcomes.count("not applicable"),
        missed="missed" in outcomes,
        **context,
    )


def failure_banner(
    failure: ProofFailure | str, language: str | PageLanguage, title: str = "This proof failed to run"
) -> str:
    """The alert shown in place of what failed to run: what failed, where, and why, and what it printed first.

    Args:
        failure: The failure (a proof's, or a lab's cells' in words).
        language: The page's language.
        title: The alert's title.
    """
    printed = failure.output if isinstance(failure, ProofFailure) else ""
    return render("failure_banner.html", language, title=title, failure=str(failure), printed=printed)


def proof_frame_html(
    *,
    proof: str,
    href: str,
    listing: str,
    output: str,
    claims: str,
    seconds: str | None,
    cached: bool,
    language: str | PageLanguage,
) -> str:
    """A proof's frame: its source folded, its download link and command, its output and its claims.

    Args:
        proof: The proof's path in the project (`snippets/3-boundary/crossing_cost.py`).
        href: The download link, relative to the page.
        listing: The highlighted source (HTML).
        output: The block's rendered output (HTML).
        claims: The claims' partial (`claims_html`).
        seconds: How long it ran, in words (`1.2 s`), or `None` when no time is known.
        cached: The output came from the cache.
        language: The page's language.

    Returns:
        The frame's HTML.
    """
    return render(
        "proof_frame.html",
        language,
        proof=proof,
        href=href,
        listing=listing,
        output=output,
        claims=claims,
        seconds=seconds,
        cached=cached,
    )
