"""Publish an edition: a strict build deployed with mike into `gh-pages`, then the root 404.

    python -m pytorch_floors publish 2026.12 [--push] [--remote origin] [--branch gh-pages]

(`make publish EDITION=2026.12 [PUSH=1]`.) In the project's git repository it:

1. refuses an edition name that is not `YYYY.MM` (ASCII digits, a year from the project's first,
   2026, to next year), one already published (editions are frozen), one older than the newest
   published (`latest` names the newest edition), a working tree that differs from its commit
   (the edition says which commit it was built from), and a build told not to run every proof
   and lab (`FLOORS_EXEC=off`, `FLOORS_EXEC_ONLY`, read by the plugin's own parser,
   `pytorch_floors.settings`, which refuses a bad value of any `FLOORS_*` variable at once), and,
   last, a build that names no GitHub repository to publish to (`FLOORS_REPOSITORY`: its lab
   pages' Colab links open the notebooks on that repository's `gh-pages`);
2. with `--push`, first fetches the remote's publishing branch, so mike builds on top of it;
3. runs `mike deploy --update-aliases EDITION latest` with `FLOORS_EDITION` set, the build
   strict (`FLOORS_STRICT=true`, read by `strict:` in `mkdocs.yml`), linking its PDF handouts
   (`FLOORS_HANDOUTS=on`) and with `FLOORS_PREVIOUS_MANIFEST` naming the newest published
   edition's manifest (for the "What changed" page), then `mike set-default latest`, and reads the
   deployed edition's `build-report.json`: every block and lab must have run or come from the
   cache (`unmeasured`), else the edition is not published;
4. prints the deployed edition's handouts with headless Chromium and commits them, with the
   course packs rewritten to hold each floor's PDF, into the edition's folder (`write_edition_handouts`);
5. commits the root `404.html` (`pytorch_floors.editions.root404`), rendered for the editions now published;
6. with `--push`, pushes the branch. Without it, nothing leaves the machine.

Steps 4 and 5 write the branch with git plumbing (a scratch index), never checking it out. If any
step from 3 on fails, the branch is set back to where it was, so the edition can be published again.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pytorch_floors.editions.handouts import print_and_pack
from pytorch_floors.editions.manifest import MANIFEST_NAME, load_edition_manifest
from pytorch_floors.editions.root404 import layout_from, redirect_urls, render_root_404
from pytorch_floors.editions.verify import verify_site
from pytorch_floors.errors import FloorsError, InputError, ToolError
from pytorch_floors.execution.process import scratch as scratch_names
from pytorch_floors.labs.launch import github_repository

__all__ = [
    "FIRST_YEAR",
    "SiteFacts",
    "main",
    "parse_edition",
    "publish",
    "published_versions",
    "unmeasured",
    "write_edition_handouts",
    "write_root_404",
]

_EDITION = re.compile(r"(?P<year>[0-9]{4})\.(?P<month>0[1-9]|1[0-2])", re.ASCII)
FIRST_YEAR = 2026
"""The project's first year: no edition is older."""


def parse_edition(name: str, today: date | None = None) -> tuple[int, int]:
    """Read an edition's name as (year, month), refusing anything but `YYYY.MM` in ASCII digits, in range.

    The year is from the project's first (`FIRST_YEAR`) to the next one: an edition named far ahead
    (`9999.12`) would be the newest for ever, and every real edition after it refused as older.

    Args:
        name: The edition, such as `2026.12`.
        today: The date to use instead of today's (for tests).

    Returns:
        The year and month, which order editions.

    Raises:
        FloorsError: For `2026.13`, `26.12`, `latest`, `0000.01`, digits of another script (`٢٠٢٦.12`),
            or a year before `FIRST_YEAR` or after next year.
    """
    last_year = (today or date.today()).year + 1
    match = _EDITION.fullmatch(name)
    if match is None:
        raise FloorsError(
            f"edition {name!r}: expected YYYY.MM in ASCII digits, a year from {FIRST_YEAR}, such as 2026.12"
        )
    year = int(match["year"])
    if not FIRST_YEAR <= year <= last_year:
        raise FloorsError(
            f"edition {name!r}: the year must be from {FIRST_YEAR} (the project's first) to {last_year} (next year); "
            "an edition named later would stay the newest and refuse every real one after it"
        )
    return year, int(match["month"])


