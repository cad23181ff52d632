"""What changed between two editions: a manifest of citable sections, and the page that compares two.

Every build writes `manifest.json` at the site's root (so a mike deployment holds it at
`<edition>/manifest.json` on `gh-pages`). It lists every section anchor of `anchors.lock`
with two digests, taken from the HTML the build renders anyway:

- `prose`: the section's own text (heading and paragraphs up to the next h2–h4), without
  the proofs' outputs, sources and timings;
- `outputs`: the text of the section's proof outputs (console text, figure labels), or
  `null` when the section has none.

A timing line ("ran in 0.12 s") is left out of both, so rebuilding the same edition gives
the same manifest. `python -m pytorch_floors changes` compares a manifest with a previous
edition's and renders a Markdown page: sections added, reworded, with changed outputs,
removed, and anchors kept as aliases after a rename.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from pytorch_floors.editions.anchors import page_url
from pytorch_floors.errors import InputError
from pytorch_floors.floors import MAP_PAGE, MAP_TITLE, floor_for_page
from pytorch_floors.i18n.messages import t

__all__ = [
    "MANIFEST_NAME",
    "Changes",
    "ManifestRecorder",
    "Section",
    "build_manifest",
    "compare",
    "load_edition_manifest",
    "render_markdown",
    "section_digests",
]

MANIFEST_NAME = "manifest.json"
"""The manifest's file name at the root of a built edition."""

MANIFEST_FORMAT = 1

_SECTION_HEADING = re.compile(r"^h[234]$")
# Parts of a proof that are not its output: they change with the machine, not with the text.
_SKIPPED_CLASSES = frozenset({"floors-proof__source", "floors-proof__meta", "floors-copy-link", "headerlink"})
_OUTPUT_CLASS = "floors-proof__output"
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})


@dataclass(frozen=True)
class Section:
    """One citable section as a manifest records it.

    Attributes:
        title: The heading's text.
        page_title: The title of the page the section is on.
        prose: Digest of the section's own text, outputs excluded.
        outputs: Digest of the section's proof outputs, or `None` without any.
    """

    title: str
    page_title: str
    prose: str
    outputs: str | None


