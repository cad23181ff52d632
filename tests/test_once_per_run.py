"""The suite's expensive session fixtures (the site build, the publish, the PDFs) are made once per run.

Under `pytest -n 2` each worker has its own session, so a session fixture ran twice: two cold builds
of the site at once, into one proof cache. (`--dist loadgroup` was meant to keep them on one worker,
but with pytest 9.2 pytest-xdist 3.8's group suffix no longer reaches the node ids, so nothing was
grouped.) `once_per_run` makes each once, under a file lock, whichever worker asks first.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from filelock import FileLock

from conftest import (
    PROJECT_LOCK,
    ROOT,
    build_readers_split,
    late_last,
    made_ahead_names,
    make_ahead,
    once_per_run,
    worksteal_shares,
)


def _make_slowly(directory: Path) -> dict[str, Any]:
    counter = directory.parent / "made.txt"
    with counter.open("a", encoding="utf-8") as made:
        made.write("made\n")
    time.sleep(0.5)  # long enough for the other worker to ask while this one is making it
    return {"directory": str(directory)}


def _ask(shared: str, answers: Any) -> None:
    answers.put(once_per_run(Path(shared), "thing", _make_slowly))


def test_two_workers_asking_at_once_get_one_thing_made_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    workers = [context.Process(target=_ask, args=(str(tmp_path), answers)) for _ in range(2)]
    for worker in workers:
        worker.start()
    got = [answers.get(timeout=30) for _ in workers]
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    assert got[0] == got[1] == {"directory": str(tmp_path / "thing")}
    assert (tmp_path / "made.txt").read_text(encoding="utf-8") == "made\n"


def test_a_make_that_fails_records_nothing_so_the_next_ask_tries_again(tmp_path: Path) -> None:
    def failing(_: Path) -> dict[str, Any]:
        raise RuntimeError("the build broke")

    with pytest.raises(RuntimeError, match="the build broke"):
        once_per_run(tmp_path, "thing", failing)
    assert once_per_run(tmp_path, "thing", lambda directory: {"made": directory.name}) == {"made": "thing"}


def _make_and_time(directory: Path) -> dict[str, Any]:
    start = time.monotonic()
    time.sleep(0.3)
    return {"start": start, "end": time.monotonic()}


def _ask_for(shared: str, name: str, answers: Any, lock: str | Path = "project") -> None:
    answers.put(once_per_run(Path(shared), name, _make_and_time, lock=lock))


def _spans_of(asks: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """What `_ask_for` measured for each ask (its arguments but the queue), asked at once in processes of their own."""
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    workers = [context.Process(target=_ask_for, args=(shared, name, answers, *lock)) for shared, name, *lock in asks]
    for worker in workers:
        worker.start()
    spans = sorted((answers.get(timeout=30) for _ in workers), key=lambda span: span["start"])
    for worker in workers:
        worker.join(30)
    return spans


def test_makers_sharing_a_lock_never_overlap(tmp_path: Path) -> None:
    first, second = _spans_of([(str(tmp_path), "site"), (str(tmp_path), "labs")])
    assert first["end"] <= second["start"], "two builds of the project ran at the same time"


def test_two_runs_on_one_checkout_never_build_the_project_at_once(tmp_path: Path) -> None:
    # Two test runs have two run folders (pytest's basetemp) but one project, and one proof cache, beside
    # which the lock lies. A lock of this test's own: the project's is held for minutes by the pattern
    # tests that `make test` runs beside this one, and by any other run on this checkout.
    runs = [tmp_path / "pytest-1", tmp_path / "pytest-2"]
    for run in runs:
        run.mkdir()
    project_lock = tmp_path / "project" / ".cache" / PROJECT_LOCK.name
    first, second = _spans_of([(str(run), "site", project_lock) for run in runs])
    assert first["end"] <= second["start"], "two runs built the project at the same time"
    assert PROJECT_LOCK.parent == Path(os.environ.get("FLOORS_CACHE_DIR") or ROOT / ".cache")


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("readers", [0, 1, 3, 5, 6, 7, 9, 10, 17])
def test_one_worker_starts_by_making_the_build_and_every_other_on_tests_that_need_none(
    readers: int, workers: int
) -> None:
    """CI, three workers: the first two shares began with tests that read the build, and two workers waited
    out its 70 s. Each share after the first must open with a test that needs no build while there are enough."""
    count = 17
    items = [f"reads-{n}" for n in range(readers)] + [f"other-{n}" for n in range(count - readers)]
    ordered = build_readers_split(items[::-1], lambda item: item.startswith("reads"), workers)
    assert sorted(ordered) == sorted(items), "every test, once"
    shares = worksteal_shares(count, workers)
    assert sum(shares) == count and len(shares) == workers
    starts = [sum(shares[:k]) for k in range(workers)]
    if readers:
        assert ordered[0].startswith("reads"), ordered
    if count - readers >= workers - 1:  # enough tests that need no build to open every later share
        opening = [ordered[start] for start, share in zip(starts[1:], shares[1:], strict=True) if share]
        assert all(item.startswith("other") for item in opening), f"a later share opens on the build: {ordered}"
    # Otherwise in their order: the readers among themselves, the others among themselves.
    for kind in ("reads", "other"):
        assert [i for i in ordered if i.startswith(kind)] == [i for i in items[::-1] if i.startswith(kind)]


def test_the_shares_are_those_worksteal_hands_out() -> None:
    """The split relies on how pytest-xdist's worksteal first divides the list: each worker, in turn, the tests
    left divided by the workers left. Read from its scheduler, so an upgrade that changes it fails here."""
    import inspect  # noqa: PLC0415

    from xdist.scheduler.worksteal import WorkStealingScheduling  # type: ignore[import-untyped]  # noqa: PLC0415

    source = inspect.getsource(WorkStealingScheduling.check_schedule)
    assert "num_send = len(self.pending) // nodes_remaining" in source
    assert worksteal_shares(10, 3) == [3, 3, 4] and worksteal_shares(11, 2) == [5, 6]


def _hold(lock: str, holding: Any, release: Any) -> None:
    with FileLock(lock):
        holding.set()
        release.wait(120)


def test_a_thing_made_already_is_read_while_another_maker_holds_the_lock(tmp_path: Path) -> None:
    # Before, every ask took the lock: a worker's first test that read the built site waited out the
    # publish (over a minute), which shares that lock with the builds.
    lock = tmp_path / "project.lock"
    assert once_per_run(tmp_path, "site", lambda _: {"made": 1}, lock=lock) == {"made": 1}
    context = multiprocessing.get_context("fork")
    holding, release = context.Event(), context.Event()
    maker = context.Process(target=_hold, args=(str(lock), holding, release))
    maker.start()
    try:
        assert holding.wait(30), "the other maker took the lock"
        start = time.monotonic()
        assert once_per_run(tmp_path, "site", lambda _: pytest.fail("made twice"), lock=lock) == {"made": 1}
        # The other maker holds the lock for up to two minutes: the old read waited all of it.
        assert time.monotonic() - start < 20, "the record was read only once the other maker let the lock go"
    finally:
        release.set()
        maker.join(30)


def test_made_ahead_makes_in_order_what_the_runs_tests_use() -> None:
    """The site first, then the publish, then ProperDocs; only those some test of the run uses."""
    uses = [SimpleNamespace(fixturenames=names) for names in (["properdocs_site"], ["tmp_path"], ["built_site"])]
    assert made_ahead_names(uses) == ["built_site", "properdocs_site"]
    uses.append(SimpleNamespace(fixturenames=["published", "built_site"]))
    assert made_ahead_names(uses) == ["built_site", "published", "properdocs_site"]
    assert made_ahead_names([SimpleNamespace(fixturenames=["tmp_path"])]) == [], "a run that needs none makes none"


def test_the_tests_of_what_is_made_last_come_last_otherwise_in_their_order() -> None:
    items = [
        SimpleNamespace(name=name, fixturenames=fixtures)
        for name, fixtures in [
            ("pdf", ["published"]),
            ("page", ["built_site"]),
            ("pages-alike", ["properdocs_site", "built_site"]),
            ("unit", []),
            ("edition", ["published"]),
        ]
    ]
    assert [item.name for item in late_last(items)] == ["page", "unit", "pdf", "pages-alike", "edition"]


def test_a_test_that_asks_first_makes_it_and_the_background_maker_reads_it_then_goes_on(tmp_path: Path) -> None:
    """`made_ahead`'s thread and a test's fixture share the lock and the records: each record is made once."""
    lock = tmp_path / "project.lock"
    made: list[str] = []
    first_started, let_first_end = threading.Event(), threading.Event()

    def slow_site(_: Path) -> dict[str, Any]:
        first_started.set()
        assert let_first_end.wait(30)
        made.append("site")
        return {"made": "site"}

    def publish(_: Path) -> dict[str, Any]:
        made.append("publish")
        return {"made": "publish"}

    def failing(_: Path) -> dict[str, Any]:
        raise RuntimeError("a build that raised")

    maker = threading.Thread(
        target=make_ahead,
        args=(tmp_path, [("site", slow_site), ("broken", failing), ("publish", publish)], lock),
        daemon=True,
    )
    maker.start()
    assert first_started.wait(30)
    asked: list[dict[str, Any]] = []
    asker = threading.Thread(target=lambda: asked.append(once_per_run(tmp_path, "site", slow_site, lock=lock)))
    asker.start()
    time.sleep(0.2)
    assert not asked, "the test waits on the lock while the background maker makes what it asked for"
    let_first_end.set()
    maker.join(30)
    asker.join(30)
    assert asked == [{"made": "site"}] and made == ["site", "publish"], "each made once, in order"
    assert not (tmp_path / "broken.json").exists(), "one that raised records nothing, and the next is still made"


def test_one_waiting_on_a_maker_that_goes_on_to_make_more_reads_its_record_as_soon_as_it_is_written(
    tmp_path: Path,
) -> None:
    """`made_ahead` keeps making under the lock (the site, then the publish): the site's first reader, waiting
    on the lock alone, waited out the publish and ProperDocs too (398 s in make test)."""
    lock = tmp_path / "project.lock"
    site_asked, publish_done = threading.Event(), threading.Event()

    def site(_: Path) -> dict[str, Any]:
        assert site_asked.wait(30)
        time.sleep(0.5)  # the reader is waiting now
        return {"made": "site"}

    def publish(_: Path) -> dict[str, Any]:
        assert publish_done.wait(60), "the reader never got the site while the publish was being made"
        return {"made": "publish"}

    maker = threading.Thread(target=make_ahead, args=(tmp_path, [("site", site), ("publish", publish)], lock))
    maker.start()
    try:
        while not (tmp_path / "project.lock").exists():
            time.sleep(0.01)
        site_asked.set()
        start = time.monotonic()
        assert once_per_run(tmp_path, "site", lambda _: pytest.fail("made twice"), lock=lock) == {"made": "site"}
        assert time.monotonic() - start < 20
    finally:
        publish_done.set()
        maker.join(30)
    assert json.loads((tmp_path / "publish.json").read_text(encoding="utf-8")) == {"made": "publish"}
