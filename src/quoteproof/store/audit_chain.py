"""The audit log's rules, the same in every store: hash chaining, signatures, the
head setting, append-only.

Each entry's hash covers the previous entry's hash and every field of the entry
(`audit_hash`), so changing, removing or reordering an entry changes every later
hash; the head (last seq and hash) is kept as the index setting
`AUDIT_HEAD_SETTING`, so cutting entries off the end shows too. Stores refuse any
change to a stored entry with the message `AUDIT_APPEND_ONLY` (their triggers) and
append through `append_entry`, inside their write transaction.

The hash alone proves nothing to someone who can write the database: anyone can
recompute it. So an entry appended with the operator's key (kept outside the
index, `quoteproof.audit_key`) also carries `entry_signature`, an HMAC-SHA256 of
its hash, and the head carries `head_signature`: without the key, an entry cannot
be changed, added or re-hashed, nor the head moved, unnoticed (`audit.verify_log`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from typing import Any

from quoteproof.model import sha256_text
from quoteproof.store.base import AuditEntry, NewEntry, setting_key
from quoteproof.store.sql import Execute

__all__ = [
    "AUDIT_APPEND_ONLY",
    "AUDIT_COLUMNS",
    "AUDIT_HEAD_SETTING",
    "GENESIS_HASH",
    "AuditHead",
    "append_entry",
    "audit_from_row",
    "audit_hash",
    "entry_signature",
    "head_signature",
    "head_value",
    "keyed_signature",
    "parse_head",
]

AUDIT_HEAD_SETTING = "audit_head"
"""The index setting holding the log's head: `"{seq}:{hash}"` of the last entry,
followed by `":{head_signature}"` when it was appended with a key (`head_value`)."""

AUDIT_APPEND_ONLY = "the audit log is append-only"
"""The message of the error raised by any change to a stored audit entry."""

AUDIT_COLUMNS = 'seq, entry_id, time, "user", collections, body, prev_hash, hash, signature'
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


def keyed_signature(key: bytes, *parts: str) -> str:
    """HMAC-SHA256 under `key` (hex) of `parts` joined by NUL; the first part names
    what is signed (its domain), so a signature of one kind never passes for another."""
    return hmac.new(key, "\x00".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


def entry_signature(key: bytes, entry_hash: str) -> str:
    """The signature of the entry whose chain hash is `entry_hash`: HMAC-SHA256 under
    `key` (hex). The hash covers the entry and, through the chain, all before it."""
    return keyed_signature(key, "quoteproof-audit-entry", entry_hash)


def head_signature(key: bytes, seq: int, entry_hash: str) -> str:
    """The signature of the head `seq:entry_hash`: HMAC-SHA256 under `key` (hex), in
    a domain of its own, so an entry's signature never passes for a head's."""
    return keyed_signature(key, "quoteproof-audit-head", str(seq), entry_hash)


@dataclasses.dataclass(frozen=True)
class AuditHead:
    """The recorded head of the log: the last entry's seq and hash, and the head's
    signature (None when it was appended without a key)."""

    seq: int
    hash: str
    signature: str | None


def head_value(seq: int, entry_hash: str, key: bytes | None) -> str:
    """The `AUDIT_HEAD_SETTING` value for the head `seq:entry_hash`, signed with `key`
    when one is given."""
    value = f"{seq}:{entry_hash}"
    return value if key is None else f"{value}:{head_signature(key, seq, entry_hash)}"


def parse_head(value: str) -> AuditHead | None:
    """The head recorded as `value` (`head_value`), or None when it is malformed."""
    parts = value.split(":")
    if len(parts) not in (2, 3) or not parts[0].isdigit():
        return None
    return AuditHead(int(parts[0]), parts[1], parts[2] if len(parts) == 3 else None)


def audit_from_row(row: Any) -> AuditEntry:
    """The entry of an `audit_log` row read by column name (`AUDIT_COLUMNS`)."""
    values = {field.name: row[field.name] for field in dataclasses.fields(AuditEntry)}
    values["collections"] = tuple(json.loads(values["collections"]))
    return AuditEntry(**values)


def append_entry(execute: Execute, new: NewEntry, key: bytes | None = None) -> AuditEntry:
    """Append one entry to the log: the last entry's `seq` plus one (1 for an empty
    log), chained to its hash (`GENESIS_HASH` for the first), and record the new head
    as the setting `AUDIT_HEAD_SETTING`. With `key`, the entry and the head are
    signed (`entry_signature`, `head_signature`).

    Call it inside the store's write transaction, which makes the read of the last
    entry and both writes one atomic step: concurrent appends get distinct, gapless
    numbers. A taken `entry_id` makes the insert fail with the driver's integrity
    error, for the store to report.
    """
    last = execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1", ()).fetchone()
    seq, prev_hash = (last["seq"] + 1, last["hash"]) if last is not None else (1, GENESIS_HASH)
    new = new._replace(collections=tuple(new.collections))
    chained = audit_hash(prev_hash, seq, *new)
    signature = entry_signature(key, chained) if key is not None else None
    entry = AuditEntry(seq, *new, prev_hash, chained, signature)
    execute(
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            entry.seq,
            entry.entry_id,
            entry.time,
            entry.user,
            json.dumps(list(entry.collections), ensure_ascii=False),
            entry.body,
            entry.prev_hash,
            entry.hash,
            entry.signature,
        ),
    )
    execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (setting_key(AUDIT_HEAD_SETTING), head_value(entry.seq, entry.hash, key)),
    )
    return entry
