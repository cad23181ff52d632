"""What one `mkdocs serve` session keeps between its builds, so an edit re-renders only what it can change.

An author's loop is: edit a sentence, look at the page. A whole build renders every page (the API
reference, the labs, sixty pages of Markdown) for an edit that changed one. Under
`mkdocs serve --dirty` (what `make serve` runs), MkDocs renders only the pages it is told changed;
this module decides which, and keeps what the others contributed, so the site it serves stays whole:

- a page is rebuilt when its source, a file it includes (`--8<--`) or a project module such a proof
  imports changed since the last build (`page_digest`);
- pages that show the whole build (a `<!-- floors:... -->` marker: the build report, the Proofs
  page, What changed, Cite) are rebuilt with every build; the API reference pages are rebuilt all
  together or not at all (their cross-references and inventory are one set), and so are the labs
  (mkdocs-jupyter forgets the cached runs of labs a build does not render);
- anything else changes every page (the configuration, the theme's overrides, the Jupyter setup, the
  anchors, the pins; a page added, removed or retitled, which changes the navigation): the build is whole;
- the pages not rebuilt keep their title in the navigation, their records in the build report, their
  sections in the search index and in the edition's manifest, from the build that rendered them;
- torch's facts about the machine are asked once per session, and the theme's compiled templates are
  kept (`TemplateCache`).

`mkdocs build` (and `make publish`, which runs it through mike) never has a session: every page is
rendered, even with `--dirty`, so a published site is always whole. The build report of a partial
build says so, and names the pages it rebuilt.

On a cold cache, a dirty session with live reload answers at once: its builds run no proof and no
lab; a block whose output is not cached shows a "running…" placeholder, and the page's article
carries `data-proof-pending`. A `Background` build (`mkdocs build` in a child process, with
`FLOORS_SERVE_BACKGROUND` set) runs the proofs and labs in the navigation's order (Part 0, the
floors, the compile page, the labs: every build renders its pages so) into the cache; as it
finishes a page, the session renders that page again from the cache and live reload shows it. A
block that fails there is reported to the session (`report_background_failure`), whose builds show
its failure as a foreground failure shows, at once, and do not run it again while its code and
inputs are the same. When the background build has finished, the session's builds run what is
still missing themselves, as any serve build does. The background build never outlives the session:
it ends with it, and ends itself if the serve process is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

from pytorch_floors.execution.engine import SKIPPED_OUTPUT, ProofFailure
from pytorch_floors.execution.facts import TorchFacts
from pytorch_floors.execution.imports import local_imports
from pytorch_floors.execution.process.groups import end_group
from pytorch_floors.execution.process.runner import end_all
from pytorch_floors.execution.progress import Progress, parse_progress
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import included_paths
from pytorch_floors.execution.snippet_target import parse_target

__all__ = [
    "BACKGROUND_VARIABLE",
    "FAILURES_FILE",
    "HEARTBEAT_S",
    "PARTIAL_ATTRIBUTE",
    "PENDING_ATTRIBUTE",
    "SIGNALS_VARIABLE",
    "SITE_WIDE_MARKER",
    "Background",
    "Memo",
    "PageInput",
    "PageState",
    "Plan",
    "ServeSession",
    "TemplateCache",
    "inputs_digest",
    "mark_pending",
    "merge_search_index",
    "page_digest",
    "page_input",
    "partial_note",
    "partial_report",
    "pending_page",
    "plan_rebuild",
    "quiet_dirty_warning",
    "read_background_failures",
    "report_background_failure",
    "title_key",
    "watch_parent",
]

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

T = TypeVar("T")

SITE_WIDE_MARKER = "<!-- floors:"
"""A page holding one of the plugin's markers shows something of the whole build: it is rebuilt every time."""

_API_BLOCK = re.compile(r"^:::[ \t]+\S", re.MULTILINE)
_H1 = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t#]*$|<h1\b[^>]*>(?P<html>.*?)</h1>", re.MULTILINE | re.IGNORECASE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<meta>.*?\n)---[ \t]*\n", re.DOTALL)
_META_TITLE = re.compile(r"^title:[ \t]*(?P<title>.+?)[ \t]*$", re.MULTILINE)

