"""A serve session follows its background build through structured events, never the wording of its log."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytorch_floors.execution.progress import PREFIX, Progress, parse_progress
from pytorch_floors.plugin.serve import Background


def test_an_event_is_one_line_and_reads_back_the_same() -> None:
    event = Progress("proof", 3, 12, "floors/4-dispatcher.md", "docs/floors/4-dispatcher.md › op-schema", "running")
    line = event.line()
    assert "\n" not in line and line.startswith(PREFIX)
    assert parse_progress(line) == event
    assert event.words() == "proof 3/12 docs/floors/4-dispatcher.md › op-schema: running"
    assert parse_progress("INFO    -  proof 3/12 docs/floors/4-dispatcher.md › op-schema: running") is None


@pytest.mark.parametrize(
    "line",
    [
        PREFIX + "{not json",
        PREFIX + '{"kind": "proof"}',
        PREFIX + Progress("proof", 1, 2, "a.md", "docs/a.md › x", "exploded").line().removeprefix(PREFIX),
        PREFIX
        + Progress("proof", 1, 2, "a.md", "docs/a.md › x", "ran").line().removeprefix(PREFIX).replace("1", '"1"', 1),
    ],
)
def test_a_line_that_claims_to_be_an_event_and_is_not_is_refused_by_name(line: str) -> None:
    with pytest.raises(ValueError, match="a progress event"):
        parse_progress(line)


def _read(lines: list[str], tmp_path: Path) -> Background:
    """Feed `lines` to a Background's reader as its build's output, without starting a build."""
    background = Background(tmp_path / "mkdocs.yml", tmp_path, tmp_path)
    background.process = SimpleNamespace(  # type: ignore[assignment]  # only what the reader touches
        stdout=iter(line + "\n" for line in lines), wait=lambda: 0, returncode=0, poll=lambda: 0
    )
    background._read()
    return background


def test_pages_are_done_as_the_events_move_on_whatever_the_log_says(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = Progress("proof", 1, 3, "index.md", "docs/index.md › walk", "running", "limit 120 s")
    lab = Progress("lab", 1, 1, "labs/1-program.py", "docs/labs/1-program.py", "ran", "in 3 s")
    lines = [
        "INFO    -  the proof in docs/a.md is under way (a log line reworded: no event)",
        first.line(),
        Progress("proof", 1, 3, "index.md", "docs/index.md › walk", "ran", "in 1 s").line(),
        "WARNING -  docs/index.md › walk: claim did not hold on this machine: x",
        lab.line(),
    ]
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.pytorch_floors"):
        background = _read(lines, tmp_path)
    assert background.done() == {"index.md", "labs/1-program.py"}, "each page done when the events move past it"
    said = caplog.text
    assert "background: proof 1/3 docs/index.md › walk: running (limit 120 s)" in said
    assert "background: docs/index.md › walk: claim did not hold" in said, "warnings still reach the session"
    assert "reworded" not in said, "an info line of the build is not the session's business"
    assert (tmp_path / "progress").read_text(encoding="utf-8") == "finished"


def test_a_malformed_event_is_named_in_the_log_and_the_rest_is_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = Progress("proof", 1, 1, "a.md", "docs/a.md › x", "ran", "in 1 s")
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.pytorch_floors"):
        background = _read([PREFIX + "{broken", good.line()], tmp_path)
    assert "a progress event that is not JSON" in caplog.text
    assert background.done() == {"a.md"}


def test_the_heartbeat_names_the_proof_that_runs_and_not_one_that_has_ended(tmp_path: Path) -> None:
    # Its last proof had run in 6 s when the heartbeat said "still running docs/inside-torch.md › torch-facts
    # (17 s so far)": the build was rendering its pages.
    running = Progress("proof", 1, 2, "index.md", "docs/index.md › walk", "running", "limit 120 s")
    assert _read([], tmp_path).doing_words().startswith("still starting (")
    assert _read([running.line()], tmp_path).doing_words().startswith("still running docs/index.md › walk (")
    ended = _read(
        [running.line(), Progress("proof", 1, 2, "index.md", running.where, "ran", "in 6 s").line()], tmp_path
    )
    assert ended.doing_words().startswith("still building the pages (")
