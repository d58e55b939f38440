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


def back_to_one_search_table(location: str, collections: tuple[str, ...]) -> None:
    """Make a SQLite index at `location` as schema 7 kept it: one full-text table
    (`chunks_fts`) for every collection instead of one per collection, and the schema
    version 7, so that opening it migrates it again."""
    from quoteproof.store.sqlite_schema import fts_table

    for collection in collections:
        raw_execute(location, f"DROP TABLE {fts_table(collection)}")
    raw_execute(
        location,
        "CREATE VIRTUAL TABLE chunks_fts USING fts5 (text, label, content='chunks', "
        "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    )
    raw_execute(
        location, "INSERT INTO chunks_fts (rowid, text, label) SELECT id, text, label FROM chunks"
    )
    raw_execute(location, "UPDATE meta SET value = '7' WHERE key = 'schema_version'")
