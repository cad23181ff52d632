"""A translated lab's own messages in its language: the literals its self-checks and prints say, translated.

A translated lab keeps its English lab's code, so the site runs each lab once (`kernel.code_key`) and
`translations check` compares the two without their comments. What the lab says to its reader in that
code, the message of each `expect(ok, "...")`, the answer each `expect_type(...)` names and the type it
wants, and the text of each `print(...)`, is English, and its
page shows the English run's printed lines through the catalog of printed lines (`outputs.zh.yml`,
`notebooks.translate_lab_outputs`). The same catalog translates those literals when a translated
notebook is made for its page or for download (`translated_messages`), never in the lab's source: a
message's English template (an f-string's `{expr}` parts as fields; a `print` of several arguments as it
prints them, a space apart, each argument that is no literal a field) is matched as a printed line is
(`OutputCatalog.line`, line by line, a field matching any text), and an entry that matches writes each
literal again in the lab's language, each field holding its own `{expr}` (conversion and format spec
kept); a `print` no entry matches whole has each of its literals matched alone, and a string a field
chooses (`{'raised' if raised else 'did not raise'}`) is matched alone too. A literal no entry matches
stays as written.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pytorch_floors.i18n.outputs import OutputCatalog, catalog

__all__ = ["message_templates", "said_in", "translate_messages", "translated_messages"]

_FIELD = 0xE000
"""Where the stand-ins for a message's fields start: Unicode's private use area, which no catalog entry holds."""

_CONVERSIONS = {ord("r"): "!r", ord("s"): "!s", ord("a"): "!a"}


@dataclass(frozen=True)
class _Literal:
    """A string literal of a message: its node, its text with a stand-in character for each field, the fields.

    Attributes:
        node: The literal in the cell's syntax tree.
        text: Its text, each replacement field a stand-in character.
        fields: Each stand-in → the field as written (`{size / 1e6:9.1f}`).
        said: Each stand-in → the field with the strings in it that the catalog has translated.
    """

    node: ast.Constant | ast.JoinedStr
    text: str
    fields: dict[str, str]
    said: dict[str, str]


class _Code:
    """A cell's source, with where each of its lines starts: a node's text without splitting it again."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = list(itertools.accumulate((len(line) for line in self.lines), initial=0))

    def offset(self, line: int, column: int) -> int:
        """A position as `ast` gives it (line from 1, column in UTF-8 bytes) as an index into the source."""
        return self.starts[line - 1] + len(self.lines[line - 1].encode("utf-8")[:column].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int] | None:
        """Where a node's text starts and ends in the source, where `ast` says."""
        end_line, end_column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_column is None:
            return None
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_column)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str | None:
        """A node's text in the source (`ast.get_source_segment`, which splits the source at each call)."""
        span = self.span(node)
        return None if span is None else self.source[span[0] : span[1]]


_Part = _Literal | str
"""A message's part: a literal, or the stand-in of a `print` argument that is no literal."""


def _source(expression: ast.expr, source: _Code) -> str:
    """An expression's own text in the cell, or Python's rendering of it where its position is not to be trusted."""
    written = source.segment(expression)
    if written is not None:
        try:
            same = ast.dump(ast.parse(written.strip(), mode="eval").body) == ast.dump(expression)
        except SyntaxError:
            same = False
        if same:
            return written.strip()
    return ast.unparse(expression)


