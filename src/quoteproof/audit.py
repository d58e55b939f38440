"""The audit log: every answer shown, kept append-only and hash-chained in the index.

An entry records who asked (`user`), when, over which collections, and the whole
answer JSON: the question, the retrieval results (`sources`, `retrieval`), every
prompt and raw model output (`calls`, `llm.raw_output`) and the resolved answer
with its quote receipts. Each entry's hash covers the previous entry's hash, and
the store keeps the head (last seq and hash), so `verify_log` finds any entry that
was edited, deleted, reordered or cut off the end.

Visibility: an answer asked with a collection scope is visible to principals that
may see every one of those collections; an answer asked over the whole index (no
scope: the CLI, a server without authentication) is recorded with the collection
`*` and is visible only to unscoped principals (as is an entry with an empty scope,
which the service never records).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.model import Answer, RecordedAnswer
from quoteproof.store.audit_chain import AUDIT_HEAD_SETTING, GENESIS_HASH, audit_hash
from quoteproof.store.base import AuditEntry, Store

if TYPE_CHECKING:
    from quoteproof.index import Index

__all__ = [
    "ALL_COLLECTIONS",
    "AUDIT_HEAD_SETTING",
    "LogCheck",
    "answer_of",
    "export_lines",
    "list_entries",
    "record_answer",
    "verify_log",
    "visible_to",
]

ALL_COLLECTIONS = "*"
_PAGE = 500


def record_answer(
    index: Index,
    answer: Answer,
    *,
    user: str | None,
    collections: Collection[str] | None,
) -> AuditEntry:
    """Append `answer` to the audit log of `index` and return the new entry.

    `collections` is the scope the question was asked over (None: the whole index).
    """
    scope = tuple(sorted(collections)) if collections is not None else (ALL_COLLECTIONS,)
    body = json.dumps(answer_to_dict(answer), ensure_ascii=False, sort_keys=True)
    time = datetime.now(UTC).isoformat(timespec="milliseconds")
    return index.store.append_audit(uuid.uuid4().hex, time, user, scope, body)


def visible_to(entry: AuditEntry, collections: Collection[str] | None) -> bool:
    """True when a principal scoped to `collections` (None: unscoped) may see `entry`:
    an unscoped one sees every entry; a scoped one only entries asked over some
    collections, all of them its own (never an entry with no scope or the `*` scope)."""
    if collections is None:
        return True
    scope = set(entry.collections)
    return bool(scope) and ALL_COLLECTIONS not in scope and scope <= set(collections)


def _all_entries(store: Store) -> Iterator[AuditEntry]:
    """Every entry in order, read a page at a time."""
    after = 0
    while True:
        page = store.audit_entries(after_seq=after, limit=_PAGE)
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].seq


def list_entries(
    store: Store, collections: Collection[str] | None, limit: int = 100
) -> list[AuditEntry]:
    """The newest `limit` entries visible to a principal scoped to `collections`,
    newest first."""
    visible = [entry for entry in _all_entries(store) if visible_to(entry, collections)]
    return visible[::-1][:limit]


def answer_of(entry: AuditEntry) -> RecordedAnswer:
    """The answer recorded in `entry`, its quotes claims to check with
    `receipts.verify_recorded` before they are shown. Raises ValueError when the
    body is not a valid answer."""
    return answer_from_dict(json.loads(entry.body))


@dataclass(frozen=True)
class LogCheck:
    """The verdict on the audit log: intact when `problems` is empty."""

    entries: int
    head: str
    problems: tuple[str, ...]

    @property
    def intact(self) -> bool:
        """True when no entry was edited, deleted, reordered or cut off."""
        return not self.problems


def verify_log(store: Store) -> LogCheck:
    """Recompute the hash chain of the whole log and compare it with the stored
    head. O(size of the log)."""
    problems: list[str] = []
    previous, expected_seq, count = GENESIS_HASH, 1, 0
    for entry in _all_entries(store):
        count += 1
        if entry.seq != expected_seq:
            problems.append(f"entries {expected_seq}..{entry.seq - 1} are missing (deleted?)")
        if entry.prev_hash != previous:
            problems.append(f"entry {entry.seq}: does not follow the entry before it")
        recomputed = audit_hash(
            entry.prev_hash,
            entry.seq,
            entry.entry_id,
            entry.time,
            entry.user,
            entry.collections,
            entry.body,
        )
        if recomputed != entry.hash:
            problems.append(f"entry {entry.seq} ({entry.entry_id}): content was changed")
        previous, expected_seq = entry.hash, entry.seq + 1
    head = store.get_setting(AUDIT_HEAD_SETTING)
    last = f"{expected_seq - 1}:{previous}"
    if count and head != last:
        problems.append(f"the log ends at {last} but its recorded head is {head} (cut off?)")
    if not count and head is not None:
        problems.append(f"the log is empty but its recorded head is {head} (deleted?)")
    return LogCheck(count, previous, tuple(problems))


def export_lines(store: Store) -> Iterator[str]:
    """One JSON line per entry, in order: its chain fields and the recorded answer."""
    for entry in _all_entries(store):
        record: dict[str, Any] = {
            "seq": entry.seq,
            "id": entry.entry_id,
            "time": entry.time,
            "user": entry.user,
            "collections": list(entry.collections),
            "prev_hash": entry.prev_hash,
            "hash": entry.hash,
            "answer": json.loads(entry.body),
        }
        yield json.dumps(record, ensure_ascii=False)
