"""A block's output beside its recordings from other machines: Material content tabs, and stale notes.

It renders recordings with the package's templates, so it lives with them, above `render`: the
renderer knows nothing of recordings.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from html import unescape

from markupsafe import Markup

from pytorch_floors.i18n.messages import PageLanguage, t
from pytorch_floors.recordings.compare import BlockTiers
from pytorch_floors.render.templates import render, template

__all__ = [
    "OWN_LABEL",
    "LazyOutputs",
    "TierTab",
    "differing_lines",
    "marked_text_parts",
    "namespaced_ids",
    "tier_tabs_html",
]

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


OWN_LABEL = "This build"
"""The label of this build's own tab. Material links tabs by their label (`content.tabs.link`): a
reader's choice of a machine holds for every block of the page, and is remembered across pages."""


@dataclass
class LazyOutputs:
    """Other machines' outputs kept out of their pages, each fetched when its tab is first opened.

    A floor with three recorded machines weighed more than a phone's budget (600 KB loaded): every
    tab's output was in the page whether a reader opened it or not. Each page's recorded outputs go
    into one JSON file beside it (`FILE`, same origin), with its claims, which `docs/javascripts/tier-tabs.js`
    reads when a tab that needs it is opened; the page keeps each tab's label, machine and a placeholder.

    Attributes:
        pages: Each page's outputs, by the page's URL (`floors/6-kernels/`, `./` for the home page),
            then by key (`<tab set>-<tier>`).
    """

    FILE = "floors-tiers.json"
    pages: dict[str, dict[str, str]] = field(default_factory=dict)

    def keep(self, page_url: str, key: str, html: str) -> None:
        """Keep one tab's output of a page."""
        self.pages.setdefault(page_url, {})[key] = html

    def files(self) -> dict[str, str]:
        """Each page's file, by its path in the site, and its JSON text."""
        return {
            f"{'' if url in {'', './'} else url}{self.FILE}": json.dumps(outputs, separators=(",", ":"))
            for url, outputs in self.pages.items()
        }


@dataclass(frozen=True)
class TierTab:
    """One tab: a machine's output and claims.

    Attributes:
        label: The tab's label: `OWN_LABEL`, or the tier's name (`ci-2core`), the same on every block,
            with "(contended)" after it when other work held the cores while it was recorded.
        output: Its rendered output (HTML).
        claims: Its rendered claims (HTML).
        tier: The tier's name (`None` for this build's own output).
        note: A sentence above the output (a tier shown in place of this build's).
        machine: The machine in words, first in the tab.
        kind: What kind of machine the tier stands for ("a two-vCPU CI runner"), under its label: the name
            alone (`ci-2core`) is jargon where a reader chooses it.
        differing: How many lines of its output differ from this build's (marked in the output), or
            `None` where lines are not compared (a figure, or this build's own tab).
        lazy: The key of its output in the page's `LazyOutputs` file, when the page does not hold it.
    """

    label: str
    output: str
    claims: str
    tier: str | None = None
    note: str = ""
    machine: str = ""
    kind: str = ""
    differing: int | None = None
    lazy: str = ""


def differing_lines(own: str, recorded: str) -> list[int]:
    """The lines of a recorded text output that this build's output does not have in the same place.

    Args:
        own: This build's output.
        recorded: The tier's output.

    Returns:
        Their numbers in the recorded output, from 1 (what `hl_lines` marks).
    """
    matcher = difflib.SequenceMatcher(None, own.splitlines(), recorded.splitlines(), autojunk=False)
    return [
        line + 1
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in {"replace", "insert"}
        for line in range(start, end)
    ]


# The text a figure prints above its chart (`pytorch_floors.plot.show`), as `allowed_html` writes it again.
_TEXT_PART = re.compile(r'(<pre class="floors-output"><code>)(.*?)(</code></pre>)', re.S)


def marked_text_parts(own: str, recorded: str) -> tuple[str, int | None]:
    """Mark the lines of a recorded figure's text that differ from this build's, as a text output's are.

    A figure's output was never compared, so a tab whose timings all differed from this build's said
    nothing of it (all of floor 3's, half of floor 6's and floor 8's). Its text parts (the numbers a
    figure prints above its chart) are compared, each with this build's part in the same place.

    Args:
        own: This build's output (HTML).
        recorded: The tier's output, as `allowed_html` writes it.

    Returns:
        The recorded output with each differing line marked, and how many lines differ (`None` where the
        output has no text part to compare: a chart alone).
    """
    mine = [unescape(part[2]) for part in _TEXT_PART.finditer(own)]
    seen = 0
    count = 0

    def mark(part: re.Match[str]) -> str:
        nonlocal seen, count
        differ = set(differing_lines(mine[seen] if seen < len(mine) else "", unescape(part[2])))
        seen += 1
        count += len(differ)
        lines = part[2].split("\n")
        body = "\n".join(
            template("tier_differing_line.html").render(line=Markup(line)) if number in differ else line
            for number, line in enumerate(lines, start=1)
        )
        return part[1] + body + part[3]

    marked = _TEXT_PART.sub(mark, recorded)
    return marked, count if seen else None


def tier_tabs_html(
    own: TierTab,
    tiers: BlockTiers,
    contents: dict[str, tuple[str, str, int | None]],
    number: int,
    lazy: Callable[[str, str], None] | None = None,
    *,
    language: str | PageLanguage,
) -> str:
    """This build's output and each tier's that differs in tabs, a line naming those that agree, stale notes.

    Args:
        own: This build's tab.
        tiers: The block's tiers (`recordings.compare.tiers_for`).
        contents: Each differing current tier's rendered output and claims, and how many of its lines
            differ (`None` for a figure), by tier name.
        number: The tab set's number on its page (its inputs' ids and name).
        lazy: Keeps a tab's output out of the page, given its key (`<number>-<tier>`) and its HTML
            (`LazyOutputs.keep`, bound to the page); `None` puts every output in the page.
        language: The page's language.

    Returns:
        The HTML; this build's output alone, with the line, when every current tier printed the same.
    """
    tabs = [
        TierTab(
            t("{tier} (contended)", language, tier=shown.tier) if shown.contended else shown.tier,
            contents[shown.tier][0],
            contents[shown.tier][1],
            tier=shown.tier,
            differing=contents[shown.tier][2],
            note=t(
                "Recorded on {tier}, which measured what this build's machine could not; this build's "
                "own output, with its claims that could not apply here, is in the next tab.",
                language,
                tier=shown.tier,
            )
            if shown.elsewhere
            else "",
            machine=t("{stands_for}: {label}", language, stands_for=shown.stands_for, label=shown.label)
            if shown.stands_for
            else shown.label,
            kind=shown.stands_for,
        )
        for shown in tiers.current
        if not shown.same
    ]
    if lazy is not None:
        for index, tab in enumerate(tabs):
            key = f"{number}-{tab.tier}"
            # Both are this build's rendering of an allow-listed recording (`recordings.html`): already safe HTML.
            lazy(key, template("tier_lazy_output.html").render(output=Markup(tab.output), claims=Markup(tab.claims)))
            tabs[index] = replace(tab, output="", claims="", lazy=key)
    tabs.insert(1 if tiers.lead else 0, own)
    agree = [shown for shown in tiers.current if shown.same]
    return render("tier_tabs.html", language, tabs=tabs, agree=agree, stale=tiers.stale, number=number)