INPUTS = ("anchors.lock", "anchors.aliases", "requirements.txt", "jupyter")
"""Project files and folders (beside the configuration and the theme's overrides) that every page depends on."""

_DIRTY_WARNING = "A 'dirty' build is being performed"


def _hash_path(digest: Any, path: Path, root: Path) -> None:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if "__pycache__" in file.parts:
            continue
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"\0unreadable")


def inputs_digest(config_file: Path, project_dir: Path, theme_dir: Path | None, extra: Iterable[Path] = ()) -> str:
    """A digest of what every page depends on: the configuration, the theme's overrides and `INPUTS`.

    Args:
        config_file: `mkdocs.yml`.
        project_dir: The project root.
        theme_dir: The theme's `custom_dir` (the project's overrides), if any.
        extra: Other files or folders every page may show (the other machines' recordings).

    Returns:
        A hex digest that changes when any of them does.
    """
    digest = hashlib.sha256()
    paths = [config_file, *(project_dir / name for name in INPUTS), *([theme_dir] if theme_dir else []), *extra]
    for path in paths:
        if path.exists():
            _hash_path(digest, path, path.parent)
        else:
            digest.update(f"{path.name}: none\0".encode())
    return digest.hexdigest()


def _stamps(paths: Iterable[Path]) -> tuple[tuple[int, int] | None, ...]:
    stamps: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            stamps.append(None)
        else:
            stamps.append((stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


class Memo:
    """Values computed from files, remembered while each of those files keeps its modification time and size.

    A serve session asks again with every build; most files have not changed since the last one.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._entries: dict[object, tuple[tuple[Path, ...], tuple[tuple[int, int] | None, ...], Any]] = {}

    def get(self, key: object, compute: Callable[[], tuple[T, Iterable[Path]]]) -> T:
        """The value for `key`: remembered if none of the files it was computed from changed, else `compute()`'s.

        Args:
            key: What the value is of.
            compute: Returns the value and the files it was computed from.

        Returns:
            The value.
        """
        entry = self._entries.get(key)
        if entry is not None and _stamps(entry[0]) == entry[1]:
            remembered: T = entry[2]
            return remembered
        value, used = compute()
        paths = tuple(used)
        self._entries[key] = (paths, _stamps(paths), value)
        return value


def _includes(text: str, base: Path) -> list[Path]:
    return [base / parse_target(spec).path for spec in included_paths(text)]


def _file_digest(path: Path, project_dir: Path, import_roots: tuple[Path, ...]) -> tuple[str, list[Path], list[Path]]:
    """One included file's digest (with the project modules it imports), the files it used, and what it includes."""
    name = path.relative_to(project_dir).as_posix() if path.is_relative_to(project_dir) else str(path)
    digest = hashlib.sha256(name.encode())
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return digest.hexdigest() + "-missing", [path], []
    digest.update(b"\0" + text.encode())
    used = [path]
    if path.suffix == ".py":
        # What the proof cache keys a block on (`execution.imports.sources_digest`): the modules it imports.
        for module in local_imports(text, import_roots):
            used.append(module)
            try:
                digest.update(b"\0" + module.as_posix().encode() + b"\0" + module.read_bytes())
            except OSError:
                digest.update(b"\0" + module.as_posix().encode() + b"\0unreadable")
    return digest.hexdigest(), used, _includes(text, project_dir)


def page_digest(text: str, project_dir: Path, import_roots: tuple[Path, ...], memo: Memo | None = None) -> str:
    """A digest of what one page renders from: its source, what it includes, what an included proof imports.

    Includes (`--8<-- "snippets/4-dispatcher/x.py"`, with or without a line range or section) are
    followed into what they include in turn; a Python file's project imports are followed as the
    proof cache follows them (`execution.imports.local_imports`).

    Args:
        text: The page's source.
        project_dir: The project root (pymdownx.snippets' base path).
        import_roots: Where project modules are imported from.
        memo: Where each included file's digest is kept while it and what it imports are unchanged.

    Returns:
        A hex digest.
    """
    memo = memo if memo is not None else Memo()
    digest = hashlib.sha256(text.encode())
    seen: set[Path] = set()
    pending = _includes(text, project_dir)
    while pending:
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)

        def compute(path: Path = path) -> tuple[tuple[str, list[Path]], list[Path]]:
            file_digest, used, includes = _file_digest(path, project_dir, import_roots)
            return (file_digest, includes), used

        file_digest, includes = memo.get(("include", path), compute)
        digest.update(b"\0" + file_digest.encode())
        pending.extend(includes)
    return digest.hexdigest()


def title_key(text: str) -> str | None:
    """What a page's title in the navigation is read from: its front matter's `title`, else its first h1.

    Args:
        text: The page's Markdown source.

    Returns:
        The title as written, or `None` if the page has neither.
    """
    front = _FRONT_MATTER.match(text)
    if front and (meta := _META_TITLE.search(front["meta"])):
        return meta["title"]
    match = _H1.search(text, front.end() if front else 0)
    return (match["title"] or match["html"]) if match else None


@dataclass
class PageState:
    """What one page contributed to the last build that rendered it.

    Attributes:
        url: Its URL, relative to the site.
        digest: `page_digest` of what it was rendered from.
        title_key: `title_key` of its source (`None` for a lab).
        title: Its title as the navigation showed it.
        records: Its blocks' (or its lab's) records, as the build report lists them.
        failures: Its blocks' failures.
        manifest: Its sections as the edition's manifest records them, if it is citable.
        search: Its entries of the search index.
    """

    url: str
    digest: str
    title_key: str | None = None
    title: str | None = None
    records: list[BlockResult] = field(default_factory=list)
    failures: list[ProofFailure] = field(default_factory=list)
    manifest: Any = None
    search: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """Which pages one build renders.

    Attributes:
        rebuilt: The pages it renders (sources relative to `docs/`), or `None` for every page.
        why: Why the build is whole, when it is.
    """

    rebuilt: frozenset[str] | None = None
    why: str = "first build"

    @property
    def partial(self) -> bool:
        """Whether the build renders only some pages."""
        return self.rebuilt is not None

    def rebuilds(self, page: str) -> bool:
        """Whether the build renders `page`."""
        return self.rebuilt is None or page in self.rebuilt


@dataclass(frozen=True)
class PageInput:
    """One page as a build finds it, before rendering anything.

    Attributes:
        digest: `page_digest` of its source.
        title_key: `title_key` of its source (`None` for a lab).
        site_wide: It shows something of the whole build (`SITE_WIDE_MARKER`).
        api: It renders API reference (`::: module`).
        lab: It is a lab notebook.
    """

    digest: str
    title_key: str | None = None
    site_wide: bool = False
    api: bool = False
    lab: bool = False


def page_input(
    src_uri: str, path: Path, project_dir: Path, import_roots: tuple[Path, ...], *, lab: bool, memo: Memo | None = None
) -> PageInput:
    """Read what `plan_rebuild` needs to know of one page.

    Args:
        src_uri: The page's source, relative to `docs/`.
        path: Its file.
        project_dir: The project root.
        import_roots: Where project modules are imported from.
        lab: It is a lab notebook (its title comes from the registry, through the navigation).
        memo: The session's memo of included files (`page_digest`).

    Returns:
        The page's input.
    """
    memo = memo if memo is not None else Memo()
    if not src_uri.endswith(".md"):
        # A notebook's page renders from its source and what that imports, like an included proof.

        def compute() -> tuple[str, list[Path]]:
            file_digest, used, _ = _file_digest(path, project_dir, import_roots)
            return file_digest, used

        return PageInput(digest=memo.get(("page", path), compute), lab=lab)
    text = path.read_text(encoding="utf-8", errors="replace")
    return PageInput(
        digest=page_digest(text, project_dir, import_roots, memo),
        title_key=title_key(text),
        site_wide=SITE_WIDE_MARKER in text,
        api=bool(_API_BLOCK.search(text)),
        lab=lab,
    )


def plan_rebuild(
    pages: Mapping[str, PageInput],
    inputs: str,
    previous: Mapping[str, PageState] | None,
    previous_inputs: str | None,
    *,
    also: Collection[str] = (),
) -> Plan:
    """Which pages a build must render, given what each was rendered from last time.

    Args:
        pages: Every page of this build, by source path.
        inputs: `inputs_digest` of this build.
        previous: The pages of the last build, or `None` when there is none (or the session is not dirty).
        previous_inputs: `inputs_digest` of the last build.
        also: Pages to render whatever changed.

    Returns:
        The plan: every page, or the changed ones with those that show the whole build.
    """
    if previous is None:
        return Plan(None, "first build")
    if inputs != previous_inputs:
        return Plan(None, "the configuration, the theme, the Jupyter setup, the anchors or the pins changed")
    if set(pages) != set(previous):
        return Plan(None, "pages were added or removed")
    changed = {page for page, seen in pages.items() if seen.digest != previous[page].digest}
    retitled = sorted(page for page in changed if pages[page].title_key != previous[page].title_key)
    if retitled:
        return Plan(None, f"the navigation changed (the title of {', '.join(retitled)})")
    rebuilt = changed | {page for page, seen in pages.items() if seen.site_wide} | (set(also) & set(pages))
    for kind in ("api", "lab"):
        group = {page for page, seen in pages.items() if getattr(seen, kind)}
        if group & rebuilt:
            rebuilt |= group
    if rebuilt >= set(pages):
        return Plan(None, "every page changed")
    return Plan(frozenset(rebuilt))


class TemplateCache(BytecodeCache):
    """The theme's templates, compiled once per session (a build's Jinja environment is new each time).

    Jinja checks each template's source against the checksum stored with its code, so an edited
    template is compiled again.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill the bucket from a template compiled earlier in this session, if any."""
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep a template just compiled."""
        self._code[bucket.key] = bucket.bytecode_to_string()


def _search_url(url: str) -> str:
    """A page's URL as the search index's locations start with it (the site's root page is `""`, not `./`)."""
    return "" if url in {"", "./"} else url


def merge_search_index(
    path: Path, rebuilt: Collection[str] | None, kept: Mapping[str, list[dict[str, Any]]], order: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Complete the search index of a partial build with the entries of the pages it did not render.

    Material's search plugin writes the entries of the pages this build rendered (the plugin
    clears its own merge, which only knows one page); this rewrites the file with, for every other
    page, its entries from the build that last rendered it, in the site's page order.

    Args:
        path: The built `search/search_index.json`.
        rebuilt: URLs of the pages this build rendered, or `None` if it rendered every page.
        kept: Each page's entries from the last build, by URL.
        order: Every page's URL, in the site's order.

    Returns:
        Each page's entries now, by URL (what the next build keeps).
    """
    index = json.loads(path.read_text(encoding="utf-8"))
    fresh: dict[str, list[dict[str, Any]]] = {}
    for entry in index.get("docs", []):
        fresh.setdefault(_search_url(str(entry.get("location", "")).split("#", 1)[0]), []).append(entry)
    if rebuilt is None:
        return {url: fresh.get(_search_url(url), []) for url in order}
    rebuilt = {_search_url(url) for url in rebuilt}
    merged = {
        url: fresh.get(_search_url(url), []) if _search_url(url) in rebuilt else kept.get(url, []) for url in order
    }
    index["docs"] = [entry for url in order for entry in merged[url]]
    path.write_text(json.dumps(index, separators=(",", ":"), default=str), encoding="utf-8")
    return merged


PARTIAL_ATTRIBUTE = "data-floors-partial"
"""Marks the build report's note that a serve build rendered only some pages: never in a built site."""


def partial_note(rebuilt: Collection[str] | None) -> str:
    """The build report page's first paragraph when the build rendered only some pages; empty otherwise.

    Args:
        rebuilt: The pages the build rendered, or `None` for every page.

    Returns:
        The HTML.
    """
    if rebuilt is None:
        return ""
    names = ", ".join(f"<code>docs/{html.escape(page)}</code>" for page in sorted(rebuilt))
    return (
        f'<p class="floors-partial-build" {PARTIAL_ATTRIBUTE}><strong>A partial rebuild</strong> '
        f"(<code>mkdocs serve --dirty</code>): it rendered {len(rebuilt)} page(s) again: {names}. "
        "The other pages' rows come from the build that last rendered them.</p>"
    )


def partial_report(report: str, rebuilt: Collection[str] | None) -> str:
    """The build report (JSON) saying whether the build rendered every page, and if not, which ones.

    Args:
        report: `execution.report.report_json`'s document.
        rebuilt: The pages the build rendered, or `None` for every page.

    Returns:
        The document with `build.partial` and `build.rebuilt` (`null` for a whole build).
    """
    document = json.loads(report)
    document.setdefault("build", {})["partial"] = rebuilt is not None
    document["build"]["rebuilt"] = None if rebuilt is None else sorted(rebuilt)
    return json.dumps(document, indent=2)


PENDING_ATTRIBUTE = "data-proof-pending"
"""On a page's article while a block or lab of it waits for the background build: never in a built site."""

PENDING_TEXT = "running…"
"""What a block waiting for the background build shows in place of its output."""


BACKGROUND_VARIABLE = "FLOORS_SERVE_BACKGROUND"
"""Set, to the serve process's id, in the environment of the build that runs a session's proofs behind it."""

SIGNALS_VARIABLE = "FLOORS_SERVE_SIGNALS"
"""The folder the session watches, named to its background build, which removes it if the session is killed."""

FAILURES_FILE = "failures.jsonl"
"""In the session's signal folder: one JSON line per block that failed in its background build."""

_FAILURE_FIELDS = {"key": str, "page": str, "block": str, "file": str, "line": int, "summary": str, "details": str}


def report_background_failure(signal_dir: Path, key: str, failure: ProofFailure) -> None:
    """Tell the session a block failed in its background build (called there, by the engine).

    The line is written with one `write` to a file opened for appending, so the session never reads
    half of it; the folder is watched, so live reload renders the page again with the failure.

    Args:
        signal_dir: The session's signal folder (`SIGNALS_VARIABLE`).
        key: The block's cache key: the session shows this failure while the key is the same.
        failure: The failure.
    """
    line = json.dumps(
        {
            "key": key,
            "page": failure.page,
            "block": failure.block_id,
            "file": failure.location[0],
            "line": failure.location[1],
            "summary": failure.summary,
            "details": failure.details,
        }
    )
    descriptor = os.open(signal_dir / FAILURES_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, (line + "\n").encode("utf-8"))
    finally:
        os.close(descriptor)


def read_background_failures(signal_dir: Path | None) -> dict[str, ProofFailure]:
    """The blocks that failed in a session's background build so far, by cache key.

    The file comes from another process: a line is taken only if it is complete and every field has
    its type; any other line is named in the log, never shown.

    Args:
        signal_dir: The session's signal folder, or `None` before the background build starts.

    Returns:
        Each failure, by the cache key of the block that failed.
    """
    path = signal_dir / FAILURES_FILE if signal_dir is not None else None
    if path is None or not path.is_file():
        return {}
    failures: dict[str, ProofFailure] = {}
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.split("\n")[:-1], start=1):  # the last piece is unfinished, or empty
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _FAILURE_FIELDS.items()):
            log.warning("serve: line %d of the background build's failures is not one: %.80r", number, line)
            continue
        location = (entry["file"], entry["line"])
        failures[entry["key"]] = ProofFailure(
            entry["page"], entry["block"], location, entry["summary"], entry["details"]
        )
    return failures


