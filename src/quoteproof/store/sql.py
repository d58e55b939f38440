"""The one SQL call the shared store rules need, whatever the database.

Shared rules (`versions`, `audit_chain`) write their SQL once, with `?` marks; each
store hands them an `Execute` that runs it on its own connection (the PostgreSQL
store turns the marks into `%s`). Rows are read by column name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["Cursor", "Execute"]


class Cursor(Protocol):
    """The result of `Execute`: at most one row is read, by column name."""

    def fetchone(self) -> Any:
        """Return the next row (indexable by column name), or None when there is none."""
        ...


class Execute(Protocol):
    """Run one SQL statement with `?` marks and its parameters on a store's connection."""

    def __call__(self, sql: str, params: Sequence[Any], /) -> Cursor:
        """Execute `sql` with `params` bound to its `?` marks, in the caller's transaction."""
        ...
