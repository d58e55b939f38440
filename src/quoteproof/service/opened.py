"""`OpenedIndex`: the base of what the service holds an index open for (a principal's
view, the operator's side, an ingest run): where it is, its counts, its signing key,
and `close` (or a `with` block) to close it."""

from __future__ import annotations

from quoteproof.closing import ClosedOnExit
from quoteproof.index import Index
from quoteproof.store.base import IndexStats

__all__ = ["OpenedIndex"]


class OpenedIndex(ClosedOnExit):
    """Holds `index` open; `close` closes it."""

    def __init__(self, index: Index) -> None:
        self._index = index

    def close(self) -> None:
        """Close the index."""
        self._index.close()

    @property
    def location(self) -> str:
        """Where the index is (a directory or a `postgresql://` URL)."""
        return self._index.store.location

    def stats(self) -> IndexStats:
        """Counts of the whole index's documents, versions and chunks now."""
        return self._index.store.stats()

    def check_signing_key(self) -> None:
        """Read or make the key that signs answers and the audit log, so that one
        that cannot be read or made fails now, before a question is asked. Raises
        StoreError."""
        self._index.signing_key()
