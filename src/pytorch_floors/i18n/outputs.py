"""What a proof printed or drew, shown in the page's language: its explanatory lines and its figures' words.

A proof prints English: its sentences explain the run's numbers ("Here, on 2 threads against one, the
matmul ran 1.63× as fast …"). A Chinese page shows the English page's result of the same build
(`Engine.twin`), and a proof is never edited for a language: that would run every proof again and
make every recording stale. So the translation happens when the output is rendered. The catalog
(`outputs.zh.yml`) maps a line as the proof prints it, with `{name}` fields where the run's numbers and
words go, to its translation with the same fields: `Here, on {threads} threads against one, …` →
`这里，{threads} 个线程对一个线程，…`. A line matches an entry only as a whole (its indentation kept);
a line no entry matches (a table row, a tensor, an operator's name, a quoted error) is shown as printed.

A figure is HTML (an SVG chart, a list of bars, the building): only its text is translated, each text
run as a line, read with the standard library's HTML parser; its elements and attributes come out as
they went in. A downloaded proof still prints English: the catalog applies only where a page renders.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import cache, cached_property
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from pytorch_floors.errors import InputError
from pytorch_floors.floors import FLOORS
from pytorch_floors.i18n.yaml_files import read_yaml

__all__ = ["OutputCatalog", "catalog", "catalog_path", "english_runs", "translate_line", "translate_output"]

_CATALOG_FILES = {"zh": "outputs.zh.yml"}
"""Each language's catalog of printed lines, beside this module."""

_REMEMBERED_LINES = 200_000
"""How many lines a catalog remembers the answer for (a few MB) before it forgets them all and starts again."""

_RAW_TEXT = frozenset({"script", "style"})
"""Elements whose text is code, not words: passed through untouched."""

# A word of English prose: lower case, or capitalised (`the`, `Here`), perhaps with an apostrophe or a hyphen
# inside (`don't`, `row-major`); `CPU`, `AutogradCPU`, `grad_fn` and `x.t()` are names, not words, and a
# single letter other than `a` is a variable (`n x n`).
_WORD = r"(?:[A-Z][a-z]+|[a-z]{2,}|[aA])(?:['’-][a-z]+)*"
# Three or more such words in a row, one space apart (`the matmul ran`): a table's columns are further apart,
# and a list of names (`sin, mul, add`) is not prose.
_ENGLISH_RUN = re.compile(rf"(?<![\w.'’-])(?:{_WORD} ){{2,}}{_WORD}(?![\w('’-])(?!\.\w)")


@dataclass(frozen=True)
class _Entry:
    english: str
    translation: str
    pattern: re.Pattern[str]
    prefix: str


def _entry(english: str, translation: str, where: str) -> _Entry:
    """One catalog entry, its English compiled to a pattern that matches a whole line.

    Raises:
        InputError: If either side is not a template with plain-name fields, a field is used twice, the
            two sides' fields differ, or a side spans lines.
    """
    if "\n" in english or "\n" in translation:
        raise InputError(f"{where}: {english[:80]!r}: an entry is one line, and so is its translation")
    parts: list[str] = []
    names: list[str] = []
    literals: list[str] = []
    try:
        for literal, name, spec, conversion in string.Formatter().parse(english):
            literals.append(literal)
            parts.append(re.escape(literal))
            if name is None:
                continue
            if not name.isidentifier() or spec or conversion or name in names:
                raise InputError(f"{where}: {english[:80]!r}: each field is a plain name, used once")
            names.append(name)
            parts.append(f"(?P<{name}>.+?)")
        translated = {name for _, name, _, _ in string.Formatter().parse(translation) if name is not None}
    except ValueError as error:
        raise InputError(f"{where}: {english[:80]!r}: not a template: {error}") from None
    if translated != set(names):
        raise InputError(
            f"{where}: the translation of {english[:80]!r} has the fields {sorted(translated)}, "
            f"its English {sorted(names)}: each value of the run appears once in both"
        )
    # What every matching line starts with: the text before the first field (`{{` is a brace, as in a template).
    prefix = literals[0] if names else "".join(literals)
    return _Entry(english, translation, re.compile("".join(parts)), prefix)


