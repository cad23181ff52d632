"""The build's proof engine: what runs, where, for how long, and what a failure says."""

from __future__ import annotations

import logging
import os
import re
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path

from pytorch_floors.claims import CHANNEL, Claim, ClaimFormatError, parse_claims
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.cache import CachedOutput, OutputCache, machine_fingerprint
from pytorch_floors.execution.digest import block_digest, keyed_options
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.imports import sources_digest
from pytorch_floors.execution.options import NO_ID, BlockOptions
from pytorch_floors.execution.output import MAX_OUTPUT, PathScrubber, clean_text, html_problem, readings, tail
from pytorch_floors.execution.process import scratch
from pytorch_floors.execution.process.runner import (
    BlockError,
    BlockProcess,
    BlockReply,
    BlockRequest,
    BlockTimeout,
    WorkerDied,
    end,
    fork_server,
)
from pytorch_floors.execution.process.sandbox import block_environment
from pytorch_floors.execution.progress import Progress
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock
from pytorch_floors.execution.secrets import SecretFinder
from pytorch_floors.ranks import DEADLINE_CHANNEL, START_CHANNEL

__all__ = ["SKIPPED_OUTPUT", "Engine", "ProofFailure", "Ran", "shown_marker"]

SKIPPED_OUTPUT = "(execution disabled for this build)"
"""What a block this build does not run shows (a serve session puts its "running…" placeholder there)."""

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

_MARKER = re.compile(r"<!-- floors-block:[^>]*? -->")


def shown_marker(block_id: str) -> str:
    """The comment the formatter puts before a block's HTML, so the engine can tell it reached the page.

    Args:
        block_id: The block's id.

    Returns:
        An HTML comment naming the block.
    """
    return f"<!-- floors-block:{block_id.replace('-->', '')} -->"


@contextmanager
def _claims_channel() -> Iterator[Path]:
    """An empty file for one block's claims (see `pytorch_floors.claims`), removed afterwards."""
    descriptor, name = tempfile.mkstemp(prefix=scratch.prefix("claims"), suffix=".jsonl")
    os.close(descriptor)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _disagreement(code: str, block: ExecBlock) -> str:
    """Say where the code the page hands over first differs from the code its scan found."""
    handed, scanned = code.split("\n"), block.code_lines
    line = next((n for n, (a, b) in enumerate(zip(handed, scanned, strict=False), start=1) if a != b), None)
    if line is None:
        line = min(len(handed), len(scanned)) + 1
    where = block.locate(line)
    return (
        f"the page's Markdown handed over other code than its scan found, first at its line {line} "
        f"({where[0]}:{where[1]}): {handed[line - 1] if line <= len(handed) else '(nothing)'!r} against "
        f"{scanned[line - 1] if line <= len(scanned) else '(nothing)'!r}; report this with the fence"
    )


@dataclass(frozen=True)
class Ran:
    """A block the fence handed over, as the engine ran it.

    Attributes:
        output: What it printed (or the cached output).
        result: Its result in this build.
        block: Its scan, or `None` when the page was not scanned.
    """

    output: str
    result: BlockResult | None
    block: ExecBlock | None


class ProofFailure(FloorsError):
    """A block raised, exited, crashed or ran out of time.

    The message is one line naming the page, the block id, the file and line, and the error.
    """

    def __init__(
        self,
        page: str,
        block_id: str,
        location: tuple[str, int],
        summary: str,
        details: str = "",
        *,
        output: str = "",
    ) -> None:
        """Build the failure.

        Args:
            page: Source path of the page, relative to `docs/`.
            block_id: The block's id.
            location: `(file, line)` the failure points at.
            summary: What went wrong, for example `ZeroDivisionError: division by zero`.
            details: The traceback, for the log.
            output: The end of what the block printed before it failed, safe to show (`Engine._printed`),
                for the log and the page that shows the failure.
        """
        self.page, self.block_id, self.location, self.summary, self.details = page, block_id, location, summary, details
        self.output = output
        super().__init__(f"docs/{page} › block '{block_id}' ({location[0]}:{location[1]}): {summary}")