def unmeasured(report: Mapping[str, object]) -> str | None:
    """Why a build report does not describe a measured edition, or `None` when it does.

    Args:
        report: A parsed `build-report.json`.

    Returns:
        What is missing: blocks or labs skipped (a render-only build) or failed, or no block at all.
    """
    totals = report.get("totals")
    if not isinstance(totals, dict):
        return "the build report has no totals"
    counts = {key: totals.get(key, 0) for key in ("blocks", "ran", "cached", "skipped", "failed")}
    if not all(isinstance(value, int) for value in counts.values()):
        return f"the build report's totals are not counts: {counts}"
    if counts["blocks"] == 0:
        return "the build ran no block and no lab"
    if counts["skipped"] or counts["failed"] or counts["ran"] + counts["cached"] != counts["blocks"]:
        return (
            f"of its {counts['blocks']} blocks and labs, {counts['ran']} ran, {counts['cached']} came from the cache, "
            f"{counts['skipped']} were skipped and {counts['failed']} failed; an edition shows measurements only"
        )
    return None


def _refuse_unmeasured_settings(values: Mapping[str, object]) -> None:
    # Read by the plugin's own parser (`pytorch_floors.settings.from_environment`): a value it would
    # refuse was refused there; one it reads as skipping pages is refused here before mike renders anything.
    if values.get("FLOORS_EXEC") is False:
        raise FloorsError("FLOORS_EXEC=off renders without running: an edition must show measurements; unset it")
    if values.get("FLOORS_EXEC_ONLY") is not None:
        raise FloorsError("FLOORS_EXEC_ONLY runs only some pages: an edition must run every proof and lab; unset it")


def _refuse_unconfigured_repository(repository: str | None) -> None:
    # An edition's lab pages link "Open in Colab" to its notebooks on the gh-pages branch of the repository
    # it is published to: a placeholder (`repo_url` in mkdocs.yml names one) would publish links that never open.
    if repository is None:
        raise InputError(
            "FLOORS_REPOSITORY is not set: an edition's lab pages open their notebooks in Colab from the gh-pages "
            "branch of the GitHub repository it is published to; set it to that repository "
            "(FLOORS_REPOSITORY=https://github.com/<owner>/<repo> make publish EDITION=...)"
        )
    try:
        github_repository(repository)
    except ValueError as error:
        raise InputError(f"FLOORS_REPOSITORY: {error}") from None


def _refuse_dirty_tree(repo: Path) -> None:
    changed = _git(repo, "status", "--porcelain", "--untracked-files=normal").stdout.splitlines()
    if changed:
        shown = ", ".join(line[3:] for line in changed[:3]) + (", ..." if len(changed) > 3 else "")
        raise InputError(
            f"the working tree differs from its commit ({len(changed)} paths: {shown}); an edition is built from a "
            "commit and says which: commit or stash the changes first"
        )


def _refuse_older_than_published(edition: str, versions: list[dict[str, object]]) -> None:
    dated = []
    for entry in versions:
        with contextlib.suppress(FloorsError):  # an entry that is not an edition (a hand-made alias) is not dated
            dated.append((parse_edition(str(entry["version"])), str(entry["version"])))
    if dated and max(dated)[0] > parse_edition(edition):
        raise InputError(
            f"edition {edition} is older than {max(dated)[1]}, the newest published; `latest` names the newest "
            "edition, so editions are published in order"
        )