class _Collector(HTMLParser):
    """Split a page's content at its h2–h4 headings, keeping prose and output text apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: dict[str, dict[str, list[str]]] = {}
        self._current: str | None = None
        # Open elements with their role: "skip", "output", "heading" or "".
        self._stack: list[tuple[str, str]] = []

    def _role(self) -> str:
        roles = {role for _, role in self._stack}
        return next((r for r in ("skip", "output", "heading") if r in roles), "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        role = ""
        if classes & _SKIPPED_CLASSES:
            role = "skip"
        elif _OUTPUT_CLASS in classes:
            role = "output"
        elif _SECTION_HEADING.match(tag) and (ident := values.get("id")):
            self._current = ident
            self.sections[ident] = {"title": [], "prose": [], "outputs": []}
            role = "heading"
        if tag not in _VOID:
            self._stack.append((tag, role))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self._stack.pop()

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching tag; HTML from Markdown is well formed, this only guards stray tags.
        for depth in range(len(self._stack) - 1, -1, -1):
            if self._stack[depth][0] == tag:
                del self._stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        if self._current is None:
            return
        role = self._role()
        if role == "skip":
            return
        parts = self.sections[self._current]
        if role == "heading":
            parts["title"].append(data)
        parts["outputs" if role == "output" else "prose"].append(data)


def _normal(texts: Iterable[str]) -> str:
    return " ".join("".join(texts).split())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def section_digests(html: str, page_title: str) -> dict[str, Section]:
    """Digest every h2–h4 section of a page's rendered content.

    Args:
        html: The page's content as the build renders it.
        page_title: The page's title, recorded with each section.

    Returns:
        Section ids mapped to their digests, in page order.
    """
    collector = _Collector()
    collector.feed(html)
    collector.close()
    sections = {}
    for ident, parts in collector.sections.items():
        outputs = _normal(parts["outputs"])
        sections[ident] = Section(
            title=_normal(parts["title"]).replace("¶", "").strip(),
            page_title=page_title,
            prose=_digest(_normal(parts["prose"])),
            outputs=_digest(outputs) if outputs else None,
        )
    return sections


def build_manifest(
    edition: str,
    pages: Mapping[str, Mapping[str, Section]],
    lock: Iterable[str],
    aliases: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    """The manifest of one edition: every locked section anchor with its digests, and the aliases.

    Args:
        edition: The edition's name.
        pages: Page URL mapped to that page's `section_digests`.
        lock: The entries of `anchors.lock`.
        aliases: `read_aliases` of `anchors.aliases` (page URL, old id -> new id).

    Returns:
        The manifest, ready for `json.dumps`.

    Raises:
        InputError: If a locked anchor of a built page is neither a section nor an alias.
    """
    sections: dict[str, dict[str, str | None]] = {}
    missing = []
    for entry in sorted(lock):
        url, _, anchor = entry.partition("#")
        if not anchor or url not in pages:
            continue
        section = pages[url].get(anchor)
        if section is not None:
            sections[entry] = {
                "title": section.title,
                "page": section.page_title,
                "prose": section.prose,
                "outputs": section.outputs,
            }
        elif anchor not in aliases.get(url, {}):
            missing.append(entry)
    if missing:
        raise InputError(f"anchors.lock lists sections the build did not render: {', '.join(missing)}")
    alias_entries = {f"{url}#{old}": f"{url}#{new}" for url, renamed in aliases.items() for old, new in renamed.items()}
    return {
        "format": MANIFEST_FORMAT,
        "edition": edition,
        "sections": sections,
        "aliases": dict(sorted(alias_entries.items())),
    }


class ManifestRecorder:
    """Collects the citable pages' sections during a build and writes the edition's manifest at its end."""

    def __init__(self, lock: Iterable[str], aliases: Mapping[str, Mapping[str, str]]) -> None:
        """Start an empty record.

        Args:
            lock: The entries of `anchors.lock`.
            aliases: `read_aliases` of `anchors.aliases`.
        """
        self.lock = list(lock)
        self.aliases = aliases
        self.pages: dict[str, dict[str, Section]] = {}

    def record(self, src_uri: str, html: str) -> None:
        """Digest one citable page's rendered content.

        Args:
            src_uri: The page's source path, relative to `docs/`.
            html: The page's content.
        """
        floor = floor_for_page(src_uri)
        title = floor.heading if floor is not None else MAP_TITLE if src_uri == MAP_PAGE else src_uri
        self.pages[page_url(src_uri)] = section_digests(html, title)

    def write(self, site_dir: Path, edition: str) -> Path:
        """Write `manifest.json` at the root of the built site.

        Args:
            site_dir: The built site.
            edition: The edition's name.

        Returns:
            The manifest's path.
        """
        path = site_dir / MANIFEST_NAME
        manifest = build_manifest(edition, self.pages, self.lock, self.aliases)
        path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


@dataclass(frozen=True)
class Changes:
    """How a newer edition's citable sections differ from an older one's (each list holds anchors).

    Attributes:
        old: The older edition's name.
        new: The newer edition's name.
        added: Sections only the newer edition has (renamed ones excluded).
        reworded: Sections whose prose changed.
        outputs: Sections whose proof outputs changed.
        removed: Sections the newer edition neither has nor keeps as an alias.
        aliased: Old anchor mapped to its new anchor, for sections renamed since the older edition.
        titles: Every listed anchor mapped to a label ("page › section").
    """

    old: str
    new: str
    added: list[str]
    reworded: list[str]
    outputs: list[str]
    removed: list[str]
    aliased: dict[str, str]
    titles: dict[str, str]

    @property
    def unchanged(self) -> bool:
        """Whether nothing citable changed."""
        return not (self.added or self.reworded or self.outputs or self.removed or self.aliased)


def _label(section: Mapping[str, Any]) -> str:
    return f"{section['page']} › {section['title']}"


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> Changes:
    """Compare two editions' manifests.

    A section renamed with an alias in the newer edition is listed once, as kept under
    its old anchor, and its digests are compared across the rename.

    Args:
        old: The older edition's manifest.
        new: The newer edition's manifest.

    Returns:
        The differences.

    Raises:
        InputError: If either manifest has another format than this code writes.
    """
    for manifest in (old, new):
        if manifest.get("format") != MANIFEST_FORMAT:
            raise InputError(f"manifest of edition {manifest.get('edition')!r} has format {manifest.get('format')!r}")
    before: Mapping[str, Any] = old["sections"]
    after: Mapping[str, Any] = new["sections"]
    aliases: Mapping[str, str] = new.get("aliases", {})
    aliased = {o: n for o, n in aliases.items() if o in before and o not in after and n in after}
    renamed_to = {n: o for o, n in aliased.items()}
    titles = {anchor: _label(section) for anchor, section in {**before, **after}.items()}
    added, reworded, outputs = [], [], []
    for anchor, section in after.items():
        previous = before.get(anchor) or before.get(renamed_to.get(anchor, ""))
        if previous is None:
            added.append(anchor)
            continue
        if previous["prose"] != section["prose"]:
            reworded.append(anchor)
        if previous["outputs"] != section["outputs"]:
            outputs.append(anchor)
    removed = [a for a in before if a not in after and a not in aliased and a not in aliases]
    return Changes(old["edition"], new["edition"], added, reworded, outputs, sorted(removed), aliased, titles)


def render_markdown(
    changes: Changes, base: str = "", href: Callable[[str], str] | None = None, *, language: str
) -> str:
    """The "what changed" page, in Markdown.

    Removed sections are named, not linked: the newer edition no longer has them.

    Args:
        changes: The result of `compare`.
        base: Prefix of the section links (for example the newer edition's root URL).
        href: The link to an anchor (`floors/3-boundary/#crossing-cost`) instead of `base` + anchor
            (the site's own page links to Markdown sources, so MkDocs checks them).
        language: The page's language (`en`, `zh`; the command line writes English).

    Returns:
        The page.
    """

    def link(anchor: str) -> str:
        return f"[{changes.titles.get(anchor, anchor)}]({href(anchor) if href else base + anchor})"

    lines = [
        t("# What changed since edition {old}", language, old=changes.old) + " { #what-changed }",
        "",
        t(
            "Edition {new} compared with edition {old}, section by section (every anchor in `anchors.lock`).",
            language,
            new=changes.new,
            old=changes.old,
        ),
        "",
    ]
    groups = [
        ("added", t("Sections added", language), changes.added),
        ("reworded", t("Sections reworded", language), changes.reworded),
        ("outputs", t("Sections whose proof outputs changed", language), changes.outputs),
        ("removed", t("Sections removed", language), changes.removed),
    ]
    for ident, heading, anchors in groups:
        lines += [f"## {heading} ({len(anchors)}) {{ #{ident} }}", ""]
        if ident == "removed":
            lines += [f"- {changes.titles.get(a, a)} (`{a}`)" for a in anchors] or [t("None.", language)]
        else:
            lines += [f"- {link(a)}" for a in anchors] or [t("None.", language)]
        lines.append("")
    lines += [t("## Anchors kept as aliases ({count})", language, count=len(changes.aliased)) + " { #aliases }", ""]
    aliased = sorted(changes.aliased.items())
    lines += [t("- `{old}` now lands on {new}", language, old=old, new=link(new)) for old, new in aliased] or [
        t("None.", language)
    ]
    lines.append("")
    return "\n".join(lines)


def load_edition_manifest(edition: str, repo: Path, branch: str = "gh-pages") -> dict[str, Any]:
    """Read an edition's manifest from the published branch (`git show gh-pages:<edition>/manifest.json`).

    Args:
        edition: The edition's folder on the branch, such as `2026.11`.
        repo: The git repository.
        branch: The branch mike publishes to.

    Returns:
        The manifest.

    Raises:
        InputError: If git cannot show the file.
    """
    spec = f"{branch}:{edition}/{MANIFEST_NAME}"
    done = subprocess.run(["git", "show", spec], cwd=repo, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InputError(f"git show {spec} failed: {done.stderr.strip()}")
    manifest: dict[str, Any] = json.loads(done.stdout)
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Command line: compare the built site's manifest with an earlier edition's and print the page.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors changes", description=main.__doc__)
    since = parser.add_mutually_exclusive_group(required=True)
    since.add_argument("--since", metavar="EDITION", help="an edition published on the gh-pages branch")
    since.add_argument("--since-file", metavar="PATH", type=Path, help="an earlier edition's manifest.json")
    parser.add_argument("--current", type=Path, default=Path("site") / MANIFEST_NAME, help="this edition's manifest")
    parser.add_argument("--repo", type=Path, default=Path(), help="the git repository holding gh-pages")
    parser.add_argument("--base", default="", help="prefix for section links (e.g. the edition's root URL)")
    parser.add_argument("--out", type=Path, help="write the page here instead of printing it")
    args = parser.parse_args(argv)
    if not args.current.is_file():
        parser.error(f"{args.current} does not exist: run `make build` first")
    try:
        old = (
            json.loads(args.since_file.read_text(encoding="utf-8"))
            if args.since_file
            else load_edition_manifest(args.since, args.repo)
        )
        page = render_markdown(
            compare(old, json.loads(args.current.read_text(encoding="utf-8"))), args.base, language="en"
        )
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.out:
        args.out.write_text(page, encoding="utf-8")
    else:
        print(page)
    return 0
