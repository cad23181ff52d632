"""What one `mkdocs serve` session keeps between its builds, so an edit re-renders only what it can change.

An author's loop is: edit a sentence, look at the page. A whole build renders every page (the API
reference, the labs, sixty pages of Markdown) for an edit that changed one. Under
`mkdocs serve --dirty` (what `make serve` runs), MkDocs renders only the pages it is told changed;
this module decides which, and keeps what the others contributed, so the site it serves stays whole:

- a page is rebuilt when its source, a file it includes (`--8<--`) or a project module such a proof
  imports changed since the last build (`page_digest`);
- pages that show the whole build (a `<!-- floors:... -->` marker: the build report, the Proofs
  page, What changed, Cite) are rebuilt with every build, unless what each of their markers shows is
  known to be the same as in the last build (`plugin.pages.marker_contents`: the Proofs page's blocks
  and proofs, Cite's edition); the API reference pages are rebuilt all
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
inputs are the same. The background build ends once it has run the last page with a proof or a lab,
and writes no site: nobody reads it. When it has finished, the session's builds
run what is still missing themselves, as any serve build does. The background build never outlives the session:
it ends with it, and ends itself if the serve process is gone. Serve stopped by SIGTERM ends as with Ctrl-C
(`interrupt_on_terminate`): MkDocs removes the copy of the site it served, and the session its folder.

The first build of a dirty session with live reload also leaves what only slows its answer to the
build right after it (`later`): a lab's conversion that is not cached ("converting…") and the API
reference ("rendering…"); that build starts once the server watches the session's folder and the author has
not saved an edit for a few seconds (`QUIET_S`). An edit saved before or while that build renders the reference
is shown first: the reference waits for the next pause (`EditWatch`, `ServeSession.reference_waits`).
"""

from __future__ import annotations

# A facade: each job lives in its own module.
from pytorch_floors.plugin.serve.background import (
    BACKGROUND_VARIABLE,
    FAILURES_FILE,
    HEARTBEAT_S,
    SIGNALS_VARIABLE,
    Background,
    emit_progress,
    read_background_failures,
    report_background_failure,
    watch_parent,
)
from pytorch_floors.plugin.serve.changes import (
    SITE_WIDE_MARKER,
    Memo,
    PageInput,
    PageState,
    Plan,
    inputs_digest,
    page_digest,
    page_input,
    plan_rebuild,
    title_key,
    with_sources,
)
from pytorch_floors.plugin.serve.edits import EditWatch
from pytorch_floors.plugin.serve.later import LATER_FILE, QUIET_S, api_later, nudge, render_later
from pytorch_floors.plugin.serve.logs import quiet_dirty_warning
from pytorch_floors.plugin.serve.pending import (
    PARTIAL_ATTRIBUTE,
    PENDING_ATTRIBUTE,
    PENDING_TEXT,
    mark_pending,
    partial_note,
    partial_report,
    pending_page,
)
from pytorch_floors.plugin.serve.search_index import merge_search_index
from pytorch_floors.plugin.serve.session import ServeSession
from pytorch_floors.plugin.serve.stopping import interrupt_on_terminate
from pytorch_floors.plugin.serve.template_cache import TemplateCache

__all__ = [
    "BACKGROUND_VARIABLE",
    "FAILURES_FILE",
    "HEARTBEAT_S",
    "LATER_FILE",
    "PARTIAL_ATTRIBUTE",
    "PENDING_ATTRIBUTE",
    "PENDING_TEXT",
    "QUIET_S",
    "SIGNALS_VARIABLE",
    "SITE_WIDE_MARKER",
    "Background",
    "EditWatch",
    "Memo",
    "PageInput",
    "PageState",
    "Plan",
    "ServeSession",
    "TemplateCache",
    "api_later",
    "emit_progress",
    "inputs_digest",
    "interrupt_on_terminate",
    "mark_pending",
    "merge_search_index",
    "nudge",
    "page_digest",
    "page_input",
    "partial_note",
    "partial_report",
    "pending_page",
    "plan_rebuild",
    "quiet_dirty_warning",
    "read_background_failures",
    "render_later",
    "report_background_failure",
    "title_key",
    "watch_parent",
    "with_sources",
]
