"""The default store: one SQLite file (WAL mode) with an FTS5 BM25 index over chunks.

What both stores share is `sql_store.SQLStore` (and the tables, `sql_schema`);
this module holds what is SQLite's own, its schema and migrations aside
(`sqlite_schema`).

Dense search is exact while the index holds fewer than `ann.ANN_FROM` vectors: the
vectors of current chunks are read into one matrix (with each row's collection),
kept until the index changes (in this process or another), and multiplied with the
query vector; a collection filter masks rows of that matrix. From that size on (and
with usearch installed) a writer keeps an approximate index file beside the
database (`ann`): a search asks it for candidates, recomputes their exact
similarity from the stored vectors, keeps current chunks of the collections asked,
and adds the few vectors written since the file was last extended, searched
exactly; when candidates run short (a small collection, many retired versions) an
exact scan that streams the vectors answers. Memory per process is then bounded by
what a query touches, not by the corpus.

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

import numpy as np

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import Hit
from quoteproof.store import ann, sqlite_bm25
from quoteproof.store.base import SCHEMA_VERSION
from quoteproof.store.failures import store_error, store_errors
from quoteproof.store.fts import fts_match_query, fts_phrases
from quoteproof.store.sql import Cursor
from quoteproof.store.sql_store import CHUNK_COLUMNS, CHUNK_FROM, SQLStore, marks
from quoteproof.store.sqlite_bm25 import bounded_scores, table_rows
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
from quoteproof.store.vectors import Vectors, check_vectors

DB_FILENAME = "index.sqlite3"

_Matrix = tuple[str, np.ndarray, list[int], np.ndarray, dict[str, int], np.ndarray]
"""The cached vectors of current chunks: the search generation they were read at,
the matrix (a chunk's passages in consecutive rows), the chunk row ids, each chunk's
collection code, the codes by name, and the first row of each chunk."""

_PASSAGES_FETCHED = 4
"""Vectors the vector index is asked for per chunk wanted (a chunk may have several
passages, and retired or other collections' chunks are among the candidates)."""

_FETCH_GROWTH = 4
"""How much the candidates asked for grow when they yield too few chunks (twice at
most, then an exact scan)."""

_SCAN_BATCH = 4096
"""Rows an exact scan reads at a time."""

_GENERATION = "search_generation"
"""The meta key counting writes that change what dense search sees (documents,
retirements, vectors), so that other writes (audit entries, keys, settings) keep
every process's cached matrix."""


@store_errors(sqlite3.Error, explain, "SQLite")
class SQLiteStore(SQLStore):
    """A `Store` in `DIR/index.sqlite3`. Use `SQLiteStore.open` to make one."""

    _CURRENT_CHUNK = "d.is_current = TRUE"
    _CODE_POINT_ORDER = ""  # SQLite compares text as UTF-8 bytes: code-point order
    _INSERT_ORDER = "rowid"
    _NOW = "strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')"
    _TAKEN = sqlite3.IntegrityError

    def __init__(self, connection: sqlite3.Connection, location: str) -> None:
        super().__init__(location)
        self._db = connection
        self._writes = 0
        self._matrix: _Matrix | None = None
        self._ann: ann.VectorIndex | None = None
        self._ann_upto = 0
        self.ann_start = ann.ANN_FROM
        self.ann_every = ann.FOLD_EVERY
        self._seen: tuple[int, int] | None = None  # (_writes, data_version) last checked
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
                if found > SCHEMA_VERSION:
                    raise StoreError(
                        f"index {self.location} has schema {found}, newer than this "
                        f"quoteproof understands ({SCHEMA_VERSION}); upgrade quoteproof"
                    )
                for version in range(found + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[version]:
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

    def _searched_data_changed(self) -> None:
        """Count a write that changes what dense search sees (inside a transaction)."""
        self._run(
            "INSERT INTO meta (key, value) VALUES (?, '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (_GENERATION,),
        )

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

    def _current_vectors(self) -> _Matrix:
        """The vectors of current chunks that the vector index file (`self._ann`,
        opened here when one is recorded) does not cover, as one matrix (a chunk's
        passages in consecutive rows), with the chunk row ids, each chunk's
        collection (as a code, and the codes by collection name) and each chunk's
        first row. Without a file: all the vectors of current chunks."""
        seen = (self._writes, self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._matrix is not None and self._seen == seen:
            return self._matrix
        self._seen = seen
        row = self._run("SELECT value FROM meta WHERE key = ?", (_GENERATION,)).fetchone()
        generation = str(row["value"]) if row is not None else ""
        if self._matrix is None or self._matrix[0] != generation:
            self._open_vector_index()
            rows = self._run(
                f"SELECT c.id, e.vector, d.collection FROM {CHUNK_FROM} JOIN embeddings e "
                "ON e.key = c.embed_key WHERE d.is_current = 1 AND e.rowid > ? ORDER BY c.id",
                (self._ann_upto,),
            ).fetchall()
            space = self.embedding_space()
            dims = space.dimensions if space else 0
            blob = b"".join(r["vector"] for r in rows)
            matrix = np.frombuffer(blob, dtype="<f4").reshape(-1, dims) if dims else np.zeros(0)
            per_chunk = [len(r["vector"]) // (4 * dims) for r in rows] if dims else []
            firsts = np.cumsum([0, *per_chunk[:-1]], dtype=np.int64) if rows else np.zeros(0)
            codes: dict[str, int] = {}
            row_codes = np.fromiter(
                (codes.setdefault(r["collection"], len(codes)) for r in rows),
                dtype=np.int32,
                count=len(rows),
            )
            self._matrix = (
                generation,
                matrix,
                [r["id"] for r in rows],
                row_codes,
                codes,
                firsts,
            )
        return self._matrix

    def _open_vector_index(self) -> None:
        """Map the vector index file recorded in `meta` (none: search is exact)."""
        upto = ann.recorded_upto(self._db)
        if upto and not ann.available():  # made where usearch was installed: search exactly
            upto = 0
        if upto == self._ann_upto:
            return
        try:
            path = ann.index_path(Path(self.location), upto)
            breadth = ann.recorded_breadth(self._db)
            self._ann = ann.VectorIndex(path, breadth) if upto else None
        except (OSError, RuntimeError):  # removed by a writer since: the next write records one
            self._ann = None
        self._ann_upto = upto if self._ann is not None else 0

    def search_dense(
        self, vector: Vectors, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by the cosine similarity of their
        best passage, best first (of documents in `collections` only, when given)."""
        state = self._current_vectors()
        _, matrix, ids, row_codes, codes, firsts = state
        if self._ann is not None and limit > 0:
            query = np.asarray(vector, dtype=np.float32).reshape(-1)
            return self._approximate(query, limit, collections, state)
        if limit <= 0 or not ids:
            return []
        similarity = matrix @ np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(firsts) == len(similarity):
            scores = similarity
        else:
            scores = np.maximum.reduceat(similarity, firsts)
        available = len(ids)
        if collections is not None:
            wanted = [codes[name] for name in set(collections) if name in codes]
            outside = ~np.isin(row_codes, wanted)
            available -= int(outside.sum())
            if available == 0:
                return []
            scores[outside] = -np.inf
        count = min(limit, available)
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return self._ranked_hits([(ids[i], float(scores[i])) for i in best])

    def _ranked_hits(self, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
        """Hits of (chunk row id, score) pairs, ranked in their order."""
        chosen = [chunk_id for chunk_id, _ in ranked]
        rows = self._run(
            f"SELECT c.id, {CHUNK_COLUMNS} FROM {CHUNK_FROM} WHERE c.id IN ({marks(len(chosen))})",
            chosen,
        ).fetchall()
        by_id = {row["id"]: row for row in rows}
        return [
            Hit(chunk=self._chunk(by_id[chunk_id]), score=score, rank=rank)
            for rank, (chunk_id, score) in enumerate(ranked, start=1)
        ]

    def _approximate(
        self, query: np.ndarray, limit: int, collections: Iterable[str] | None, state: _Matrix
    ) -> list[Hit]:
        """Dense search with the vector index file: its candidates (more of them
        while they yield fewer than `limit` chunks, then an exact scan of what it
        covers) and the vectors written after it, searched exactly."""
        assert self._ann is not None
        wanted = None if collections is None else sorted(set(collections))
        if wanted == []:
            return []
        scores: dict[int, float] = {}
        fetch = _PASSAGES_FETCHED * limit
        while True:
            keys = self._ann.search(query, fetch)
            scores = self._scored(query, "e.rowid IN (" + marks(len(keys)) + ")", keys, wanted)
            if len(scores) >= limit:
                break
            # a graph search is not sure to reach every vector, even when asked for all
            if fetch >= min(self._ann.size, _PASSAGES_FETCHED * limit * _FETCH_GROWTH**2):
                scores = self._scored(query, "e.rowid <= ?", [self._ann_upto], wanted, limit)
                break
            fetch *= _FETCH_GROWTH
        _, matrix, ids, row_codes, codes, firsts = state
        if ids:  # the vectors written since the file was last extended
            similarity = matrix @ query
            if len(firsts) != len(similarity):
                similarity = np.maximum.reduceat(similarity, firsts)
            inside = [codes[name] for name in wanted if name in codes] if wanted else []
            for position in np.flatnonzero(
                np.ones(len(ids), bool) if wanted is None else np.isin(row_codes, inside)
            ):
                chunk_id = ids[position]
                scores[chunk_id] = max(scores.get(chunk_id, -np.inf), float(similarity[position]))
        ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
        return self._ranked_hits(ranked)

    def _scored(
        self,
        query: np.ndarray,
        condition: str,
        params: Sequence[Any],
        collections: Sequence[str] | None,
        keep: int | None = None,
    ) -> dict[int, float]:
        """The best passage's similarity to `query` of each current chunk (of
        `collections`, when given) whose embeddings row meets `condition`, read in
        batches; with `keep`, only the best `keep` are kept (memory stays bounded)."""
        only = "" if collections is None else f" AND d.collection IN ({marks(len(collections))})"
        cursor = self._db.execute(
            f"SELECT c.id, e.vector FROM {CHUNK_FROM} JOIN embeddings e ON e.key = c.embed_key "
            f"WHERE d.is_current = 1 AND {condition}{only}",
            [*params, *(collections or ())],
        )
        scores: dict[int, float] = {}
        dims = len(query)
        while rows := cursor.fetchmany(_SCAN_BATCH):
            for row in rows:
                passages = np.frombuffer(row["vector"], dtype="<f4").reshape(-1, dims)
                scores[row["id"]] = float((passages @ query).max())
            if keep is not None and len(scores) > keep:
                scores = dict(sorted(scores.items(), key=lambda p: (-p[1], p[0]))[:keep])
        return scores

    def add_embeddings(
        self, keys: list[str], vectors: Vectors, parts: Sequence[int] | None = None
    ) -> None:
        """Store `parts[i]` consecutive rows of `vectors` (one when None) under
        `keys[i]`, as one blob, in one transaction; stored keys are kept."""
        counts = check_vectors(self.location, self.embedding_space(), keys, vectors, parts)
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        ends = np.cumsum(counts)
        with self._write():
            self._run_many(
                "INSERT OR IGNORE INTO embeddings (key, vector) VALUES (?, ?)",
                (
                    (key, rows[end - count : end].tobytes())
                    for key, count, end in zip(keys, counts, ends, strict=True)
                ),
            )
            self._searched_data_changed()
        space = self.embedding_space()
        if space is not None:
            ann.fold(
                self._db,
                Path(self.location),
                space.dimensions,
                self._record_vector_index,
                start=self.ann_start,
                every=self.ann_every,
            )

    def _record_vector_index(self, upto: int, breadth: int, calibrated: int) -> None:
        """Record the vector index file covering embeddings rows up to `upto`, its
        search breadth and the vector count at which that was chosen."""
        with self._write():
            self._run_many(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    (ann.UPTO_KEY, str(upto)),
                    (ann.BREADTH_KEY, str(breadth)),
                    (ann.CALIBRATED_KEY, str(calibrated)),
                ],
            )
            self._searched_data_changed()

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
