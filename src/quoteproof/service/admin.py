"""`Admin`: what an index's operator does that no principal's view shows: API keys
(create, list, revoke, and authenticating a request's key) and the audit log as a
whole (verify it, export its head to a witness file, export every entry).

The CLI's `keys` and `audit` commands and the server's authentication go through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from quoteproof.audit import LogCheck, append_witness, export_lines, read_witness, verify_log
from quoteproof.audit_key import read_audit_key
from quoteproof.index import Index
from quoteproof.keys import ALL_COLLECTIONS, authenticate, create_key
from quoteproof.service.opened import OpenedIndex
from quoteproof.service.principal import Principal
from quoteproof.signing_record import first_signed
from quoteproof.store.base import ApiKey

__all__ = ["Admin", "LogReport"]


@dataclass(frozen=True)
class LogReport:
    """The verdict on an audit log (`check`) and, when no audit key was found to
    check its signatures with, where it was looked for (`missing_key`)."""

    check: LogCheck
    missing_key: Path | None


class Admin(OpenedIndex):
    """The operator's side of `index` (see the module docstring)."""

    @classmethod
    def open(cls, location: str, *, create: bool = False, audit_key: Path | None = None) -> Admin:
        """Open the index at `location` (as `Index.open`) for its operator; close it
        with `close` or a `with` block. Raises `IndexNotFoundError`, `StoreError`."""
        return cls(Index.open(location, create=create, audit_key=audit_key))

    # --- API keys ---

    def create_key(
        self, name: str, collections: Iterable[str], *, admin: bool = False
    ) -> tuple[str, ApiKey]:
        """A new API key for `collections` (with `admin`: every collection, and the
        server's metrics) named `name`: its token (shown only this once) and its
        record (`keys.create_key`)."""
        return create_key(self._index.store, name, collections, admin=admin)

    def keys(self) -> list[ApiKey]:
        """Every API key, revoked ones included (never their secrets)."""
        return self._index.store.list_api_keys()

    def revoke_key(self, key_id: str) -> bool:
        """Revoke key `key_id` at once; False when there is no such key."""
        return self._index.store.revoke_api_key(key_id)

    def authenticate(self, token: str) -> Principal | None:
        """The principal `token` presents (the key's name and collections; an admin
        key's principal sees every collection), or None when it is malformed,
        unknown, revoked or wrong (`keys.authenticate`)."""
        key = authenticate(self._index.store, token) if token else None
        if key is None or key.revoked:
            return None
        if key.collections == (ALL_COLLECTIONS,):
            return Principal(key.name, None)
        return Principal(key.name, tuple(key.collections))

    # --- the audit log ---

    def verify_log(self, witness: Path | None = None) -> LogReport:
        """Check the whole audit log: its hash chain, every signature (with the
        audit key), its head, and the heads exported to `witness` (`audit.verify_log`).
        Raises UsageError for a witness file that cannot be read."""
        checkpoints = read_witness(witness) if witness is not None else []
        key_path = self._index.audit_key_path
        key = read_audit_key(key_path)
        signed_from = first_signed(key_path, self.location)
        check = verify_log(self._index.store, key, checkpoints, signed_from)
        return LogReport(check, None if key is not None else key_path)

    def export_head(self, check: LogCheck, witness: Path) -> None:
        """Append the head of the intact log `check` verified to the `witness` file.
        Raises OSError when it cannot be written."""
        append_witness(witness, check.checkpoint(), self.location)

    def export_log(self) -> list[str]:
        """Every audit entry as one JSON line, in order (`audit.export_lines`)."""
        return list(export_lines(self._index.store))
