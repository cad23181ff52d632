"""One command line: `python -m pytorch_floors VERB [ARGS]`.

| verb | what it does |
|---|---|
| `verify SITE_DIR` | fail unless every page carries the plugin's mark and every planned block has a record |
| `anchors update` or `anchors check` | append a built site's new anchors to `anchors.lock`, or list the broken ones |
| `changes` | compare a built site's manifest with an earlier edition's ("What changed") |
| `handouts` | print a built site's handouts and course packs to PDF |
| `publish EDITION` | deploy a frozen edition with mike, then its handouts and the root 404 |
| `record --tier NAME` | run every proof as the build does and write `recordings/NAME/recording.json` (no MkDocs) |
| `merge-recordings DIR...` | merge recordings made elsewhere (downloaded artifacts) into `recordings/` |
| `compare-recordings BEFORE AFTER` | what changed in each tier recorded in both folders (`make torch`) |
| `translations check` or `translations stamp` | check translated pages, or record what they translate |

`python -m pytorch_floors VERB --help` describes each verb's options.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["main"]


def _verify(argv: list[str]) -> int:
    from pytorch_floors.editions.verify import verify_site  # noqa: PLC0415  (each verb imports what it needs)

    parser = argparse.ArgumentParser(prog="python -m pytorch_floors verify", description=_verify.__doc__)
    parser.add_argument("site", type=Path, help="the built site's folder")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="accept the blocks the build was told to leave out (FLOORS_EXEC=off, FLOORS_EXEC_ONLY): not an edition",
    )
    args = parser.parse_args(argv)
    check = verify_site(args.site, partial=args.partial)
    for problem in check.problems:
        print(f"verify: {problem}", file=sys.stderr)
    print(f"verify: {args.site}: {check.summary()}", file=sys.stdout if check.passed else sys.stderr)
    return 0 if check.passed else 1


_verify.__doc__ = "Fail unless a built site is a complete floors build: every page marked, every block recorded."


def _anchors(argv: list[str]) -> int:
    from pytorch_floors.editions.anchors import main  # noqa: PLC0415

    return main(argv)


def _changes(argv: list[str]) -> int:
    from pytorch_floors.editions.manifest import main  # noqa: PLC0415

    return main(argv)


# The command line, like the plugin (`plugin.config`), reads the `FLOORS_*` settings a verb needs
# (`pytorch_floors.settings`) and hands the verb their values: no other module reads one.


def _handouts(argv: list[str]) -> int:
    from pytorch_floors.editions.handouts import main  # noqa: PLC0415
    from pytorch_floors.settings import read_text  # noqa: PLC0415

    return main(argv, chromium=read_text("FLOORS_CHROMIUM"), published=read_text("FLOORS_EDITION"))


def _publish(argv: list[str]) -> int:
    from pytorch_floors.editions.publish import main  # noqa: PLC0415
    from pytorch_floors.plugin.site_config import read_site_facts  # noqa: PLC0415  (MkDocs reads mkdocs.yml)
    from pytorch_floors.settings import from_environment, read_text  # noqa: PLC0415

    return main(
        argv,
        read_site=read_site_facts,
        read_settings=lambda: from_environment(os.environ),
        repository=read_text("FLOORS_REPOSITORY"),
    )


def _record(argv: list[str]) -> int:
    from pytorch_floors.recordings.cli import record_main  # noqa: PLC0415  (torch and the engine, not MkDocs)
    from pytorch_floors.settings import read_text  # noqa: PLC0415

    return record_main(argv, cache_dir=read_text("FLOORS_CACHE_DIR"))


def _merge_recordings(argv: list[str]) -> int:
    from pytorch_floors.recordings.cli import merge_main  # noqa: PLC0415

    return merge_main(argv)


def _compare_recordings(argv: list[str]) -> int:
    from pytorch_floors.recordings.cli import compare_main  # noqa: PLC0415

    return compare_main(argv)


def _translations(argv: list[str]) -> int:
    from pytorch_floors.i18n.translations_command import main  # noqa: PLC0415

    return main(argv)


VERBS: dict[str, Callable[[list[str]], int]] = {
    "verify": _verify,
    "anchors": _anchors,
    "changes": _changes,
    "handouts": _handouts,
    "publish": _publish,
    "record": _record,
    "merge-recordings": _merge_recordings,
    "compare-recordings": _compare_recordings,
    "translations": _translations,
}
"""Each verb and the function that takes its arguments."""


def main(argv: list[str] | None = None) -> int:
    """Run one verb.

    Args:
        argv: The verb and its arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status.
    """
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in VERBS:
        usage = f"usage: python -m pytorch_floors {{{','.join(VERBS)}}} [ARGS]"
        print(__doc__.strip() if args[:1] in (["-h"], ["--help"]) else usage, file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    return VERBS[args[0]](args[1:])


if __name__ == "__main__":
    sys.exit(main())
