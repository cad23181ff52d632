"""The theme's compiled templates, kept between a serve session's builds."""

from __future__ import annotations

import logging

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

log = logging.getLogger("mkdocs.plugins.pytorch_floors")


class TemplateCache(BytecodeCache):
    """The theme's templates, compiled once per session (a build's Jinja environment is new each time).

    Jinja checks each template's source against the checksum stored with its code, so an edited
    template is compiled again.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill the bucket from a template compiled earlier in this session, if any."""
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep a template just compiled."""
        self._code[bucket.key] = bucket.bytecode_to_string()
