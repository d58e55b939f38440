"""Background ingest of uploaded files: durable, fair, and stoppable at once.

`JobManager.submit` records the files of one upload as a `Job` in the journal
(`journal.JobJournal`) before it returns, so a job the server accepted is ingested
even if the server is killed: on start every unfinished job resumes with the files
it had not stored yet, and finished jobs stay readable through `get`.

One scheduler thread owns the index (one writer at a time) and a few parse
workers (`ingest.parse_worker.ParseWorker`: each file in a child process the
operating system limits by the file's size). It takes files one at a
time in turn across API keys and their jobs (`job_queue.FairQueue`), so a large upload does
not hold back another key's small one; a file whose parse runs past its memory,
CPU-time or clock budget is stopped and fails with that cause. Each file is
stored in one transaction (the index never holds half a document). `shutdown`
kills the parses in progress: their files are still pending in the journal and are
ingested on the next start.

Several server processes may share one index (`serve --workers N`, or hosts
sharing a PostgreSQL database): each ingests the jobs it accepted, holding their
locks (`JobJournal.claim`), and `get` finds the others' jobs in the journal.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
import warnings
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing import Pipe
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING

from quoteproof.errors import StoreError
from quoteproof.ingest.parse_worker import ParseFunction, ParseWorker
from quoteproof.ingest.parsing import IngestSettings, Parsed, parse_and_chunk
from quoteproof.ingest.pipeline import IngestResult, PendingFile, prepare_file, store_parsed
from quoteproof.model import DEFAULT_COLLECTION
from quoteproof.server.job_queue import FairQueue, Job, JobState, job_from_record
from quoteproof.server.journal import JobJournal

if TYPE_CHECKING:
    from quoteproof.index import Index

MAX_KEPT_JOBS = 1000
"""Finished jobs kept for polling; the oldest are forgotten beyond this."""

DEFAULT_PARSE_WORKERS = 2
"""Files parsed at the same time (each in its own process)."""

DEFAULT_PARSE_TIMEOUT_S = 600.0
"""Longest one file may take to parse before it fails (less for a file whose limits
allow less: `ingest.parse_limits`)."""

HOLD_POLL_S = 0.1
"""How often a held scheduler looks whether the hold was lifted."""


class _Stopping(Exception):
    """Raised inside the index's embedding when the server stops."""


@dataclass
class _InFlight:
    """A file a worker is parsing."""

    job: Job
    pending: PendingFile


