"""Background ingest of uploaded files.

`JobManager.submit` queues the files of one upload as a `Job`; one worker thread
runs the jobs in order (an index takes one writer at a time anyway), each with
its own `Index` (its own store connection), and records per-file progress that
`GET /v1/jobs/{id}` reports.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from quoteproof.model import DEFAULT_COLLECTION

if TYPE_CHECKING:
    from quoteproof.index import Index
    from quoteproof.ingest.pipeline import IngestResult, IngestSettings

JobState = Literal["queued", "running", "done", "failed"]
MAX_KEPT_JOBS = 1000
"""Finished jobs kept for polling; the oldest are forgotten beyond this."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class FileResult:
    """What happened to one file of a job (`status` as in `IngestResult`)."""

    path: str
    status: str
    error: str | None = None
    doc_id: str | None = None
    version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "error": self.error,
            "doc_id": self.doc_id,
            "version": self.version,
        }


@dataclass
class Job:
    """One upload being ingested. Read it through `snapshot` (another thread
    updates it)."""

    id: str
    collection: str
    paths: tuple[str, ...]
    user: str | None = None
    state: JobState = "queued"
    created: str = field(default_factory=_now)
    finished: str | None = None
    results: list[FileResult] = field(default_factory=list)
    error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def total(self) -> int:
        return len(self.paths)

    def snapshot(self) -> dict[str, Any]:
        """The job as JSON: `{"job", "state", "collection", "total", "done",
        "results": [{"path", "status", "error", "doc_id", "version"}], "error",
        "created", "finished"}`."""
        with self._lock:
            return {
                "job": self.id,
                "state": self.state,
                "collection": self.collection,
                "total": self.total,
                "done": len(self.results),
                "results": [r.to_dict() for r in self.results],
                "error": self.error,
                "created": self.created,
                "finished": self.finished,
            }

    def _set(self, state: JobState, error: str | None = None) -> None:
        with self._lock:
            self.state = state
            if error is not None:
                self.error = error
            if state in ("done", "failed"):
                self.finished = _now()

    def _add(self, result: IngestResult) -> None:
        with self._lock:
            self.results.append(
                FileResult(result.path, result.status, result.error, result.doc_id, result.version)
            )


def ingest_into(
    index: Index,
    paths: Sequence[Path],
    collection: str,
    embed: bool | None,
    settings: IngestSettings | None,
    on_file: Callable[[IngestResult], None],
) -> None:
    """Ingest `paths` into `collection` of `index`, calling `on_file` per result."""
    index.ingest(paths, settings=settings, on_file=on_file, embed=embed, collection=collection)


class JobManager:
    """Runs ingest jobs one after another on a worker thread.

    `open_index` opens a fresh `Index` for each job (closed when the job ends);
    `embed` and `settings` are passed to `Index.ingest` (`embed` None: embed when
    the dense extra is installed).
    """

    def __init__(
        self,
        open_index: Callable[[], Index],
        embed: bool | None = None,
        settings: IngestSettings | None = None,
    ) -> None:
        self._open_index = open_index
        self._embed = embed
        self._settings = settings
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quoteproof-ingest")

    def submit(
        self, paths: Sequence[Path], collection: str = DEFAULT_COLLECTION, user: str | None = None
    ) -> Job:
        """Queue the ingest of `paths` into `collection`; return the job at once."""
        job = Job(uuid.uuid4().hex, collection, tuple(str(p) for p in paths), user)
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > MAX_KEPT_JOBS:
                self._jobs.popitem(last=False)
        self._executor.submit(self._run, job, list(paths))
        return job

    def get(self, job_id: str) -> Job | None:
        """Return the job with `job_id`, or None (unknown or forgotten)."""
        with self._lock:
            return self._jobs.get(job_id)

    def shutdown(self) -> None:
        """Finish the queued jobs and stop the worker thread."""
        self._executor.shutdown(wait=True)

    def _run(self, job: Job, paths: list[Path]) -> None:
        job._set("running")
        try:
            with self._open_index() as index:
                ingest_into(index, paths, job.collection, self._embed, self._settings, job._add)
        except Exception as exc:  # reported to whoever polls the job
            job._set("failed", f"{type(exc).__name__}: {exc}")
        else:
            job._set("done")