def _nested(expression: ast.expr, source: _Code, lines: OutputCatalog | None) -> str:
    """An expression as written, each string in it that the catalog has as a whole line translated.

    A field can choose its words (`{'raised' if raised else 'did not raise'}`): they are part of the message.
    """
    written = _source(expression, source)
    span = source.span(expression)
    if lines is None or span is None or written != source.source[span[0] : span[1]].strip():
        return written
    segment = source.source[span[0] : span[1]]
    start = span[0] + len(segment) - len(segment.lstrip())
    changes = []
    for node in ast.walk(expression):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or node.end_col_offset is None:
            continue
        inner = source.segment(node)
        translated = _translated_text(node.value, lines)
        if inner is None or translated == node.value or inner[:1] not in ("'", '"'):
            continue
        again = inner[0] + _escaped(translated, inner[0], braces=False) + inner[0]
        if "\\" in again or not _same(inner, node):
            continue  # an f-string's field holds no backslash (Python before 3.12)
        begin = source.offset(node.lineno, node.col_offset) - start
        changes.append((begin, begin + len(inner), again))
    for begin, end, again in sorted(changes, reverse=True):
        written = written[:begin] + again + written[end:]
    return written


def _field(value: ast.FormattedValue, source: _Code, lines: OutputCatalog | None = None) -> str:
    """A replacement field as written (`{expr}`, `{expr!r}`, `{expr:.1f}`, `{x:>{w}}`), its strings translated."""
    spec = ""
    if isinstance(value.format_spec, ast.JoinedStr):
        spec = ":" + "".join(
            _field(part, source) if isinstance(part, ast.FormattedValue) else str(getattr(part, "value", ""))
            for part in value.format_spec.values
        )
    expression = _nested(value.value, source, lines) if lines is not None else _source(value.value, source)
    return "{" + expression + _CONVERSIONS.get(value.conversion, "") + spec + "}"


def _literal(node: ast.expr, source: _Code, stand_ins: Iterator[str], lines: OutputCatalog | None) -> _Literal | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _Literal(node, node.value, {}, {})
    if not isinstance(node, ast.JoinedStr):
        return None
    text, fields, said = [], {}, {}
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            stand_in = next(stand_ins)
            text.append(stand_in)
            fields[stand_in], said[stand_in] = _field(part, source), _field(part, source, lines)
        elif isinstance(part, ast.Constant):
            text.append(str(part.value))
    return _Literal(node, "".join(text), fields, said)


