"""The theme's chrome loses its indentation, and nothing else: text, article and preformatted content stay."""

from __future__ import annotations

from html.parser import HTMLParser

from pytorch_floors.render.chrome import squeeze_chrome

PAGE = """<html>
  <head>
    <script>
      const keep = "  its   spaces  ";
    </script>
  </head>
  <body>
    <nav>
      <a href="x">
        Floor 1
      </a>
      <pre>  a
    b</pre>
    </nav>
    <article>
      <pre>
  indented
      </pre>
    </article>
  </body>
</html>
"""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.words += data.split()


def parsed(html: str) -> tuple[list[str], list[str]]:
    text = _Text()
    text.feed(html)
    return text.words, text.tags


def test_the_chrome_loses_its_indentation_and_keeps_its_words_tags_and_preformatted_text() -> None:
    squeezed = squeeze_chrome(PAGE)
    assert len(squeezed) < len(PAGE)
    assert parsed(squeezed) == parsed(PAGE)
    assert '      const keep = "  its   spaces  ";\n    </script>' in squeezed, "a script's text is its own"
    assert "<pre>  a\n    b</pre>" in squeezed, "preformatted text keeps its spaces"
    assert PAGE[PAGE.index("<article") :] == squeezed[squeezed.index("<article") :], "the article is untouched"
    assert "\n<nav>\n<a href" in squeezed
