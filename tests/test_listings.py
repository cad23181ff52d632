"""Collapsed proof sources keep their text and lose most of their highlighting spans."""

from __future__ import annotations

import html
import re
import uuid
from pathlib import Path
from typing import Any

import markdown
from markdown_exec import code_block
from pygments.lexers import PythonLexer

from conftest import ROOT
from pytorch_floors.plugin.fence import text_html
from pytorch_floors.render.highlighted import HIGHLIGHTED
from pytorch_floors.render.listings import KEPT_TOKEN_CLASSES, LISTING_LANGUAGE, ListingFilter, listing_language

PROOF = Path(ROOT) / "snippets" / "4-dispatcher" / "op_schema.py"


def highlighted(source: str, language: str) -> str:
    """`source` as the site highlights a fence of `language`, with the plugin's listing language added."""
    configs: dict[str, Any] = {}
    listing_language(configs)
    return str(
        markdown.markdown(
            code_block(language, source),
            extensions=["pymdownx.highlight", "pymdownx.superfences"],
            extension_configs=configs,
        )
    )


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def span_kinds(fragment: str) -> set[str]:
    return set(re.findall(r'<span class="([^"]*)"', fragment))


def test_a_real_proof_keeps_its_text_and_only_kept_spans() -> None:
    source = PROOF.read_text(encoding="utf-8")
    full, light = highlighted(source, "python"), highlighted(source, LISTING_LANGUAGE)
    assert text_of(light) == text_of(full), "every character of the listing is still there"
    before, after = full.count("<span"), light.count("<span")
    assert after * 3 < before, (before, after)
    kinds = span_kinds(light)
    assert kinds and kinds <= KEPT_TOKEN_CLASSES, kinds - KEPT_TOKEN_CLASSES
    assert "sd" in kinds, "docstrings keep their colour"
    assert not kinds & {"k", "s2"}, "keywords and strings are plain text"


def test_names_punctuation_and_keywords_lose_their_spans_and_docstrings_keep_theirs() -> None:
    light = highlighted('def f(a):\n    """One.\n\n    Two.\n    """\n    return a', LISTING_LANGUAGE)
    assert re.search(r"^(<[^>]+>)*def f\(a\):", light, re.M), light
    assert '<span class="sd">"""One.</span>' in light, light
    assert not span_kinds(light) & {"n", "nf", "p", "w", "o"}, span_kinds(light)


def test_kept_tokens_of_two_kinds_keep_their_own_spans_and_the_whitespace_between_stays_plain() -> None:
    light = highlighted('def f():\n    """Doc."""  # note\n    return  not y', LISTING_LANGUAGE)
    assert '<span class="sd">"""Doc."""</span>  <span class="c1"># note</span>' in light, light
    assert "return  not y" in light, light


def test_the_filter_passes_every_character_through_in_order() -> None:
    source = PROOF.read_text(encoding="utf-8")
    lexer = PythonLexer()
    tokens = list(ListingFilter().filter(lexer, lexer.get_tokens(source)))
    assert "".join(value for _, value in tokens) == "".join(value for _, value in lexer.get_tokens(source))


def test_the_listing_language_replaces_its_own_entry_and_keeps_the_others() -> None:
    other = {"name": "php-inline", "lang": "php", "options": {"startinline": True}}
    configs: dict[str, Any] = {
        "pymdownx.highlight": {"extend_pygments_lang": [other, {"name": LISTING_LANGUAGE, "lang": "text"}]}
    }
    listing_language(configs)
    languages = configs["pymdownx.highlight"]["extend_pygments_lang"]
    assert languages[0] == other
    assert [lang["lang"] for lang in languages if lang["name"] == LISTING_LANGUAGE] == ["python"]


def _converter(**highlight: Any) -> markdown.Markdown:
    """A page's Markdown as the site's: highlighting with the listing language, and SuperFences."""
    configs: dict[str, Any] = {"pymdownx.highlight": dict(highlight)}
    listing_language(configs)
    return markdown.Markdown(extensions=["pymdownx.highlight", "pymdownx.superfences"], extension_configs=configs)


def test_a_listing_is_highlighted_once_for_a_page_and_its_twin_and_again_under_other_settings() -> None:
    # A twin shows its English page's listings byte for byte: each was highlighted twice a build, and
    # again by every build of a serve session.
    listing = code_block(LISTING_LANGUAGE, f'def f():\n    """Twin {uuid.uuid4().hex}."""\n    return 1')
    before = HIGHLIGHTED.rendered
    english, twin = text_html(_converter(), listing), text_html(_converter(), listing)
    assert twin == english and HIGHLIGHTED.rendered == before + 1, "the twin's page took the English page's HTML"
    numbered = text_html(_converter(linenums=True), listing)
    assert HIGHLIGHTED.rendered == before + 2 and numbered != english, "other settings are another key"
    other = text_html(_converter(), listing.replace("return 1", "return 2"))
    assert HIGHLIGHTED.rendered == before + 3 and "return 2" in other, "other code is another key"