def _added(node: ast.expr, source: _Code, stand_ins: Iterator[str], lines: OutputCatalog | None) -> list[_Literal]:
    """The literals a message is added up from (`"..." + ", ".join(x)`), or chooses between, or itself."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _added(node.left, source, stand_ins, lines) + _added(node.right, source, stand_ins, lines)
    if isinstance(node, ast.IfExp):
        return _added(node.body, source, stand_ins, lines) + _added(node.orelse, source, stand_ins, lines)
    found = _literal(node, source, stand_ins, lines)
    return [found] if found is not None else []


def _called(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == name


_SPOKEN = {"expect": (("message", 1),), "expect_type": (("name", 0), ("wanted", 3))}
"""The self-check helpers' arguments that speak to the reader: each one's keyword and place among the positional ones
(`expect_type`'s name can be words: `f"each number in PREDICTED_STRIDES[{name!r}]"`)."""


def _printed(
    call: ast.Call, source: _Code, stand_ins: Iterator[str], lines: OutputCatalog | None
) -> Iterator[Sequence[_Part]]:
    """A `print`'s message: its arguments a space apart as one text, or each literal alone where it has a `sep`."""
    plain = not any(k.arg == "sep" for k in call.keywords) and not any(isinstance(a, ast.Starred) for a in call.args)
    parts = [_literal(argument, source, stand_ins, lines) or next(stand_ins) for argument in call.args]
    if plain:
        yield parts  # printed a space apart: one line (or more) as the run prints it
    else:
        yield from ([part] for part in parts if isinstance(part, _Literal))
    for argument in call.args:  # an argument added up from strings (`"passed: " + ", ".join(x)`): each alone
        if isinstance(argument, ast.BinOp | ast.IfExp):
            yield from ([literal] for literal in _added(argument, source, stand_ins, lines))


def _messages(tree: ast.AST, source: _Code, lines: OutputCatalog | None = None) -> Iterator[Sequence[_Part]]:
    """Each message of a cell as the parts of one printed text: an `expect`'s literals one by one, a `print` whole."""
    stand_ins = (chr(code) for code in itertools.count(_FIELD))
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        if _called(call, "print") and call.args:
            yield from _printed(call, source, stand_ins, lines)
        for name, arguments in _SPOKEN.items():
            if not _called(call, name):
                continue
            for keyword, place in arguments:
                spoken = [*call.args[place : place + 1], *(k.value for k in call.keywords if k.arg == keyword)]
                for message in spoken:
                    yield from ([literal] for literal in _added(message, source, stand_ins, lines))


def _text(parts: Sequence[_Part]) -> str:
    return " ".join(part.text if isinstance(part, _Literal) else part for part in parts)


def message_templates(source: str) -> list[str]:
    """What a code cell says to its reader: each `expect` message's (and `expect_type` type's) literals, each `print`.

    Args:
        source: A code cell.

    Returns:
        Each message's text, each field as written (`{expr}`, a `print` argument that is no literal
        `{…}`); none for a cell Python cannot parse (a magic).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for parts in _messages(tree, _Code(source)):
        text = _text(parts)
        for part in parts:
            fields = part.fields if isinstance(part, _Literal) else {part: "{…}"}
            for stand_in, field in fields.items():
                text = text.replace(stand_in, field)
        found.append(text)
    return found


def _translated_text(text: str, lines: OutputCatalog) -> str:
    """A text with each line an entry matches as a whole in the catalog's language; the other lines as written."""
    return "\n".join(lines.line(line) or line for line in text.split("\n"))


def _split(parts: Sequence[_Part], translated: str) -> list[tuple[_Literal, str]] | None:
    """Each literal of a message with its share of the translated text, or `None` where it cannot be told.

    The stand-ins of the `print` arguments that are no literals cut the text, in their English order; each
    piece between two of them is the one literal printed there (the space `print` puts around it dropped).
    """
    literals = [part for part in parts if isinstance(part, _Literal)]
    stand_ins = [
        *(s for literal in literals for s in literal.fields),
        *(part for part in parts if isinstance(part, str)),
    ]
    if any(translated.count(stand_in) != 1 for stand_in in stand_ins):
        return None  # an entry that drops or repeats a field
    gaps: list[list[_Literal]] = [[]]
    pieces, rest = [], translated
    for part in parts:
        if isinstance(part, _Literal):
            gaps[-1].append(part)
            continue
        before, found, rest = rest.partition(part)
        if not found:
            return None
        pieces.append(before)
        gaps.append([])
    pieces.append(rest)
    shares = []
    for index, (gap, cut) in enumerate(zip(gaps, pieces, strict=True)):
        piece = cut[1:] if index > 0 and cut.startswith(" ") else cut
        piece = piece[:-1] if index < len(pieces) - 1 and piece.endswith(" ") else piece
        if len(gap) > 1 or (not gap and piece.strip()):
            return None  # two literals side by side, or words where no literal was
        if gap:
            if any(stand_in not in piece for stand_in in gap[0].fields):
                return None  # a field moved into another literal
            shares.append((gap[0], piece))
    return shares


def _escaped(text: str, quote: str, *, braces: bool) -> str:
    """Text as it is written between `quote`s: the quote, backslashes and controls escaped (and braces doubled)."""
    written = []
    for char in text:
        if char in ("\\", quote):
            written.append("\\" + char)
        elif not char.isprintable() and not 0xE000 <= ord(char) <= 0xF8FF:
            written.append(repr(char)[1:-1])  # `\n`, `\t`, `\x00`: as Python writes them
        else:
            written.append(char * 2 if braces and char in "{}" else char)
    return "".join(written)


def _written(literal: _Literal, text: str, fields: dict[str, str]) -> str | None:
    """`literal` written again holding `text`, its stand-ins `fields`, or `None` where no quote can hold them."""
    if not fields:
        return '"' + _escaped(text, '"', braces=False) + '"'
    for quote in ('"', "'"):
        if any(quote in field or "\\" in field for field in fields.values()):
            continue  # a field may hold neither its f-string's quote nor a backslash (Python before 3.12)
        body = _escaped(text, quote, braces=True)
        for stand_in, field in fields.items():
            body = body.replace(stand_in, field)
        return f"f{quote}{body}{quote}"
    return None


def _same(written: str, node: ast.expr) -> bool:
    """Whether a literal written again parses to `node` (a `u` prefix aside): its fields were read back right."""
    bare = copy.deepcopy(node)
    for part in ast.walk(bare):
        if isinstance(part, ast.Constant):
            part.kind = None
    return ast.dump(ast.parse(written, mode="eval").body) == ast.dump(bare)


def translate_messages(source: str, language: str) -> str:
    """A code cell with its messages' literals in a language, where the catalog of printed lines has them.

    Args:
        source: A code cell of a lab.
        language: The lab's language; English (or a language without a catalog) leaves the cell as it is.

    Returns:
        The cell, each matched literal rewritten; the very same string when none is.
    """
    lines = catalog(language)
    if lines is None:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    code = _Code(source)
    changes: list[tuple[int, int, str]] = []
    for parts in _messages(tree, code, lines):
        english = _text(parts)
        translated = _translated_text(english, lines)
        shares = _split(parts, translated) if translated != english else None
        if shares is None:  # not in the catalog as printed whole: each literal may be (`print("versions:", v)`)
            literals = [part for part in parts if isinstance(part, _Literal)]
            alone = [(literal, _translated_text(literal.text, lines)) for literal in literals]
            shares = [(literal, text) for literal, text in alone if _split([literal], text) is not None]
        for literal, text in shares:
            span = code.span(literal.node)
            again, written = _written(literal, literal.text, literal.fields), _written(literal, text, literal.said)
            if span is None or again is None or written is None:
                continue
            if written == again or not _same(again, literal.node):
                continue  # nothing to translate, or a field not read back as it is written
            changes.append((*span, written))
    translated_source = source
    for start, end, written in sorted(changes, reverse=True):
        translated_source = translated_source[:start] + written + translated_source[end:]
    try:
        ast.parse(translated_source)
    except SyntaxError:  # never expected: the lab's code is never made unrunnable for its language's sake
        return source
    return translated_source


def translated_messages(notebook: Any, language: str) -> Any:
    """A copy of a lab's notebook whose code cells' messages are in `language` (`translate_messages`).

    Made after the lab's run is keyed (`kernel.code_key` reads the lab as written), for its page and its
    downloads: the code runs as it did, saying what it says in the lab's language.

    Args:
        notebook: A lab, as read by jupytext (its helpers in place or not).
        language: The lab's language (`cells.lab_language`).

    Returns:
        The copy; `notebook` itself for English.
    """
    if catalog(language) is None:
        return notebook
    translated = copy.deepcopy(notebook)
    for cell in translated.cells:
        if cell.cell_type == "code":
            cell.source = translate_messages(cell.source, language)
    return translated


def said_in(source: str, language: str) -> list[tuple[str, str]]:
    """Each message of a lab's code that its language says otherwise: (as written, as translated).

    What a translated lab's page shows of its code depends on these, not on the rest of the catalog: the
    labs' rendered pages are cached on them (`notebooks.jupyter_cache_dir`).

    Args:
        source: A lab's code (a cell, or the whole percent-format file, which Python reads as one).
        language: The lab's language.

    Returns:
        The messages `translate_messages` changes, in order (`message_templates`).
    """
    translated = translate_messages(source, language)
    if translated == source:
        return []
    pairs = zip(message_templates(source), message_templates(translated), strict=True)
    return [(english, said) for english, said in pairs if english != said]
