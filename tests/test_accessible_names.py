"""Accessible names read as words: no HTML entity leaks into a label a screen reader speaks."""

import re

from pytorch_floors.render.headings import add_section_controls, control_template

HEADING = '<h2 id="what-you-see">What you see &amp; why<a class="headerlink" href="#what-you-see">&para;</a></h2>'


def test_section_control_label_is_the_heading_text_without_the_permalink_entity() -> None:
    for citable, verb in ((True, "Link or cite section"), (False, "Copy link to section")):
        html = add_section_controls(
            HEADING,
            src_uri="floors/4-dispatcher.md",
            page_url="https://example.invalid/floors/4-dispatcher/",
            name="2026.12",
            citable=citable,
            template=control_template(),
        )
        labels = re.findall(r'aria-label="([^"]*)"', html)
        # The attribute value escapes "&" once; decoded, the name is the heading's words.
        assert labels == [f"{verb}: What you see &amp; why"]
        assert "para;" not in labels[0] and "¶" not in labels[0]
