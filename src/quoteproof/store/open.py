"""Choosing the store for an index location: a directory (SQLite) or a PostgreSQL URL."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from quoteproof.errors import StoreError
from quoteproof.store.base import Store

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_POSTGRES_MODULES = ("psycopg", "pgvector")


def is_postgres_url(location: str | Path) -> bool:
    """Return True when `location` names a PostgreSQL database rather than a directory."""
    return isinstance(location, str) and location.startswith(_POSTGRES_SCHEMES)


def open_store(location: str | Path, *, create: bool = False) -> Store:
    """Open the index at `location`: a `postgresql://` URL or a directory (SQLite).

    Creates the index (schema, or directory and file) when `create` is true.
    Raises IndexNotFoundError when there is none and `create` is false, and
    StoreError when the PostgreSQL extra is missing or the index is unusable.
    """
    if is_postgres_url(location):
        missing = [name for name in _POSTGRES_MODULES if importlib.util.find_spec(name) is None]
        if missing:
            raise StoreError(
                "a PostgreSQL index needs the postgres extra: pip install 'quoteproof[postgres]' "
                f"(missing: {', '.join(missing)})"
            )
        from quoteproof.store.postgres import PostgresStore

        return PostgresStore.open(str(location), create=create)
    from quoteproof.store.sqlite import SQLiteStore

    return SQLiteStore.open(location, create=create)
