"""How a part names another page from the page being rendered: its URL relative to that page."""

from __future__ import annotations

from collections.abc import Callable

from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

__all__ = ["url_from"]


def url_from(files: Files, page: Page) -> Callable[[str], str]:
    """A function from a source path (relative to `docs/`) to its page's URL relative to `page`.

    Args:
        files: The build's files.
        page: The page the link is written on.

    Returns:
        The function; a path the build has no page for is given back as it is.
    """

    def url_of(src: str) -> str:
        file = files.get_file_from_path(src)
        return get_relative_url(file.url, page.url) if file else src

    return url_of
