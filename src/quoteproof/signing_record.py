"""The signing record: kept beside the audit key, it names each index whose audit log
the key signs, and the first entry of that log it signed.

Everything inside an index can be rewritten by whoever can write its database,
signatures included: they can be removed, and the log re-hashed as one written before
entries were signed. Only what lies outside the database tells such a log apart from
a real one of that time. The record is that: a file the key's holder writes when the
key first signs an entry of an index (`record_answer`), kept where the key is (same
folder, same permissions), which `audit.verify_log` reads; from the entry it names on,
an unsigned entry or head is a rewrite, not an old log. Entries before it are the log
as it was before signing began, covered by that entry's signature through the chain.

The file is `<key file>.signed` (`audit.key.signed`), mode 0600: one JSON line per
index, `{"index", "first_signed", "time"}`, appended, never rewritten. An index is
named by its location: the resolved directory of a SQLite index, the URL (password
masked) of a PostgreSQL one; an index moved or copied elsewhere is not named by the
record of its old place.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from quoteproof.errors import StoreError
from quoteproof.store.open import is_postgres_url

__all__ = ["first_signed", "record_first_signed", "record_path"]


def record_path(key_path: Path) -> Path:
    """The signing record of the audit key at `key_path`: `<key file>.signed`."""
    return key_path.with_name(key_path.name + ".signed")


def _index_name(location: str) -> str:
    """How the record names the index at `location` (see the module docstring)."""
    return location if is_postgres_url(location) else str(Path(location).resolve())


def first_signed(key_path: Path, location: str) -> int | None:
    """The first entry of the log of the index at `location` that the key at
    `key_path` signed, as its record says; None when the record does not name the
    index (or there is no record). Raises StoreError when the record cannot be read
    or holds a line that is not a record line (naming the file and line)."""
    path = record_path(key_path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read the signing record {path}: {exc}") from exc
    name = _index_name(location)
    found: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            index, seq = data["index"], data["first_signed"]
            if not isinstance(index, str) or not isinstance(seq, int) or seq < 1:
                raise ValueError("expected a string index and an entry number >= 1")
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{path}:{number}: not a signing record line: {exc}") from exc
        if index == name:
            found.append(seq)
    return min(found, default=None)


def record_first_signed(key_path: Path, location: str, seq: int) -> None:
    """Record that the key at `key_path` signed entry `seq` of the log of the index at
    `location` first: one line appended to its record (made 0600 when missing),
    flushed to disk. Several processes recording at once each append a line; the
    lowest entry counts. Raises StoreError when the record cannot be written."""
    path = record_path(key_path)
    line = json.dumps(
        {
            "index": _index_name(location),
            "first_signed": seq,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        },
        ensure_ascii=False,
    )
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())
    except OSError as exc:
        raise StoreError(f"cannot write the signing record {path}: {exc}") from exc
