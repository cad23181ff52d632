"""A proof's printed text on the page: one span per line, a table's rows told from prose (issue 59).

At 390 px 56 of the 75 outputs of the floors, compile and distributed pages scrolled sideways as a whole,
sentences and quoted errors included (floor 7's "view size is not compatible …", 156 columns): on a
phone floors.css wraps a prose line and scrolls a table's row, which it tells by these spans."""

from __future__ import annotations

import re
import unicodedata
from html import unescape

import pytest
from markdown import Markdown

from conftest import ROOT
from pytorch_floors.i18n.outputs import translate_output
from pytorch_floors.plugin.fence import fenced, text_html
from pytorch_floors.recordings.schema import read_recordings
from pytorch_floors.recordings.tabs import marked_text_parts
from pytorch_floors.render.output_lines import figure_text_html, output_html, shown_text, table_rows


def test_a_row_has_columns_apart_by_two_spaces_and_an_indent_is_not_a_column() -> None:
    lines = [
        "  view size is not compatible with input tensor's size and stride (at least one dimension",
        "elements      bytes   x.to(torch.float32)",
        "-----------   -----   -------------------",
        "       1,024  4.10 kB              728 ns",
        "    a sentence, indented",
        "",
        "  key   add",
        "  a rule between two rows:",
        "  CPU   kernel",
    ]
    assert table_rows(lines) == [False, True, True, True, False, False, True, True, True]


def test_generated_fx_code_is_a_line_of_code_not_a_row() -> None:
    """FX ends a statement with `;  x = None` (torch/fx/graph.py): the compile page's and the distributed annex's
    graphs scrolled sideways as rows at 390 px (96 columns), where C++ code beside them wrapped."""
    lines = [
        "def forward(self, primals_1, primals_2):",
        "    sin = torch.ops.aten.sin.default(primals_1);  primals_1 = None",
        "    all_reduce = torch.ops._c10d_functional.all_reduce.default(mul, 'sum', '0')",
        "    copy = torch.ops.aten.copy.default(mul, wait_tensor);  mul = wait_tensor = None",
        "x;  y  z",
    ]
    assert table_rows(lines) == [False, False, False, False, True]


def test_a_line_between_two_rows_is_the_tables_but_a_blank_line_or_the_last_line_is_not() -> None:
    assert table_rows(["a  b", "", "c  d"]) == [True, False, True]
    assert table_rows(["a  b", "prose"]) == [True, False]
    assert table_rows(["prose", "a  b", "prose"]) == [False, True, False]


_SPAN = re.compile(r"</?span\b[^>]*>")


def _text(html: str) -> str:
    """The text of HTML whose only tags are spans and the code block's wrapper (what a reader's browser shows)."""
    return unescape(re.sub(r"<[^>]*>", "", html))


@pytest.mark.parametrize(
    "printed",
    [
        "a  b <x> & 'q' \"r\"\n\tc\n",
        "\n\nafter two blank lines\n   \n  last\n\n",
        "\ufeffmark\r\nwindows\rmac",
        "  view size is not compatible with input tensor's size and stride",
    ],
)
def test_the_text_and_the_marked_lines_are_those_pygments_showed(printed: str) -> None:
    """The copy button and the machines' tabs read the printed text: the spans add elements, never a character."""
    md = Markdown(extensions=["pymdownx.highlight", "pymdownx.superfences"])
    marked = [1, 2]
    before = text_html(md, fenced("text", printed, marked))
    after = output_html(printed, marked)
    assert _text(after) == _text(before)
    assert _SPAN.sub("", after) == _SPAN.sub("", before), "the same HTML but for the spans, escapes included"
    assert after.count('<span class="hll">') == before.count('<span class="hll">')
    assert after.startswith('<div class="highlight"><pre><span></span><code>')


def test_each_line_is_a_span_a_row_is_marked_and_its_indent_is_named() -> None:
    html = output_html("result:\n    a long sentence that wraps\nname   value\n\n")
    assert '<span class="floors-line">result:</span>\n' in html
    assert (
        '<span class="floors-line" style="--floors-lead: 4ch"><span class="floors-line__head">    a</span> long' in html
    ), "an indented line's spaces and first word apart: the word breaks, not the line after its spaces"
    assert "that wraps</span>\n" in html
    assert '<span class="floors-line floors-line--row">name   value</span>\n' in html


FIGURE = (
    '<pre class="floors-output"><code>source paths &lt;at the commit&gt; for a reader who opens them\n'
    "elements   a + b\n       1   925 ns</code></pre>\n"
    '<figure class="floors-figure"><figcaption>Add</figcaption></figure>'
)


def test_a_figures_text_is_written_line_by_line_with_its_marks_and_its_chart_untouched() -> None:
    """A figure's numbers are printed as one escaped block (`plot.show`): on a phone they scrolled whole too."""
    recorded, differing = marked_text_parts(FIGURE, FIGURE.replace("925", "1.2"))
    assert differing == 1
    lined = figure_text_html(recorded)
    assert _text(lined) == _text(recorded), "the same text, a mark adds no character"
    assert lined.count('<span class="hll">') == 1
    assert '<span class="hll"><span class="floors-line floors-line--row" style="--floors-lead: 7ch">' in lined
    assert '<span class="floors-line">source paths &lt;at the commit&gt; for a reader who opens them</span>\n' in lined
    assert lined.endswith(
        '1.2 ns</span></span></code></pre>\n<figure class="floors-figure"><figcaption>Add</figcaption></figure>'
    )
    assert '<pre class="floors-output"><code>' in lined and lined.count("<figure") == 1
    other = '<pre class="floors-output"><code>a <b>bold</b> line</code></pre>'
    assert figure_text_html(other) == other, "markup the project never writes there is left as it is"


def test_every_recorded_text_output_is_pygments_html_but_for_the_spans() -> None:
    """The machines' recorded outputs (recordings/): real proofs' lines, errors and tables, shown as before."""
    md = Markdown(extensions=["pymdownx.highlight", "pymdownx.superfences"])
    blocks = [block for recording in read_recordings(ROOT / "recordings") for block in recording.blocks]
    texts = [block.output for block in blocks if not block.html]
    assert len(texts) > 100, "the recordings hold too few text outputs to check"
    differ = [
        text[:60]
        for text in texts
        if _SPAN.sub("", output_html(text)) != _SPAN.sub("", text_html(md, fenced("text", text)))
    ]
    assert differ == []


PHONE_COLUMNS = 48
"""What an output shows at 390 px (CONTRIBUTING, "Add a proof"): a table's row wider than this scrolls on a phone."""


def _columns(line: str) -> int:
    """A line's width in columns, as a monospace font draws it: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in line)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_recorded_tables_rows_fit_a_phone(language: str) -> None:
    """Issue 59: 10 of 11 outputs scrolled on floor 4, and every floor printed for a desktop. The proofs now
    print for a phone; what the four machines recorded (and a page shows in their tabs, in each language)
    keeps them to it: a proof that prints a wider table, or a release that makes a column wider (2.14.1's
    module names in floor 2's import list, 54 columns), fails here once it is recorded."""
    wide = [
        f"{recording.tier} {block.page} › {block.block_id}: {_columns(line)} columns: {line.strip()[:50]!r}"
        for recording in read_recordings(ROOT / "recordings")
        for block in recording.blocks
        if not block.html
        for lines in [shown_text(translate_output(block.output, language, html=False)).split("\n")]
        for line, row in zip(lines, table_rows(lines), strict=True)
        if row and _columns(line) > PHONE_COLUMNS
    ]
    assert wide == [], "\n".join(wide)
