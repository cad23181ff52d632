"""`ServeSession`: what one `mkdocs serve` keeps from one build to the next."""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_floors.execution.engine import ProofFailure
from pytorch_floors.execution.facts import TorchFacts
from pytorch_floors.i18n.languages import english_source
from pytorch_floors.plugin.serve.background import Background, read_background_failures
from pytorch_floors.plugin.serve.changes import Memo, PageInput, PageState, Plan, plan_rebuild
from pytorch_floors.plugin.serve.edits import EditWatch
from pytorch_floors.plugin.serve.later import QUIET_S, nudge
from pytorch_floors.plugin.serve.template_cache import TemplateCache

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


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
        shown: What some markers showed in the last build (`plugin.pages.marker_contents`), by name.
        pages: What each page contributed to the last build, by source path.
        defers: Its builds may leave what is not cached to a `Background` build (a dirty session with
            live reload, which shows the pages again as they are done).
        background: That build, once started.
        filled: The background build has ended, or was not needed: builds run what is missing themselves.
        pending: The pages whose last build showed placeholders.
        pending_labs: The labs among them: they are shown again together, once the background build has run
            every one. The labs render all together or not at all (`plan_rebuild`), and rendering them all after
            each lab ran took about as long as the next lab's run, on the same cores, at the same time.
        signal_dir: The folder the background build touches as it finishes a page (watched under live reload),
            made when it starts.
        outputs: What the last build's files write into the site (`dest_uri`): a dirty build cleans nothing,
            so `remove_stale` takes out what no file writes any more.
        failed: The blocks that failed in the background build, by cache key: a build shows each such
            block's failure, as a foreground failure shows, and does not run it again while its key holds.
        later: The pages the last build gave a placeholder to (`plugin.serve.later`): the next build renders them.
        left_for_this_build: The pages the last build left to this one (`later`, as this build started).
        edits: The author's edits the server has seen (`EditWatch`), once it watches (`on_serve`).
        edits_at_start: How many it had seen as this build started.
        quiet: Seconds without an edit before the build that renders what was left for later starts.
        nudging: The thread that waits for that pause, while it waits.
        builds: How many builds of the session have ended.
    """

    dirty: bool = False
    facts: TorchFacts | None = None
    build_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    templates: TemplateCache = field(default_factory=TemplateCache)
    memo: Memo = field(default_factory=Memo)
    inputs: str | None = None
    shown: dict[str, str] = field(default_factory=dict)
    pages: dict[str, PageState] = field(default_factory=dict)
    defers: bool = False
    background: Background | None = None
    filled: bool = False
    pending: set[str] = field(default_factory=set)
    pending_labs: set[str] = field(default_factory=set)
    signal_dir: Path | None = None
    outputs: set[str] = field(default_factory=set)
    failed: dict[str, ProofFailure] = field(default_factory=dict)
    later: set[str] = field(default_factory=set)
    left_for_this_build: set[str] = field(default_factory=set)
    edits: EditWatch | None = None
    edits_at_start: int = 0
    quiet: float = QUIET_S
    nudging: threading.Thread | None = None
    builds: int = 0

    @property
    def leaves_for_later(self) -> bool:
        """Whether this build may leave a lab's conversion to the next one (`plugin.serve.later`).

        Only the first build of a dirty session with live reload: it answers first, and the next renders the rest.
        """
        return self.dirty and self.defers and self.builds == 0

    def reference_waits(self, page: str) -> bool:
        """Whether this build gives an API reference page its placeholder, and leaves the page to the next build.

        The first build does (`leaves_for_later`). A page that build left renders with the build after it
        (`start_build` holds the pages back from a build an edit came before), unless an edit comes while this
        build renders the reference: the pages not rendered yet wait for the build after the edit's.
        """
        if self.leaves_for_later:
            return True
        return page in self.left_for_this_build and self._edits_seen() > self.edits_at_start

    def _edits_seen(self) -> int:
        """The author's edits seen so far (none before the server watches)."""
        return self.edits.count if self.edits is not None else 0

    def start_build(self) -> tuple[bool, set[str]]:
        """Whether the next build leaves what is not cached to the background, and which waiting pages are done.

        Returns:
            `(defer, ready)`: the build runs no proof or lab itself; the pages that showed placeholders and
            can now show their outputs or a failure (all of them once the background build has ended).
        """
        ready, self.later = set(self.later), set()  # left for this build by the last one
        edits_before, self.edits_at_start = self.edits_at_start, self._edits_seen()
        if ready and self.builds > 0 and self.edits_at_start > edits_before:
            # An edit came since the last build began: this build shows it, and the next renders what was left.
            log.info("serve: an edit came: it is shown first, the %d pages left for later render after it", len(ready))
            self.later, ready = ready, set()
        self.left_for_this_build = set(ready)
        failed = read_background_failures(self.signal_dir)
        ready |= self._waiting_on({failure.page for key, failure in failed.items() if key not in self.failed})
        self.failed = failed
        if self.background is not None and self.background.finished:
            self.filled = True
            ready = set(self.pending)
        elif self.background is not None:
            done = self._waiting_on(self.background.done())
            if not self.pending_labs <= done:
                done -= self.pending_labs  # until the last lab has run
            ready |= done
        return self.defers and not self.filled, ready

    def _waiting_on(self, pages: Collection[str]) -> set[str]:
        """The waiting pages that `pages` (whose blocks ran, or failed) were holding: each one, and its translations.

        A translation shows its English page's outputs, so it waits on that page's blocks, not on blocks of its own.
        """
        return {page for page in self.pending if page in pages or english_source(page) in pages}

    def end_build(self, pending: set[str], config_file: Path, project_dir: Path, *, labs: Collection[str] = ()) -> None:
        """Remember the pages that wait; start the background build the first time some do.

        Args:
            pending: The pages this build showed placeholders on.
            config_file: The project's `mkdocs.yml`.
            project_dir: The project root.
            labs: The lab pages of the site (those in `pending` are shown again together).
        """
        self.pending = set(pending)
        self.pending_labs = self.pending & set(labs)
        self.builds += 1
        if self.later and self.signal_dir is None:
            self.signal_dir = Path(tempfile.mkdtemp(prefix="floors-serve-"))  # `plugin.serve.later.nudge` writes there
        if self.later and self.builds > 1:
            # Pages left again for an edit (`reference_waits`): the build that renders them starts once the
            # author pauses (the first build's pages wait so too: `on_serve`).
            self.start_later_build(watching=lambda: True)
        if self.filled or self.background is not None:
            return
        if not pending:
            self.filled = True  # a warm cache: nothing to run behind
            return
        self.signal_dir = self.signal_dir or Path(tempfile.mkdtemp(prefix="floors-serve-"))
        self.background = Background(config_file, project_dir, self.signal_dir)
        self.background.start()

    def start_later_build(self, *, watching: Callable[[], bool], settle: float = 0.0) -> None:
        """Start the build that renders what was left for later once the author has paused (`later.nudge`).

        One waits at a time: an edit build that leaves the pages again while one waits starts no other.
        """
        if self.signal_dir is None or self.edits is None:
            return
        if self.nudging is not None and self.nudging.is_alive():
            return
        edits = self.edits
        self.nudging = nudge(
            self.signal_dir, edits=lambda: edits.count, watching=watching, settle=settle, quiet=self.quiet
        )

    def close(self) -> None:
        """End the background build, if it runs, and forget the watched folder."""
        if self.background is not None:
            self.background.stop()
        if self.signal_dir is not None:
            shutil.rmtree(self.signal_dir, ignore_errors=True)

    def plan(
        self,
        pages: Mapping[str, PageInput],
        inputs: str,
        *,
        also: Collection[str] = (),
        shown: Mapping[str, str] | None = None,
    ) -> Plan:
        """Which pages this session's next build renders (every page unless the session is dirty).

        `shown` is what some markers show in this build (`plan_rebuild`); the last build's is the session's.
        """
        if not self.dirty:
            return Plan(None, "mkdocs serve without --dirty renders every page")
        return plan_rebuild(
            pages, inputs, self.pages or None, self.inputs, also=also, shown=shown, previous_shown=self.shown
        )

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
