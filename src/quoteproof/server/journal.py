"""A durable record of ingest jobs, so that an accepted upload survives a crash
and every server process sharing the index sees every job.

Each job is one JSON file `<job id>.json` in the journal folder (`.jobs` inside the
upload folder). `save` writes it atomically and durably (a temporary file, fsync,
rename, fsync of the folder): after a crash the file holds either the old record
or the new one, never a torn one. The server saves a job before it answers 202,
after each file, and when it ends; on start it loads every record (`load_all`)
and resumes the unfinished ones it can `claim`.

With `shared` (the index's store, as each thread opens it) every record is also
kept in the index database (the setting `job:<id>`), so `load` finds a job that
another server process, on this host or another sharing the database, accepted.
The files of an upload stay on the host that accepted it, which ingests them.

Several processes may share one journal folder (`serve --workers N`): a process
ingests a job only while it holds the job's lock (`claim`: an exclusive `flock` on
`<job id>.lock`, which the operating system releases when the process dies, even
by SIGKILL), so a job is resumed by one process only, and never while the process
that accepted it still runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from quoteproof.store.base import Store

JOURNAL_FOLDER = ".jobs"
"""The journal's folder inside the upload folder (hidden: never ingested itself)."""

_JOB_ID = re.compile(r"[0-9a-f]{32}")


def job_setting(job_id: str) -> str:
    """The index setting under which the shared record of job `job_id` is kept."""
    return f"job:{job_id}"


class JobJournal:
    """The job records in `folder` (created on first save), and in the database of
    `shared()` when given (see the module docstring)."""

    def __init__(self, folder: Path, shared: Callable[[], Store] | None = None) -> None:
        self.folder = folder
        self._shared = shared
        self._claims: dict[str, IO[bytes]] = {}

    def save(self, record: dict[str, Any]) -> None:
        """Write `record` (a job's JSON, with its id under "job") durably, then to
        the shared database; raises `OSError` when the file cannot be written
        (leaving the previous record, if any), `StoreError` when the database
        cannot."""
        job_id = record["job"]
        if not _JOB_ID.fullmatch(job_id):
            raise ValueError(f"not a job id: {job_id!r}")
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / f"{job_id}.json"
        temporary = self.folder / f".{job_id}.tmp"
        text = json.dumps(record, ensure_ascii=False)
        data = text.encode("utf-8")
        try:
            with temporary.open("wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except OSError:
            temporary.unlink(missing_ok=True)  # e.g. the disk is full: leave no torn file
            raise
        self._sync_folder()
        if self._shared is not None:
            self._shared().put_setting(job_setting(job_id), text)

    def load(self, job_id: str) -> dict[str, Any] | None:
        """The record of job `job_id`: from this folder, else from the shared
        database; None when neither holds a readable one."""
        if not _JOB_ID.fullmatch(job_id):
            return None
        with contextlib.suppress(OSError):
            found = _record(job_id, (self.folder / f"{job_id}.json").read_text(encoding="utf-8"))
            if found is not None:
                return found
        if self._shared is None:
            return None
        text = self._shared().get_setting(job_setting(job_id))
        return _record(job_id, text) if text is not None else None

    def claim(self, job_id: str) -> bool:
        """Take the lock of job `job_id` for this process (held until `release`);
        False when another process (or another claim here) holds it."""
        if job_id in self._claims:
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        lock = (self.folder / f"{job_id}.lock").open("ab")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return False
        self._claims[job_id] = lock
        return True

    def release(self, job_id: str) -> None:
        """Give up the lock `claim` took (nothing happens without one)."""
        lock = self._claims.pop(job_id, None)
        if lock is not None:
            lock.close()

    def release_all(self) -> None:
        """Give up every lock this journal holds (the server stops)."""
        for job_id in list(self._claims):
            self.release(job_id)

    def load_all(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first (by `created`, then id); unreadable
        or torn files are skipped."""
        records = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            if not _JOB_ID.fullmatch(path.stem):
                continue
            try:
                record = _record(path.stem, path.read_text(encoding="utf-8"))
            except OSError:
                continue
            if record is not None:
                records.append(record)
        return sorted(records, key=lambda record: (str(record.get("created")), record["job"]))

    def delete(self, job_id: str) -> None:
        """Forget a job's record and its lock, here and in the shared database
        (nothing happens when there is none)."""
        if not _JOB_ID.fullmatch(job_id):
            return
        self.release(job_id)
        for name in (f"{job_id}.json", f"{job_id}.lock"):
            with contextlib.suppress(FileNotFoundError):
                (self.folder / name).unlink()
        if self._shared is not None:
            self._shared().delete_setting(job_setting(job_id))

    def _sync_folder(self) -> None:
        """Make the rename itself durable (where the platform allows it)."""
        try:
            descriptor = os.open(self.folder, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(descriptor)
        except OSError:
            pass
        finally:
            os.close(descriptor)


def _record(job_id: str, text: str) -> dict[str, Any] | None:
    """The record of job `job_id` that `text` holds, or None when it is torn or
    another job's."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) and record.get("job") == job_id else None
