"""What a smaller search index costs readers: the words findable in one built site and not another.

Run `python bench/search_words.py BEFORE_SITE AFTER_SITE` on two built sites. It reads each
`search/search_index.json`, splits every entry's title and text into the terms Material's search
(lunr) indexes (tags dropped, lower-cased, split at whitespace and hyphens, non-word characters
trimmed from both ends), and prints both index sizes, how many distinct terms each holds, and the
terms only the first one has, with the page of each (the first entry that held it).
"""

from __future__ import annotations

import argparse
import html
import json
import re
from pathlib import Path

_TAG = re.compile(r"<[^>]+>")
_SEPARATOR = re.compile(r"[\s\-]+")
_TRIM = re.compile(r"^\W+|\W+$")


def terms(site: Path) -> tuple[int, dict[str, str]]:
    """The index's size in bytes, and each term it holds mapped to the first page holding it."""
    path = site / "search" / "search_index.json"
    found: dict[str, str] = {}
    for entry in json.loads(path.read_text(encoding="utf-8"))["docs"]:
        words = html.unescape(_TAG.sub(" ", f"{entry['title']} {entry['text']}"))
        for raw in _SEPARATOR.split(words.lower()):
            term = _TRIM.sub("", raw)
            if term:
                found.setdefault(term, entry["location"].split("#")[0] or "(Part 0)")
    return path.stat().st_size, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--show", type=int, default=60, help="how many lost terms to list")
    args = parser.parse_args()
    (size_before, before), (size_after, after) = terms(args.before), terms(args.after)
    print(f"index: {size_before / 1000:.0f} KB -> {size_after / 1000:.0f} KB")
    print(f"terms: {len(before)} -> {len(after)}")
    lost = sorted(set(before) - set(after))
    plain = [t for t in lost if re.fullmatch(r"[a-z]{4,}", t)]
    print(f"lost: {len(lost)} terms, of which {len(plain)} plain words of 4+ letters (no digits, dots, underscores)")
    by_page: dict[str, int] = {}
    for term in lost:
        by_page[before[term]] = by_page.get(before[term], 0) + 1
    for page, count in sorted(by_page.items(), key=lambda item: -item[1])[:12]:
        print(f"  {count:>5}  first held by {page}")
    print("plain words lost:", " ".join(plain[: args.show]))


if __name__ == "__main__":
    main()
