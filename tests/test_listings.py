"""Collapsed proof sources keep their text and lose most of their highlighting spans."""

from __future__ import annotations

import html
import re
from pathlib import Path

import markdown
import pytest

from conftest import ROOT
from pytorch_floors.listings import KEPT_TOKEN_CLASSES, lighten_listings

PROOF = Path(ROOT) / "snippets" / "4-dispatcher" / "op_schema.py"


def proof_block(source: str) -> str:
    """A proof block as the engine writes it: the source highlighted as the site highlights it."""
    listing = markdown.markdown(f"```python\n{source}\n```", extensions=["pymdownx.highlight", "pymdownx.superfences"])
    return (
        '<div class="floors-proof"><details class="floors-proof__source"><summary>Proof source: '
        f"<code>x.py</code></summary>{listing}</details><p>after</p></div>"
    )


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_a_real_proof_keeps_its_text_and_only_kept_spans() -> None:
    block = proof_block(PROOF.read_text(encoding="utf-8"))
    light = lighten_listings(block, "page.md")
    assert text_of(light) == text_of(block), "every character of the listing is still there"
    before, after = block.count("<span"), light.count("<span")
    assert after * 3 < before, (before, after)
    kinds = set(re.findall(r'<span class="([^"]*)"', light))
    assert kinds and kinds <= KEPT_TOKEN_CLASSES, kinds - KEPT_TOKEN_CLASSES
    assert {"k", "s2"} <= kinds, "keywords and strings keep their colours"


def test_docstring_lines_merge_into_one_span_and_names_lose_theirs() -> None:
    light = lighten_listings(proof_block('def f(a):\n    """One.\n\n    Two.\n    """\n    return a'), "p.md")
    assert '<span class="sd">"""One.\n\n    Two.\n    """</span>' in light
    assert re.search(r'<span class="k">def</span> f\(a\):', light), light
    assert '<span class="n">' not in light and '<span class="p">' not in light and '<span class="w">' not in light


def test_everything_outside_proof_sources_passes_through_unchanged() -> None:
    prose = '<p>A <span class="n">name</span> &amp; <code>x</code></p><div class="highlight"><pre><code>'
    prose += '<span class="n">kept</span></code></pre></div>'
    page = prose + proof_block("x = 1") + prose
    light = lighten_listings(page, "p.md")
    assert light.startswith(prose) and light.endswith(prose)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ('<details class="floors-proof__source"><pre><code>x', "unclosed proof source"),
        ('<details class="floors-proof__source"><pre><code><b>x</b></code></pre></details>', "unexpected <b>"),
        ('<details class="floors-proof__source"><pre><code>x</details>', "not closed"),
    ],
)
def test_a_malformed_listing_stops_the_build_naming_the_page(broken: str, message: str) -> None:
    with pytest.raises(ValueError, match=rf"docs/floors/x\.md: .*{message}"):
        lighten_listings(broken, "floors/x.md")
