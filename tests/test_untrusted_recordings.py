"""A recording is untrusted input: it arrives from another machine as JSON nobody reads line by line.

Each case below once reached a page or stalled a build. A recording is refused by name when it is read
(by the build, and by `merge-recordings`), never shown half-cleaned.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_recordings import as_elsewhere, recorded, render  # noqa: F401  (`recorded` is a fixture)

from pytorch_floors.execution.output import MAX_OUTPUT
from pytorch_floors.recordings.html import UntrustedHTML, allowed_html
from pytorch_floors.recordings.merge import merge_recordings
from pytorch_floors.recordings.recorder import record_site
from pytorch_floors.recordings.schema import (
    Recording,
    RecordingError,
    read_recording,
    read_recordings,
    write_recording,
)

Change = Callable[[dict[str, Any]], dict[str, Any]]

FIGURE = (
    '<figure class="floors-figure" id="f"><figcaption class="c">a &amp; b</figcaption>'
    '<svg class="floors-plot" role="img" viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg">'
    '<title id="t">t</title><line class="g" x1="0" y1="0" x2="1" y2="1"/>'
    '<rect class="r" x="0" y="0" width="1" height="1" style="fill-opacity:0.3"/></svg>'
    '<ul class="floors-bars" style="--floors-bars-room: 7.0ch"><li class="b">x<wbr>y</li></ul>'
    '<a class="l" href="floors/1-program/">1</a></figure>'
)


def _first_output(change: Callable[[str], str]) -> Change:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        blocks = [dict(block) for block in data["blocks"]]
        blocks[0]["output"] = change(blocks[0]["output"])
        return {**data, "blocks": blocks}

    return edit


def _as_html(output: str) -> Change:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        blocks = [dict(block) for block in data["blocks"]]
        blocks[0] = {**blocks[0], "html": True, "output": output}
        return {**data, "blocks": blocks}

    return edit


def _first_block(**fields: str) -> Change:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "blocks": [{**data["blocks"][0], **fields}, *data["blocks"][1:]]}

    return edit


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


UNTRUSTED: list[tuple[str, Change | str, str]] = [
    ("script", _as_html("<script>alert(1)</script>"), "<script> is not an element"),
    ("event-handler", _as_html('<img src="x" onerror="alert(2)">'), "<img> is not an element"),
    ("handler-on-an-allowed-element", _as_html('<rect onclick="alert(3)"></rect>'), "<rect onclick=…>"),
    ("javascript-link", _as_html('<a href=" jav&#x09;ascript:alert(4)">x</a>'), "is not a relative link"),
    ("protocol-relative-link", _as_html('<a href="//evil.example/">x</a>'), "is not a relative link"),
    ("backslash-link", _as_html('<a href="/\\evil.example/phish">x</a>'), "is not a relative link"),
    ("style-with-url", _as_html('<span style="--x: 1; background: url(https://e.example)">x</span>'), "not a style"),
    ("comment", _as_html("<span><!-- --><script>alert(5)</script></span>"), "a comment"),
    ("cdata", _as_html("<svg><![CDATA[<script>]]></svg>"), "a declaration"),
    ("foreign-namespace", _as_html('<svg xmlns="http://www.w3.org/1999/xhtml"></svg>'), "not the SVG namespace"),
    ("github-token", _first_output(lambda o: o + " ghp_" + "a" * 36), "holds a GitHub token"),
    ("aws-key", _first_output(lambda o: o + " AKIA" + "B" * 16), "holds an AWS access key"),
    ("private-key", _first_output(lambda o: "-----BEGIN OPENSSH PRIVATE KEY-----"), "holds a private key"),
    ("root-path", _first_output(lambda o: "/root/.ssh/id_rsa"), r"a home folder \(/root/"),
    ("home-path", _first_output(lambda o: "/home/alice/work/x.py"), r"a home folder \(/home/alice/"),
    ("macos-home-path", _first_output(lambda o: "/Users/bob/x.py"), r"a home folder \(/Users/bob/"),
    ("token-split-by-an-escape", _first_output(lambda o: o + " ghp_\x1b[0m" + "a" * 36), "holds a GitHub token"),
    ("token-split-by-a-tag", _as_html("<span>ghp_<b></b>" + "a" * 36 + "</span>"), "holds a GitHub token"),
    ("recorded-not-a-date", lambda d: {**d, "recorded": "2026-01-01 ghp_fake123 /home/alice/x"}, "'recorded' must be"),
    ("recorded-impossible-date", lambda d: {**d, "recorded": "2026-02-30"}, "'recorded' must be"),
    ("stands-for-token", lambda d: {**d, "stands_for": "a runner ghp_" + "a" * 36}, "stands_for: holds a GitHub"),
    ("page-home-path", _first_block(page="/home/alice/x.md"), r"page: names a path in a home folder \(/home/alice/"),
    ("block-id-token", _first_block(block="ghp_" + "b" * 36), "block: holds a GitHub token"),
    ("digest-not-a-digest", _first_block(digest="sha256:/home/alice/x"), "'digest' must be"),
    ("too-large", _first_output(lambda o: "x" * (MAX_OUTPUT + 1)), "output is over"),
    ("format-true", lambda d: {**d, "format": True}, "recording format True"),
    ("nan-seconds", '"seconds": NaN', "NaN is not a number"),
    ("infinite-seconds", '"seconds": Infinity', "Infinity is not a number"),
    ("deeply-nested", "nested", "nested too deeply"),
]


def _write(recording: Recording, root: Path, change: Change | str) -> Path:
    path = write_recording(recording, root)
    if change == "nested":
        path.write_text('{"format": 1, "blocks": ' + _nested(100_000) + "}", encoding="utf-8")
    elif isinstance(change, str):
        text = path.read_text(encoding="utf-8")
        field = '"seconds": ' + text.split('"seconds": ', 1)[1].split(",", 1)[0]
        path.write_text(text.replace(field, change, 1), encoding="utf-8")
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(change(data)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "message"), [case[1:] for case in UNTRUSTED], ids=[case[0] for case in UNTRUSTED])
def test_an_untrusted_recording_is_refused_by_name_when_read_and_when_merged(
    recorded: tuple[Path, Recording],  # noqa: F811  (the fixture)
    tmp_path: Path,
    change: Change | str,
    message: str,
) -> None:
    path = _write(recorded[1], tmp_path / "artifact", change)
    with pytest.raises(RecordingError, match=message) as refused:
        read_recording(path)
    assert str(path) in str(refused.value)
    with pytest.raises(RecordingError, match=message):
        merge_recordings([tmp_path / "artifact"], tmp_path / "recordings")
    assert not (tmp_path / "recordings").exists(), "a refused merge wrote nothing"


def test_a_recorded_date_holding_a_secret_and_a_path_is_refused_in_one_line_that_repeats_neither(
    recorded: tuple[Path, Recording],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The tab's label and build-report.json showed the field as it came: it must be a date (or a time).
    monkeypatch.setenv("FLOORS_TEST_TOKEN", "ghp_fake123")
    root = tmp_path / "recordings"
    _write(recorded[1], root, lambda d: {**d, "recorded": "2026-01-01 ghp_fake123 /home/alice/x"})
    with pytest.raises(RecordingError) as refused:
        read_recordings(root)  # what a build reads before any page
    message = str(refused.value)
    assert "'recorded'" in message and "\n" not in message
    assert "ghp_fake123" not in message and "alice" not in message
    for fine in ("2026-12-01", "2026-12-01T09:30", "2026-12-01T09:30:15+02:00", "2026-12-01 09:30:15Z"):
        _write(replace(recorded[1], recorded=fine), root, lambda d: d)
        assert read_recordings(root)[0].recorded == fine


def test_a_secret_in_a_recordings_provenance_is_found_whatever_its_letters(
    recorded: tuple[Path, Recording],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Read as JSON text, the field's non-ASCII letters were `\u00e4` escapes, and the secret was not found.
    monkeypatch.setenv("FLOORS_TEST_PASSWORD", "pässwort-geheim")
    path = _write(recorded[1], tmp_path, lambda d: {**d, "machine": {**d["machine"], "cpu": "CPU pässwort-geheim"}})
    with pytest.raises(RecordingError, match="machine: holds the value of the build's environment variable"):
        read_recording(path)


def test_a_large_recording_is_refused_at_once(recorded: tuple[Path, Recording], tmp_path: Path) -> None:  # noqa: F811
    # One block's output of 50 MB stalled the build for over ten minutes.
    path = _write(recorded[1], tmp_path, _first_output(lambda o: "y" * (50 << 20)))
    started = time.perf_counter()
    with pytest.raises(RecordingError, match="over"):
        read_recording(path)
    assert time.perf_counter() - started < 30, "refusing a large recording should not take long"


def test_the_projects_own_figures_pass_the_allow_list_unchanged() -> None:
    assert allowed_html(FIGURE) == FIGURE


def test_every_committed_recordings_html_passes_the_allow_list() -> None:
    # The allow-list is what the project's figures write: every recorded figure of the project is read.
    from conftest import ROOT  # noqa: PLC0415

    figures = [
        block.output
        for path in sorted((ROOT / "recordings").glob("*/recording.json"))
        for block in read_recording(path).blocks
        if block.html
    ]
    assert figures, "no recorded figure to check"
    for figure in figures:
        assert allowed_html(figure) == figure


# A browser reads an `http(s)` page's link by the WHATWG URL rules: leading and trailing C0 controls and
# spaces dropped, tabs and newlines dropped anywhere, `\\` read as `/`; so each of these names another host.
_OFF_SITE = {
    "slash-backslash": "/\\evil.example/phish",
    "backslash-slash": "\\/evil.example/phish",
    "two-backslashes": "\\\\evil.example/phish",
    "slash-two-backslashes": "/\\\\evil.example/phish",
    "tab-between": "/\t/evil.example/phish",
    "newline-between": "/\n\\evil.example/phish",
    "carriage-return-between": "\\\r\\evil.example/phish",
    "leading-controls": "\x01\x1f /\\evil.example/phish",
    "backslash-entity": "/&#x5c;evil.example/phish",
    "tab-entity": "/&Tab;/evil.example/phish",
    "scheme-with-backslashes": "https:\\\\evil.example/phish",
}


@pytest.mark.parametrize("href", _OFF_SITE.values(), ids=_OFF_SITE.keys())
def test_a_link_a_browser_resolves_off_site_is_refused(href: str) -> None:
    with pytest.raises(UntrustedHTML, match="is not a relative link"):
        allowed_html(f'<a href="{href}">x</a>')


@pytest.mark.parametrize("href", ["floors/1-program/", "../labs/", "/pytorch-floors/", "#top", "/%5Cevil.example/"])
def test_a_link_that_stays_on_the_site_passes(href: str) -> None:
    # A percent-escape is never decoded before the host is found: `/%5C...` is a path of this site.
    assert allowed_html(f'<a href="{href}">x</a>') == f'<a href="{href}">x</a>'


def test_text_and_values_come_out_escaped() -> None:
    assert allowed_html('<span class="a&quot; onclick=&quot;x">&lt;b&gt;</span>') == (
        '<span class="a&quot; onclick=&quot;x">&lt;b&gt;</span>'
    )
    # A tag the output never finishes is text, shown as such.
    assert allowed_html('<span class="x') == "&lt;span class=&quot;x"
    with pytest.raises(UntrustedHTML, match="closes an element"):
        allowed_html("</script>")


def test_a_recorded_figure_is_shown_through_the_allow_list_even_when_bound_directly(tmp_path: Path) -> None:
    # read_recording checks it; the fence checks again what it is handed (a recording made in memory).
    root = tmp_path
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text(
        f'---\ndescription: d\n---\n\n# P\n\n```python exec="1" id="fig" html="1"\nprint({FIGURE!r})\n```\n',
        encoding="utf-8",
    )
    recording = record_site(root, root / "docs", "other", stands_for="another machine", cache_dir=root / ".cache")
    evil = as_elsewhere(recording, "<img src=x onerror=alert(2)><script>alert(1)</script>")
    html, engine = render(root, (evil,))
    assert "onerror" not in html and "<script>alert" not in html
    assert any("<img> is not an element the project's figures write" in str(f) for f in engine.failures)


EIGHT = "````````"


@pytest.mark.parametrize("run", [8, 12], ids=["eight-backticks", "twelve-backticks"])
def test_backticks_in_output_never_close_its_fence(
    recorded: tuple[Path, Recording],  # noqa: F811
    tmp_path: Path,
    run: int,
) -> None:
    # From a proof's own output, a cache entry and a recording alike: the output stays text.
    root, recording = recorded
    ticks = "`" * run
    (root / "snippets" / "sum.py").write_text(
        f"print({ticks!r})\nprint()\nprint('<img src=x onerror=alert(9)>')\n", encoding="utf-8"
    )
    try:
        own, engine = render(root, ())
        again, _ = render(root, ())  # from the cache
        elsewhere = as_elsewhere(recording, f"{ticks}\n\n<img src=x onerror=alert(9)>\n")
        shown, _ = render(root, (elsewhere,))
    finally:
        from test_recordings import PROOF  # noqa: PLC0415

        (root / "snippets" / "sum.py").write_text(PROOF, encoding="utf-8")
    for html in (own, again, shown):
        assert "<img src=x" not in html
        assert "&lt;img src=x onerror=alert(9)&gt;" in html
    assert [r.status for r in engine.records if r.block_id == "sum"] == ["ran"]
