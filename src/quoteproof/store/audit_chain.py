"""The audit log's rules, the same in every store: hash chaining, the head setting,
append-only.

Each entry's hash covers the previous entry's hash and every field of the entry
(`audit_hash`), so changing, removing or reordering an entry changes every later
hash; the head (last seq and hash) is kept as the index setting
`AUDIT_HEAD_SETTING`, so cutting entries off the end shows too. Stores refuse any
change to a stored entry with the message `AUDIT_APPEND_ONLY` (their triggers) and
append through `append_entry`, inside their write transaction.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from quoteproof.model import sha256_text
from quoteproof.store.base import AuditEntry, setting_key
from quoteproof.store.sql import Execute

__all__ = [
    "AUDIT_APPEND_ONLY",
    "AUDIT_COLUMNS",
    "AUDIT_HEAD_SETTING",
    "GENESIS_HASH",
    "append_entry",
    "audit_from_row",
    "audit_hash",
]

AUDIT_HEAD_SETTING = "audit_head"
"""The index setting holding the log's head: `"{seq}:{hash}"` of the last entry."""

AUDIT_APPEND_ONLY = "the audit log is append-only"
"""The message of the error raised by any change to a stored audit entry."""

AUDIT_COLUMNS = 'seq, entry_id, time, "user", collections, body, prev_hash, hash'
"""The columns of the `audit_log` table, in the order of `AuditEntry`'s fields."""

GENESIS_HASH = "0" * 64
"""The `prev_hash` of the first entry."""


def audit_hash(
    prev_hash: str,
    seq: int,
    entry_id: str,
    time: str,
    user: str | None,
    collections: tuple[str, ...],
    body: str,
) -> str:
    """The chain hash of an audit entry: SHA-256 of the canonical JSON array of the
    previous hash and every field of the entry, so changing any field (or the order
    of entries) changes every later hash."""
    canonical = json.dumps(
        [prev_hash, seq, entry_id, time, user, list(collections), body],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return sha256_text(canonical)


def audit_from_row(row: Any) -> AuditEntry:
    """The entry of an `audit_log` row read by column name (`AUDIT_COLUMNS`)."""
    values = {field.name: row[field.name] for field in dataclasses.fields(AuditEntry)}
    values["collections"] = tuple(json.loads(values["collections"]))
    return AuditEntry(**values)


def append_entry(
    execute: Execute,
    entry_id: str,
    time: str,
    user: str | None,
    collections: tuple[str, ...],
    body: str,
) -> AuditEntry:
    """Append one entry to the log: the last entry's `seq` plus one (1 for an empty
    log), chained to its hash (`GENESIS_HASH` for the first), and record the new head
    as the setting `AUDIT_HEAD_SETTING`.

    Call it inside the store's write transaction, which makes the read of the last
    entry and both writes one atomic step: concurrent appends get distinct, gapless
    numbers. A taken `entry_id` makes the insert fail with the driver's integrity
    error, for the store to report.
    """
    last = execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1", ()).fetchone()
    seq, prev_hash = (last["seq"] + 1, last["hash"]) if last is not None else (1, GENESIS_HASH)
    collections = tuple(collections)
    chained = audit_hash(prev_hash, seq, entry_id, time, user, collections, body)
    entry = AuditEntry(seq, entry_id, time, user, collections, body, prev_hash, chained)
    execute(
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
        (
            entry.seq,
            entry.entry_id,
            entry.time,
            entry.user,
            json.dumps(list(entry.collections), ensure_ascii=False),
            entry.body,
            entry.prev_hash,
            entry.hash,
        ),
    )
    execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (setting_key(AUDIT_HEAD_SETTING), f"{entry.seq}:{entry.hash}"),
    )
    return entry
