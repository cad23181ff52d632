"""Labs: executed notebooks rendered by mkdocs-jupyter, keyed and limited like the proofs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

from pytorch_floors.execution.cache import environment_fingerprint

__all__ = ["configure_jupyter", "finish_lab_page", "publish_notebooks"]

PLUGIN = "mkdocs-jupyter"


def configure_jupyter(config: MkDocsConfig, project_dir: Path) -> None:
    """Key mkdocs-jupyter's cache on the environment and give executed cells a time limit.

    mkdocs-jupyter keys its cache on the notebook file and render options only, so a
    torch upgrade or a change in this package would reuse stale outputs. Pointing its
    cache at a directory named after the environment fingerprint (torch, Python, CPU,
    accelerator, this package's source) makes any of those changes a cache miss.
    `FLOORS_EXEC=off` (the render-only build) turns notebook execution off too.
    The per-cell time limit comes from `jupyter/jupyter_nbconvert_config.json`, which
    nbconvert reads through `JUPYTER_CONFIG_DIR`.

    Args:
        config: The MkDocs configuration (after plugins are loaded).
        project_dir: The project root.
    """
    plugin = config.plugins.get(PLUGIN)
    if plugin is None:
        return
    digest = hashlib.sha256(json.dumps(environment_fingerprint(), sort_keys=True).encode()).hexdigest()[:16]
    if os.environ.get("FLOORS_EXEC", "on") == "off":
        plugin.config["execute"] = False
    plugin.config["cache_dir"] = str(project_dir / ".cache" / "mkdocs-jupyter" / digest)
    os.environ["JUPYTER_CONFIG_DIR"] = str(project_dir / "jupyter")


def finish_lab_page(output: str, page: Page) -> str:
    """Post-process a rendered lab page (called for every page; others pass through).

    Args:
        output: The page's final HTML.
        page: The page.

    Returns:
        The HTML to write.
    """
    return output


def publish_notebooks(config: MkDocsConfig) -> None:
    """Write each lab as a downloadable `.ipynb` into the built site.

    Args:
        config: The MkDocs configuration.
    """
