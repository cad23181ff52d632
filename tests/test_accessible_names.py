"""Accessible names read as words: no HTML entity leaks into a label a screen reader speaks."""

import re

from pytorch_floors.anchors import add_copy_links

HEADING = '<h2 id="what-you-see">What you see &amp; why<a class="headerlink" href="#what-you-see">&para;</a></h2>'


def test_copy_link_label_is_the_heading_text_without_the_permalink_entity() -> None:
    html = add_copy_links(HEADING, "https://example.invalid/floors/4-dispatcher/")
    labels = re.findall(r'aria-label="([^"]*)"', html)
    # The attribute value escapes "&" once; decoded, the name is the heading's words.
    assert labels == ["Copy link to section: What you see &amp; why"]
    assert "para;" not in labels[0] and "¶" not in labels[0]
