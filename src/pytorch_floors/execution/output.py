"""What a block's output must be before a page shows it: no machine paths, no control bytes, balanced HTML."""

from __future__ import annotations

import re
import sys
import tempfile
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

from pytorch_floors.execution.process.scratch import WORKDIR

__all__ = [
    "MAX_OUTPUT",
    "TAIL_CHARACTERS",
    "TAIL_LINES",
    "PathScrubber",
    "clean_text",
    "escape_bidi",
    "html_problem",
    "readings",
    "tail",
]

MAX_OUTPUT = 1 << 20
"""Bytes of output a block may print (and a recording may hold for one block): a page is not a log file."""

TAIL_LINES = 20
"""Lines of what a failed block printed that its failure shows (the log and serve's banner): its last ones."""

TAIL_CHARACTERS = 2000
"""Characters of those lines at most: a block that fails after printing a megabyte on one line shows its end."""

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidirectional overrides and isolates reorder the text around them (a "Trojan Source" trick), and
# zero-width spaces hide inside a name (`to\u200bken`): a page shows both as escapes, like other invisible
# controls. The zero-width (non-)joiners U+200C and U+200D stay: emoji and some scripts are written with them.
_BIDI = re.compile("[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
# A path ends where a name cannot go on: `/tmp` is not the start of `/tmpabc1`, nor the project of `projectX`.
_PATH_END = r"(?![\w\-]|\.\w)"
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class PathScrubber:
    """Replaces the build machine's absolute paths with short names.

    The project becomes relative (`snippets/x.py`), the virtual environment `<env>`, the
    interpreter's installation `<python>`, the temporary directory `<tmp>` and the home `~`,
    longest first, so a reader sees where a file is without seeing whose machine built the page.
    The scratch folder a block runs in (`<tmp>/floors-workdir-<pid>-<random>`) reads as `.` and its
    files as relative paths, as the project did: a page never shows the build's process id.
    A path is replaced only where it ends (at `/`, a space, a quote, the end): `/tmp` in
    `/tmpcyw16_ex` and the project's path in a sibling `<project>X` are other paths, left alone.
    """

    def __init__(self, project_dir: Path) -> None:
        """Collect the paths to hide.

        Args:
            project_dir: The project root.
        """
        pairs = {
            str(project_dir): ".",
            sys.prefix: "<env>",
            sys.base_prefix: "<python>",
            tempfile.gettempdir(): "<tmp>",
            str(Path.home()): "~",
        }
        usable = {path.rstrip("/"): short for path, short in pairs.items() if path.rstrip("/") not in {"", "."}}
        project = str(project_dir).rstrip("/")
        # (pattern, replacement): the project's files read as relative paths (`<project>/snippets/x.py`
        # is `snippets/x.py`); the longest path is tried first, so the environment inside the project is `<env>`.
        choices = [(re.escape(path) + _PATH_END, short, len(path)) for path, short in usable.items()]
        choices.append((re.escape(project + "/") + r"(?=[^/\s])", "", len(project) + 1))
        choices.sort(key=lambda choice: -choice[2])
        # A block's scratch folder first: inside the temporary directory, it would otherwise read as `<tmp>/...`.
        for temporary in sorted({tempfile.gettempdir(), str(Path(tempfile.gettempdir()).resolve())}):
            folder = re.escape(temporary.rstrip("/")) + rf"/floors-{WORKDIR}-\d+-\w+"
            choices[:0] = [(folder + r"/(?=[^/\s])", "", 0), (folder + _PATH_END, ".", 0)]
        self._shorts = [short for _, short, _ in choices]
        self._pattern = re.compile("|".join(f"({pattern})" for pattern, _, _ in choices))

    def _replace(self, match: re.Match[str]) -> str:
        return self._shorts[(match.lastindex or 1) - 1]

    def __call__(self, text: str) -> str:
        """Return `text` with every known machine path replaced.

        Args:
            text: Output, an error message or a traceback.

        Returns:
            The scrubbed text.
        """
        return self._pattern.sub(self._replace, text)


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match[0]):02x}"


