"""Links between the site's pages, as MkDocs writes them: relative, so a site works from any folder."""

from __future__ import annotations

__all__ = ["relative_url"]


def _parts(path: str) -> list[str]:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts


def relative_url(target: str, page: str) -> str:
    """The link from `page` to `target`, both site-relative URLs (`floors/4-dispatcher/`, `assets/x.css`).

    A last segment of `page` with a dot in it is a file (`404.html`), so links start from its folder;
    `..` climbs, but never above the site's root. A target ending in `/` keeps its slash.

    Args:
        target: Where the link goes.
        page: The page the link is written in.

    Returns:
        The relative link (`../../assets/x.css`), `.` for the page's own folder.
    """
    folder, _, last = page.rpartition("/")
    if "." in last:
        page = folder
    start, end = _parts(page), _parts(target)
    shared = 0
    for a, b in zip(start, end, strict=False):
        if a != b:
            break
        shared += 1
    link = "/".join([".."] * (len(start) - shared) + end[shared:]) or "."
    return f"{link}/" if target.endswith("/") else link
