"""The serve session's log: MkDocs' dirty-build warning, which the session answers itself, kept out."""

from __future__ import annotations

import logging

log = logging.getLogger("mkdocs.plugins.pytorch_floors")

_DIRTY_WARNING = "A 'dirty' build is being performed"


class _DirtyWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_DIRTY_WARNING)


_DIRTY_FILTER = _DirtyWarning()


def quiet_dirty_warning(enabled: bool) -> None:
    """Keep MkDocs' warning that a dirty build may show a stale navigation out of a session's log.

    The session rebuilds every page whose navigation or links could be stale (`plan_rebuild`), and
    says which pages each build rendered instead.

    Args:
        enabled: Add the filter (`False` removes it).
    """
    logger = logging.getLogger("mkdocs.commands.build")
    if enabled:
        logger.addFilter(_DIRTY_FILTER)
    else:
        logger.removeFilter(_DIRTY_FILTER)
