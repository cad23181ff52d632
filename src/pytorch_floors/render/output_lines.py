"""A proof's printed text as the page shows it: one span per line, table rows told from prose.

At 390 px an output's code shows 48 columns, and 56 of the 75 outputs of the floors, compile and
distributed pages ran past that width (issue 59): on a phone a code block scrolled sideways as a whole,
so a sentence or a quoted error (floor 7's "view size is not compatible …", 156 columns) showed its first
third. A table of numbers must keep its columns, so it may scroll; a sentence must wrap.

Why a template and not Pygments: outputs use the `text` lexer, which marks nothing, so Pygments
(through `pymdownx.highlight`) wrote the text inside one `<code>` and nothing told a row from prose;
its `line_spans` option wraps each line, but names the spans by a counter that each rendering starts
again (the same ids twice on a page) and gives them no class. Rewriting its HTML by pattern is what the
house rules forbid. So `output_html` writes the same wrapper (`div.highlight > pre > span + code`, the
marked lines in `span.hll`, as `hl_lines` marks them) from `output_text.html`, each line in its own
`span.floors-line`, a table row's with `floors-line--row`, a line's leading spaces as `--floors-lead`.
floors.css (`docs/stylesheets/floors.css`) then, on a phone only, makes each line a box of the block's
width that wraps at spaces with its continuation two columns in from the line's own first character (a
hanging indent), and leaves a row unwrapped, so a block scrolls only for its rows. On a wide screen and
in print the spans change nothing. The text is the text Pygments showed, character for character
(`shown_text`): the copy button and the machines' tabs read the same lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape, unescape

from markupsafe import Markup

from pytorch_floors.render.templates import template

__all__ = ["OUTPUT_LANGUAGE", "figure_text_html", "output_html", "shown_text", "table_rows"]

OUTPUT_LANGUAGE = "text"
"""The language of printed output (`BlockOptions.result_language` by default): shown by `output_html`."""

# A run of two or more spaces between two characters that are not spaces: what separates a table's columns.
# Not after a semicolon: FX writes generated Python with each statement's cleanup after `;  `
# (`sin = torch.sin(x);  x = None`, torch/fx/graph.py), a line of code that wraps like any other, not a row.
_COLUMN_GAP = re.compile(r"[^\s;] {2,}\S")

# Python-Markdown's tab width: it expands tabs before the fence reaches Pygments.
_TAB = 4


def shown_text(text: str) -> str:
    """The text a `text` fence showed, as Python-Markdown and Pygments left it.

    Python-Markdown drops its placeholder characters, ends every line with a newline, expands tabs and
    empties a line of spaces alone; Pygments drops a byte-order mark and the blank lines at both ends.

    Args:
        text: What the block printed (translated for its page).

    Returns:
        The text the page shows (without the final newline Pygments adds).
    """
    text = text.replace("\x02", "").replace("\x03", "").replace("\r\n", "\n").replace("\r", "\n")
    lines = ["" if not line.strip(" ") else line for line in text.expandtabs(_TAB).split("\n")]
    return "\n".join(lines).removeprefix("\ufeff").strip("\n")


def table_rows(lines: Sequence[str]) -> list[bool]:
    """Which lines are a table's: they never wrap, so their columns stay aligned.

    A row has columns apart by two spaces or more (leading spaces are an indent, not a column, and the two
    spaces FX writes after a statement's `;` are code's); a line between two rows (a rule under a header, a
    cell's second line) is the table's too.

    Args:
        lines: An output's lines.

    Returns:
        For each line, whether it is a table's.
    """
    rows = [bool(_COLUMN_GAP.search(line)) for line in lines]
    return [
        row or (0 < number < len(lines) - 1 and rows[number - 1] and rows[number + 1] and bool(lines[number].strip()))
        for number, row in enumerate(rows)
    ]


def output_html(text: str, marked: Sequence[int] = ()) -> str:
    """A `text` output's HTML: the wrapper `pymdownx.highlight` writes, one classed span per line.

    Args:
        text: What the block printed (translated for its page).
        marked: Lines to mark, from 1, as `hl_lines` numbers them (a machine's lines that differ from this build's).

    Returns:
        The HTML.
    """
    return _lines_html(shown_text(text).split("\n"), marked, figure=False)


def _lines_html(lines: list[str], marked: Sequence[int], *, figure: bool) -> str:
    """`output_text.html` for these lines: a text output's wrapper, or a figure's (`figure`)."""
    rows = table_rows(lines)
    shown = []
    for number, (line, row) in enumerate(zip(lines, rows, strict=True), start=1):
        lead = len(line) - len(line.lstrip(" "))
        # An indented prose line's leading spaces and first word, apart: the browser may break a line after
        # its leading spaces, and did when the first word did not fit beside them (floor 4's source paths),
        # leaving a row of spaces; floors.css breaks that word instead (`.floors-line__head`).
        head = line[: lead + len(line[lead:].split(" ", 1)[0])] if lead and not row else ""
        # Escaped as before, so a printed line is byte for byte what it was in the page's HTML: as Pygments
        # escapes a text output (`&`, `<`, `>`, quotes as they are), as `plot.show` escapes a figure's.
        text, head_html, rest = (Markup(escape(part, quote=figure)) for part in (line, head, line[len(head) :]))
        shown.append({"text": text, "head": head_html, "rest": rest, "row": row, "lead": lead})
        shown[-1]["marked"] = number in marked
    return template("output_text.html").render(lines=shown, figure=figure)


# A figure's text part (`pytorch_floors.plot.show` writes it; `recordings.html.allowed_html` writes a
# recording's again in the same shape) and a line of it that a machine's tab marked (`tier_differing_line.html`).
_FIGURE_TEXT = re.compile(r'<pre class="floors-output"><code>(.*?)</code></pre>', re.S)
_MARKED = re.compile(r'<span class="hll">([^<]*)</span>')


def figure_text_html(html: str) -> str:
    """A figure's output with each text part written line by line, as `output_html` writes a text output.

    The numbers a figure prints above its chart are a table as often as a sentence (floor 4's source
    paths, floor 8's copy times); the process that drew it writes them as one escaped block, so they are
    found here and written again: the same text, each line a span, a marked line still marked. A part
    that holds any other markup is left as it is.

    Args:
        html: The figure's output, translated for its page and with its differing lines marked.

    Returns:
        The output, each text part one span per line.
    """

    def lined(part: re.Match[str]) -> str:
        lines: list[str] = []
        marked: list[int] = []
        for number, written in enumerate(part[1].split("\n"), start=1):
            found = _MARKED.fullmatch(written)
            if found is not None:
                marked.append(number)
            line = written if found is None else found[1]
            if "<" in line:
                return part[0]
            lines.append(unescape(line))
        return _lines_html(lines, marked, figure=True)

    return _FIGURE_TEXT.sub(lined, html)
