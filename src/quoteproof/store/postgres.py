"""A `Store` in a PostgreSQL database: full-text search and pgvector HNSW search.

What both stores share is `sql_store.SQLStore`; this module holds what is
PostgreSQL's own (the schema is in `postgres_schema`, the connection and the
server's errors in plain words in `postgres_connection`). Every write is one
transaction holding an advisory lock, so writers in many processes queue up and
never lose or duplicate a document, while readers are never blocked.

Full-text search: the OR of one `plainto_tsquery` per question term (so no user
syntax is interpreted) under `TEXT_SEARCH_CONFIG` (English stemming, no stopwords,
like SQLite's porter tokenizer) finds the chunks; Okapi BM25 (k1 1.2, b 0.75) ranks
them, with a term in the label counting 0.4 (the SQLite store's bm25 weights).
PostgreSQL's own `ts_rank` has no IDF and ranks markedly worse (SciFact nDCG@10
0.60 against 0.69). From `postgres_bm25.BOUNDED_FROM` current chunks in the
collections searched, the same formula scores only the chunks of each term's
highest-impact postings (`postgres_bm25`), so a question reads a bounded number of
rows per term however large the index grows.

BM25 statistics (chunk count, average length, and a term's document frequency)
are those of a chunk's own collection, as in the SQLite store (an FTS5 table per
collection): a chunk's score depends neither on the collections searched with it
nor on what other collections hold, so a key scoped to some collections learns
nothing of the others from scores.

Dense search: the HNSW index (cosine distance) with `hnsw.ef_search` raised to twice
the passages fetched (`ef_search`: 160 for a top-10 search, 800 at depth 100) and,
for a search of some collections, divided by the share of the current chunks they
hold (a tenth: 800 for a top-10 search), filtered by a WHERE clause (current chunks,
of the collections asked). With pgvector 0.8 or later (`ITERATIVE_SCAN_FROM`) the
index scan goes on past `ef_search` candidates while the WHERE drops them
(`hnsw.iterative_scan`, strict order); earlier versions stop there. When the scan
ends before the passages fetched qualify while more do (retired versions or other
collections crowd the candidates, or the limit exceeds what HNSW returns), or yields
fewer chunks than qualify, an exact scan with the same WHERE answers: the qualifying
rows among the candidates of a cut-short scan need not be the nearest ones (a
collection of a tenth of 20,000 clustered vectors: recall@10 0.82 at `ef_search`
160).

The audit log's `seq` is the last entry's plus one, read and written under the
write lock, so concurrent appends never skip or repeat a number.

Database errors (a lost connection, a full disk on the server, a read-only
database) leave the store as `StoreError`s saying the cause
(`failures.store_errors`); a write that fails is rolled back whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import DictRow

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import Hit
from quoteproof.store import postgres_bm25
from quoteproof.store.base import SCHEMA_VERSION, NewDocument
from quoteproof.store.failures import store_error, store_errors
from quoteproof.store.postgres_connection import connect, explain, redact_url
from quoteproof.store.postgres_schema import (
    MIGRATIONS,
    SCHEMA_DDL,
    TEXT_SEARCH_CONFIG,
    WRITE_LOCK,
    embedding_ddl,
)
from quoteproof.store.sql import Cursor
from quoteproof.store.sql_schema import check_schema_version, migration_statements
from quoteproof.store.sql_store import CHUNK_COLUMNS, CHUNK_FROM, SQLStore
from quoteproof.store.vectors import EmbeddingSpace, Vectors, check_vectors
from quoteproof.terms import query_terms

_EF_SEARCH_MIN, _EF_SEARCH_MAX = 400, 1000
"""Bounds of `hnsw.ef_search` (pgvector allows at most 1,000). Measured with
benchmarks/ann_recall.py at 100,000 clustered vectors: recall@10 of a top-10 search
0.96 at 80 and 1.00 from 128; a depth-100 search 1.00 at 800. At 1,000,000 (the
scale benchmark's vectors, 20 questions) a top-10 search needs more: 0.61 at 160,
0.94 at 400, 0.95 at 1,000."""


ITERATIVE_SCAN_FROM = (0, 8)
"""The pgvector version from which an HNSW scan can go on past `hnsw.ef_search`
candidates (`hnsw.iterative_scan`), until the query has its rows or has read
`hnsw.max_scan_tuples` (20,000 by default)."""


def scans_iteratively(db: psycopg.Connection[Any]) -> bool:
    """Whether the `vector` extension installed in `db` scans iteratively
    (`ITERATIVE_SCAN_FROM`)."""
    row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        return False
    found = row["extversion"] if isinstance(row, dict) else row[0]
    version = tuple(int(part) for part in str(found).split(".")[:2] if part.isdigit())
    return version >= ITERATIVE_SCAN_FROM


def ef_search(fetch: int) -> int:
    """The `hnsw.ef_search` of a search that fetches `fetch` passages: twice that,
    within `_EF_SEARCH_MIN` and `_EF_SEARCH_MAX`."""
    return min(max(_EF_SEARCH_MIN, 2 * fetch), _EF_SEARCH_MAX)


_PASSAGES_FETCHED = 4
"""Passages the HNSW search fetches per chunk wanted (a chunk has one vector per
passage; fewer distinct chunks than wanted fall back to an exact scan)."""


def _best_per_chunk(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` of passages, nearest first, with only the first (best) of each chunk."""
    seen: set[int] = set()
    best = []
    for row in rows:
        if row["chunk_row"] not in seen:
            seen.add(row["chunk_row"])
            best.append(row)
    return best


def _collection_list(collections: Iterable[str] | None) -> list[str] | None:
    """`collections` as a list (a text[] parameter), None when not given."""
    return None if collections is None else list(collections)


@store_errors(psycopg.Error, explain, "PostgreSQL")
class PostgresStore(SQLStore):
    """A `Store` in a PostgreSQL database. Use `PostgresStore.open` to make one."""

    _CURRENT_CHUNK = "c.is_current"
    _CODE_POINT_ORDER = ' COLLATE "C"'
    _INSERT_ORDER = "added"
    _NOW = "now()"
    _TAKEN = psycopg.errors.UniqueViolation

    def __init__(self, connection: psycopg.Connection[DictRow], location: str) -> None:
        super().__init__(location)
        self._db = connection
        self.bm25_bounded_from = postgres_bm25.BOUNDED_FROM
        self.bm25_candidates = postgres_bm25.CANDIDATES_PER_TERM
        self.iterative_scan = False

    @classmethod
    def open(cls, url: str, *, create: bool = False) -> PostgresStore:
        """Open the index in the database at `url`; create it when `create` is true.

        Raises IndexNotFoundError when the database holds no index and `create` is
        false, and StoreError when the server cannot be reached, refuses the login,
        or the index was written by a newer quoteproof. Messages and `location`
        show the URL with its password masked.
        """
        location = redact_url(url)
        store = cls(connect(url, location), location)
        try:
            store._prepare(create)
        except BaseException:
            store.close()
            raise
        return store

    def _prepare(self, create: bool) -> None:
        """Check the schema version; create or migrate the schema when needed."""
        try:
            found = self._schema_version()
            if found is None and not create:
                raise IndexNotFoundError(self.location)
            if found != SCHEMA_VERSION:
                with self._schema_lock(), self._db.transaction():
                    found = self._schema_version()  # another process may have been first
                    if found is None:
                        self._db.execute(SCHEMA_DDL)
                    else:
                        for statement in migration_statements(self.location, found, MIGRATIONS):
                            self._db.execute(statement)
                    self._db.execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                        (str(SCHEMA_VERSION),),
                    )
            register_vector(self._db)
            self.iterative_scan = scans_iteratively(self._db)
        except psycopg.Error as exc:
            raise store_error(self.location, exc, explain, "PostgreSQL") from exc

    def _schema_version(self) -> int | None:
        """The index's schema version, None when the database holds no index."""
        row = self._db.execute("SELECT to_regclass('meta') IS NOT NULL AS present").fetchone()
        if row is None or not row["present"]:
            return None
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise StoreError(f"{self.location} has a table `meta` that is not a quoteproof index")
        return check_schema_version(self.location, int(row["value"]))

    @contextmanager
    def _schema_lock(self) -> Iterator[None]:
        """Hold the write lock at session level, for a schema change: a transaction
        begun after taking it sees the catalog changes of processes that held it
        before (one begun before would see stale catalog caches)."""
        self._db.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK,))
        try:
            yield
        finally:
            self._db.execute("SELECT pg_advisory_unlock(%s)", (WRITE_LOCK,))

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One transaction holding the index's write lock (committed on success)."""
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield

    def _run(self, sql: str, params: Sequence[Any] = (), /) -> Cursor:
        """Run `sql` with `?` marks (turned into psycopg's `%s`) on the connection."""
        return self._db.execute(sql.replace("?", "%s"), params)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run `sql` (with `?` marks) once for each of `rows`."""
        self._db.cursor().executemany(sql.replace("?", "%s"), rows)

    def _encode_list(self, values: Sequence[Any]) -> list[Any]:
        """A list column as a PostgreSQL array."""
        return list(values)

    def _decode_list(self, value: Sequence[Any]) -> tuple[Any, ...]:
        """Inverse of `_encode_list`."""
        return tuple(value)

    def _check_storable(self, new: NewDocument) -> None:
        """Refuse text holding NUL characters, which PostgreSQL cannot store."""
        if any("\x00" in text for text in (new.text, new.title, new.source_path)):
            raise StoreError(
                f"{new.source_path}: the text holds NUL characters (U+0000), which a "
                "PostgreSQL index cannot store"
            )

    def _chunk_extras(self, collection: str) -> dict[str, Any]:
        """Chunks keep copies of their version's `is_current` and `collection`."""
        return {"is_current": True, "collection": collection}

    def _index_version(self, doc_id: str, version: int, collection: str) -> None:
        """Count the version's chunks in its collection's BM25 statistics (its
        chunks were written current, so their search index has them), then give its
        chunks their postings and count them in the document frequencies."""
        self._count_for_bm25(doc_id, version, 1)
        self._db.execute(postgres_bm25.ADD_POSTINGS, (doc_id, version))

    def _unindex_version(self, doc_id: str, version: int) -> None:
        """Mark the version's chunks not current and take them out of the BM25
        statistics and postings."""
        self._count_for_bm25(doc_id, version, -1)
        self._db.execute(postgres_bm25.UNCOUNT_TERMS, (doc_id, version))
        self._db.execute(postgres_bm25.DROP_POSTINGS, (doc_id, version))
        self._run(
            "UPDATE chunks SET is_current = false WHERE doc_id = ? AND doc_version = ?",
            (doc_id, version),
        )

    def _count_for_bm25(self, doc_id: str, version: int, sign: int) -> None:
        """Add (`sign` 1) or remove (-1) one version's chunks to the BM25 statistics
        of its collection."""
        self._run(
            "INSERT INTO bm25_collection_stats (collection, chunks, tokens) "
            "SELECT collection, ? * count(*), ? * coalesce(sum(length(search_text)), 0) "
            "FROM chunks WHERE doc_id = ? AND doc_version = ? GROUP BY collection "
            "ON CONFLICT (collection) DO UPDATE SET "
            "chunks = bm25_collection_stats.chunks + EXCLUDED.chunks, "
            "tokens = bm25_collection_stats.tokens + EXCLUDED.tokens",
            (sign, sign, doc_id, version),
        )

    def _prepare_vectors(self, space: EmbeddingSpace) -> None:
        """Give `embeddings` its vector column and HNSW index."""
        for statement in embedding_ddl(space.dimensions):
            self._run(statement)

    def search_bm25(
        self, query: str, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by BM25, best first (of documents
        in `collections` only, when given).

        The question's terms (`query_terms`) are OR-ed, each as a plain-text query,
        so operators and punctuation in it are never interpreted. From
        `bm25_bounded_from` current chunks searched, only each term's
        `bm25_candidates` highest-impact postings are scored (`postgres_bm25`).
        """
        terms = query_terms(query)
        wanted = _collection_list(collections)
        if not terms or limit <= 0 or wanted == []:
            return []
        searched = self._db.execute(postgres_bm25.SEARCHED_CHUNKS, (wanted, wanted)).fetchone()
        if searched is not None and searched["n"] >= self.bm25_bounded_from:
            rows = self._db.execute(
                postgres_bm25.BOUNDED_SQL.format(columns=CHUNK_COLUMNS),
                (
                    TEXT_SEARCH_CONFIG,
                    " ".join(terms),
                    wanted,
                    wanted,
                    self.bm25_candidates,
                    limit,
                ),
            )
            return self._hits(rows.fetchall())
        tsquery = " || ".join([f"plainto_tsquery('{TEXT_SEARCH_CONFIG}', %s)"] * len(terms))
        only = "true" if wanted is None else "c.collection = ANY (%s)"
        rows = self._db.execute(
            postgres_bm25.FULL_SQL.format(
                tsquery=tsquery, config=TEXT_SEARCH_CONFIG, columns=CHUNK_COLUMNS, only=only
            ),
            (*terms, " ".join(terms), *([] if wanted is None else [wanted]), limit),
        )
        return self._hits(rows.fetchall())

    def search_dense(
        self, vector: Vectors, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return the min(`limit`, qualifying chunks) current chunks with vectors
        nearest to `vector` by cosine similarity of their best passage, best first;
        `score` is that similarity. With `collections`, only chunks of documents in
        those qualify."""
        wanted = _collection_list(collections)
        if limit <= 0 or self.embedding_space() is None or wanted == []:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        only = "" if wanted is None else "AND c.collection = ANY (%s) "
        extra: list[object] = [] if wanted is None else [wanted]
        sql = (
            f"SELECT {CHUNK_COLUMNS}, c.id AS chunk_row, 1 - (e.vector <=> %s) AS score "
            f"FROM embeddings e JOIN {CHUNK_FROM} ON c.embed_key = e.key "
            f"WHERE c.is_current {only}"
        )
        fetch = _PASSAGES_FETCHED * limit  # passages: a chunk may have several
        with self._db.transaction():
            breadth = ef_search(fetch if wanted is None else self._widened(fetch, wanted))
            self._db.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(breadth),))
            if self.iterative_scan:  # past ef_search candidates while the WHERE drops rows
                self._db.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
            # Ordered by the distance operator, the HNSW index may answer (approximately).
            passages = self._db.execute(
                sql + "ORDER BY e.vector <=> %s LIMIT %s", (query, *extra, query, fetch)
            ).fetchall()
            rows = _best_per_chunk(passages)[:limit]
            # The index's scan ended before `fetch` passages qualified (the WHERE dropped
            # its candidates): nearer qualifying passages may lie beyond them.
            cut_short = len(passages) < fetch and len(passages) < self._qualifying(fetch, wanted)
            if cut_short or (
                len(rows) < limit and len(rows) < self._embedded_current(limit, wanted)
            ):
                rows = self._exact_dense(sql, [query, *extra], limit)
        return self._hits(rows)

    def _exact_dense(self, sql: str, params: list[object], limit: int) -> list[dict[str, Any]]:
        """The `limit` best rows of dense search `sql` (its WHERE clause last, `params`
        its parameters) by an exact scan: each chunk's best passage, ordered by the
        score, which no index can order by."""
        return self._db.execute(
            "SELECT * FROM (SELECT DISTINCT ON (c.id) "
            + sql.removeprefix("SELECT ")
            + "ORDER BY c.id, score DESC) best ORDER BY score DESC, chunk_row LIMIT %s",
            (*params, limit),
        ).fetchall()

    def _widened(self, fetch: int, collections: list[str]) -> int:
        """`fetch` divided by the share of the current chunks that `collections` hold
        (`fetch` when they hold none): the index's candidates a search of them needs
        for `fetch` of its own."""
        row = self._db.execute(
            "SELECT coalesce(sum(chunks) FILTER (WHERE collection = ANY (%s)), 0) AS mine, "
            "coalesce(sum(chunks), 0) AS total FROM bm25_collection_stats",
            (collections,),
        ).fetchone()
        if row is None or row["mine"] <= 0:
            return fetch
        return -(-fetch * int(row["total"]) // int(row["mine"]))

    def _qualifying(self, at_most: int, collections: list[str] | None) -> int:
        """The number of passages of current chunks (of `collections`, when given),
        counted up to `at_most`."""
        rows = "embeddings e JOIN chunks c ON c.embed_key = e.key WHERE c.is_current"
        return self._count_up_to(rows, at_most, collections)

    def _embedded_current(self, at_most: int, collections: list[str] | None = None) -> int:
        """The number of current chunks (of `collections`, when given) that have
        vectors, counted up to `at_most`."""
        rows = (
            "chunks c WHERE c.is_current "
            "AND EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)"
        )
        return self._count_up_to(rows, at_most, collections)

    def _count_up_to(self, rows: str, at_most: int, collections: list[str] | None) -> int:
        """How many of `rows` (a FROM ... WHERE clause over chunks `c`) there are, of
        `collections` when given, counted up to `at_most`."""
        row = self._db.execute(
            f"SELECT count(*) AS n FROM (SELECT 1 FROM {rows} "
            "AND (%s::text[] IS NULL OR c.collection = ANY (%s)) LIMIT %s) found",
            (collections, collections, at_most),
        ).fetchone()
        return int(row["n"]) if row is not None else 0

    def add_embeddings(
        self, keys: list[str], vectors: Vectors, parts: Sequence[int] | None = None
    ) -> None:
        """Store `parts[i]` consecutive rows of `vectors` (one when None) under
        `keys[i]`, as parts 0, 1, ..., in one transaction; stored keys are kept."""
        counts = check_vectors(self.location, self.embedding_space(), keys, vectors, parts)
        rows = np.asarray(vectors, dtype=np.float32)
        if not keys:
            return
        keyed = [
            (key, part) for key, count in zip(keys, counts, strict=True) for part in range(count)
        ]
        with self._write():
            stored = {
                row["key"]
                for row in self._db.execute(
                    "SELECT DISTINCT key FROM embeddings WHERE key = ANY (%s)", (list(keys),)
                ).fetchall()
            }
            self._db.cursor().executemany(
                "INSERT INTO embeddings (key, part, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT (key, part) DO NOTHING",
                [
                    (key, part, row)
                    for (key, part), row in zip(keyed, rows, strict=True)
                    if key not in stored
                ],
            )

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
