"""The records a SQL store keeps beside its documents, written once for both
databases (`SQLRecords`, the base of `sql_store.SQLStore`): index-wide settings,
the audit log (appended through `audit_chain.append_entry`) and API keys."""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from quoteproof.errors import StoreError
from quoteproof.store.audit_chain import AUDIT_COLUMNS, append_entry, audit_from_row
from quoteproof.store.base import ApiKey, AuditEntry, NewEntry, setting_key
from quoteproof.store.sql import Cursor

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["SQLRecords", "record"]

_KEY_COLUMNS = "key_id, name, secret_sha256, collections, created, revoked"

Record = TypeVar("Record", bound="DataclassInstance")


def record(kind: type[Record], row: Any, /, **given: Any) -> Record:
    """The dataclass `kind` with the fields in `given` taken from there (values the
    row holds in another form or column), each other field read from `row` by its
    name."""
    read = (field.name for field in dataclasses.fields(kind) if field.name not in given)
    return kind(**{name: row[name] for name in read}, **given)


class SQLRecords(ABC):
    """Settings, the audit log and API keys over a SQL database; the dialect supplies
    running SQL (`_run`) and its write transaction (`_write`)."""

    _CODE_POINT_ORDER: ClassVar[str]
    """The clause after a text column in ORDER BY that orders it by code point."""

    _INSERT_ORDER: ClassVar[str]
    """The `api_keys` column that orders keys as they were added."""

    _TAKEN: ClassVar[type[Exception]]
    """The driver's error for an insert whose unique key is taken."""

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        """Run `sql` (with `?` marks) with `params`, in the current transaction if any."""

    @abstractmethod
    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run `sql` (with `?` marks) once for each of `rows`."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[None]:
        """One write transaction that queues writers of every process, committed when
        the block ends, rolled back whole when it raises."""

    def get_setting(self, name: str) -> str | None:
        """Return an index-wide setting, or None when it was never set."""
        row = self._run("SELECT value FROM meta WHERE key = ?", (setting_key(name),)).fetchone()
        return str(row["value"]) if row is not None else None

    def put_setting(self, name: str, value: str) -> None:
        """Store an index-wide setting, replacing any earlier value."""
        with self._write():
            self._run(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (setting_key(name), value),
            )

    def delete_setting(self, name: str) -> None:
        """Forget an index-wide setting (nothing happens when it was never set)."""
        with self._write():
            self._run("DELETE FROM meta WHERE key = ?", (setting_key(name),))

    def append_audit(self, new: NewEntry, key: bytes | None = None) -> AuditEntry:
        """Append `new` to the audit log (`audit_chain.append_entry`, signed with
        `key` when given) in one write transaction. Raises StoreError when its
        `entry_id` is already taken."""
        try:
            with self._write():
                return append_entry(self._run, new, key)
        except self._TAKEN as exc:
            raise StoreError(f"audit entry {new.entry_id!r} cannot be added: {exc}") from exc

    def audit_entries(self, after_seq: int = 0, limit: int | None = None) -> list[AuditEntry]:
        """Return the audit entries with `seq > after_seq`, in order, at most `limit`."""
        sql = f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq"
        params: tuple[int, ...] = (after_seq,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (max(limit, 0),)
        return [audit_from_row(row) for row in self._run(sql, params).fetchall()]

    def get_audit_entry(self, entry_id: str) -> AuditEntry | None:
        """Return the audit entry with the public id `entry_id`, or None."""
        row = self._run(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE entry_id = ?", (entry_id,)
        ).fetchone()
        return audit_from_row(row) if row is not None else None

    def add_api_key(self, key: ApiKey) -> None:
        """Store a new API key; raise StoreError when its `key_id` is taken."""
        try:
            with self._write():
                self._run(
                    f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?,?,?,?,?,?)",
                    (
                        key.key_id,
                        key.name,
                        key.secret_sha256,
                        json.dumps(list(key.collections), ensure_ascii=False),
                        key.created,
                        key.revoked,
                    ),
                )
        except self._TAKEN as exc:
            raise StoreError(f"API key {key.key_id!r} cannot be added: {exc}") from exc

    def _key(self, row: Any) -> ApiKey:
        """The key of a row of `_KEY_COLUMNS`."""
        return dataclasses.replace(
            record(ApiKey, row),
            collections=tuple(json.loads(row["collections"])),
            revoked=bool(row["revoked"]),
        )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """Return the key with `key_id` (revoked ones too), or None."""
        row = self._run(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,)
        ).fetchone()
        return self._key(row) if row is not None else None

    def list_api_keys(self) -> list[ApiKey]:
        """Return every key, oldest first."""
        rows = self._run(
            f"SELECT {_KEY_COLUMNS} FROM api_keys "
            f"ORDER BY created{self._CODE_POINT_ORDER}, {self._INSERT_ORDER}"
        ).fetchall()
        return [self._key(row) for row in rows]

    def revoke_api_key(self, key_id: str) -> bool:
        """Mark a key revoked; False when there is no such key."""
        with self._write():
            cursor = self._run("UPDATE api_keys SET revoked = TRUE WHERE key_id = ?", (key_id,))
        return cursor.rowcount > 0