@dataclass
class _Session:
    history: list[str] = field(default_factory=list)
    # (block id, its time limit, its `workdir`), as `history`: a replayed block runs as it ran, where it ran.
    limits: list[tuple[str, float, str | None]] = field(default_factory=list)
    process: BlockProcess | None = None
    replayed: int = 0
    # The scratch folder its blocks without `workdir` run in: one for the session's life, as its blocks share
    # state (a file the first writes, the next reads); made for its first block that runs, removed with it.
    folder: Path | None = None

    def remove_folder(self) -> None:
        """Remove the session's scratch folder and what its blocks wrote there (its processes have ended)."""
        if self.folder is not None:
            # What the block made unremovable even after `remove` gives permissions back stays for the next
            # build's sweep, rather than failing this one.
            scratch.remove(self.folder)
            self.folder = None

    def remember(self, code: str, block_id: str, timeout: float, workdir: str | None) -> None:
        """Keep a block of the session, so a later block's process can replay it under its own limit, in its folder."""
        self.history.append(code)
        self.limits.append((block_id, timeout, workdir))


@dataclass(frozen=True)
class _Job:
    """One block of the current page on its way through `Engine.run`.

    Attributes:
        code: Its code, snippet includes expanded.
        block: It as the page's scan found it.
        options: Its options, as the page's scan parsed them.
        timeout: Its time limit: its own, else the build's.
        session: Its session (a fresh, unnamed one outside a session).
        key: Its cache key.
        digest: The digest of its inputs (the key without the machine), which recordings are checked against.
        number: Its place among the build's blocks, for the log.
        where: The page and block, for the log.
    """

    code: str
    block: ExecBlock
    options: BlockOptions
    timeout: float
    session: _Session
    key: str
    digest: str
    number: int
    where: str

    @property
    def proof(self) -> str | None:
        """The proof file it includes first, if any."""
        return self.block.proofs[0] if self.block.proofs else None


