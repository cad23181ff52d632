"""What a serve session compares between builds: digests of pages and inputs, and the plan of what to render again."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.imports import local_imports
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import included_paths
from pytorch_floors.execution.snippet_target import parse_target

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

T = TypeVar("T")

SITE_WIDE_MARKER = "<!-- floors:"
"""A page holding one of the plugin's markers shows something of the whole build (`plugin.pages.marker`)."""
_MARKER_NAME = re.compile(r"<!-- floors:([\w-]+) -->")

_API_BLOCK = re.compile(r"^:::[ \t]+\S", re.MULTILINE)
_H1 = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t#]*$|<h1\b[^>]*>(?P<html>.*?)</h1>", re.MULTILINE | re.IGNORECASE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<meta>.*?\n)---[ \t]*\n", re.DOTALL)
_META_TITLE = re.compile(r"^title:[ \t]*(?P<title>.+?)[ \t]*$", re.MULTILINE)

INPUTS = ("anchors.lock", "anchors.aliases", "requirements.txt", "jupyter")
"""Project files and folders (beside the configuration and the theme's overrides) that every page depends on."""


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
        shows: The names of the markers it holds (`<!-- floors:proofs -->`: `proofs`): what it shows of the whole
            build, which `plan_rebuild` renders again unless it knows that none of it changed.
        api: It renders API reference (`::: module`).
        lab: It is a lab notebook.
    """

    digest: str
    title_key: str | None = None
    shows: frozenset[str] = frozenset()
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
        shows=frozenset(_MARKER_NAME.findall(text)) if SITE_WIDE_MARKER in text else frozenset(),
        api=bool(_API_BLOCK.search(text)),
        lab=lab,
    )


def with_sources(pages: Mapping[str, PageInput], source_of: Callable[[str], str]) -> dict[str, PageInput]:
    """Every page's input, a translated page's digest joined with its English page's.

    A translated page shows its English page's blocks, and its English sections where it is behind
    (`i18n.catch_up`): an edit of the English page changes it too, so `plan_rebuild` renders both.

    Args:
        pages: Every page's input, by source path.
        source_of: A page's English page (itself for an English page).

    Returns:
        The inputs, with each translated page's digest covering its English page.
    """
    joined = dict(pages)
    for page, seen in pages.items():
        source = source_of(page)
        if source != page and source in pages:
            joined[page] = replace(seen, digest=f"{seen.digest}+{pages[source].digest}")
    return joined


def plan_rebuild(
    pages: Mapping[str, PageInput],
    inputs: str,
    previous: Mapping[str, PageState] | None,
    previous_inputs: str | None,
    *,
    also: Collection[str] = (),
    shown: Mapping[str, str] | None = None,
    previous_shown: Mapping[str, str] | None = None,
) -> Plan:
    """Which pages a build must render, given what each was rendered from last time.

    Args:
        pages: Every page of this build, by source path.
        inputs: `inputs_digest` of this build.
        previous: The pages of the last build, or `None` when there is none (or the session is not dirty).
        previous_inputs: `inputs_digest` of the last build.
        also: Pages to render whatever changed.
        shown: A digest of what some markers show (`plugin.pages.marker_contents`), by marker name; a page
            whose every marker is among them, each with the digest of the last build (`previous_shown`),
            renders only if it changed itself. Any other page with a marker renders in every build.
        previous_shown: `shown` of the last build.

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
    known, before = shown or {}, previous_shown or {}
    # A prose edit rendered the Cite and Proofs pages (and their twins) again, for nothing that could have changed.
    unchanged = {name for name, digest in known.items() if before.get(name) == digest}
    site_wide = {page for page, seen in pages.items() if seen.shows and not seen.shows <= unchanged}
    rebuilt = changed | site_wide | (set(also) & set(pages))
    for kind in ("api", "lab"):
        group = {page for page, seen in pages.items() if getattr(seen, kind)}
        if group & rebuilt:
            rebuilt |= group
    if rebuilt >= set(pages):
        return Plan(None, "every page changed")
    return Plan(frozenset(rebuilt))
