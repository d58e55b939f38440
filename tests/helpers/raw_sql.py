"""Running SQL on an index's database behind its store's back: what someone who can
write the database can do (SQLite file or PostgreSQL URL)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from quoteproof.store.open import is_postgres_url
from quoteproof.store.sqlite import DB_FILENAME


def raw_execute(location: str, sql: str) -> None:
    """Run `sql` through a connection of its own, not through the store."""
    if is_postgres_url(location):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(sql)
        return
    db = sqlite3.connect(Path(location) / DB_FILENAME, isolation_level=None)
    try:
        db.execute(sql)
    finally:
        db.close()


def sql_text(value: str) -> str:
    """`value` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"
