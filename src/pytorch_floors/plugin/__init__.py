"""The `floors` MkDocs plugin: the only package that imports MkDocs, Markdown, markdown-exec and their plugins.

It translates MkDocs' events into calls on the engine-neutral packages (`execution`, `render`,
`labs`, `editions`), which take plain data and raise
[`FloorsError`][pytorch_floors.errors.FloorsError]; the plugin reports those as MkDocs'
`PluginError`, reads its settings once ([`Settings`][pytorch_floors.plugin.config.Settings]) and
owns each build's state ([`SiteBuild`][pytorch_floors.plugin.build.SiteBuild]).
"""

from __future__ import annotations

from pytorch_floors.plugin.plugin import FloorsPlugin

__all__ = ["FloorsPlugin"]