class Engine:
    """Runs a build's executed blocks: cached, isolated per page and session, time-limited."""

    def __init__(
        self,
        project_dir: Path,
        cache: OutputCache,
        *,
        execute: bool = True,
        default_timeout: float = 120.0,
        only: str | None = None,
        max_output: int = MAX_OUTPUT,
        provenance: Provenance | None = None,
        advisory_claims: bool = False,
        machine: Mapping[str, str] | None = None,
        known_failures: Mapping[str, ProofFailure] | None = None,
        report_failure: Callable[[str, ProofFailure], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        """Create an engine for one build.

        Args:
            project_dir: The project root: a block's `workdir` is inside it, and its path is kept out of pages.
            cache: Where outputs are stored.
            execute: `False` renders every block without running it (the render-only build).
            default_timeout: Seconds a block may run unless its fence sets `timeout`.
            only: A glob of page paths (relative to `docs/`): blocks of other pages are not run.
            max_output: Bytes a block may print before it fails (a page is not a log file).
            provenance: This build's provenance, stored with every output it produces.
            advisory_claims: Log a claim that did not hold as INFO instead of WARNING (which fails
                a strict build); the page and the report show it either way.
            machine: This build's `machine_fingerprint`, part of every cache key (asked of a block's
                process on first use when not given).
            known_failures: A serve session's blocks that failed in its background build, by cache key:
                shown failed again, not run, until their code or inputs change.
            report_failure: Where a session's background build reports each new failure (cache key,
                failure): the session reads them as the next build's `known_failures`.
            on_progress: Where each proof's steps go as events (a background build tells its session).
        """
        self.project_dir = project_dir
        self.cache = cache
        self.execute = execute
        self.default_timeout = default_timeout
        self.only = only
        self.max_output = max_output
        self.provenance = provenance
        self.advisory_claims = advisory_claims
        self._machine = dict(machine) if machine is not None else None
        self._scrub = PathScrubber(project_dir)
        self._secrets = SecretFinder()
        self.import_roots = (project_dir / "src", project_dir)
        self.planned: dict[str, list[ExecBlock]] = {}
        self.records: list[BlockResult] = []
        self._blocks_recorded = 0  # this build's own blocks among the records: a proof's number counts only them
        self.failures: list[ProofFailure] = []
        self.known_failures: Mapping[str, ProofFailure] = known_failures if known_failures is not None else {}
        self.report_failure = report_failure
        self.on_progress = on_progress
        self.page = ""
        self.page_url = ""
        # A translated page shows its English page's blocks (`twin`): page → the English page it translates.
        self.twins: dict[str, str] = {}
        self.source_page = ""
        self.twin_shown: dict[str, list[str]] = {}
        self._sessions: dict[str, _Session] = {}
        self._processes: set[BlockProcess] = set()  # this engine's, alive: what `close` ends
        scratch.sweep("claims")  # what a killed build left behind
        scratch.sweep(scratch.WORKDIR)  # and the folders its blocks ran in

    def plan(self, page: str, blocks: Iterable[ExecBlock]) -> None:
        """Plan a page's executed blocks, as its scan found them (before any page renders).

        Args:
            page: Source path relative to `docs/`.
            blocks: The page's executed blocks, in page order.
        """
        self.planned[page] = list(blocks)

    def plan_twin(self, page: str, english: str) -> None:
        """Plan a translated page: it shows its English page's blocks (`twin`), planned and run once, there.

        Args:
            page: The translation's source path relative to `docs/`.
            english: The English page it translates.
        """
        self.twins[page] = english

    def adopt(
        self, records: Iterable[BlockResult], failures: Iterable[ProofFailure], order: Callable[[BlockResult], int]
    ) -> None:
        """Take the records and failures of the pages a partial build does not render again (a serve session's).

        The records stay one list (the launch settings read it), sorted with this build's own by `order`.

        Args:
            records: The kept pages' records.
            failures: The kept pages' failures.
            order: A record's place (its page's place among the build's pages).
        """
        self.records[:] = sorted([*records, *self.records], key=order)
        self.failures.extend(failures)

    def record(self, result: BlockResult) -> None:
        """Add a result to the build's records (the engine's own blocks, and what else the build ran: a lab).

        Args:
            result: The result.
        """
        self.records.append(result)

    def _record_block(self, result: BlockResult) -> None:
        """Record one of this build's own blocks: the next block's number (`proof n/N`) counts it.

        A lab's result, or a kept page's (`adopt`), is a record too, but no proof: counted, the background build
        of a serve session numbered its last proof, run after the labs, 97 of 88.
        """
        self.record(result)
        self._blocks_recorded += 1

    def close(self) -> None:
        """End every process this engine started, with everything they started (at the end of its build).

        Only this engine's: another build's engine in the same process keeps its own. The cache is
        no longer marked in use by this build (another build may prune it).
        """
        self.end_page()
        end(self._processes)
        self.cache.close()

    @property
    def total(self) -> int:
        """Number of executed blocks found in the whole site."""
        return sum(len(blocks) for blocks in self.planned.values())

    def block(self, block_id: str) -> ExecBlock | None:
        """The scanned description of a block of the current page.

        Args:
            block_id: The block's id.

        Returns:
            The block, or `None` when the page was not scanned.
        """
        return next((b for b in self.planned.get(self.source_page, []) if b.block_id == block_id), None)

    def begin_page(self, page: str, url: str) -> None:
        """Start a page: every page's blocks start in fresh processes.

        Args:
            page: Source path relative to `docs/`.
            url: The page's URL relative to the site root.
        """
        self.end_page()
        self.page, self.page_url = page, url
        self.source_page = self.twins.get(page, page)
        if page in self.twins:
            self.twin_shown[page] = []

    def end_page(self) -> None:
        """Close the current page's session processes and remove their scratch folders."""
        for session in self._sessions.values():
            if session.process is not None:
                session.process.close()
            session.remove_folder()
        self._sessions = {}

    def sanitize(self, text: str) -> str:
        """Remove the build machine's absolute paths, and any secret, from text shown to readers.

        Args:
            text: Any text (output, an error message, a traceback).

        Returns:
            The text with the project, environment, temporary and home paths replaced by short names,
            and each secret (`secrets.SecretFinder`) by a note naming what was withheld.
        """
        return self._secrets.redact(self._scrub(text))

    def result_for(self, block_id: str) -> BlockResult | None:
        """The result of a block of the current page in this build.

        Args:
            block_id: The block's id.

        Returns:
            Its result, or `None` if it has none yet.
        """
        page = self.source_page or self.page
        return next((r for r in reversed(self.records) if r.page == page and r.block_id == block_id), None)

    def unaccounted(self) -> list[ProofFailure]:
        """Record a failure for every planned block of the current page that has no result.

        A block the scan found but the renderer never handed to the engine (a fence the
        Markdown parser read differently) would otherwise vanish from the page and the report.

        Returns:
            The failures recorded.
        """
        if self.page in self.twins:
            shown = self.twin_shown.get(self.page, [])
            missing = [b for b in self.planned.get(self.source_page, []) if b.block_id not in shown]
        else:
            missing = [b for b in self.planned.get(self.page, []) if self.result_for(b.block_id) is None]
        failures = []
        for block in missing:
            summary = "the page was rendered without running this block; check that its fence is well formed"
            failure = ProofFailure(self.page, block.block_id, (f"docs/{self.page}", block.fence_line), summary)
            self._fail(failure, block.proofs[0] if block.proofs else None)
            failures.append(failure)
        return failures

    def unshown(self, html: str) -> str:
        """Fail every block of the current page that ran but whose output is not in the page's HTML.

        SuperFences runs a fence that Markdown then reads as an indented code block (indented four
        spaces after a paragraph, or eight in a list item) and shows its source in place of its output.

        Args:
            html: The page's HTML, as rendered.

        Returns:
            The HTML without the formatter's markers.
        """
        for block in self.planned.get(self.source_page or self.page, []):
            result = self.result_for(block.block_id)
            if result is None or result.status == "failed" or shown_marker(block.block_id) in html:
                continue
            if any(f.page == self.page and f.block_id == block.block_id for f in self.failures):
                continue  # it failed on this page already (a translated page's render), by its own cause
            if self.page in self.twins:
                summary = (
                    "the translated page shows this block's source instead of its output: "
                    "indent its fence as the English page does"
                )
                failure = ProofFailure(self.page, block.block_id, (f"docs/{self.page}", block.fence_line), summary)
                self._fail(failure, block.proofs[0] if block.proofs else None)
                continue
            summary = (
                "the block ran, but the page shows its source instead of its output: Markdown reads the fence "
                "as an indented code block; indent it less (four spaces only inside a list item or admonition)"
            )
            self.records.remove(result)
            failure = ProofFailure(self.page, block.block_id, (f"docs/{self.page}", block.fence_line), summary)
            self._fail(failure, block.proofs[0] if block.proofs else None)
        return _MARKER.sub("", html)

    def fail_shown(self, block_id: str, summary: str) -> ProofFailure:
        """Fail a block of the current page whose result the page cannot show (a recording of it was refused).

        Its record becomes `failed` in place, so the block still ends exactly once.

        Args:
            block_id: The block's id.
            summary: Why, in one line.

        Returns:
            The failure recorded.
        """
        block = self.block(block_id)
        failure = ProofFailure(self.page, block_id, self._location(block, []), self.sanitize(summary))
        self.records[:] = [r for r in self.records if not (r.page == self.page and r.block_id == block_id)]
        self._fail(failure, block.proofs[0] if block and block.proofs else None)
        return failure

    def fail_rendering(self, block_id: str, error: Exception) -> ProofFailure:
        """Fail a block of the current page whose result could not be rendered, naming the error's real cause.

        Its record, if it has one, becomes `failed` in place (`fail_shown`), so the block still ends exactly once.

        Args:
            block_id: The block's id.
            error: What rendering raised (a template's, a message's or a recording's fault).

        Returns:
            The failure recorded.
        """
        return self.fail_shown(block_id, f"its result could not be rendered: {type(error).__name__}: {error}")

    def fail_unexpectedly(self, block_id: str, error: Exception) -> ProofFailure:
        """Record an error that escaped the engine or the renderer as the block's failure.

        Args:
            block_id: The block's id.
            error: The exception.

        Returns:
            The failure recorded.
        """
        block = self.block(block_id)
        summary = self.sanitize(f"the proof engine failed: {type(error).__name__}: {error}")
        failure = ProofFailure(self.page, block_id, self._location(block, []), summary)
        self._fail(failure, block.proofs[0] if block and block.proofs else None)
        return failure

    def run(self, code: str, block_id: str) -> str:
        """Run (or fetch from the cache) one block of the current page, as the page's fence hands it over.

        Any error on the way (an unreadable or unwritable cache, a dead worker)
        is recorded as this block's failure: no block leaves the build without a result.

        Args:
            code: The block's code, snippet includes expanded.
            block_id: The block's id, as the fence names it: its options are the scan's (`ExecBlock.options`).

        Returns:
            What the block printed.

        Raises:
            ProofFailure: If the block raised, exited, crashed or timed out, or the engine failed.
        """
        block_id = block_id or NO_ID
        if self.page in self.twins:
            return self.twin(block_id, code)
        return self._run(block_id, code)

    def twin(self, block_id: str, code: str) -> str:
        """What a translated page shows for a block: its English page's result in this build, never a second run.

        A translation keeps its page's code byte for byte, so the English block's result is this block's:
        the block ran (or came from the cache) once, and the report counts it once.

        Args:
            block_id: The block's id, the same on both pages.
            code: The block's code on the translated page.

        Returns:
            What the English block printed (or the render-only build's stand-in).

        Raises:
            ProofFailure: If the English page has no such block, its code differs, or it failed.
        """
        block = self.block(block_id)
        where = (f"docs/{self.page}", block.fence_line if block is not None else 0)
        if block is None:
            summary = (
                f"docs/{self.source_page} has no block {block_id!r}: a translation keeps its English page's blocks"
            )
            failure = ProofFailure(self.page, block_id, where, summary)
            self._fail(failure, None)
            raise failure
        if code != block.code:
            summary = (
                f"its code differs from the English page's block (copy it byte for byte): {_disagreement(code, block)}"
            )
            failure = ProofFailure(self.page, block_id, where, summary)
            self._fail(failure, block.proofs[0] if block.proofs else None)
            raise failure
        result = self.result_for(block_id)
        if result is None or result.status == "failed":
            why = "has not rendered" if result is None else f"failed: {result.error}"
            failure = ProofFailure(self.page, block_id, where, f"the English page's block {why}")
            if result is None:
                self._fail(failure, block.proofs[0] if block.proofs else None)
            raise failure
        self.twin_shown.setdefault(self.page, []).append(block_id)
        return SKIPPED_OUTPUT if result.status == "skipped" else result.output

    def run_block(self, code: str, block_id: str) -> Ran:
        """`run`, returning the block's typed result and scan with what it printed, so the fence asks once.

        Args:
            code: The block's code, snippet includes expanded.
            block_id: The block's id, as the fence names it.

        Returns:
            What it printed, its result in this build, and its scan.

        Raises:
            ProofFailure: As `run`.
        """
        output = self.run(code, block_id)
        block_id = block_id or NO_ID
        return Ran(output, self.result_for(block_id), self.block(block_id))

    def run_scanned(self, block: ExecBlock) -> str:
        """Run (or fetch from the cache) a block of the current page as its scan found it, without Markdown.

        A recording runs the site's blocks this way: the same code, options, cache key and checks
        as the build's fence (whose code the engine checks against the scan's).

        Args:
            block: A planned block of the current page.

        Returns:
            What the block printed.

        Raises:
            ProofFailure: If the block raised, exited, crashed or timed out, or the engine failed.
        """
        return self._run(block.block_id, block.code)

    def _run(self, block_id: str, code: str) -> str:
        job: _Job | None = None
        try:
            job = self._job(code, block_id)
            cached = self.cache.get(job.key)
            if cached is not None:
                return self._use_cached(job, cached)
            known = self.known_failures.get(job.key)
            if known is not None:
                raise self._failed_before(job, known)
            if not self._runs_here():
                return self._skip(job)
            return self._run_fresh(job)
        except ProofFailure as failure:
            if job is not None and self.report_failure is not None and job.key not in self.known_failures:
                self.report_failure(job.key, failure)
            raise
        except Exception as error:
            raise self.fail_unexpectedly(block_id, error) from error

    def _failed_before(self, job: _Job, known: ProofFailure) -> ProofFailure:
        """A block whose code and inputs failed in the session's background build: the same failure, not run again.

        It runs again once its code or what it imports changes (a new cache key), or in a new session.
        """
        job.session.remember(job.code, job.block.block_id, job.timeout, job.options.workdir)
        summary = f"{known.summary} (in the background build; it runs again once its code or inputs change)"
        failure = ProofFailure(
            self.page, job.block.block_id, known.location, summary, known.details, output=known.output
        )
        self._fail(failure, job.proof)
        return failure

    def _job(self, code: str, block_id: str) -> _Job:
        """The block as scanned, with its options, its session, its cache key and its digest.

        Raises:
            ProofFailure: If the scan did not find the block, or found a file it includes missing or other code
                than the page hands over.
        """
        block = self.block(block_id)
        if block is None:
            raise self._refuse(block_id, "the block was not found when the page was scanned (is it in an include?)")
        if block.missing:
            # What is left of the block is not the proof: it fails, naming what it includes and lacks.
            names = ", ".join(path for path, _line in block.missing)
            summary = f"the include is missing: {names} (deleted or renamed?); restore it or change the include"
            failure = ProofFailure(self.page, block_id, (f"docs/{self.page}", block.missing[0][1]), summary)
            self._fail(failure, block.proofs[0])
            raise failure
        if code != block.code:
            # The digest and recordings are of the scan's code: they must be of what the page runs.
            raise self._refuse(block_id, _disagreement(code, block))
        parsed = block.options
        session = self._sessions.setdefault(parsed.session, _Session()) if parsed.session else _Session()
        sources = sources_digest("\n\n".join([*session.history, code]), self.import_roots)
        if self._machine is None:
            self._machine = machine_fingerprint()
        key = self.cache.key(code, keyed_options(parsed.written), session.history, sources, self._machine)
        digest = block_digest(code, parsed.written, session.history, sources)
        return _Job(
            code,
            block,
            parsed,
            parsed.limit(self.default_timeout),
            session,
            key,
            digest,
            number=self._blocks_recorded + 1,
            where=f"docs/{self.page} › {block_id}",
        )

    def _runs_here(self) -> bool:
        """Whether this build runs the current page's blocks (not a render-only build, not left out by `only`)."""
        return self.execute and (self.only is None or fnmatch(self.page, self.only))

    def _use_cached(self, job: _Job, cached: CachedOutput) -> str:
        """Show a block's stored output, with the provenance and claims of the run that produced it."""
        job.session.remember(job.code, job.block.block_id, job.timeout, job.options.workdir)
        result = BlockResult(
            self.page,
            job.block.block_id,
            job.proof,
            "cached",
            cached.seconds,
            cached.output,
            provenance=cached.provenance,
            claims=cached.claims,
            digest=job.digest,
        )
        self._record_block(result)
        log.info(
            "proof %d/%d %s: cached (ran in %s)", job.number, self.total, job.where, format_seconds(cached.seconds)
        )
        self._progress(job, "cached", f"(ran in {format_seconds(cached.seconds)})")
        self._judge(result)
        return cached.output

    def _progress(self, job: _Job, state: str, detail: str) -> None:
        """Hand one step of a proof to `on_progress`, if anyone listens."""
        if self.on_progress is not None:
            self.on_progress(Progress("proof", job.number, self.total, self.page, job.where, state, detail))

    def _skip(self, job: _Job) -> str:
        """Record a block this build does not run."""
        job.session.remember(job.code, job.block.block_id, job.timeout, job.options.workdir)
        self._record_block(BlockResult(self.page, job.block.block_id, job.proof, "skipped", None, digest=job.digest))
        return SKIPPED_OUTPUT

    def _run_fresh(self, job: _Job) -> str:
        """Run a block in its session's process, then store, record and judge what it printed.

        Raises:
            ProofFailure: If it failed, its claims are malformed or its HTML would break the page.
        """
        log.info("proof %d/%d %s: running (limit %g s)", job.number, self.total, job.where, job.timeout)
        self._progress(job, "running", f"limit {job.timeout:g} s")
        try:
            workdir = self._workdir(job.session, job.options.workdir, job.block.block_id)
            with _claims_channel() as channel:
                request = self._request(job, workdir, channel)
                reply = self._execute(job, request, channel)
                claims = self._claims(channel.read_text(encoding="utf-8"), request.filename, job.block, job.proof)
        finally:
            if not job.options.session:
                job.session.remove_folder()  # ran, failed or timed out: its process has ended (`_execute`)
        job.session.remember(job.code, job.block.block_id, job.timeout, job.options.workdir)
        job.session.replayed = len(job.session.history)
        return self._ran(job, reply, claims)

    def _request(self, job: _Job, workdir: Path, channel: Path) -> BlockRequest:
        """What a block's process is sent: its code, its environment (its claims channel included) and directory."""
        return BlockRequest(
            code=job.code,
            filename=f"<proof {self.page}#{job.block.block_id}>",
            env={
                **block_environment(html=job.options.html, width=job.options.width),
                CHANNEL: str(channel),
                # The ranks a block starts (`pytorch_floors.ranks`) start as the block's own process did.
                START_CHANNEL: fork_server().get_start_method(),
                # ... and end before the block's limit does, to name a rank that hung (counted from now: a little
                # before the block's own clock starts, never after).
                DEADLINE_CHANNEL: repr(time.time() + job.timeout),
            },
            cwd=str(workdir),
            file=str(self.project_dir / job.proof) if job.proof else None,
            max_output=self.max_output,
            limit=job.timeout,
        )

    def _ran(self, job: _Job, reply: BlockReply, claims: tuple[Claim, ...]) -> str:
        """Store, record and judge what a block that ran printed; return what the page shows.

        Raises:
            ProofFailure: If its HTML output would break the page.
        """
        if reply.stderr.strip():
            log.debug("%s wrote to stderr (kept out of the page):\n%s", job.where, self.sanitize(reply.stderr))
        # What a reader reads is checked, not only what was printed (`readings`: escapes and tags removed).
        shown = readings(reply.output, html=job.options.html)
        secret = next(filter(None, map(self._secrets.find, shown)), None) or self._secrets.find(repr(claims))
        if secret is not None:
            # Redacting would publish a page that looks fine; the proof that reached a secret must change.
            failure = ProofFailure(
                self.page,
                job.block.block_id,
                self._location(job.block, []),
                f"its output holds {secret}: a page never shows the build's secrets (was another process's "
                "environment or memory read?)",
            )
            self._fail(failure, job.proof)
            raise failure
        output = self._shown(reply.output, html=job.options.html, block=job.block, proof=job.proof)
        self.cache.put(job.key, output, reply.seconds, self.provenance, claims)
        result = BlockResult(
            self.page,
            job.block.block_id,
            job.proof,
            "ran",
            reply.seconds,
            output,
            provenance=self.provenance,
            claims=claims,
            digest=job.digest,
        )
        self._record_block(result)
        log.info("proof %d/%d %s: ran in %s", job.number, self.total, job.where, format_seconds(reply.seconds))
        self._progress(job, "ran", f"in {format_seconds(reply.seconds)}")
        self._judge(result)
        return output

    def _workdir(self, session: _Session, workdir: str | None, block_id: str) -> Path:
        """The directory a block runs in: its session's scratch folder, or the project's `workdir` it asks for.

        A block that writes `open("out.bin", "wb")` leaves nothing in the author's checkout, and no
        build reads what an earlier one left. A block that asks for `workdir` runs in the project
        (it reads project files by relative path), and what it writes there stays, as it asked.

        Args:
            session: The block's session (a fresh, unnamed one outside a session).
            workdir: Its `workdir` option, if any.
            block_id: Its id, for the failure.

        Raises:
            ProofFailure: If `workdir` is not a directory of the project.
        """
        if workdir is None:
            if session.folder is None:
                session.folder = scratch.folder(scratch.WORKDIR)
            return session.folder
        folder = self.project_dir / workdir
        if not folder.is_dir():
            raise self._refuse(block_id, f"workdir {workdir!r} is not a directory of the project")
        return folder

    def _claims(self, text: str, filename: str, block: ExecBlock, proof: str | None) -> tuple[Claim, ...]:
        """The claims a run wrote to its channel, each pointing at its proof's file and line."""
        try:
            claims = parse_claims(text)
        except ClaimFormatError as error:
            failure = ProofFailure(self.page, block.block_id, self._location(block, []), f"ClaimFormatError: {error}")
            self._fail(failure, proof)
            raise failure from None
        located = []
        for claim in claims:
            # A claim stated by the block's own code maps to its proof's line; one from a subprocess keeps its file.
            path, line = block.locate(claim.line) if claim.file == filename else (claim.file, claim.line)
            located.append(replace(claim, file=self.sanitize(path), line=line))
        return tuple(located)

    def _judge(self, result: BlockResult) -> None:
        """Log each claim of a block that did not hold: a WARNING (a strict build fails), or INFO if advisory."""
        for claim in result.claims_missed:
            detail = f" ({claim.detail})" if claim.detail else ""
            message = (
                f"docs/{result.page} › block '{result.block_id}' ({claim.file}:{claim.line}): "
                f"claim did not hold on this machine: {claim.statement}{detail}"
            )
            if self.advisory_claims:
                log.info("%s [advisory: FLOORS_CLAIMS=advisory]", message)
            else:
                log.warning("%s", message)

    def _shown(self, output: str, *, html: bool, block: ExecBlock, proof: str | None) -> str:
        """What a page may show of a block's output: scrubbed, cleaned and, for HTML, balanced."""
        output = self.sanitize(output)
        if not html:
            return clean_text(output)
        problem = html_problem(output)
        if problem:
            failure = ProofFailure(
                self.page, block.block_id, self._location(block, []), f"its HTML output would break the page: {problem}"
            )
            self._fail(failure, proof)
            raise failure
        return output

    def _execute(self, job: _Job, request: BlockRequest, channel: Path) -> BlockReply:
        """Run a block in its session's process, after the earlier blocks that process has not run yet.

        A block outside a session gets a process of its own, closed afterwards; a session's process is
        kept for its next block (and closed at the end of the page).

        Raises:
            ProofFailure: If it or a replayed block failed, timed out, or its process died.
        """
        session, block = job.session, job.block
        try:
            if session.process is None:
                session.process = BlockProcess(self._processes)
            self._replay(job, session.process, request)
            # Claims of replayed blocks belong to those blocks' own (cached) results.
            channel.write_text("", encoding="utf-8")
            reply = session.process.run(request, job.timeout)
        except (BlockTimeout, WorkerDied) as error:
            session.process = None
            failure = ProofFailure(
                self.page,
                block.block_id,
                self._location(block, []),
                f"{type(error).__name__}: {error}",
                output=self._printed(error.printed),
            )
            self._fail(failure, job.proof)
            raise failure from None
        finally:
            if not job.options.session and session.process is not None:
                session.process.close()
                session.process = None
        if reply.error is not None:
            failure = self._failure(block, block.block_id, reply.error, output=reply.output)
            self._fail(failure, job.proof)
            raise failure
        return reply

    def _replay(self, job: _Job, process: BlockProcess, request: BlockRequest) -> None:
        """Run the earlier blocks of the session that `process` has not run (they came from the cache).

        Raises:
            BlockTimeout: If one ran past its own limit.
            ProofFailure: If one failed.
        """
        session = job.session
        pending = zip(session.history[session.replayed :], session.limits[session.replayed :], strict=True)
        for earlier, (earlier_id, earlier_limit, earlier_workdir) in pending:
            # Its own limit, in the request too: the worker waits for a block's threads until the limit it is told.
            replay = replace(
                request,
                code=earlier,
                filename=request.filename + " (earlier block)",
                limit=earlier_limit,
                cwd=str(self._workdir(session, earlier_workdir, earlier_id)),
            )
            try:
                reply = process.run(replay, earlier_limit)
            except BlockTimeout:
                raise BlockTimeout(
                    f"an earlier block of its session, '{earlier_id}', was replayed first and did not finish "
                    f"within its own time limit of {earlier_limit:g} s"
                ) from None
            if reply.error is not None:
                # Replaying cached blocks can fail too (a changed environment): record it like any failure.
                prefix = "an earlier block of its session failed: "
                failure = self._failure(job.block, job.block.block_id, reply.error, prefix, output=reply.output)
                self._fail(failure, job.proof)
                raise failure
        session.replayed = len(session.history)

    def _location(self, block: ExecBlock | None, lines: Sequence[int]) -> tuple[str, int]:
        if block is None:
            return (f"docs/{self.page}", lines[-1] if lines else 0)
        return block.locate(lines[-1]) if lines else (f"docs/{self.page}", block.fence_line)

    def _failure(
        self, block: ExecBlock | None, block_id: str, error: BlockError, prefix: str = "", *, output: str = ""
    ) -> ProofFailure:
        summary = self.sanitize(f"{prefix}{error.type}: {error.message}")
        frames = self._own_frames(block, error)
        return ProofFailure(
            self.page, block_id, self._location(block, error.lines), summary, frames, output=self._printed(output)
        )

    def _printed(self, output: str) -> str:
        """The end of what a failed block printed, as its failure shows it: bounded, like a page's output, safe.

        Args:
            output: What it printed.

        Returns:
            Its last lines (`output.tail`), control bytes shown, paths and secrets replaced (`sanitize`).
        """
        # Whole before cut: a secret the cut split in two would no longer be found.
        return tail(self.sanitize(clean_text(output)))

    def _own_frames(self, block: ExecBlock | None, error: BlockError) -> str:
        """The proof's own frames of a traceback, each pointing at its proof file and line."""
        own = error.own_traceback
        if block is None or not own:
            return self.sanitize(own)
        lines = []
        for text in own.splitlines():
            head, marker, rest = text.partition(", line ")
            number = rest.split(",", 1)[0]
            if marker and head.lstrip().startswith('File "<proof') and number.isdigit():
                path, where = block.locate(int(number))
                text = f'  File "{path}", line {where}' + rest[len(number) :]  # noqa: PLW2901  (rewritten in place)
            lines.append(text)
        return self.sanitize("\n".join(lines))

    def _refuse(self, block_id: str, summary: str) -> ProofFailure:
        block = self.block(block_id)
        failure = ProofFailure(self.page, block_id, self._location(block, []), summary)
        self._fail(failure, block.proofs[0] if block and block.proofs else None)
        return failure

    def _fail(self, failure: ProofFailure, proof: str | None) -> None:
        self.failures.append(failure)
        self._record_block(BlockResult(failure.page, failure.block_id, proof, "failed", None, error=str(failure)))
        # CI logs show ERROR lines only: the proof's own frames and the end of what it printed go with the failure.
        said = [str(failure), failure.details.rstrip()]
        if failure.output:
            said.append("What it printed before it failed:\n" + textwrap.indent(failure.output, "  | ", lambda _: True))
        log.error("%s", "\n".join(part for part in said if part))
