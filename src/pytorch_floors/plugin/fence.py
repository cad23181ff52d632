"""The SuperFences formatter for executed Python blocks.

markdown-exec stays the front end for rendering: its `base_format` renders the result.
The fence's options are not read here: the page's scan parsed them once into the block's
`BlockOptions` (`execution.options`), and the formatter looks them up in the
build's plan by the block's id (this module's `validator` says only whether a fence executes, and which
block it is). This formatter adds what markdown-exec lacks: the
run goes through the build's [`Engine`][pytorch_floors.execution.engine.Engine]
(cache, isolation, time limit), output is shown as verbatim console text unless
the block declares `html="1"`, and a failure becomes a visible banner plus a
recorded error that fails the build, instead of a traceback quietly rendered
into the page. The plugin registers the fence in `on_config`, as markdown-exec's own
plugin does, bound to that build's engine (`functools.partial(formatter, engine=...)`),
so no engine outlives its build in a module global.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from markdown import Markdown
from markdown_exec import base_format
from markupsafe import Markup
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.utils import get_relative_url

from pytorch_floors.editions.anchors import page_url
from pytorch_floors.errors import FloorsError
from pytorch_floors.execution.duration import format_seconds
from pytorch_floors.execution.engine import SKIPPED_OUTPUT, Engine, ProofFailure, Ran, shown_marker
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import executes
from pytorch_floors.i18n.messages import PageLanguage, t
from pytorch_floors.i18n.outputs import translate_output
from pytorch_floors.recordings.compare import tiers_for
from pytorch_floors.recordings.html import UntrustedHTML, allowed_html
from pytorch_floors.recordings.schema import Recording
from pytorch_floors.recordings.tabs import (
    OWN_LABEL,
    LazyOutputs,
    TierTab,
    differing_lines,
    marked_text_parts,
    namespaced_ids,
    tier_tabs_html,
)
from pytorch_floors.render.highlighted import HIGHLIGHTED, settings_key
from pytorch_floors.render.listings import LISTING_LANGUAGE
from pytorch_floors.render.output_lines import OUTPUT_LANGUAGE, figure_text_html, output_html
from pytorch_floors.render.proof_frame import claims_html, failure_banner, proof_frame_html, recorded_claims_html
from pytorch_floors.render.templates import template

__all__ = ["FENCE", "fenced", "formatter", "register_fence", "text_html", "validator"]

FENCE = "python"
"""The fence name of executed blocks: ```` ```python exec="1" id="…" ````."""


def fenced(language: str, text: str, marked: Sequence[int] = ()) -> str:
    """Text as a fenced code block whose fence no line of the text can close.

    markdown-exec's `code_block` fences with eight backticks: a block that printed a line of eight
    backticks closed it, and what it printed next became Markdown with raw HTML. This fence is one
    backtick longer than the longest run of backticks in the text.

    Args:
        language: The code block's language (`text`, `python`).
        text: What goes inside.
        marked: Lines to mark, from 1 (pymdownx.highlight's `hl_lines`).

    Returns:
        The Markdown of the code block.
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(8, longest + 1)
    options = f' hl_lines="{" ".join(str(line) for line in marked)}"' if marked else ""
    return f"{ticks}{language}{options}\n{text}\n{ticks}"


# What renders text the page shows as code (a block's output, a recording's, a listing), one per page
# Markdown, with the key of its settings (`render.highlighted`).
_TEXT_CONVERTERS: weakref.WeakKeyDictionary[Markdown, tuple[Markdown, str]] = weakref.WeakKeyDictionary()

# The only extensions the text converter has: fenced code, highlighted as the page highlights it.
_TEXT_EXTENSIONS = ("pymdownx.highlight", "pymdownx.superfences")


def text_html(md: Markdown, markdown: str) -> str:
    """The HTML of fenced code, rendered by a converter that has no extension but fences and highlighting.

    Text a block printed, a recording holds or a listing shows must reach the page as it is. Through the
    page's own Markdown, `pymdownx.snippets` read a printed `--8<-- ".git/config"` line and published the
    file; any extension that reads files would do the same. This converter copies only the page's
    highlighting settings, so the code looks the same and no line of it is ever an instruction.

    Args:
        md: The page's Markdown instance (its highlighting settings are copied once).
        markdown: One fenced code block (`fenced`).

    Returns:
        Its HTML.
    """
    made = _TEXT_CONVERTERS.get(md)
    if made is None:
        configs: dict[str, dict[str, Any]] = {}
        for extension in md.registeredExtensions:
            name = type(extension).__module__
            if name in _TEXT_EXTENSIONS:
                configs[name] = {k: v for k, v in extension.getConfigs().items() if k != "custom_fences"}
        made = _TEXT_CONVERTERS[md] = (
            Markdown(extensions=list(_TEXT_EXTENSIONS), extension_configs=configs),
            settings_key(configs),
        )
    converter, settings = made

    def render() -> str:
        converter.reset()  # so the HTML depends on the settings and the text alone
        return str(converter.convert(markdown))

    # A twin's listings and outputs are its English page's, and a serve session's next build shows the same again.
    return HIGHLIGHTED.get(settings, markdown, render)


def validator(
    language: str,
    inputs: dict[str, str],
    options: dict[str, Any],
    attrs: dict[str, Any],
    md: Markdown,
) -> bool:
    """SuperFences' validator of the executed fence: whether a fence executes, and which block it is.

    It reads no option's meaning: the page's scan parsed the block's options (`BlockOptions.parse`) and
    the formatter finds them in the build's plan by the block's id. markdown-exec's validator would parse
    every option a second time, by rules of its own.

    Args:
        language: The fence language (`python`).
        inputs: The fence's options as written.
        options: Where the formatter's options go: the block's `id`, only.
        attrs: The fence's HTML attributes (none).
        md: The page's Markdown instance.

    Returns:
        Whether the fence executes, as the scan decides it (`executes`); a fence that does not renders as code.
    """
    if not executes(inputs):
        return False
    options["id"] = inputs.get("id", "")
    return True


def formatter(  # noqa: PLR0917  (SuperFences' signature)
    source: str,
    language: str,
    css_class: str,
    options: dict[str, Any],
    md: Markdown,
    classes: list[str] | None = None,
    id_value: str = "",
    attrs: dict[str, Any] | None = None,
    *,
    engine: Engine | None = None,
    recordings: Sequence[Recording] = (),
    lazy: LazyOutputs | None = None,
    languages: Mapping[str, PageLanguage] | None = None,
    **kwargs: Any,
) -> str:
    """Execute a block through the build's engine and return its HTML.

    Args:
        source: The block's code, snippet includes expanded.
        language: The fence language (`python`).
        css_class: The CSS class SuperFences proposes (unused).
        options: What `validator` kept: the block's id, by which its options are found in the plan.
        md: The page's Markdown instance.
        classes: Extra classes (unused).
        id_value: HTML id (unused).
        attrs: Extra attributes (unused).
        engine: The build's engine, bound by the plugin.
        recordings: Other machines' recordings, bound by the plugin: a block's current ones are shown in tabs.
        lazy: Where a tab's recorded output goes when the page loads it on demand, bound by the plugin.
        languages: Each page's language, by its source path, bound by the plugin (the build fills it as
            each page starts): the block's words and claims are written in its page's.
        **kwargs: Other SuperFences arguments (unused).

    Returns:
        The rendered HTML.

    Raises:
        RuntimeError: If no engine is bound (the `floors` plugin is not listed in `mkdocs.yml`).
    """
    if engine is None:
        # SuperFences would swallow this and show the source; the plugin's scan still fails the build.
        raise RuntimeError("no proof engine is bound to this fence: list the floors plugin under plugins in mkdocs.yml")
    block_id = str(options.get("id", ""))
    # The page being rendered (a twin's, not its English source's): its words and claims are in its language.
    words = (languages or {}).get(engine.page)
    if words is None:
        raise RuntimeError(f"no language is bound for {engine.page}: the build names each page's as it starts")
    try:
        return _format(source, language, block_id, md, engine, recordings, lazy, words)
    except Exception as error:  # SuperFences would swallow it and show the block's source
        # The one place a rendering error becomes the block's failure, named by its real cause.
        return failure_banner(engine.fail_rendering(block_id, error), words)


def _format(  # noqa: PLR0917  (the formatter's arguments, passed on)
    source: str,
    language: str,
    block_id: str,
    md: Markdown,
    engine: Engine,
    recordings: Sequence[Recording],
    lazy: LazyOutputs | None,
    words: PageLanguage,
) -> str:
    """`formatter`'s work: run the block, render its output, tabs, claims and frame, in the page's language."""
    planned = engine.block(block_id)
    # The options the page's scan parsed; a block it did not plan fails in the engine, so defaults do here.
    typed = planned.options if planned is not None else BlockOptions(id=block_id)
    # Console output is fenced here, not by markdown-exec, whose fence has a fixed length (`fenced`).
    result_language = typed.result_language
    # markdown-exec gets no `workdir`, `width` or `session`: the engine honours them in the block's own
    # process, where markdown-exec would apply them to the build's.
    run_options: dict[str, Any] = {"id": block_id, "source": "", "html": True}

    def as_shown(output: str, marked: Sequence[int] = ()) -> str:
        # Output is never Markdown of the page: its extensions read files (`--8<--`). Text becomes HTML here,
        # through a converter that can only fence it; base_format then takes it as HTML, as it is.
        # Shown in the page's language (a Chinese twin shows the English run's lines translated, line for line).
        if output == SKIPPED_OUTPUT:  # the engine's placeholder for a block it did not run: the site's own words
            output = t(SKIPPED_OUTPUT, words.code)
        else:
            output = translate_output(output, words.code, html=typed.html)
        if typed.html:
            # A figure's numbers, printed above its chart, are shown as a text output's lines are.
            return figure_text_html(output)
        if not result_language or not output:
            return output
        # Printed text: one span per line, a table's rows told from prose, so a phone wraps a sentence and
        # scrolls a table (`render.output_lines`); another language is highlighted by its lexer.
        if result_language == OUTPUT_LANGUAGE:
            return output_html(output, marked)
        return text_html(md, fenced(result_language, output, marked))

    ran: list[Ran] = []  # markdown-exec's `run` returns text; the typed result is kept here

    def run(code: str, **_: Any) -> str:
        ran.append(engine.run_block(code, block_id))
        return as_shown(ran[-1].output)

    html_output = typed.html
    # base_format takes what `run` returns as HTML as it is (`html`): `as_shown` made text HTML (`text_html`);
    # the source, when shown, is this formatter's (`source_above`), not markdown-exec's.
    try:
        output = str(base_format(language=language, run=run, code=source, md=md, **run_options))
    except ProofFailure as failure:
        return failure_banner(failure, words)
    except Exception as error:  # SuperFences would swallow it and render the source as plain text
        return failure_banner(engine.fail_unexpectedly(block_id, error), words)
    block = ran[-1].block if ran else planned
    result = ran[-1].result if ran else None
    claims = claims_html(result, words)
    if recordings and result is not None:

        def render(recorded: str) -> tuple[str, int | None]:
            # The recorded output is rendered as this block's own is: the same formatter, options and page;
            # HTML from another machine only as the project's figures write it (read_recording checks it too).
            # A text output's lines that differ from this build's are marked; a figure's are not compared.
            marked: list[int] = []
            differing: int | None = None
            if html_output:
                # A figure's text (its numbers) is compared too: its differing lines are marked in place.
                recorded, differing = marked_text_parts(result.output, allowed_html(recorded))
            elif result_language:
                marked = differing_lines(result.output, recorded)
                differing = len(marked)
            return str(
                base_format(
                    language=language,
                    run=lambda *_, **__: as_shown(recorded, marked),
                    code=source,
                    md=md,
                    **run_options,
                )
            ), differing

        try:
            output, claims = (
                _with_tiers(engine, result, recordings, (output, claims), render, lazy=lazy, words=words),
                "",
            )
        except UntrustedHTML as error:
            summary = f"a recording of this block holds HTML the project's figures never write: {error}"
            return failure_banner(engine.fail_shown(block_id, summary), words)
    # The engine checks that this marker reaches the page: a fence Markdown reads as an indented
    # code block runs, but SuperFences shows its source instead of what it printed.
    marker = shown_marker(block_id)
    if block is None or not block.proofs:
        if typed.source_above:
            listing = text_html(md, fenced(language, source))
            shown = template("exec_block.html").render(
                listing=Markup(listing), output=Markup(output), claims=Markup(claims)
            )
            return marker + shown
        return marker + output + claims
    proof = block.proofs[0]
    # Collapsed under the output, the proof source is lightly highlighted (see `pytorch_floors.render.listings`).
    listing = text_html(md, fenced(LISTING_LANGUAGE, source))
    return marker + proof_frame_html(
        proof=proof,
        href=get_relative_url(proof, engine.page_url) if engine.page_url else proof,
        listing=listing,
        output=output,
        claims=claims,
        seconds=format_seconds(result.seconds) if result is not None and result.seconds is not None else None,
        cached=result is not None and result.status == "cached",
        language=words,
    )


def _with_tiers(
    engine: Engine,
    result: BlockResult,
    recordings: Sequence[Recording],
    own: tuple[str, str],
    render: Callable[[str], tuple[str, int | None]],
    *,
    lazy: LazyOutputs | None = None,
    words: PageLanguage,
) -> str:
    """A block's output and claims: tabs for the recordings that differ, a line for the same, a note per stale one."""
    tiers = tiers_for(result, recordings, words.code)
    if not tiers.current and not tiers.stale:
        return "".join(own)
    contents: dict[str, tuple[str, str, int | None]] = {}
    for shown in tiers.current:
        if not shown.same:
            output, differing = render(shown.block.output)
            claims = recorded_claims_html(shown.block.claims, shown.tier, words)
            contents[shown.tier] = (namespaced_ids(output, shown.tier), claims, differing)
    number = next(n for n, b in enumerate(engine.planned[engine.source_page], start=1) if b.block_id == result.block_id)
    # This build's machine is the page's provenance line; only the other machines are named in their tabs.
    keep = None if lazy is None else functools.partial(lazy.keep, page_url(engine.page))
    return tier_tabs_html(TierTab(OWN_LABEL, *own), tiers, contents, number, keep, language=words)


def register_fence(
    config: MkDocsConfig,
    engine: Engine,
    recordings: Sequence[Recording] = (),
    lazy: LazyOutputs | None = None,
    *,
    languages: Mapping[str, PageLanguage],
) -> None:
    """Make SuperFences run the site's `python` fences through this build's engine.

    `mkdocs.yml` need not declare the fence; one that names this module's `formatter` is
    replaced by the bound one, and a `python` fence of another formatter is refused: the pages'
    proofs would render without running.

    Args:
        config: The build's configuration, changed in place.
        engine: The build's engine.
        recordings: Other machines' recordings of the site's blocks.
        lazy: Where the recorded outputs go that a page loads when their tab is opened; `None` keeps
            them in the page.
        languages: Each page's language, by its source path (the build's, filled as each page starts).

    Raises:
        FloorsError: `mkdocs.yml` gives the `python` fence another formatter.
    """
    if "pymdownx.superfences" not in config.markdown_extensions:
        config.markdown_extensions.append("pymdownx.superfences")
    fences = config.mdx_configs.setdefault("pymdownx.superfences", {}).setdefault("custom_fences", [])
    for fence in fences:
        if fence.get("name") == FENCE and fence.get("format") is not formatter:
            raise FloorsError(
                f"mkdocs.yml: pymdownx.superfences declares a {FENCE!r} fence formatted by {fence.get('format')!r}; "
                "remove it: the floors plugin registers that fence, so the proofs run"
            )
    fences[:] = [fence for fence in fences if fence.get("name") != FENCE]
    fences.append(
        {
            "name": FENCE,
            "class": FENCE,
            "validator": validator,
            "format": functools.partial(
                formatter, engine=engine, recordings=tuple(recordings), lazy=lazy, languages=languages
            ),
        }
    )
