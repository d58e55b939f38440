"""What storing a document does to its source path's versions: one rule, decided
once, inside the store's write transaction (`decide_version`).

A source path's versions are numbered 1, 2, 3...: a new version gets the newest
stored number plus one, retired versions included, so a number is never reused
and a retired document ingested again continues where it stopped. Storing a text
the current version already holds changes nothing (`unchanged`); any other text
becomes a new version (`added` for the path's first, `updated` for a later one),
and the version that was current is retired. Chunk labels name the version
(`v2`): they are made, with the number decided here, in the same transaction
(`base.NewDocument.chunks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from quoteproof.errors import StoreError
from quoteproof.store.refs import doc_id_candidates
from quoteproof.store.sql import Execute

__all__ = ["VersionDecision", "VersionOutcome", "decide_version", "latest_version"]

VersionOutcome = Literal["added", "updated", "unchanged"]
"""What storing a document did: a path's first version, a later one, or nothing."""


@dataclass(frozen=True)
class VersionDecision:
    """What storing a text under a source path does: keep the current version
    `doc_id`/`version` (`outcome` "unchanged"), or store a new version under
    `doc_id` and `version`, retiring the version `retires` that was current (None:
    none was)."""

    outcome: VersionOutcome
    doc_id: str
    version: int
    retires: int | None = None


def decide_version(execute: Execute, source_path: str, text_sha256: str) -> VersionDecision:
    """The one version rule: what storing a text with SHA-256 `text_sha256` under
    `source_path` does.

    Unchanged when the path's current version holds that text; otherwise a new
    version numbered the newest stored one (retired included) plus one, or 1, under
    the path's document id, or for a new path the shortest id of
    `doc_id_candidates` no other path holds; it retires the current version.

    Call it inside the store's write transaction, so no other writer stores a
    version, or takes the id, between the decision and the write. Raises StoreError
    when every candidate id is taken.
    """
    current = execute(
        "SELECT doc_id, version, sha256 FROM documents "
        "WHERE source_path = ? AND is_current = TRUE ORDER BY version DESC LIMIT 1",
        (source_path,),
    ).fetchone()
    if current is not None and current["sha256"] == text_sha256:
        return VersionDecision("unchanged", str(current["doc_id"]), int(current["version"]))
    retires = None if current is None else int(current["version"])
    newest = execute(
        "SELECT doc_id, version FROM documents WHERE source_path = ? ORDER BY version DESC LIMIT 1",
        (source_path,),
    ).fetchone()
    if newest is not None:
        version = int(newest["version"]) + 1
        return VersionDecision("updated", str(newest["doc_id"]), version, retires)
    for candidate in doc_id_candidates(source_path):
        if execute("SELECT 1 FROM documents WHERE doc_id = ? LIMIT 1", (candidate,)).fetchone():
            continue
        return VersionDecision("added", candidate, 1)
    raise StoreError(f"cannot allocate a document id for {source_path}")


def latest_version(execute: Execute, source_path: str) -> int | None:
    """The newest version number stored for `source_path`, retired or not; None when
    the path was never stored."""
    row = execute(
        "SELECT max(version) AS version FROM documents WHERE source_path = ?", (source_path,)
    ).fetchone()
    return None if row is None or row["version"] is None else int(row["version"])
