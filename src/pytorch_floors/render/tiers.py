"""A block's output beside its recordings from other machines: Material content tabs, and stale notes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytorch_floors.recordings.compare import BlockTiers
from pytorch_floors.render.templates import template

__all__ = ["TierTab", "namespaced_ids", "tier_tabs_html"]

# Attributes as `allowed_html` writes them (double quotes, values escaped): an id, the ids a reference
# lists, and an in-page link.
_ID = re.compile(r'(\sid=")([^"]*)(")')
_REFERENCES = re.compile(r'(\saria-(?:labelledby|describedby)=")([^"]*)(")')
_FRAGMENT = re.compile(r'(\shref="#)([^"]*)(")')


def namespaced_ids(html: str, tier: str) -> str:
    """A recorded output's element ids, made its tier's own.

    A tier that drew the same figure as this build repeats its ids on the page: a chart's `<title>`
    and `<desc>` (`pytorch_floors.plot` names them by a digest of what they draw; a proof's own SVG
    by a fixed name), which breaks the `aria-labelledby` that points at them.

    Args:
        html: A recorded output, as `allowed_html` writes it.
        tier: The tier's name.

    Returns:
        The output with every id it defines, and every reference to one of them (`aria-labelledby`,
        `aria-describedby`, `href="#…"`), prefixed by the tier. A reference to an id the output does
        not define (a section of the page) is left as it is.
    """
    own = {match[2] for match in _ID.finditer(html)}

    def prefixed(name: str) -> str:
        return f"{tier}-{name}" if name in own else name

    html = _ID.sub(lambda m: f"{m[1]}{prefixed(m[2])}{m[3]}", html)
    html = _REFERENCES.sub(lambda m: m[1] + " ".join(prefixed(n) for n in m[2].split()) + m[3], html)
    return _FRAGMENT.sub(lambda m: f"{m[1]}{prefixed(m[2])}{m[3]}", html)


@dataclass(frozen=True)
class TierTab:
    """One tab: a machine's output and claims.

    Attributes:
        label: The machine in words.
        output: Its rendered output (HTML).
        claims: Its rendered claims (HTML).
        tier: The tier's name (`None` for this build's own output).
        note: A sentence above the output (a tier shown in place of this build's).
        same: The tier printed this build's output and its claims came out alike (nothing else is shown).
    """

    label: str
    output: str
    claims: str
    tier: str | None = None
    note: str = ""
    same: bool = False


def tier_tabs_html(own: TierTab, tiers: BlockTiers, contents: dict[str, tuple[str, str]], number: int) -> str:
    """This build's output and each current tier's in tabs, then a note for each stale tier.

    Args:
        own: This build's tab.
        tiers: The block's tiers (`recordings.compare.tiers_for`).
        contents: Each current tier's rendered output and claims, by tier name.
        number: The tab set's number on its page (its inputs' ids and name).

    Returns:
        The HTML; this build's output alone when no tier is current and none is stale.
    """
    tabs = [
        TierTab(
            f"Recorded elsewhere: {shown.label}" if shown.elsewhere else shown.label,
            *contents[shown.tier],
            shown.tier,
            f"Recorded on {shown.tier}, which measured what this build's machine could not; this build's own "
            "output, with its claims that could not apply here, is in the next tab."
            if shown.elsewhere
            else "",
            same=shown.same,
        )
        for shown in tiers.current
    ]
    tabs.insert(1 if tiers.lead else 0, own)
    return template("tier_tabs.html").render(tabs=tabs, stale=tiers.stale, number=number)
