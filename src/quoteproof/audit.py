"""The audit log: every answer shown, kept append-only, hash-chained and signed in
the index.

An entry records who asked (`user`), when, over which collections, and the whole
answer JSON: the question, the retrieval results (`sources`, `retrieval`), every
prompt and raw model output (`calls`, `llm.raw_output`) and the resolved answer
with its quote receipts. Each entry's hash covers the previous entry's hash, and
the store keeps the head (last seq and hash), so `verify_log` finds any entry that
was edited, deleted, reordered or cut off the end by accident. Against someone who
can write the database, entries and head are signed with the operator's key
(`audit_key`, kept outside the index): without it, no entry can be changed, added
or re-hashed, nor the head moved back, unnoticed; and since the signing record
beside the key (`signing_record`) says from which entry on the key signs an index's
log, removing the signatures does not pass the log off as one written before
signing began. What the key cannot show, the wholesale removal of the newest
entries together with an older head and its signature (saved from an earlier look
at the database), a witness shows: checkpoints (`Checkpoint`: number of entries and head hash) that
the operator exports to a file kept elsewhere (`append_witness`) and `verify_log`
checks the log against.

Visibility: an answer asked with a collection scope is visible to principals that
may see every one of those collections; an answer asked over the whole index (no
scope: the CLI, a server without authentication) is recorded with the collection
`*` and is visible only to unscoped principals (as is an entry with an empty scope,
which the service never records).
"""

from __future__ import annotations

import hmac
import json
import os
import uuid
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.errors import UsageError
from quoteproof.model import Answer, RecordedAnswer
from quoteproof.seal import canonical_json
from quoteproof.signing_record import first_signed, record_first_signed
from quoteproof.store.audit_chain import (
    AUDIT_HEAD_SETTING,
    GENESIS_HASH,
    audit_hash,
    entry_signature,
    head_signature,
    parse_head,
)
from quoteproof.store.base import AuditEntry, NewEntry, Store

if TYPE_CHECKING:
    from quoteproof.index import Index