@dataclass(frozen=True)
class OutputCatalog:
    """One language's printed lines: English line (or template) → translation.

    Attributes:
        entries: The entries in the file's order (the first that matches a line translates it).
    """

    entries: tuple[_Entry, ...]
    _translated: dict[str, str | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Each line asked for, and its answer: a page shows four recordings of a proof beside its run, mostly the
    same lines, and a build asks for some 15,000 lines (translating them was a third of the first `make serve`
    build's time on a 2-core AMD EPYC)."""

    @cached_property
    def _by_first_character(self) -> dict[str, tuple[_Entry, ...]]:
        """Per first character of a prefix, the entries a line starting with it can match, in the catalog's order.

        Those are the entries with that first character, and those whose line starts with a field.
        """
        firsts = {entry.prefix[0] for entry in self.entries if entry.prefix}
        return {
            first: tuple(entry for entry in self.entries if not entry.prefix or entry.prefix[0] == first)
            for first in firsts
        }

    @cached_property
    def _unprefixed(self) -> tuple[_Entry, ...]:
        """The entries whose line starts with a field: the only ones a line can match that no prefix starts."""
        return tuple(entry for entry in self.entries if not entry.prefix)

    @classmethod
    def from_mapping(cls, mapping: dict[str, str], where: str = "catalog") -> OutputCatalog:
        """A catalog from English → translation.

        Args:
            mapping: The entries.
            where: What a refusal names.

        Returns:
            The catalog.

        Raises:
            InputError: If an entry is not a line with plain-name fields that its translation has too.
        """
        return cls(tuple(_entry(english, translation, where) for english, translation in mapping.items()))

    def line(self, line: str) -> str | None:
        """A line's translation, or `None` when no entry matches it as a whole (its ends' spaces kept).

        Args:
            line: One line of output, without its newline.

        Returns:
            The translated line.
        """
        if line in self._translated:
            return self._translated[line]
        if len(self._translated) >= _REMEMBERED_LINES:  # a serve session's runs print new numbers build after build
            self._translated.clear()
        self._translated[line] = translated = self._line(line)
        return translated

    def _line(self, line: str) -> str | None:
        core = line.strip()
        if not core:
            return None
        for entry in self._by_first_character.get(core[0], self._unprefixed):
            if not core.startswith(entry.prefix):
                continue
            match = entry.pattern.fullmatch(core)
            if match is None:
                continue
            start = line.index(core)
            translated = entry.translation.format(**match.groupdict())  # `{{` is a brace here too
            return line[:start] + translated + line[start + len(core) :]
        return None


def catalog_path(language: str) -> Path | None:
    """The file of a language's catalog of printed lines; `None` for a language without one (English)."""
    name = _CATALOG_FILES.get(language)
    return None if name is None else Path(__file__).with_name(name)


@cache
def catalog(language: str) -> OutputCatalog | None:
    """A language's catalog of printed lines, read once; `None` for a language without one (English).

    Raises:
        InputError: If the file is not a map of one-line strings whose fields agree (`OutputCatalog`).
    """
    path = catalog_path(language)
    if path is None:
        return None
    name = path.name
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"{name}: expected a map of printed English lines to their translations")
    # A floor's title, as the building draws it, is the registry's: the one list of floors and their titles.
    titles = {floor.title: floor.title_in(language) for floor in FLOORS}
    return OutputCatalog.from_mapping({**titles, **data}, name)


def translate_line(line: str, language: str) -> str:
    """One printed line in a language: its translation, or the line as printed when the catalog has none.

    Args:
        line: The line, without its newline.
        language: The page's language (`en`, `zh`).

    Returns:
        The line to show.
    """
    lines = catalog(language)
    if lines is None:
        return line
    translated = lines.line(line)
    return line if translated is None else translated


def _text(text: str, language: str) -> str:
    """Text of several lines, each translated on its own: as many lines come out as went in."""
    return "\n".join(translate_line(line, language) for line in text.split("\n"))


class _Translator(HTMLParser):
    """Writes HTML out again as it came in, with each text run translated as lines."""

    def __init__(self, language: str) -> None:
        super().__init__(convert_charrefs=True)
        self.language = language
        self.parts: list[str] = []
        self.raw = False
        self.changed = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parts.append(self.get_starttag_text() or "")
        self.raw = tag in _RAW_TEXT

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parts.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")
        self.raw = False

    def handle_data(self, data: str) -> None:
        if self.raw:
            self.parts.append(data)
            return
        translated = _text(data, self.language)
        self.changed = self.changed or translated != data
        self.parts.append(escape(translated, quote=False))

    def handle_comment(self, data: str) -> None:
        self.parts.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.parts.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.parts.append(f"<?{data}>")

    def unknown_decl(self, data: str) -> None:
        self.parts.append(f"<![{data}]>")


def translate_output(output: str, language: str, *, html: bool) -> str:
    """What a block printed (or drew), in a language: each line or text run the catalog has, translated.

    Args:
        output: The block's output as the run (or a recording) holds it.
        language: The page's language; English, or a language without a catalog, returns `output` as it is.
        html: The output is HTML (a figure, `html="1"`): only its text runs are translated.

    Returns:
        The output to show; the very same string when nothing in it was translated.
    """
    if catalog(language) is None or not output:
        return output
    if not html:
        return _text(output, language)
    translator = _Translator(language)
    translator.feed(output)
    translator.close()
    return "".join(translator.parts) if translator.changed else output


def english_runs(text: str) -> list[str]:
    """The runs of three or more English words in a text (`the matmul ran`), each as found.

    A word is letters only: an identifier (`grad_fn`, `torch.add`, `AVX2`) is not one, nor is a call
    (`view(-1)`). What is prose and what is a quoted error or a name is the caller's to judge.

    Args:
        text: A line or a figure's text.

    Returns:
        The runs, in order.
    """
    return [match.group(0) for match in _ENGLISH_RUN.finditer(text)]
