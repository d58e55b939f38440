"""The one SQL call the shared store code needs, whatever the database.

The shared store (`sql_store.SQLStore`) and the shared rules (`versions`,
`audit_chain`) write their SQL once, with `?` marks; each store hands them an
`Execute` that runs it on its own connection (the PostgreSQL store turns the marks
into `%s`). Rows are read by column name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["Cursor", "Execute"]


class Cursor(Protocol):
    """The result of `Execute`: its rows, read by column name, and how many rows a
    write changed."""

    @property
    def rowcount(self) -> int:
        """The number of rows the statement changed (-1 when not known)."""
        ...

    def fetchone(self) -> Any:
        """Return the next row (indexable by column name), or None when there is none."""
        ...

    def fetchall(self) -> Sequence[Any]:
        """Return the remaining rows (each indexable by column name)."""
        ...


class Execute(Protocol):
    """Run one SQL statement with `?` marks and its parameters on a store's connection."""

    def __call__(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        """Execute `sql` with `params` bound to its `?` marks, in the caller's transaction."""
        ...