HEARTBEAT_S = 10.0
"""The longest the session's log stays silent while its background build runs."""

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR}
_LEVEL = re.compile(r"^(?P<level>INFO|WARNING|ERROR|DEBUG)\s+-\s+(?P<message>.*)$")


def emit_progress(event: Progress) -> None:
    """Write one step of the background build on its output, where its session reads it (`Background`)."""
    print(event.line(), flush=True)


def pending_page(content: str, *, lab: bool) -> str:
    """A page's content with each waiting block's placeholder (or, for a lab, a note above the notebook).

    Args:
        content: The page's HTML, as the engine and the fence left it.
        lab: The page is a lab's notebook, rendered without running.

    Returns:
        The content.
    """
    waiting = content.count(SKIPPED_OUTPUT)
    what = "This lab is" if lab else f"{waiting} of this page's proofs {'is' if waiting == 1 else 'are'} still"
    note = (
        '<div class="admonition info floors-pending" role="status"><p class="admonition-title">Running</p>'
        f"<p>{what} {PENDING_TEXT} in the background "
        "(<code>make serve</code> answers first, on a cold cache); the page reloads with "
        f"{'its outputs' if lab else 'their outputs'} when they are done.</p></div>"
    )
    return note + content.replace(SKIPPED_OUTPUT, PENDING_TEXT)