def escape_bidi(text: str) -> str:
    r"""Show bidirectional controls (U+202E and its kin) and zero-width spaces (U+200B) as `\uNNNN`.

    Args:
        text: Text a page will show.

    Returns:
        The text, with those controls visible.
    """
    return _BIDI.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def clean_text(text: str) -> str:
    r"""Make console output safe and readable in a page, the way a terminal would show it.

    Colour and cursor escapes are dropped, a carriage return keeps only what was written after
    it on its line (a progress bar's last state), any other control byte is shown as `\xNN`, and
    a bidirectional override or isolate (U+202E and its kin), which would reorder the text a
    reader sees, as `\uNNNN`.

    Args:
        text: What a block printed.

    Returns:
        The text to show.
    """
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROL.sub(_visible, escape_bidi(text))


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # Attribute values reach a reader too (a title shown on hover, a link copied).
        self.parts.extend(f" {value} " for _, value in attrs if value)


def readings(output: str, *, html: bool) -> tuple[str, ...]:
    """Every way a reader can read what a block printed, for the secret check to look at each.

    A check of the raw output missed a token split by a colour escape (`ghp_` + ESC[0m + the rest), which
    `clean_text` then joined on the page; HTML can split one with a tag, an entity or an invisible character.

    Args:
        output: What the block printed.
        html: Whether the page shows it as HTML (`html="1"`).

    Returns:
        The raw output, the text as shown, and that text without invisible (format) characters.
    """
    if html:
        parser = _Text()
        parser.feed(output)
        parser.close()
        shown = "".join(parser.parts)
    else:
        shown = clean_text(output)
    visible = "".join(c for c in _ANSI.sub("", shown) if unicodedata.category(c) not in {"Cf", "Cc"} or c in "\n\t")
    return output, shown, visible


_UNFINISHED = re.compile(r"<[!?/A-Za-z]")
"""The start of markup the parser has not finished at the end of the text (a lone `<` is text)."""


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problem: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.problem is None and tag not in _VOID:
            if not self.open or self.open[-1] != tag:
                expected = f"</{self.open[-1]}>" if self.open else "no closing tag"
                self.problem = f"</{tag}> closes an element it did not open (expected {expected})"
            else:
                self.open.pop()


def html_problem(html: str) -> str | None:
    """Say why HTML printed by an `html="1"` block would break the page around it, if it would.

    Args:
        html: The block's output.

    Returns:
        `None` when every element it opens it also closes, in order, and it closes nothing else;
        otherwise what is wrong.
    """
    parser = _Balance()
    parser.feed(html)
    # What the parser could not finish: an unclosed `<!--` (or `<![CDATA[`, `<?`, a tag) hides the rest of the
    # page from a browser, which reads everything after it as part of it.
    unfinished = parser.rawdata
    if _UNFINISHED.match(unfinished):
        return f"it ends inside unfinished markup: {unfinished[:40]!r}"
    parser.close()
    if parser.problem is None and parser.open:
        return f"<{parser.open[-1]}> is never closed"
    return parser.problem


def tail(text: str, *, lines: int = TAIL_LINES, characters: int = TAIL_CHARACTERS) -> str:
    """The end of `text`: its last `lines` lines, at most `characters` of them, starting with `…` where cut.

    Args:
        text: What a block printed (already made safe to show: the cut may fall inside anything).
        lines: Lines kept at most.
        characters: Characters kept at most.

    Returns:
        The end, or an empty string for text that is only white space.
    """
    every = text.rstrip().split("\n")
    end = "\n".join(every[-lines:])
    if not end.strip():
        return ""
    if len(end) > characters:
        return "…" + end[-characters:]
    return end if len(every) <= lines else "…\n" + end
