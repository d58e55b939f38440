"""Version numbers of stored documents: one rule for ingest (chunk labels) and stores.

A source path's versions are numbered 1, 2, 3...: a new version gets the newest
stored number plus one, retired versions included, so a number is never reused
and a retired document ingested again continues where it stopped. The ingest
pipeline labels chunks with the number (`v2`) that the store then stores them
under, both computed by `next_version`.
"""

from __future__ import annotations

from quoteproof.errors import StoreError
from quoteproof.store.refs import doc_id_candidates
from quoteproof.store.sql import Execute

__all__ = ["latest_version", "new_version_key", "next_version"]


def next_version(latest: int | None) -> int:
    """The number of the next version of a source path whose newest stored version,
    current or retired, is `latest` (None: never stored): `latest + 1`, or 1."""
    return 1 if latest is None else latest + 1


def latest_version(execute: Execute, source_path: str) -> int | None:
    """The newest version number stored for `source_path`, retired or not; None when
    the path was never stored."""
    row = execute(
        "SELECT max(version) AS version FROM documents WHERE source_path = ?", (source_path,)
    ).fetchone()
    return None if row is None or row["version"] is None else int(row["version"])


def new_version_key(execute: Execute, source_path: str) -> tuple[str, int]:
    """The document id and version number the next version of `source_path` is stored
    under: the path's own id and `next_version` of its newest version, or, for a new
    path, the shortest id of `doc_id_candidates` no other path holds, and 1.

    Call it inside the store's write transaction, so no other writer takes the
    number or the id before the version is written. Raises StoreError when every
    candidate id is taken.
    """
    row = execute(
        "SELECT doc_id, version FROM documents WHERE source_path = ? ORDER BY version DESC LIMIT 1",
        (source_path,),
    ).fetchone()
    if row is not None:
        return str(row["doc_id"]), next_version(int(row["version"]))
    for candidate in doc_id_candidates(source_path):
        taken = execute("SELECT 1 FROM documents WHERE doc_id = ? LIMIT 1", (candidate,))
        if taken.fetchone() is None:
            return candidate, next_version(None)
    raise StoreError(f"cannot allocate a document id for {source_path}")
