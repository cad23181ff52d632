"""A fixture site built in this process, as `mkdocs build` builds it, for the tests whose subject is the site.

A `mkdocs build` subprocess costs some CPU seconds before its first page (Python, MkDocs, Material
and torch imported, a fork server started); a test session built some fifty fixture sites that way.
In this process the imports are paid once, and the engine's fork server is started once per worker
and shared by every build (as markdown-exec's and mkdocstrings' tests drive MkDocs). What the
command line adds around a build is done here too: the plugins' startup and shutdown, the log
written as `LEVEL   -  message` lines, strict mode's abort, and exit code 1 for what it exits 1 on.

A test whose subject is the subprocess itself (its environment, its children, its signals, its
start method) builds with `FixtureSite.build(process=True)`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from mkdocs import config as mkdocs_config
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.exceptions import MkDocsException

__all__ = ["build_in_process"]

_FORMAT = "%(levelname)-8s-  %(message)s"
"""The command line's log line (mkdocs.__main__.ColorFormatter, without colour or wrapping)."""


@contextlib.contextmanager
def _as_the_command_line(project: Path, env: dict[str, str]) -> Iterator[io.StringIO]:
    """This process as `mkdocs build` run in `project` with `env` added: its directory, environment and log."""
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger = logging.getLogger("mkdocs")
    saved_logger = (logger.level, logger.propagate, list(logger.handlers))
    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    for existing in saved_logger[2]:
        logger.removeHandler(existing)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    os.environ.update({"NO_MKDOCS_2_WARNING": "1", **env})
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            yield log
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        logger.removeHandler(handler)
        for existing in saved_logger[2]:
            logger.addHandler(existing)
        logger.setLevel(saved_logger[0])
        logger.propagate = saved_logger[1]


def build_in_process(
    project: Path, site: Path, *, strict: bool = False, env: dict[str, str] | None = None
) -> tuple[int, str, float]:
    """Build `project` into `site` in this process, as `mkdocs build [--strict]` would.

    Args:
        project: The fixture project (its `mkdocs.yml`).
        site: The site folder.
        strict: `--strict`.
        env: Variables added to the environment for the build.

    Returns:
        The exit code the command line would give, its log, and the wall seconds.
    """
    start = time.perf_counter()
    returncode = 0
    with _as_the_command_line(project, env or {}) as log:
        try:
            config = mkdocs_config.load_config(
                config_file=str(project / "mkdocs.yml"), site_dir=str(site), strict=strict or None
            )
            config.plugins.on_startup(command="build", dirty=False)
            try:
                mkdocs_build(config, dirty=False)
            finally:
                config.plugins.on_shutdown()
        except MkDocsException as error:  # an abort, a configuration or plugin error: the command line's exit 1
            error.show(file=log)  # as click shows it: "Error: …", or an abort's own line
            returncode = 1
        except Exception:  # what the command line would die of, with its traceback
            log.write(traceback.format_exc())
            returncode = 1
    return returncode, log.getvalue(), time.perf_counter() - start
