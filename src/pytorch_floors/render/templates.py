"""The package's one Jinja environment: its own HTML, from `render/templates/`, autoescaped and strict.

Every fragment this package writes into a page (the claims under a proof, a heading's control, the
citation table, a lab's download box, the handouts' links) is rendered here, so an undefined name
is an error instead of an empty string, and a value is escaped unless a template marks it safe.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, Template, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from pytorch_floors.i18n.messages import PageLanguage, claim_text, code_of, t
from pytorch_floors.i18n.outputs import translate_line

__all__ = ["TEMPLATES", "environment", "page_t", "render", "template", "words_in"]

TEMPLATES = Path(__file__).parent / "templates"
"""The folder of the package's templates."""


@cache
def environment(overrides: Path | None = None) -> Environment:
    """The environment (one per process and folder of overrides: it holds no build's data, only parsed templates).

    Args:
        overrides: A theme's folder whose templates come first (the site's `overrides/`, which holds
            the root 404 page's template), as a theme overrides mkdocstrings' templates; `None` for
            the package's own alone.

    Returns:
        The environment: autoescaped, strict about undefined names.
    """
    own = FileSystemLoader(TEMPLATES)
    loader = own if overrides is None else ChoiceLoader([FileSystemLoader(overrides), own])
    # No `t` among the globals: a template that writes words is rendered with the language (`render`), and
    # one rendered without it fails (strict) instead of writing them in a language read from elsewhere.
    # The package's own templates are files of the package: an edit of one starts `mkdocs serve` again
    # (`plugin.plugin.package_state`), so their modification times are never asked (Jinja asked for every
    # fragment rendered: a sixth of a prose edit's rebuild). A theme's overrides are the project's: asked.
    return Environment(loader=loader, autoescape=True, undefined=StrictUndefined, auto_reload=overrides is not None)


def template(name: str, overrides: Path | None = None) -> Template:
    """One of the package's templates, by file name (`proof_claims.html`), or a theme's from `overrides`."""
    return environment(overrides).get_template(name)


def render(name: str, language: str | PageLanguage, /, **context: Any) -> str:
    """Render one of the package's templates in a language: its `t`, `claim_text` and `printed_line` are bound to it.

    Args:
        name: The template's file name (`proof_claims.html`).
        language: The page's language (`en`, `zh`), or its `PageLanguage` (which translates its claims).
        **context: The template's values.

    Returns:
        The rendered text.
    """
    return template(name).render(**words_in(language), **context)


def words_in(language: str | PageLanguage) -> dict[str, Any]:
    """What a template writes its words with: `t`, `t_markup`, `claim_text`, `printed_line` in a language, and its code.

    `t_markup` is `t` for a message with HTML in its fields (a command in `<code>`): the message is escaped, a
    field given as `Markup` is not.

    `printed_line` shows what a proof wrote in its own words, a claim's detail or the reason it could not apply, as
    the page shows the proof's printed lines: through the catalog of printed lines (`i18n.outputs`), since the
    proof writes English and is never edited for a language.

    Args:
        language: The page's language (`en`, `zh`), or its `PageLanguage`.

    Returns:
        The values to render a template with (`render` adds them; a `Template` given by a caller takes them).
    """

    def words(message: str, **fields: Any) -> str:
        return t(message, language, **fields)

    def statement(text: str) -> str:
        return claim_text(text, language)

    def words_around_markup(message: str, **fields: Any) -> Markup:
        # The message is text, escaped; a field given as `Markup` (a `<code>` of a command) is kept as HTML.
        return escape(t(message, language)).format(**fields)

    def printed_line(text: str) -> str:
        return translate_line(text, code_of(language))

    return {
        "t": words,
        "t_markup": words_around_markup,
        "claim_text": statement,
        "printed_line": printed_line,
        "language": code_of(language),
    }


@pass_context
def page_t(context: Context, message: str, **fields: Any) -> str:
    """`t` for the theme's templates (`floors_t`): the page's language is the one its context names.

    The build names it for each page (`floors_language`); a template rendered without one (none of the
    site's pages) writes English.

    Args:
        context: The template's context.
        message: The English message.
        **fields: Values for its fields.

    Returns:
        The message in the page's language.
    """
    return t(message, context.get("floors_language") or "en", **fields)