def mark_pending(output: str) -> str:
    """A rendered page whose article says that it waits for the background build (`PENDING_ATTRIBUTE`)."""
    return re.sub(r"<article\b", f"<article {PENDING_ATTRIBUTE}", output, count=1)


def watch_parent(parent: int, remove: Sequence[Path] = (), interval: float = 0.5) -> threading.Thread:
    """End this process (and so its block processes, which watch it) once the serve process `parent` is gone.

    Args:
        parent: The serve process's id (`BACKGROUND_VARIABLE`).
        remove: Folders to remove first (the build's site folder, which nobody reads any more); the
            sequence may be added to after the watch starts.
        interval: Seconds between looks.

    Returns:
        The (daemon) thread that watches.
    """

    def watch() -> None:
        while True:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                end_all()
                for folder in list(remove):
                    shutil.rmtree(folder, ignore_errors=True)
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(interval)

    thread = threading.Thread(target=watch, name="floors-serve-parent", daemon=True)
    thread.start()
    return thread


class Background:
    """The build that runs a serve session's proofs and labs behind it, into the cache the session reads.

    It is `mkdocs build` of the same project, in a process of its own (its own session and process
    group), with `BACKGROUND_VARIABLE` set: its plugin then keeps going past a failed proof, as serve
    does, and ends the build if the serve process goes away. Its log says which page's proofs it runs;
    as it moves past a page, that page is done (`done`), `signal_dir` is touched (the session watches it:
    live reload rebuilds), and the proof lines are repeated in the session's log, marked `background:`.
    """

    def __init__(self, config_file: Path, project_dir: Path, signal_dir: Path) -> None:
        """Prepare, without starting.

        Args:
            config_file: The project's `mkdocs.yml`.
            project_dir: Where the build runs.
            signal_dir: The folder the session watches (a file is written into it as each page is done).
        """
        self.config_file, self.project_dir, self.signal_dir = config_file, project_dir, signal_dir
        self.process: subprocess.Popen[str] | None = None
        self._site = Path(tempfile.mkdtemp(prefix="floors-background-"))
        self._done: set[str] = set()
        self._lock = threading.Lock()
        self._said_at = self._doing_since = time.monotonic()
        self._doing = ""
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        """Start the build and the thread that reads its log."""
        env = {
            **os.environ,
            BACKGROUND_VARIABLE: str(os.getpid()),
            SIGNALS_VARIABLE: str(self.signal_dir),
            "NO_MKDOCS_2_WARNING": "1",
        }
        command = [
            *(sys.executable, "-m", "mkdocs", "build", "--config-file", str(self.config_file)),
            *("--site-dir", str(self._site)),
        ]
        self.process = subprocess.Popen(
            command,
            cwd=self.project_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="floors-background-log", daemon=True)
        self._reader.start()
        threading.Thread(target=self._heartbeat, name="floors-background-heartbeat", daemon=True).start()
        log.info(
            "serve: the proofs and labs run in the background, in the navigation's order; pages reload as they are done"
        )

    def _heartbeat(self) -> None:
        """Say what the background build is doing whenever it has said nothing for `HEARTBEAT_S` seconds.

        One proof can run for minutes (a C++ compile); a terminal silent that long looks hung.
        """
        process = self.process
        assert process is not None
        while process.poll() is None:
            time.sleep(1)
            with self._lock:
                quiet = time.monotonic() - self._said_at
                doing, since = self._doing, self._doing_since
            if quiet >= HEARTBEAT_S and process.poll() is None:
                what = f"still running {doing}" if doing else "still starting"
                log.info("background: %s (%.0f s so far)", what, time.monotonic() - since)
                with self._lock:
                    self._said_at = time.monotonic()

    def _read(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        current: str | None = None
        for raw in process.stdout:
            line = raw.rstrip()
            try:
                event = parse_progress(line)
            except ValueError as error:  # our own child wrote it: a bug to see, not a reason to stop reading
                log.warning("background: %s", error)
                continue
            if event is None:
                matched = _LEVEL.match(line)
                level, message = (matched["level"], matched["message"]) if matched else ("INFO", line)
                if level in {"WARNING", "ERROR"}:
                    log.log(_LEVELS[level], "background: %s", message)
                    with self._lock:
                        self._said_at = time.monotonic()
                continue
            log.info("background: %s", event.words())
            with self._lock:
                self._said_at = time.monotonic()
                if event.state == "running":
                    self._doing, self._doing_since = event.where, time.monotonic()
            if event.page != current:
                if current is not None:
                    self._finish(current)
                current = event.page
        process.wait()
        if current is not None:
            self._finish(current)
        log.info("serve: the background build ended (exit status %s)", process.returncode)
        self._signal("finished")
        shutil.rmtree(self._site, ignore_errors=True)

    def _finish(self, page: str) -> None:
        with self._lock:
            self._done.add(page)
        self._signal(page)

    def _signal(self, what: str) -> None:
        with contextlib.suppress(OSError):
            (self.signal_dir / "progress").write_text(what, encoding="utf-8")

    def done(self) -> set[str]:
        """The pages whose proofs (or lab) the background build has run."""
        with self._lock:
            return set(self._done)

    @property
    def finished(self) -> bool:
        """Whether the build has ended and its log has been read to its end."""
        return (
            self.process is not None
            and self.process.poll() is not None
            and not (self._reader is not None and self._reader.is_alive())
        )

    def stop(self) -> None:
        """End the build with its process group (its block processes end themselves when it is gone)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        end_group(process, grace=10)
        shutil.rmtree(self._site, ignore_errors=True)


class _DirtyWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_DIRTY_WARNING)


_DIRTY_FILTER = _DirtyWarning()


def quiet_dirty_warning(enabled: bool) -> None:
    """Keep MkDocs' warning that a dirty build may show a stale navigation out of a session's log.

    The session rebuilds every page whose navigation or links could be stale (`plan_rebuild`), and
    says which pages each build rendered instead.

    Args:
        enabled: Add the filter (`False` removes it).
    """
    logger = logging.getLogger("mkdocs.commands.build")
    if enabled:
        logger.addFilter(_DIRTY_FILTER)
    else:
        logger.removeFilter(_DIRTY_FILTER)


@dataclass
class ServeSession:
    """What one `mkdocs serve` keeps from one build to the next.

    Attributes:
        dirty: MkDocs renders only the pages each build says changed (`mkdocs serve --dirty`).
        facts: Torch's facts about the machine, asked once.
        build_id: The id every page and report of the session carries (pages not rebuilt keep their mark).
        templates: The theme's compiled templates.
        memo: What builds compute from files that seldom change (included proofs' digests, bundled downloads).
        inputs: `inputs_digest` of the last build.
        pages: What each page contributed to the last build, by source path.
        defers: Its builds may leave what is not cached to a `Background` build (a dirty session with
            live reload, which shows the pages again as they are done).
        background: That build, once started.
        filled: The background build has ended, or was not needed: builds run what is missing themselves.
        pending: The pages whose last build showed placeholders.
        signal_dir: The folder the background build touches as it finishes a page (watched under live reload),
            made when it starts.
        outputs: What the last build's files write into the site (`dest_uri`): a dirty build cleans nothing,
            so `remove_stale` takes out what no file writes any more.
        failed: The blocks that failed in the background build, by cache key: a build shows each such
            block's failure, as a foreground failure shows, and does not run it again while its key holds.
    """

    dirty: bool = False
    facts: TorchFacts | None = None
    build_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    templates: TemplateCache = field(default_factory=TemplateCache)
    memo: Memo = field(default_factory=Memo)
    inputs: str | None = None
    pages: dict[str, PageState] = field(default_factory=dict)
    defers: bool = False
    background: Background | None = None
    filled: bool = False
    pending: set[str] = field(default_factory=set)
    signal_dir: Path | None = None
    outputs: set[str] = field(default_factory=set)
    failed: dict[str, ProofFailure] = field(default_factory=dict)

    def start_build(self) -> tuple[bool, set[str]]:
        """Whether the next build leaves what is not cached to the background, and which waiting pages are done.

        Returns:
            `(defer, ready)`: the build runs no proof or lab itself; the pages that showed placeholders and
            can now show their outputs or a failure (all of them once the background build has ended).
        """
        ready: set[str] = set()
        failed = read_background_failures(self.signal_dir)
        ready |= self.pending & {failure.page for key, failure in failed.items() if key not in self.failed}
        self.failed = failed
        if self.background is not None and self.background.finished:
            self.filled = True
            ready = set(self.pending)
        elif self.background is not None:
            ready |= self.pending & self.background.done()
        return self.defers and not self.filled, ready

    def end_build(self, pending: set[str], config_file: Path, project_dir: Path) -> None:
        """Remember the pages that wait; start the background build the first time some do.

        Args:
            pending: The pages this build showed placeholders on.
            config_file: The project's `mkdocs.yml`.
            project_dir: The project root.
        """
        self.pending = set(pending)
        if self.filled or self.background is not None:
            return
        if not pending:
            self.filled = True  # a warm cache: nothing to run behind
            return
        self.signal_dir = Path(tempfile.mkdtemp(prefix="floors-serve-"))
        self.background = Background(config_file, project_dir, self.signal_dir)
        self.background.start()

    def close(self) -> None:
        """End the background build, if it runs, and forget the watched folder."""
        if self.background is not None:
            self.background.stop()
        if self.signal_dir is not None:
            shutil.rmtree(self.signal_dir, ignore_errors=True)

    def plan(self, pages: Mapping[str, PageInput], inputs: str, *, also: Collection[str] = ()) -> Plan:
        """Which pages this session's next build renders (every page unless the session is dirty)."""
        if not self.dirty:
            return Plan(None, "mkdocs serve without --dirty renders every page")
        return plan_rebuild(pages, inputs, self.pages or None, self.inputs, also=also)

    def kept(self, plan: Plan) -> Iterable[tuple[str, PageState]]:
        """The pages a build does not render, with what they contributed to the build that last did."""
        if plan.rebuilt is None:
            return []
        return [(page, state) for page, state in self.pages.items() if page not in plan.rebuilt]

    def remove_stale(self, outputs: Collection[str], site_dir: Path) -> list[str]:
        """Take out of the site what the last build wrote and this one does not; remember this build's outputs.

        MkDocs cleans the site folder before every build but a dirty one: there, a page renamed or deleted
        (`b.md` to `b2.md`), or a proof whose download is gone, would stay served with its old content.

        Args:
            outputs: Where this build's files are written, relative to the site (`File.dest_uri`).
            site_dir: The site folder the session serves.

        Returns:
            What was taken out, relative to the site.
        """
        stale = sorted(set(self.outputs) - set(outputs)) if self.dirty else []
        self.outputs = set(outputs)
        root = site_dir.resolve()
        removed = []
        for dest in stale:
            path = (root / dest).resolve()
            if not path.is_relative_to(root) or path == root:
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as error:
                log.warning("serve: %s is no page's any more, but stays in the site: %s", dest, error)
                continue
            removed.append(dest)
            folder = path.parent
            with contextlib.suppress(OSError):  # a folder left behind empty answers 404 all the same
                while folder != root and not any(folder.iterdir()):
                    folder.rmdir()
                    folder = folder.parent
        return removed
