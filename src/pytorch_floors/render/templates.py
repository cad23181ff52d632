"""The package's one Jinja environment: its own HTML, from `render/templates/`, autoescaped and strict.

Every fragment this package writes into a page (the claims under a proof, a heading's control, the
citation table, a lab's download box, the handouts' links) is rendered here, so an undefined name
is an error instead of an empty string, and a value is escaped unless a template marks it safe.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, Template

from pytorch_floors.i18n.messages import claim_text, t

__all__ = ["TEMPLATES", "environment", "template"]

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
    env = Environment(loader=loader, autoescape=True, undefined=StrictUndefined)
    # The page being rendered says its language (`i18n.messages.use`): templates write their words through `t`.
    env.globals.update(t=t, claim_text=claim_text)
    return env


def template(name: str, overrides: Path | None = None) -> Template:
    """One of the package's templates, by file name (`proof_claims.html`), or a theme's from `overrides`."""
    return environment(overrides).get_template(name)
