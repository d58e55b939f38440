"""Who asks: a `Principal` and the collections it may see."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from quoteproof.errors import AccessDeniedError


@dataclass(frozen=True)
class Principal:
    """The party a request acts for: its `name` (recorded in the audit log) and the
    `collections` it may read and write (None: every collection, as for the local
    CLI user or a server without auth)."""

    name: str | None
    collections: tuple[str, ...] | None

    def allows(self, collection: str) -> bool:
        """True when this principal may see and change `collection`."""
        return self.collections is None or collection in self.collections

    def narrow(self, asked: Iterable[str] | None = None) -> tuple[str, ...] | None:
        """The collections a read may look at: the principal's own, narrowed to
        `asked` when it names any (duplicates dropped; None or an empty list means
        the principal's own). Raises `AccessDeniedError` naming an asked collection
        the principal lacks (the same whether it exists or not)."""
        wanted = tuple(dict.fromkeys(asked or ()))
        if not wanted:
            return self.collections
        for collection in wanted:
            if not self.allows(collection):
                raise AccessDeniedError(f"this key has no access to collection '{collection}'")
        return wanted


ANONYMOUS = Principal("anonymous", None)
"""The principal of every request when the server runs without auth."""
