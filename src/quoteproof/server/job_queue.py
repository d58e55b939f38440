"""The records of background ingest: a `Job` (one upload, as the journal keeps it
and the API shows it), the `FileResult` of each of its files, and the `FairQueue`
that hands the files out to parse in turn across API keys and their jobs
(`jobs.JobManager` runs them)."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from quoteproof.ingest.pipeline import IngestResult

JobState = Literal["queued", "running", "done", "failed"]


def _now() -> str:
    """The time now, ISO 8601 UTC to the second."""
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileResult:
        """The result `to_dict` gave."""
        return cls(data["path"], data["status"], data["error"], data["doc_id"], data["version"])


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
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

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

    def record(self) -> dict[str, Any]:
        """The job as the journal keeps it: `snapshot` plus its user and files."""
        return {**self.snapshot(), "user": self.user, "paths": list(self.paths)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Job:
        """The job a journal `record` describes."""
        return cls(
            id=record["job"],
            collection=record["collection"],
            paths=tuple(record["paths"]),
            user=record.get("user"),
            state=record["state"],
            created=record["created"],
            finished=record.get("finished"),
            results=[FileResult.from_dict(r) for r in record.get("results", ())],
            error=record.get("error"),
        )

    def pending(self) -> list[str]:
        """The files without a result yet, in upload order."""
        with self._lock:
            done = {result.path for result in self.results}
        return [path for path in self.paths if path not in done]

    def set_state(self, state: JobState, error: str | None = None) -> None:
        """Move the job to `state` (with `error`, when given); a finished job records
        when it finished."""
        with self._lock:
            self.state = state
            if error is not None:
                self.error = error
            if state in ("done", "failed"):
                self.finished = _now()

    def add_result(self, result: IngestResult) -> None:
        """Record what happened to one of the job's files."""
        with self._lock:
            self.results.append(
                FileResult(result.path, result.status, result.error, result.doc_id, result.version)
            )


class FairQueue:
    """Files waiting to be parsed, handed out in turn: API keys (users) take turns,
    each key's jobs take turns, one file at a time, each job's files in order."""

    def __init__(self) -> None:
        self._users: OrderedDict[str, deque[Job]] = OrderedDict()
        self._files: dict[str, deque[str]] = {}

    def __bool__(self) -> bool:
        return bool(self._users)

    def add(self, job: Job, paths: Sequence[str]) -> None:
        """Queue `paths` of `job` (after those of the jobs queued before)."""
        if not paths:
            return
        self._files[job.id] = deque(paths)
        self._users.setdefault(job.user or "", deque()).append(job)

    def take(self, busy: Counter[str]) -> tuple[Job, str] | None:
        """The next file and its job: from the first key in turn with no file in
        progress (`busy`: files in progress per key), else the first key in turn;
        None when nothing waits."""
        if not self._users:
            return None
        user = next((name for name in self._users if not busy[name]), next(iter(self._users)))
        jobs = self._users[user]
        job = jobs.popleft()
        files = self._files[job.id]
        path = files.popleft()
        if files:
            jobs.append(job)
        else:
            del self._files[job.id]
        if jobs:
            self._users.move_to_end(user)
        else:
            del self._users[user]
        return job, path

    def drop(self, job: Job) -> None:
        """Forget the files of `job` still waiting."""
        if self._files.pop(job.id, None) is None:
            return
        user = job.user or ""
        jobs = self._users[user]
        jobs.remove(job)
        if not jobs:
            del self._users[user]


def job_from_record(record: dict[str, Any] | None) -> Job | None:
    """The job a journal record describes, or None (no record, or one this version
    cannot read)."""
    if record is None:
        return None
    try:
        return Job.from_record(record)
    except (KeyError, TypeError, ValueError):
        return None