class JobManager:
    """Runs ingest jobs on a scheduler thread with parse worker processes, from
    `start` to `shutdown`.

    `open_index` opens the `Index` the scheduler writes to (kept open until
    `shutdown`); `embed` and `settings` are as for `Index.ingest` (`embed` None:
    embed when the dense extra is installed). `journal` keeps the jobs across
    restarts: the unfinished ones it holds resume at once. `workers` files are
    parsed at the same time, each for at most `parse_timeout_s` seconds. `parse`
    runs in the workers (`parse_and_chunk`). `hold` is for tests: while that file
    exists, no new file is started. `on_end` is told of each job once, with the
    state it ends in (done or failed), just before the job shows that state.
    """

    def __init__(
        self,
        open_index: Callable[[], Index],
        journal: JobJournal,
        embed: bool | None = None,
        settings: IngestSettings | None = None,
        *,
        workers: int = DEFAULT_PARSE_WORKERS,
        parse_timeout_s: float = DEFAULT_PARSE_TIMEOUT_S,
        parse: ParseFunction = parse_and_chunk,
        hold: Path | None = None,
        on_end: Callable[[Job, JobState], None] | None = None,
    ) -> None:
        self._open_index = open_index
        self._journal = journal
        self._embed = embed
        self._settings = settings or IngestSettings()
        self._hold = hold
        self._on_end = on_end
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._queue = FairQueue()
        self._to_finish: deque[Job] = deque()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when a job ends
        self._stopping = threading.Event()
        self._wake_reader, self._wake_writer = Pipe(duplex=False)
        self._workers = [ParseWorker(parse, parse_timeout_s) for _ in range(max(1, workers))]
        self._in_flight: dict[ParseWorker, _InFlight] = {}
        self._index: Index | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Load the journal (unfinished jobs resume) and start the scheduler thread."""
        with self._lock:
            self._resume()
        self._thread = threading.Thread(target=self._run, name="quoteproof-ingest", daemon=True)
        self._thread.start()

    def submit(
        self, paths: Sequence[Path], collection: str = DEFAULT_COLLECTION, user: str | None = None
    ) -> Job:
        """Record the ingest of `paths` into `collection` in the journal and queue
        it; return the job (its record is durable when this returns)."""
        job = Job(uuid.uuid4().hex, collection, tuple(str(p) for p in paths), user)
        self._journal.claim(job.id)
        try:
            self._journal.save(job.record())
        except BaseException:
            with contextlib.suppress(OSError, StoreError):
                self._journal.delete(job.id)  # no half-recorded job resumes later
            raise
        with self._lock:
            self._jobs[job.id] = job
            self._queue.add(job, job.paths)
            self._forget_old_jobs()
        self._wake()
        return job

    def get(self, job_id: str) -> Job | None:
        """Return the job with `job_id`, or None (unknown or forgotten): one of this
        process, else as the journal last recorded it (another process's job)."""
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None else job_from_record(self._journal.load(job_id))

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no job is queued or running; return False if `timeout` seconds
        passed first."""
        with self._idle:
            return self._idle.wait_for(self._is_idle, timeout)

    def _is_idle(self) -> bool:
        return all(job.state in ("done", "failed") for job in self._jobs.values())

    def shutdown(self) -> None:
        """Stop at once: parses in progress are killed and embedding stops after its
        current block; unfinished jobs stay in the journal and resume on the next
        start."""
        self._stopping.set()
        self._wake()
        if self._thread is not None:
            self._thread.join()
        self._journal.release_all()
        self._wake_reader.close()
        self._wake_writer.close()

    # --- the scheduler thread ---

    def _resume(self) -> None:
        """Load the journal: unfinished jobs that no other process holds go back in
        the queue (lock held)."""
        for record in self._journal.load_all():
            job = job_from_record(record)
            if job is None:
                continue  # a record this version cannot read: left alone
            if job.state in ("queued", "running"):
                if not self._journal.claim(job.id):
                    continue  # another process ingests it
                job = job_from_record(self._journal.load(job.id)) or job  # as it is now
                if job.state not in ("queued", "running"):
                    self._journal.release(job.id)
            self._jobs[job.id] = job
            if job.state in ("queued", "running"):
                pending = job.pending()
                if pending:
                    self._queue.add(job, pending)
                else:
                    self._to_finish.append(job)
        self._forget_old_jobs()

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._finish_jobs()
                self._dispatch()
                self._wait_and_collect()
        finally:
            for worker in self._workers:
                worker.kill()
            if self._index is not None:
                with contextlib.suppress(Exception):
                    self._index.close()

    def _index_now(self) -> Index:
        if self._index is None:
            self._index = self._open_index()
        return self._index

    def _held(self) -> bool:
        return self._hold is not None and self._hold.exists()

    def _dispatch(self) -> None:
        """Start files on the idle workers, in turn (see `FairQueue`)."""
        for worker in self._workers:
            while worker.busy_since is None and not self._held():
                with self._lock:
                    busy = Counter(item.job.user or "" for item in self._in_flight.values())
                    taken = self._queue.take(busy)
                if taken is None:
                    return
                job, path = taken
                self._start_file(worker, job, Path(path))

    def _start_file(self, worker: ParseWorker, job: Job, path: Path) -> None:
        """Read `path` and hand it to `worker`, or record at once a file that is
        unchanged or cannot be read."""
        if job.state == "queued":
            job.set_state("running")
        try:
            settings = replace(self._settings, collection=job.collection)
            pending = prepare_file(self._index_now().store, path, settings)
        except Exception as exc:  # reported to whoever polls the job
            self._fail(job, exc)
            return
        if isinstance(pending, IngestResult):
            self._record(job, pending)
            return
        try:
            worker.start(pending.raw, path, settings)
        except Exception as exc:  # no parse process could start: reported likewise
            self._fail(job, exc)
            return
        with self._lock:
            self._in_flight[worker] = _InFlight(job, pending)

    def _wait_and_collect(self) -> None:
        """Wait for a parse to end, a parse to run out of time, a new job or a stop;
        store what ended."""
        busy = [w for w in self._workers if w.busy_since is not None]
        now = time.monotonic()
        timeout = max(0.0, min(w.deadline for w in busy) - now) if busy else None
        if self._held() and self._queue:
            timeout = HOLD_POLL_S if timeout is None else min(timeout, HOLD_POLL_S)
        waited = [self._wake_reader, *(worker.connection for worker in busy)]
        ready = wait([c for c in waited if c is not None], timeout)
        while self._wake_reader.poll():
            self._wake_reader.recv_bytes()
        if self._stopping.is_set():
            return
        for worker in busy:
            if worker.connection not in ready and time.monotonic() < worker.deadline:
                continue
            outcome = worker.result()  # past the deadline: killed, and the cause says so
            with self._lock:
                item = self._in_flight.pop(worker)
            self._store(item, outcome)

    def _store(self, item: _InFlight, outcome: Parsed | str) -> None:
        job = item.job
        if job.state == "failed":
            return
        try:
            settings = replace(self._settings, collection=job.collection)
            result = store_parsed(self._index_now().store, item.pending, outcome, settings)
        except Exception as exc:  # reported to whoever polls the job
            self._fail(job, exc)
            return
        self._record(job, result)

    def _record(self, job: Job, result: IngestResult) -> None:
        """Add a file's result to its job and the journal; a job with every file
        done is finished next."""
        self._publish(job, lambda: job.add_result(result))
        if len(job.results) == job.total:
            self._to_finish.append(job)

    def _finish_jobs(self) -> None:
        """Embed and re-estimate after each job whose files are all stored."""
        while self._to_finish and not self._stopping.is_set():
            job = self._to_finish[0]
            changed = any(result.status in ("added", "updated") for result in job.results)
            try:
                self._index_now().after_ingest(changed, self._embed, self._check_stop)
            except _Stopping:
                return  # still "running" in the journal: finished on the next start
            except Exception as exc:  # reported to whoever polls the job
                self._to_finish.popleft()
                self._fail(job, exc)
                continue
            self._to_finish.popleft()
            self._end(job, "done")

    def _publish(self, job: Job, change: Callable[[], None]) -> None:
        """Make `change` to `job` and record it (`_save`) before anyone reads the job
        again: a job is never seen ahead of its record, so another process reading
        the journal learns what this one answers."""
        with job._lock:
            change()
            self._save(job)

    def _save(self, job: Job) -> None:
        """Record `job` in the journal from the scheduler thread. A journal that
        cannot be written stops nothing: the job goes on, and after a restart its
        files not recorded are tried again (and found unchanged)."""
        try:
            self._journal.save(job.record())
        except (OSError, StoreError) as exc:
            warnings.warn(f"ingest job {job.id} not recorded in the journal: {exc}", stacklevel=2)

    def _check_stop(self, _embedded: int) -> None:
        if self._stopping.is_set():
            raise _Stopping

    def _fail(self, job: Job, exc: Exception) -> None:
        with self._lock:
            self._queue.drop(job)
        self._end(job, "failed", f"{type(exc).__name__}: {exc}")

    def _end(self, job: Job, state: JobState, error: str | None = None) -> None:
        """End `job` in `state`: tell `on_end`, set the state and record it
        (`_publish`), release its journal lock, wake waiters."""
        if self._on_end is not None:
            self._on_end(job, state)
        self._publish(job, lambda: job.set_state(state, error))
        self._journal.release(job.id)
        with self._idle:
            self._idle.notify_all()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_writer.send_bytes(b"!")

    def _forget_old_jobs(self) -> None:
        """Forget the oldest finished jobs beyond `MAX_KEPT_JOBS` (with the lock held)."""
        excess = len(self._jobs) - MAX_KEPT_JOBS
        for job_id in [j.id for j in self._jobs.values() if j.state in ("done", "failed")]:
            if excess <= 0:
                break
            del self._jobs[job_id]
            self._journal.delete(job_id)
            excess -= 1
