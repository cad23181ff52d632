"""What the command line needs of `mkdocs.yml`, read by MkDocs itself (its tags, `!ENV` and `INHERIT` included)."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config import load_config

from pytorch_floors.editions.publish import SiteFacts

__all__ = ["read_site_facts"]


def read_site_facts(config_file: Path) -> SiteFacts:
    """The site's name and URL, its `latest` alias, its redirects and its theme overrides.

    Args:
        config_file: The site's `mkdocs.yml`.

    Returns:
        The facts publishing an edition needs.
    """
    config = load_config(config_file=str(config_file))
    redirects = config.plugins["redirects"].config["redirect_maps"] if "redirects" in config.plugins else {}
    return SiteFacts(
        config_file=config_file,
        site_name=config.site_name,
        site_url=config.site_url or "/",
        latest=config.extra["version"]["default"],
        redirect_maps=dict(redirects),
        overrides=Path(config.theme.custom_dir) if config.theme.custom_dir else None,
    )
