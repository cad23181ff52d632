"""The package's one Jinja environment: its own HTML, from `render/templates/`, autoescaped and strict.

Every fragment this package writes into a page (the claims under a proof, a heading's control, the
citation table, a lab's download box, the handouts' links) is rendered here, so an undefined name
is an error instead of an empty string, and a value is escaped unless a template marks it safe.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template

__all__ = ["TEMPLATES", "environment", "template"]

TEMPLATES = Path(__file__).parent / "templates"
"""The folder of the package's templates."""


@cache
def environment() -> Environment:
    """The environment (one per process: it holds no build's data, only the parsed templates)."""
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined)


def template(name: str) -> Template:
    """One of the package's templates, by file name (`proof_claims.html`)."""
    return environment().get_template(name)