def _git(
    repo: Path, *args: str, stdin: str | None = None, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=repo, input=stdin, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed in {repo}:\n{done.stderr.strip()}")
    return done


def _git_bytes(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
    if done.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed in {repo}:\n{done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _has_ref(repo: Path, ref: str) -> bool:
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode == 0


def published_versions(repo: Path, ref: str) -> list[dict[str, object]]:
    """The `versions.json` mike keeps on a branch, or `[]` when the branch or the file does not exist yet.

    Args:
        repo: The git repository.
        ref: The branch (`gh-pages` or `origin/gh-pages`).

    Returns:
        The parsed entries, newest first.

    Raises:
        FloorsError: If the file is not what mike writes: a JSON list of objects, each with a `version`
            (text) and its `aliases` (a list of text).
    """
    if not _has_ref(repo, ref) or _git(repo, "cat-file", "-e", f"{ref}:versions.json", check=False).returncode:
        return []
    where = f"{ref}:versions.json"
    try:
        loaded = json.loads(_git(repo, "show", where).stdout)
    except ValueError as error:
        raise FloorsError(f"{where} is not JSON ({error}); mike writes a list of editions") from None
    if not isinstance(loaded, list):
        raise FloorsError(
            f"{where} holds a JSON {type(loaded).__name__}, not the list of editions mike writes; "
            "repair the branch before publishing"
        )
    for number, entry in enumerate(loaded):
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise FloorsError(f"{where}: entry {number} has no `version` (text): {entry!r}"[:300])
        aliases = entry.get("aliases")
        if not isinstance(aliases, list) or not all(isinstance(alias, str) for alias in aliases):
            raise FloorsError(f"{where}: entry {number} ({entry['version']}) has no `aliases` list of text")
    return loaded


@dataclass(frozen=True)
class SiteFacts:
    """What publishing needs of the site's `mkdocs.yml`.

    Attributes:
        config_file: The file they were read from.
        site_name: The site's name.
        site_url: The site's root URL.
        latest: The alias the newest edition is published under (`extra.version.default`).
        redirect_maps: The redirects plugin's old page -> new page.
        overrides: The theme's overrides folder (it holds the root 404's template), if any.
    """

    config_file: Path
    site_name: str
    site_url: str
    latest: str
    redirect_maps: Mapping[str, str]
    overrides: Path | None


def write_root_404(repo: Path, branch: str, site: SiteFacts) -> bool:
    """Commit the root `404.html` on the publishing branch for the editions it holds.

    Args:
        repo: The git repository.
        branch: The publishing branch.
        site: The site's facts from `mkdocs.yml` (name and URL, redirect maps, the `latest` alias).

    Returns:
        Whether a commit was made (`False` when the branch already holds this very page).
    """
    layout = layout_from(
        site_name=site.site_name,
        site_url=site.site_url,
        latest=site.latest,
        versions_json=published_versions(repo, branch),
        redirects=redirect_urls(site.redirect_maps),
    )
    if site.overrides is None:
        raise InputError(
            f"{site.config_file}: theme.custom_dir must name the overrides folder holding the 404 template"
        )
    html = render_root_404(layout, site.overrides)
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin=html).stdout.strip()
    message = f"Root 404.html for editions {', '.join(layout.versions)} (latest: {layout.latest_version})"
    return _commit_blobs(repo, branch, {"404.html": blob}, message)


def _commit_blobs(repo: Path, branch: str, blobs: dict[str, str], message: str) -> bool:
    """Commit files (path on the branch -> blob id) onto `branch`; `False`, with no commit, if it holds them already."""
    # A scratch index, so the checkout's own index and working tree stay untouched.
    with tempfile.TemporaryDirectory(prefix=scratch_names.prefix("publish")) as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git(repo, "read-tree", branch, env=env)
        listing = "".join(f"100644 {blob}\t{path}\n" for path, blob in blobs.items())
        _git(repo, "update-index", "--add", "--index-info", stdin=listing, env=env)
        tree = _git(repo, "write-tree", env=env).stdout.strip()
    parent = _git(repo, "rev-parse", branch).stdout.strip()
    if tree == _git(repo, "rev-parse", f"{parent}^{{tree}}").stdout.strip():
        return False
    commit = _git(repo, "commit-tree", tree, "-p", parent, "-m", message).stdout.strip()
    _git(repo, "update-ref", f"refs/heads/{branch}", commit, parent)
    return True


def write_edition_handouts(repo: Path, branch: str, edition: str) -> list[str]:
    """Print a deployed edition's PDF handouts and commit them, with its course packs, into its folder.

    The edition's pages already link `pdf/…` (mike built them with `FLOORS_HANDOUTS=on`). Its
    folder is exported from the branch into a scratch directory, printed there as `make pdf` prints
    `site/` (`handouts.print_and_pack`: Part 0, every floor, the whole edition, then the packs
    again with each floor's PDF, in every language), and every file it wrote is committed back.

    Args:
        repo: The git repository.
        branch: The publishing branch, holding the deployed edition.
        edition: The edition's folder on the branch.

    Returns:
        The paths committed on the branch: `<edition>/pdf/…`, `<edition>/packs/…`, and each translation's
        (`<edition>/zh/pdf/…`, `<edition>/zh/packs/…`).
    """
    with tempfile.TemporaryDirectory(prefix=scratch_names.prefix("handouts")) as scratch:
        archive = Path(scratch) / "edition.tar"
        _git(repo, "archive", "--format=tar", f"--output={archive}", branch, f"{edition}/")
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        site = Path(scratch) / edition
        # What it wrote, in every language: globbing `pdf/` and `packs/` at the edition's root left out each
        # translation's own (`zh/pdf/…`), which its pages link.
        printed, packs = print_and_pack(site, edition=edition)
        files = sorted({*printed, *packs})
        hashed = _git(repo, "hash-object", "-w", "--stdin-paths", stdin="".join(f"{p}\n" for p in files))
        paths = [f"{edition}/{p.relative_to(site).as_posix()}" for p in files]
    blobs = dict(zip(paths, hashed.stdout.split(), strict=True))
    pdfs = sum(path.endswith(".pdf") for path in paths)
    _commit_blobs(repo, branch, blobs, f"Handouts of {edition}: {pdfs} PDFs, and the course packs with them")
    return paths


def _fetch(repo: Path, remote: str, branch: str) -> None:
    """Bring `remote/branch` up to date, so mike deploys on top of what is published (no-op on a first publish)."""
    listed = _git(repo, "ls-remote", "--exit-code", "--heads", remote, branch, check=False)
    if listed.returncode == 2:  # the remote answered: it has no such branch yet
        return
    if listed.returncode != 0:
        raise ToolError(f"cannot read the remote {remote!r}:\n{listed.stderr.strip()}")
    _git(repo, "fetch", remote, f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")


def _previous_manifest(repo: Path, refs: list[str], scratch: Path) -> Path | None:
    """Copy the newest published edition's `manifest.json` into `scratch/<edition>/`; `None` before a first edition."""
    for ref in refs:
        versions = published_versions(repo, ref)
        if versions:
            newest = str(versions[0]["version"])
            path = scratch / newest / MANIFEST_NAME
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps(load_edition_manifest(newest, repo, ref)), encoding="utf-8")
            return path
    return None


def _refuse_unmeasured_build(repo: Path, branch: str, edition: str) -> None:
    """Stop unless the deployed edition's build report shows every block and lab run or cached."""
    path = f"{branch}:{edition}/build-report.json"
    shown = _git(repo, "show", path, check=False)
    if shown.returncode != 0:
        raise InputError(f"the deployed edition has no build report ({path}): nothing says it was measured")
    problem = unmeasured(json.loads(shown.stdout))
    if problem is not None:
        raise InputError(f"edition {edition} is not measured: {problem}")
    with tempfile.TemporaryDirectory(prefix=scratch_names.prefix("verify")) as scratch:
        tree = _git_bytes(repo, "archive", "--format=tar", branch, edition)
        with tarfile.open(fileobj=io.BytesIO(tree)) as archive:
            archive.extractall(scratch, filter="data")
        check = verify_site(Path(scratch) / edition)
    if not check.passed:
        raise InputError(f"edition {edition} is not verified: " + "; ".join(check.problems))


def _set_back(repo: Path, branch: str, before: str) -> None:
    """Return `branch` to its commit before this publish (or remove it): a half-made edition must not stay frozen."""
    if before:
        _git(repo, "update-ref", f"refs/heads/{branch}", before)
    else:
        _git(repo, "update-ref", "-d", f"refs/heads/{branch}", check=False)
    print(f"publish: {branch} set back to {before or 'nothing (it did not exist)'}", file=sys.stderr, flush=True)


def publish(
    edition: str,
    *,
    repo: Path,
    read_site: Callable[[Path], SiteFacts],
    settings: Mapping[str, object],
    repository: str | None = None,
    push: bool = False,
    remote: str = "origin",
    branch: str = "gh-pages",
) -> None:
    """Deploy the site in `repo` as a frozen edition, move `latest` to it and write the root 404.

    Args:
        edition: The edition's name, `YYYY.MM`.
        repo: The project's git repository (holds `mkdocs.yml`).
        read_site: Reads the facts of a `mkdocs.yml` (the plugin's `read_site_facts`: MkDocs reads it).
        settings: The plugin's `FLOORS_*` variables that are set, parsed (`settings.from_environment`).
        repository: The GitHub repository the edition is published to (`FLOORS_REPOSITORY`), if set.
        push: Push the branch to `remote` when done (and fetch it first).
        remote: The git remote.
        branch: The publishing branch.

    Raises:
        FloorsError: On a malformed edition name, a bad `FLOORS_*` setting or a `versions.json` mike did not write.
        InputError: On an edition already published, or older than the newest.
    """
    parse_edition(edition)
    _refuse_unmeasured_settings(settings)
    for kind in ("publish", "handouts", "previous", "verify"):
        scratch_names.sweep(kind)  # what a killed publish left behind
    if push:
        _fetch(repo, remote, branch)
    _refuse_dirty_tree(repo)
    site = read_site(repo / "mkdocs.yml")
    latest = site.latest
    for ref in (branch, f"{remote}/{branch}"):
        versions = published_versions(repo, ref)
        if any(entry["version"] == edition for entry in versions):
            raise InputError(f"edition {edition} is already published on {ref}, and published editions never change")
        _refuse_older_than_published(edition, versions)
    _refuse_unconfigured_repository(repository)
    # mike starts mkdocs by name: it must be the one beside this interpreter.
    tools = Path(sys.executable).parent
    env = {
        **os.environ,
        "FLOORS_EDITION": edition,
        "FLOORS_STRICT": "true",
        "FLOORS_HANDOUTS": "on",  # the edition's pages link the PDFs that step 4 prints
        "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    where = ["--remote", remote, "--branch", branch]
    before = _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).stdout.strip()
    try:
        with tempfile.TemporaryDirectory(prefix=scratch_names.prefix("previous")) as scratch:
            previous = _previous_manifest(repo, [branch, f"{remote}/{branch}"], Path(scratch))
            # The "What changed" page compares with the newest edition already published (none: a first edition).
            env.pop("FLOORS_PREVIOUS_MANIFEST", None)
            if previous is not None:
                env["FLOORS_PREVIOUS_MANIFEST"] = str(previous)
            print(f"publish: what changed since {previous.parent.name if previous else 'nothing (first edition)'}")
            for args in (["deploy", "--update-aliases", edition, latest], ["set-default", latest]):
                print(f"publish: mike {' '.join(args)}", flush=True)
                subprocess.run([str(tools / "mike"), *args, *where], cwd=repo, env=env, check=True)
        _refuse_unmeasured_build(repo, branch, edition)
        handouts = write_edition_handouts(repo, branch, edition)
        print(f"publish: {len(handouts)} handouts and course packs committed in {edition}/ on {branch}", flush=True)
        wrote = write_root_404(repo, branch, site)
        print(f"publish: root 404.html {'committed' if wrote else 'unchanged'} on {branch}", flush=True)
    except BaseException:
        _set_back(repo, branch, before)
        raise
    if push:
        _git(repo, "push", remote, branch)
        print(f"publish: pushed {branch} to {remote}", flush=True)


def main(
    argv: list[str] | None = None,
    *,
    read_site: Callable[[Path], SiteFacts],
    read_settings: Callable[[], Mapping[str, object]],
    repository: str | None = None,
) -> int:
    """Command line: `python -m pytorch_floors publish EDITION [--push]`.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).
        read_site: Reads the facts of a `mkdocs.yml`.
        read_settings: Reads the plugin's `FLOORS_*` variables that are set (refusing a bad one).
        repository: The GitHub repository to publish to (`FLOORS_REPOSITORY`), if set.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m pytorch_floors publish", description=__doc__.splitlines()[0])
    parser.add_argument("edition", help="the edition to publish, YYYY.MM")
    parser.add_argument("--push", action="store_true", help="fetch the publishing branch first and push it at the end")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default="gh-pages")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the project's git repository (default: here)")
    args = parser.parse_args(argv)
    try:
        publish(
            args.edition,
            repo=args.repo.resolve(),
            read_site=read_site,
            settings=read_settings(),
            repository=repository,
            push=args.push,
            remote=args.remote,
            branch=args.branch,
        )
    except (FloorsError, ValueError, RuntimeError, subprocess.CalledProcessError) as error:
        # mike and mkdocs have printed their own account above; this line says which step stopped.
        print(f"publish: {args.edition} not published: {error}", file=sys.stderr)
        return 1
    return 0
