"""The Chinese edition: languages, each page's twin, the glossary, section digests and the interface's words.

Every page of the site has a twin under `docs/zh/` at the same path. The twin's prose is Chinese; its
code, its executed blocks and its section anchors are the English page's (`check`), so a proof runs
once for both languages and a course's citation of `#boxed-unboxed` lands on the same section in
either. Each translated section records a digest of the English section it translated
(`sections`): when the English changes, the Chinese page says so at that section.
"""
