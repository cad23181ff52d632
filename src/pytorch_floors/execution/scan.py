"""Find the executed blocks of a Markdown page before it is rendered.

The Markdown renderer hands a block to the formatter with its snippet includes
already expanded, so the formatter alone cannot say which proof file a line came
from. Scanning the raw page first gives each block its id, its proof file and a
map from code lines back to the file and line they came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.options import BlockOptions, OptionError
from pytorch_floors.execution.snippet_target import has_section, included_lines, parse_target

__all__ = ["ExecBlock", "ScanError", "check_includes", "executes", "included_paths", "not_utf8", "scan_markdown"]

# A fence, also inside a blockquote (`> ```python`) and in the brace form (```{.python exec="1"}).
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*(?:>[ \t]*)*)(?P<fence>`{3,}|~{3,})[ \t]*"
    r"(?:\{[ \t]*\.?(?P<braced>[\w+-]+)(?P<braced_attrs>[^\n`}]*)\}|(?P<lang>[\w+-]+)(?P<attrs>[^\n`]*))[ \t]*$"
)
# What prose holds that opens or closes a comment, or hides an opener: a comment's marks, an escaped
# backslash or backtick (text), and a run of backticks (a code span's opening).
_PROSE_TOKEN = re.compile(r"<!--|-->|\\[\\`]|`+")
# A blank line (also a blockquote's `>` alone) ends a paragraph, and with it any code span.
_BLANK_LINE = re.compile(r"\n[ \t>]*\n")
_ATTR = re.compile(r'(?P<name>[\w-]+)=(?:"(?P<quoted>[^"]*)"|(?P<bare>\S+))')
# pymdownx.snippets' own grammar (its `RE_ALL_SNIPPETS` and `RE_SNIPPET_SECTION`): an inline include
# (`--8<-- "path"` or `--8<-- 'path'`), the marker alone (opening or closing a block of paths, one a line),
# either escaped by a leading `;` (then it is a line of code, less one `;`), and a section marker line.
_SNIPPET = re.compile(
    r"""^(?P<space>[ \t]*)(?P<escape>;*)(?:(?P<inline>-{1,}8<-{1,}[ \t]+)"""
    r"""(?P<snippet>"(?:\\"|[^"\n\r])+?"|'(?:\\'|[^'\n\r])+?')(?![ \t])|(?P<block>-{1,}8<-{1,})(?![ \t]))\r?$"""
)
_SECTION = re.compile(
    r"^(?P<pre>.*?)(?<!;)(?!(?<=-)-)(?P<escape>;*)(?P<marker>-{1,}8<-{1,}[ \t]+)"
    r"(?P<section>\[[ \t]*(?:start|end)[ \t]*:[ \t]*[a-z][-_0-9a-z]*[ \t]*\])(?P<post>.*?)$",
    re.IGNORECASE,
)
_FALSE = {"", "no", "off", "false", "0"}
# MkDocs' own front matter (mkdocs.utils.meta.YAML_RE): Markdown, and so pymdownx.snippets, never sees it.
_FRONT_MATTER = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)


EXECUTED_LANGUAGE = "python"
"""The one fence language that executes (`mkdocs.yml` gives SuperFences a custom fence for it only)."""


class ScanError(FloorsError, ValueError):
    """A page's executed blocks break a project rule (missing or duplicate id, bad option, unclosed fence)."""


@dataclass
class ExecBlock:
    """One executed code block of a page, as written in the Markdown source.

    Attributes:
        page: The page's source path relative to `docs/`.
        block_id: The block's `id` option.
        fence_line: 1-based line of the opening fence in the page.
        options: The fence's options, parsed once, here: the fence, the engine, its cache and a recording
            read this object, never the fence's option strings.
        proofs: Proof files the block includes, relative to the project root.
        line_map: For each line of the expanded code, the `(file, line)` it came from.
        code_lines: The expanded code, line by line, as pymdownx.snippets and SuperFences hand it to the
            formatter (the engine checks that they agree; a recording runs this code without Markdown).
        missing: The includes whose file is not there (deleted or renamed), with the page line of each:
            the engine fails the block, naming them, instead of running what is left of it.
    """

    page: str
    block_id: str
    fence_line: int
    options: BlockOptions
    proofs: list[str] = field(default_factory=list)
    line_map: list[tuple[str, int]] = field(default_factory=list)
    code_lines: list[str] = field(default_factory=list)
    missing: list[tuple[str, int]] = field(default_factory=list)

    @property
    def code(self) -> str:
        """The block's code, snippet includes expanded."""
        return "\n".join(self.code_lines)

    @property
    def session(self) -> str:
        """The block's session name, or an empty string."""
        return self.options.session

    def locate(self, code_line: int) -> tuple[str, int]:
        """Map a line of the executed code to the file and line it came from.

        Args:
            code_line: 1-based line in the expanded code.

        Returns:
            `(path, line)`; the page and fence line when the line is unknown.
        """
        if 1 <= code_line <= len(self.line_map):
            return self.line_map[code_line - 1]
        return (f"docs/{self.page}", self.fence_line)


def not_utf8(error: UnicodeDecodeError) -> str:
    """Say where a file stops being UTF-8 text, for a one-line error.

    Args:
        error: The decoding error.

    Returns:
        A phrase naming the byte offset and what to do.
    """
    return f"not UTF-8 text (byte {error.start}: {error.reason}); save the file as UTF-8"


def _attributes(text: str) -> dict[str, str]:
    return {m["name"]: m["quoted"] if m["quoted"] is not None else m["bare"] for m in _ATTR.finditer(text)}


def executes(written: Mapping[str, str]) -> bool:
    """Whether a fence with these options (as written) executes: its `exec` is set and not off.

    The scan and the fence's SuperFences validator ask this one question alike, so a fence runs exactly
    when the scan planned it.

    Args:
        written: The fence's options as written (`name -> value`).

    Returns:
        Whether it executes.
    """
    return written.get("exec", "").lower() not in _FALSE


def _check_executed(written: dict[str, str], lang: str, where: str, blocks: list[ExecBlock]) -> BlockOptions:
    """Parse an executed fence's options, or raise why the fence would not run as written."""
    if lang != EXECUTED_LANGUAGE:
        # Only `python` has a formatter: a `py` fence would render as plain code and never run.
        raise ScanError(f"{where}: only ```{EXECUTED_LANGUAGE} fences execute; write {EXECUTED_LANGUAGE}, not {lang}")
    try:
        options = BlockOptions.parse(written)
    except OptionError as error:
        raise ScanError(f"{where}: {error}") from None
    if any(b.block_id == options.id for b in blocks):
        raise ScanError(f"{where}: block id '{options.id}' is used twice on this page")
    return options


def _include(block: ExecBlock, spec: str, inner: str, offset: int, project_dir: Path) -> None:
    """Add what an include line (`spec`, at the page's line `offset`) brings into the block, as pymdownx.snippets does.

    Raises:
        ScanError: If the included file is not UTF-8 text.
    """
    target = parse_target(spec)
    path = target.path
    block.proofs.append(path)
    source = project_dir / path
    file_lines: list[str] = []
    if not source.is_file():
        block.missing.append((path, offset))
    else:
        try:
            # Split as pymdownx.snippets splits: a final newline leaves an empty last line, which counts.
            file_lines = source.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError as error:
            raise ScanError(f"docs/{block.page}:{offset}: {path} is {not_utf8(error)}") from None
    taken = included_lines(target, file_lines)
    block.line_map.extend((path, n) for n in taken)
    # pymdownx.snippets indents what it includes as the include line is indented.
    lead = inner[: len(inner) - len(inner.lstrip())]
    block.code_lines.extend(lead + file_lines[n - 1] if file_lines[n - 1] else "" for n in taken)


@dataclass(frozen=True)
class _Line:
    """What pymdownx.snippets makes of one line: code (`text`), an include (`path`), or nothing."""

    text: str | None = None
    path: str | None = None


def _block_path(line: str) -> _Line:
    """A line inside a block of paths: a path, a blank line, or a commented-out path (`;path`)."""
    path = line.strip()
    if not path:
        return _Line(text="")
    return _Line() if path.startswith(";") else _Line(path=path)


def _plain(line: str) -> _Line:
    """A line outside any include: code, unless it marks a section (dropped) or escapes one (`;` dropped)."""
    section = _SECTION.match(line)
    if section is None:
        return _Line(text=line)
    return _Line(text=line.replace(";", "", 1)) if section["escape"] else _Line()


def _snippet_lines(lines: Iterable[str]) -> Iterator[_Line]:
    """Read lines as pymdownx.snippets does: each becomes a line of code, an include, or is dropped.

    Every form it accepts is read here (double or single quotes, the block of paths, `;` escapes,
    commented paths, section markers), so the scan expands what Markdown will, never "other code".
    """
    block = False
    for line in lines:
        snippet = _SNIPPET.match(line)
        if snippet is None:
            yield _block_path(line) if block else _plain(line)
        elif snippet["escape"]:
            yield _Line(text=line.replace(";", "", 1))
        elif snippet["block"]:
            block = not block
            yield _Line()
        else:
            # An inline include directly inside a block of paths is ignored by pymdownx too.
            yield _Line() if block else _Line(path=snippet["snippet"][1:-1].strip())


def included_paths(text: str) -> list[str]:
    """Every include target of a page or snippet, as pymdownx.snippets reads them (`path:lines` kept).

    Args:
        text: Markdown or a snippet.

    Returns:
        The include specifications, in order.
    """
    return [line.path for line in _snippet_lines(text.splitlines()) if line.path is not None]


def _span_end(prose: str, opening: re.Match[str]) -> int:
    """Where the code span a run of backticks opens ends, or the run's own end when it opens none.

    CommonMark's rule: a run of n backticks is closed by the next run of exactly n in the same paragraph;
    a run never closed is text.
    """
    paragraph = _BLANK_LINE.search(prose, opening.end())
    limit = paragraph.start() if paragraph else len(prose)
    closing = re.compile(rf"(?<!`){opening[0]}(?!`)").search(prose, opening.end(), limit)
    return closing.end() if closing else opening.end()


def _ends_in_comment(prose: str, in_comment: bool) -> bool:
    """Whether an HTML comment is open at the end of `prose` (a page's text between two fences).

    `<!--` inside inline code (`` `<!--` ``) is code a page shows, not a comment; inside a comment,
    backticks are nothing and only `-->` ends it.

    Args:
        prose: The text, its lines joined.
        in_comment: Whether a comment was open where it starts.

    Returns:
        Whether one is open where it ends.
    """
    position = 0
    while True:
        if in_comment:
            end = prose.find("-->", position)
            if end == -1:
                return True
            in_comment, position = False, end + len("-->")
            continue
        token = _PROSE_TOKEN.search(prose, position)
        if token is None:
            return False
        position = _span_end(prose, token) if token[0].startswith("`") else token.end()
        in_comment = token[0] == "<!--"


def scan_markdown(text: str, page: str, project_dir: Path) -> list[ExecBlock]:
    """List a page's executed blocks.

    Args:
        text: The page's Markdown source.
        page: The page's source path relative to `docs/` (for messages).
        project_dir: The directory snippet include paths are relative to.

    Returns:
        The executed blocks, in page order.

    Raises:
        ScanError: If a fence is never closed, or an executed block is not a `python` fence, has an
            unknown option or a bad value, has no `id` or reuses one on the same page.
    """
    lines = text.splitlines()
    blocks: list[ExecBlock] = []
    index = 0
    in_comment = False
    prose: list[str] = []
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            prose.append(lines[index])
            index += 1
            continue
        # A fence ends a paragraph, so the prose before it is read whole (a code span may run over lines).
        in_comment, prose = _ends_in_comment("\n".join(prose), in_comment), []
        fence, indent = match["fence"], match["indent"]
        lang = match["braced"] or match["lang"]
        attrs = match["braced_attrs"] if match["braced"] else match["attrs"]
        end = index + 1
        while end < len(lines) and not (
            lines[end].startswith(indent)
            and lines[end][len(indent) :].strip().startswith(fence)
            and lines[end][len(indent) :].strip().strip(fence[0]) == ""
        ):
            end += 1
        if end == len(lines):
            # Markdown renders an unclosed fence as text: an executed block inside it would vanish.
            raise ScanError(f"docs/{page}:{index + 1}: the fence opened here is never closed")
        written = _attributes(attrs)
        if executes(written):
            if match["braced"]:
                # SuperFences takes `id` of the brace form as the element's id, so the block would reach
                # the engine without one.
                raise ScanError(
                    f'docs/{page}:{index + 1}: write an executed block as ```python exec="1" id="...", '
                    "not in the brace form ```{.python ...}, which hides its id from the engine"
                )
            if in_comment:
                # SuperFences would run it, and its output would land inside the comment: shown nowhere.
                raise ScanError(
                    f"docs/{page}:{index + 1}: an executed block inside an HTML comment would run and show "
                    'nothing; delete it, or set exec="0" to keep it as a note'
                )
            options = _check_executed(written, lang, f"docs/{page}:{index + 1}", blocks)
            block = ExecBlock(page=page, block_id=options.id, fence_line=index + 1, options=options)
            body = [
                line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[index + 1 : end]
            ]
            for offset, (inner, read) in enumerate(zip(body, _snippet_lines(body), strict=True), start=index + 2):
                if read.path is not None:
                    _include(block, read.path, inner, offset, project_dir)
                elif read.text is not None:
                    block.line_map.append((f"docs/{page}", offset))
                    block.code_lines.append(read.text)
            blocks.append(block)
        index = end + 1
    return blocks


def _included_file(project_dir: Path, path: str) -> Path | None:
    """The file an include names, found as pymdownx.snippets finds it (its base path, which it may not leave)."""
    base = os.path.abspath(project_dir)
    found = os.path.abspath(os.path.join(base, path))
    return Path(found) if found.startswith(base + os.sep) and os.path.isfile(found) else None


def _check_lines(
    numbered: list[tuple[int, str]], source: str, project_dir: Path, stack: tuple[Path, ...], via: str = ""
) -> None:
    """Refuse the first include in `numbered` (or in a file one brings in) that pymdownx.snippets would fail on.

    Args:
        numbered: The lines Markdown reads, each with its line number in `source`.
        source: The file they are in, as messages name it.
        project_dir: The folder includes are relative to.
        stack: The files being included around these lines (pymdownx.snippets skips a file already among them).
        via: Where `source` was included from, for messages (` (included at docs/a.md:3)`).
    """
    for (number, _line), read in zip(numbered, _snippet_lines(line for _, line in numbered), strict=True):
        if read.path is None:
            continue
        target = parse_target(read.path)
        where = f'{source}:{number}{via}: --8<-- "{read.path}"'
        found = _included_file(project_dir, target.path) if target.path else None
        if found is None:
            raise ScanError(
                f"{where}: no such file in the project (includes are read from the project's folder, "
                "and may not leave it); fix the path or restore the file"
            )
        if found in stack:
            continue  # pymdownx.snippets skips a file that includes itself, as here
        try:
            lines = found.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError as error:
            raise ScanError(f"{where}: {target.path} is {not_utf8(error)}") from None
        if target.section is not None and not has_section(lines, target.section):
            raise ScanError(f"{where}: {target.path} has no section `--8<-- [start:{target.section}]`")
        taken = included_lines(target, lines)
        inner = [(n, lines[n - 1]) for n in taken]
        _check_lines(inner, target.path, project_dir, (*stack, found), f" (included at {source}:{number}{via})")


def check_includes(text: str, source: str, project_dir: Path) -> None:
    """Refuse an include that pymdownx.snippets (`check_paths`) would stop the build on, with a traceback.

    Every include of the page's Markdown counts, prose and plain code blocks alike, and every include
    of a file it brings in: a missing file, one outside the project, a missing section, a file that is
    not UTF-8. (An executed block's missing include is the engine's: it fails that block by name, and
    `plugin.pages.without_missing_includes` takes the line out of the Markdown first.)

    Args:
        text: The page's source as Markdown reads it, front matter and all (its lines are the file's).
        source: The page as messages name it (`docs/notes.md`).
        project_dir: The folder includes are relative to (pymdownx.snippets' `base_path`).

    Raises:
        ScanError: Naming the file and line of the include, and why it would fail.
    """
    front = _FRONT_MATTER.match(text)
    skipped = front.group(0).count("\n") if front else 0
    lines = text.splitlines()
    _check_lines(list(enumerate(lines, start=1))[skipped:], source, project_dir, ())
