"""The default store: one SQLite file (WAL mode) with an FTS5 BM25 index over chunks.

What both stores share is `sql_store.SQLStore` (and the tables, `sql_schema`);
this module holds what is SQLite's own: opening the file, its transactions and
migrations (the schema is `sqlite_schema`'s) and full-text search. Dense search and
the vectors' storage are `sqlite_dense.SQLiteDense`'s, which `SQLiteStore` extends.

Full-text search: each collection has an FTS5 table of its own (`fts_table`) over
its current chunks, so BM25 statistics (FTS5's: chunk count, average length, a
term's document frequency) are those of a chunk's own collection. A chunk's score
depends neither on the collections searched with it nor on what other collections
hold: a key scoped to some collections learns nothing of the others from scores.
From `sqlite_bm25.BOUNDED_FROM` current chunks searched, a question scores only the
chunks holding one of its rarer terms, each exactly as the full scan would
(`sqlite_bm25`), so its cost does not grow with the chunks that hold common terms.

The audit log is a table that triggers keep append-only; an entry's `seq` is the
last one's plus one, read and written in one `BEGIN IMMEDIATE` transaction.

SQLite errors (a full disk, a locked, read-only or damaged database) leave the
store as `StoreError`s saying the cause (`failures.store_errors`); a write that
fails is rolled back whole.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import Hit
from quoteproof.store import sqlite_bm25
from quoteproof.store.base import SCHEMA_VERSION
from quoteproof.store.failures import store_error, store_errors
from quoteproof.store.fts import fts_match_query, fts_phrases
from quoteproof.store.sql import Cursor
from quoteproof.store.sql_schema import check_schema_version, migration_statements
from quoteproof.store.sql_store import CHUNK_FROM
from quoteproof.store.sqlite_bm25 import bounded_scores, table_rows
from quoteproof.store.sqlite_dense import SQLiteDense
from quoteproof.store.sqlite_schema import (
    MIGRATIONS,
    SCHEMA,
    SEARCH_TABLES_SINCE,
    bm25_search_sql,
    create_fts_sql,
    embed_key_of_row,
    explain,
    fts_table,
)

DB_FILENAME = "index.sqlite3"


@store_errors(sqlite3.Error, explain, "SQLite")
class SQLiteStore(SQLiteDense):
    """A `Store` in `DIR/index.sqlite3`. Use `SQLiteStore.open` to make one."""

    _CURRENT_CHUNK = "d.is_current = TRUE"
    _CODE_POINT_ORDER = ""  # SQLite compares text as UTF-8 bytes: code-point order
    _INSERT_ORDER = "rowid"
    _NOW = "strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')"
    _TAKEN = sqlite3.IntegrityError

    def __init__(self, connection: sqlite3.Connection, location: str) -> None:
        super().__init__(connection, location)
        self.bm25_bounded_from = sqlite_bm25.BOUNDED_FROM
        self.bm25_candidates = sqlite_bm25.CANDIDATE_ROWS

    @classmethod
    def open(cls, directory: str | Path, *, create: bool = False) -> SQLiteStore:
        """Open the index in `directory`; create it when `create` is true.

        Raises IndexNotFoundError when there is no index and `create` is false, and
        StoreError when the index was written by a newer quoteproof or cannot be
        used (a directory that cannot be made, a damaged or unreadable database).
        """
        directory = Path(directory)
        path = directory / DB_FILENAME
        if not path.exists():
            if not create:
                raise IndexNotFoundError(str(directory))
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create index {directory}: {exc.strerror or exc}") from exc
        try:
            db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=NORMAL")
            db.create_function("qp_embed_key", 3, embed_key_of_row, deterministic=True)
        except sqlite3.Error as exc:
            raise store_error(str(directory), exc, explain, "SQLite") from exc
        store = cls(db, str(directory))
        try:
            store._migrate()
        except BaseException:
            store.close()
            raise
        return store

    def _migrate(self) -> None:
        try:
            with self._write():
                has_meta = self._run("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
                row = (
                    self._run("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                    if has_meta
                    else None
                )
                found = int(row["value"]) if row is not None else SCHEMA_VERSION
                check_schema_version(self.location, found)
                for statement in migration_statements(self.location, found, MIGRATIONS):
                    self._run(statement)
                for statement in SCHEMA:
                    self._run(statement)
                if found < SEARCH_TABLES_SINCE:
                    self._fill_search_tables()
                self._run(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
        except sqlite3.Error as exc:
            raise store_error(self.location, exc, explain, "SQLite") from exc

    def _fill_search_tables(self) -> None:
        """Index the current chunks of every collection in that collection's own
        full-text table (schema 8; inside the migration's transaction)."""
        rows = self._run("SELECT DISTINCT collection FROM documents WHERE is_current = 1")
        for row in rows.fetchall():
            collection = row["collection"]
            self._run(create_fts_sql(collection))
            self._run(
                f"INSERT INTO {fts_table(collection)} (rowid, text, label) "
                f"SELECT c.id, c.text, c.label FROM {CHUNK_FROM} "
                "WHERE d.is_current = 1 AND d.collection = ?",
                (collection,),
            )

    def _run(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        """Run `sql` with `?` marks on the connection."""
        return self._db.execute(sql, params)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run `sql` once for each of `rows`."""
        self._db.executemany(sql, rows)

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One `BEGIN IMMEDIATE` transaction, committed when the block ends, else
        rolled back.

        SQLite rolls a transaction back itself on some errors (a full disk, an I/O
        error), also at COMMIT: then there is nothing left to roll back, and the
        error that ended it is the one raised."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                with suppress(sqlite3.Error):  # the error that ended the write says more
                    self._db.execute("ROLLBACK")
            raise
        self._writes += 1

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """A read transaction: the block's statements all see the index as it was
        when the first of them ran (within an open transaction, that one)."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")  # nothing written: ends the read

    def _encode_list(self, values: Sequence[Any]) -> str:
        """A list column as JSON text."""
        return json.dumps(list(values), ensure_ascii=False)

    def _decode_list(self, value: str) -> tuple[Any, ...]:
        """Inverse of `_encode_list`."""
        return tuple(json.loads(value))

    def _index_version(self, doc_id: str, version: int, collection: str) -> None:
        """Add the version's chunks to its collection's full-text table."""
        self._searched_data_changed()
        self._run(create_fts_sql(collection))
        self._run(
            f"INSERT INTO {fts_table(collection)} (rowid, text, label) "
            "SELECT id, text, label FROM chunks WHERE doc_id = ? AND doc_version = ?",
            (doc_id, version),
        )

    def _unindex_version(self, doc_id: str, version: int) -> None:
        """Delete the version's chunks from its collection's full-text table."""
        self._searched_data_changed()
        row = self._run(
            "SELECT collection FROM documents WHERE doc_id = ? AND version = ?",
            (doc_id, version),
        ).fetchone()
        table = fts_table(row["collection"])
        self._run(
            f"INSERT INTO {table} ({table}, rowid, text, label) "
            "SELECT 'delete', id, text, label FROM chunks WHERE doc_id = ? AND doc_version = ?",
            (doc_id, version),
        )

    def search_bm25(
        self, query: str, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by BM25 for `query`, best first
        (of documents in `collections` only, when given).

        From `bm25_bounded_from` current chunks in the collections searched, each
        collection's chunks that hold one of the question's rarer terms (at most
        `bm25_candidates` of them, unless its rarest term alone is commoner) are
        scored, exactly (`sqlite_bm25`); below, every chunk holding any term."""
        match = fts_match_query(query)
        searched = self._searched_collections(collections)
        if match is None or limit <= 0 or not searched:
            return []
        tables = [fts_table(name) for name in searched]
        if sum(table_rows(self._db, table) for table in tables) < self.bm25_bounded_from:
            rows = self._run(bm25_search_sql(limit, searched), (match,) * len(searched))
            return self._hits(rows.fetchall())
        phrases = fts_phrases(query)
        with self._snapshot():  # several statements: one state of the index
            ranked = [
                pair
                for table in tables
                for pair in bounded_scores(self._db, table, phrases, limit, self.bm25_candidates)
            ]
            ranked.sort(key=lambda pair: (-pair[1], pair[0]))
            return self._ranked_hits(ranked[:limit])

    def _searched_collections(self, collections: Iterable[str] | None) -> list[str]:
        """The collections among `collections` (None: all) that hold current
        documents, in name order: those with a full-text table to search."""
        rows = self._run(
            "SELECT DISTINCT collection FROM documents WHERE is_current = 1 ORDER BY collection"
        ).fetchall()
        held = [row["collection"] for row in rows]
        if collections is None:
            return held
        wanted = set(collections)
        return [collection for collection in held if collection in wanted]

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
