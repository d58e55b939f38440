"""A durable record of ingest jobs, so that an accepted upload survives a crash.

Each job is one JSON file `<job id>.json` in the journal folder (`.jobs` inside the
upload folder). `save` writes it atomically and durably (a temporary file, fsync,
rename, fsync of the folder): after a crash the file holds either the old record
or the new one, never a torn one. The server saves a job before it answers 202,
after each file, and when it ends; on start it loads every record (`load_all`)
and resumes the unfinished ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

JOURNAL_FOLDER = ".jobs"
"""The journal's folder inside the upload folder (hidden: never ingested itself)."""

_JOB_ID = re.compile(r"[0-9a-f]{32}")


class JobJournal:
    """The job records in `folder` (created on first save)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, record: dict[str, Any]) -> None:
        """Write `record` (a job's JSON, with its id under "job") durably; raises
        `OSError` when it cannot (leaving the previous record, if any)."""
        job_id = record["job"]
        if not _JOB_ID.fullmatch(job_id):
            raise ValueError(f"not a job id: {job_id!r}")
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / f"{job_id}.json"
        temporary = self.folder / f".{job_id}.tmp"
        data = json.dumps(record, ensure_ascii=False).encode("utf-8")
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

    def load_all(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first (by `created`, then id); unreadable
        or torn files are skipped."""
        records = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            if not _JOB_ID.fullmatch(path.stem):
                continue
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and record.get("job") == path.stem:
                records.append(record)
        return sorted(records, key=lambda record: (str(record.get("created")), record["job"]))

    def delete(self, job_id: str) -> None:
        """Forget a job's record (nothing happens when there is none)."""
        if _JOB_ID.fullmatch(job_id):
            with contextlib.suppress(FileNotFoundError):
                (self.folder / f"{job_id}.json").unlink()

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