__all__ = [
    "ALL_COLLECTIONS",
    "AUDIT_HEAD_SETTING",
    "Checkpoint",
    "LogCheck",
    "all_entries",
    "answer_of",
    "append_witness",
    "export_lines",
    "list_entries",
    "read_witness",
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
    """Append `answer` to the audit log of `index`, signed with its audit key
    (`Index.signing_key`, made on first use), and return the new entry.

    `collections` is the scope the question was asked over (None: the whole index).
    Raises StoreError when the key cannot be read or made, or its signing record
    (`signing_record`) cannot be read or written.
    """
    scope = tuple(sorted(collections)) if collections is not None else (ALL_COLLECTIONS,)
    body = canonical_json(answer_to_dict(answer))
    time = _now()
    key = index.signing_key()
    entry = index.store.append_audit(NewEntry(uuid.uuid4().hex, time, user, scope, body), key)
    _record_signing(index, entry.seq)
    return entry


def _record_signing(index: Index, seq: int) -> None:
    """Record beside the audit key the first entry it signed in this index's log
    (`signing_record`), unless recorded already: an index signed before the record
    existed is recorded with its first signed entry, not entry `seq`."""
    key_path, location = index.audit_key_path, index.store.location
    if first_signed(key_path, location) is None:
        record_first_signed(key_path, location, _first_signed_entry(index.store, seq))


def _first_signed_entry(store: Store, seq: int) -> int:
    """The first signed entry of the log, entry `seq` (signed) at the latest; read
    one entry at a time, so a log signed from its start costs one read."""
    after = 0
    while after < seq:
        (entry,) = store.audit_entries(after_seq=after, limit=1)
        if entry.signature is not None:
            return entry.seq
        after = entry.seq
    return seq


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def visible_to(entry: AuditEntry, collections: Collection[str] | None) -> bool:
    """True when a principal scoped to `collections` (None: unscoped) may see `entry`:
    an unscoped one sees every entry; a scoped one only entries asked over some
    collections, all of them its own (never an entry with no scope or the `*` scope)."""
    if collections is None:
        return True
    scope = set(entry.collections)
    return bool(scope) and ALL_COLLECTIONS not in scope and scope <= set(collections)


def all_entries(store: Store) -> Iterator[AuditEntry]:
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
    visible = [entry for entry in all_entries(store) if visible_to(entry, collections)]
    return visible[::-1][:limit]


def answer_of(entry: AuditEntry) -> RecordedAnswer:
    """The answer recorded in `entry`, its quotes claims to check with
    `receipts.verify_recorded` before they are shown. Raises ValueError when the
    body is not a valid answer."""
    return answer_from_dict(json.loads(entry.body))


@dataclass(frozen=True)
class Checkpoint:
    """A head exported to a witness file: how many entries the log had, the hash of
    the last one, and when it was exported (ISO 8601 UTC)."""

    entries: int
    head: str
    time: str


@dataclass(frozen=True)
class LogCheck:
    """The verdict on the audit log: intact when `problems` is empty; `notes` say
    what was not checked, and why that is no problem (unsigned entries written
    before entries were signed, the witness used)."""

    entries: int
    head: str
    problems: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        """True when no entry was edited, added, deleted, reordered or cut off."""
        return not self.problems

    def checkpoint(self) -> Checkpoint:
        """This log's head as a checkpoint made now, to export to a witness."""
        return Checkpoint(self.entries, self.head, _now())


def _span(seqs: Sequence[int]) -> str:
    """`3` or `1..5`: the entries from the first of `seqs` to the last."""
    return str(seqs[0]) if len(seqs) == 1 else f"{seqs[0]}..{seqs[-1]}"


@dataclass
class _Verifier:
    """The checks of `verify_log`, entry by entry, then the head and the witness."""

    key: bytes | None
    witness: Sequence[Checkpoint]
    signed_from: int | None  # the signing record's first signed entry of this log
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    previous: str = GENESIS_HASH
    count: int = 0
    last: AuditEntry | None = None
    legacy: list[int] = field(default_factory=list)  # unsigned, before any signed one
    first_signed: int | None = None
    unchecked: int = 0
    seen: set[int] = field(default_factory=set)  # checkpoint entries met in the log

    def entry(self, entry: AuditEntry) -> None:
        """Check one entry: its place in the chain, its hash, its signature, and
        the checkpoints that name it."""
        expected = self.last.seq + 1 if self.last is not None else 1
        self.count += 1
        if entry.seq != expected:
            self.problems.append(f"entries {expected}..{entry.seq - 1} are missing (deleted?)")
        if entry.prev_hash != self.previous:
            self.problems.append(f"entry {entry.seq}: does not follow the entry before it")
        fields = (entry.seq, entry.entry_id, entry.time, entry.user, entry.collections, entry.body)
        if audit_hash(entry.prev_hash, *fields) != entry.hash:
            self.problems.append(f"entry {entry.seq} ({entry.entry_id}): content was changed")
        self._signature(entry)
        for checkpoint in self.witness:
            if checkpoint.entries == entry.seq:
                self.seen.add(entry.seq)
                if checkpoint.head != entry.hash:
                    self.problems.append(
                        f"entry {entry.seq} is not the one exported to the witness at "
                        f"{checkpoint.time} (rewritten?)"
                    )
        self.previous, self.last = entry.hash, entry

    def _signature(self, entry: AuditEntry) -> None:
        if entry.signature is None:
            if self.signed_from is not None and entry.seq >= self.signed_from:
                self.problems.append(
                    f"entry {entry.seq} ({entry.entry_id}): not signed, though the audit "
                    f"key has signed this log since entry {self.signed_from} (its signing "
                    "record says so): its signature was removed, or it was added without "
                    "the key"
                )
            elif self.first_signed is None:
                self.legacy.append(entry.seq)
            else:
                self.problems.append(
                    f"entry {entry.seq} ({entry.entry_id}): not signed, though entry "
                    f"{self.first_signed} before it is (added without the audit key?)"
                )
            return
        if self.first_signed is None:
            self.first_signed = entry.seq
        if self.key is None:
            self.unchecked += 1
        elif not hmac.compare_digest(entry.signature, entry_signature(self.key, entry.hash)):
            self.problems.append(
                f"entry {entry.seq} ({entry.entry_id}): the signature does not match "
                "(changed or re-hashed without the audit key, or signed with another key)"
            )

    def head(self, recorded: str | None) -> None:
        """Check the recorded head against the last entry, and its signature."""
        if self.last is None:
            if recorded is not None:
                self.problems.append(
                    f"the log is empty but its recorded head is {recorded} (deleted?)"
                )
            return
        last = f"{self.last.seq}:{self.last.hash}"
        if recorded is None:
            self.problems.append(f"the log ends at {last} but has no recorded head (deleted?)")
            return
        head = parse_head(recorded)
        if head is None or f"{head.seq}:{head.hash}" != last:
            self.problems.append(
                f"the log ends at {last} but its recorded head is {recorded} (cut off?)"
            )
        if head is None:
            return
        if head.signature is None:
            if self.first_signed is not None:
                self.problems.append(
                    f"the recorded head is not signed, though entry {self.first_signed} "
                    "is (moved without the audit key?)"
                )
            elif self.signed_from is not None and self.last.seq >= self.signed_from:
                self.problems.append(
                    "the recorded head is not signed, though the audit key has signed this "
                    f"log since entry {self.signed_from} (its signing record says so)"
                )
        elif self.key is None:
            self.unchecked += 1
        elif not hmac.compare_digest(head.signature, head_signature(self.key, head.seq, head.hash)):
            self.problems.append(
                "the signature of the recorded head does not match "
                "(moved without the audit key, or signed with another key)"
            )

    def finish(self) -> LogCheck:
        """The verdict, with the checkpoints the log does not reach and the notes."""
        if self.signed_from is not None and (self.last is None or self.last.seq < self.signed_from):
            self.problems.append(
                f"entry {self.signed_from}, the first the audit key signed in this log (its "
                "signing record says so), is missing (entries deleted or cut off)"
            )
        for checkpoint in self.witness:
            if checkpoint.entries > 0 and checkpoint.entries not in self.seen:
                self.problems.append(
                    f"entry {checkpoint.entries}, the head exported to the witness at "
                    f"{checkpoint.time}, is missing (entries deleted or cut off)"
                )
        if self.unchecked:
            self.problems.append(
                f"{self.unchecked} signatures were not checked: the audit key is missing"
            )
        if self.legacy and self.first_signed is not None:
            self.notes.append(
                f"entries {_span(self.legacy)} are unsigned (written before entries were "
                f"signed); the signature of entry {self.first_signed} covers them through "
                "the chain"
            )
        elif self.legacy:
            self.notes.append(
                f"none of the {self.count} entries is signed, and the signing record beside "
                "the audit key names no signed entry of this index: written before entries "
                "were signed (or the index was moved from where the key signed it); the "
                "chain shows accidental damage, not a rewrite by someone who can write the "
                "database (a witness would show that)"
            )
        if self.witness:
            latest = max(self.witness, key=lambda checkpoint: checkpoint.entries)
            self.notes.append(
                f"checked against {len(self.witness)} exported head(s), the latest at "
                f"entry {latest.entries} ({latest.time})"
            )
        elif self.first_signed is not None:
            self.notes.append(
                "not checked against a witness file (heads saved with `audit head "
                "--export FILE` where the index's writers cannot change them, then "
                "`audit verify --witness FILE`): without one, a log deleted whole, or "
                "cut back to an earlier signed state, would not show"
            )
        return LogCheck(self.count, self.previous, tuple(self.problems), tuple(self.notes))


def verify_log(
    store: Store,
    key: bytes | None = None,
    witness: Sequence[Checkpoint] = (),
    signed_from: int | None = None,
) -> LogCheck:
    """Recompute the hash chain of the whole log, check every signature with `key`
    (None: signatures cannot be checked, a problem when there are any) and the
    recorded head, and check the log against the `witness` checkpoints: each names
    an entry that must still be there with the hash it had.

    `signed_from` is the first entry the key signed in this log, as its signing
    record says (`signing_record.first_signed`; None: not recorded): from it on,
    every entry and the head must be signed and the log must reach it. Unsigned
    entries before the first signed one are the log as it was before signing began.
    O(size of the log)."""
    verifier = _Verifier(key, witness, signed_from)
    for entry in all_entries(store):
        verifier.entry(entry)
    verifier.head(store.get_setting(AUDIT_HEAD_SETTING))
    return verifier.finish()


def read_witness(path: Path) -> list[Checkpoint]:
    """The checkpoints in the witness file at `path` (JSON lines, `append_witness`),
    none when there is no such file. Raises UsageError naming the line of a bad one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the witness: {exc}") from exc
    checkpoints = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            entries, head, time = data["entries"], data["head"], data["time"]
            if not isinstance(entries, int) or entries < 0:
                raise ValueError("entries must be a whole number")
            if not isinstance(head, str) or not isinstance(time, str):
                raise ValueError("head and time must be strings")
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{number}: not a witness checkpoint: {exc}") from exc
        checkpoints.append(Checkpoint(entries, head, time))
    return checkpoints


def append_witness(path: Path, checkpoint: Checkpoint, location: str) -> None:
    """Append `checkpoint` of the index at `location` to the witness file at `path`
    (made when missing) as one JSON line, flushed to disk."""
    record = {
        "entries": checkpoint.entries,
        "head": checkpoint.head,
        "time": checkpoint.time,
        "index": location,
    }
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(record, ensure_ascii=False) + "\n")
        file.flush()
        os.fsync(file.fileno())


def export_lines(store: Store) -> Iterator[str]:
    """One JSON line per entry, in order: its chain fields and the recorded answer."""
    for entry in all_entries(store):
        record: dict[str, Any] = {
            "seq": entry.seq,
            "id": entry.entry_id,
            "time": entry.time,
            "user": entry.user,
            "collections": list(entry.collections),
            "prev_hash": entry.prev_hash,
            "hash": entry.hash,
            "signature": entry.signature,
            "answer": json.loads(entry.body),
        }
        yield json.dumps(record, ensure_ascii=False)
