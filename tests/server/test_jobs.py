"""Background ingest: jobs of different keys take turns, a file that parses too long
neither holds back other keys' uploads nor the server's stop, and a job stopped
halfway resumes from the journal."""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from helpers.parsing import HANG, hang_on_marker
from quoteproof.errors import StoreError
from quoteproof.index import Index
from quoteproof.server.job_queue import FairQueue, Job
from quoteproof.server.jobs import JobManager
from quoteproof.server.journal import JobJournal
from quoteproof.store.base import Store


def job(user: str, *names: str) -> Job:
    return Job(f"{user}-{len(names)}", "default", names, user)


def test_keys_take_turns_file_by_file() -> None:
    queue = FairQueue()
    big = job("alice", "a1", "a2", "a3", "a4")
    small = job("bob", "b1")
    queue.add(big, big.paths)
    queue.add(small, small.paths)
    taken = []
    while (item := queue.take(Counter())) is not None:
        taken.append(item[1])
    assert taken == ["a1", "b1", "a2", "a3", "a4"]


def test_a_key_with_a_file_in_progress_waits_its_turn() -> None:
    queue = FairQueue()
    first, second = job("alice", "a1", "a2"), job("alice", "c1")
    other = job("bob", "b1", "b2")
    for queued in (first, second, other):
        queue.add(queued, queued.paths)
    # alice's jobs take turns too; while alice has a file in progress, bob goes first
    assert queue.take(Counter()) == (first, "a1")
    assert queue.take(Counter({"alice": 1})) == (other, "b1")
    assert queue.take(Counter({"alice": 1, "bob": 1})) == (second, "c1")
    queue.drop(first)
    assert queue.take(Counter()) == (other, "b2")
    assert queue.take(Counter()) is None and not queue


def make_files(folder: Path, **texts: str) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the jobs did not get there"
        time.sleep(0.05)


def test_a_file_that_never_finishes_holds_back_no_other_key_and_resumes_after_stop(
    tmp_path: Path,
) -> None:
    index_dir = tmp_path / "index"
    Index.open(index_dir, create=True).close()
    files = make_files(
        tmp_path / "uploads",
        slow=f"{HANG.decode()}: a file whose parse never ends in this test.",
        later="Alice's second file is about kingfishers.",
        quick="Bob's file is about otters.",
    )
    journal = JobJournal(tmp_path / "uploads" / ".jobs")

    def open_index() -> Index:
        return Index.open(index_dir)

    manager = JobManager(open_index, journal, embed=False, workers=2, parse=hang_on_marker)
    manager.start()
    slow = manager.submit([files["slow"], files["later"]], user="alice")
    quick = manager.submit([files["quick"]], user="bob")
    wait_until(lambda: quick.state == "done" and len(slow.results) == 1)
    assert [r.status for r in quick.results] == ["added"]
    assert slow.state == "running" and [r.path for r in slow.results] == [str(files["later"])]

    manager.shutdown()  # kills the parse in progress: no child process is left
    assert multiprocessing.active_children() == []
    (record,) = [r for r in journal.load_all() if r["job"] == slow.id]
    assert record["state"] == "running" and len(record["results"]) == 1

    resumed = JobManager(open_index, journal, embed=False)  # the ordinary parser
    resumed.start()
    try:
        assert resumed.wait_idle(60)
        again = resumed.get(slow.id)
        assert again is not None and again.state == "done"
        assert sorted(r.path for r in again.results) == sorted(
            [str(files["slow"]), str(files["later"])]
        )
        assert [r.status for r in again.results] == ["added", "added"]
    finally:
        resumed.shutdown()
    with Index.open(index_dir) as index:
        for path in files.values():
            assert index.store.latest_version(str(path)) == 1  # each stored exactly once


def test_a_parse_past_the_budget_fails_and_the_job_goes_on(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    Index.open(index_dir, create=True).close()
    files = make_files(tmp_path / "uploads", slow=HANG.decode(), fine="A fine file on herons.")
    manager = JobManager(
        lambda: Index.open(index_dir),
        JobJournal(tmp_path / "uploads" / ".jobs"),
        embed=False,
        workers=1,
        parse_timeout_s=1,
        parse=hang_on_marker,
    )
    manager.start()
    try:
        submitted = manager.submit([files["slow"], files["fine"]], user="alice")
        assert manager.wait_idle(60)
        assert submitted.state == "done"
        assert [(r.status, r.error) for r in submitted.results] == [
            ("failed", "parsing took longer than 1 s (the limit)"),
            ("added", None),
        ]
    finally:
        manager.shutdown()


def test_processes_sharing_a_journal_resume_only_jobs_no_process_holds(tmp_path: Path) -> None:
    """Two managers over one journal folder and index are two server processes
    (`serve --workers 2`); a third journal folder over the same index is another
    host. A job is ingested by the manager that accepted it, seen by all, and
    resumed by a manager started after the one holding it stopped."""
    index_dir = tmp_path / "index"
    Index.open(index_dir, create=True).close()
    files = make_files(tmp_path / "uploads", note="A note about herons.")
    hold = tmp_path / "hold"
    hold.touch()
    opened: list[Index] = []
    local = threading.local()

    def store() -> Store:
        if not hasattr(local, "index"):
            local.index = Index.open(index_dir)
            opened.append(local.index)
        return local.index.store

    def manager(folder: str, hold: Path | None = None) -> JobManager:
        journal = JobJournal(tmp_path / folder / ".jobs", shared=store)
        started = JobManager(lambda: Index.open(index_dir), journal, False, hold=hold)
        started.start()
        return started

    accepting = manager("uploads", hold)
    try:
        job_id = accepting.submit([files["note"]], "default", "alice").id
        sibling = manager("uploads")
        elsewhere = manager("elsewhere")
        try:
            for other in (sibling, elsewhere):
                seen = other.get(job_id)
                assert seen is not None and seen.state == "queued"
                assert other.wait_idle(1)  # it does not take the job over
                assert getattr(other.get(job_id), "state", None) == "queued"
        finally:
            sibling.shutdown()
            elsewhere.shutdown()
    finally:
        accepting.shutdown()  # stopped while held: the job is still queued
    hold.unlink()
    restarted = manager("uploads")
    try:
        assert restarted.wait_idle(60)
        done = restarted.get(job_id)
        assert done is not None and done.state == "done"
        assert [result.status for result in done.results] == ["added"]
    finally:
        restarted.shutdown()
        for index in opened:
            with contextlib.suppress(StoreError):  # another thread's: the GC closes it
                index.close()
