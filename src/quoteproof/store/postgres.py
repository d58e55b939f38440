"""A `Store` in a PostgreSQL database: full-text search and pgvector HNSW search.

Semantics mirror the SQLite store (see `quoteproof.store.base.Store`); the schema is
in `postgres_schema`. Every write is one transaction holding an advisory lock, so
writers in many processes queue up and never lose or duplicate a document, while
readers are never blocked.

Full-text search: the OR of one `plainto_tsquery` per question term (so no user
syntax is interpreted) under `TEXT_SEARCH_CONFIG` (English stemming, no stopwords,
like SQLite's porter tokenizer) finds the chunks; Okapi BM25 (k1 1.2, b 0.75) ranks
them, with a term in the label counting 0.4 (the SQLite store's bm25 weights).
PostgreSQL's own `ts_rank` has no IDF and ranks markedly worse (SciFact nDCG@10
0.60 against 0.69).

BM25 statistics (chunk count, average length, and a term's document frequency)
are those of a chunk's own collection, as in the SQLite store (an FTS5 table per
collection): a chunk's score depends neither on the collections searched with it
nor on what other collections hold, so a key scoped to some collections learns
nothing of the others from scores.

Dense search: the HNSW index (cosine distance) with `hnsw.ef_search` raised to twice
the limit, filtered by a WHERE clause (current chunks, of the collections asked);
when it yields fewer chunks than qualify (retired versions or other collections
crowd the candidates, or the limit exceeds what HNSW returns), an exact scan with
the same WHERE answers.

The audit log's `seq` is the last entry's plus one, read and written under the
write lock, so concurrent appends never skip or repeat a number.

Database errors (a lost connection, a full disk on the server, a read-only
database) leave the store as `StoreError`s saying the cause
(`failures.store_errors`); a write that fails is rolled back whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row

from quoteproof.errors import IndexNotFoundError, StoreError
from quoteproof.model import Chunk, Document, Hit, Layout, SourceTable, sha256_text
from quoteproof.store.audit_chain import AUDIT_COLUMNS, append_entry, audit_from_row
from quoteproof.store.base import (
    EMBEDDING_SPACE_SETTING,
    SCHEMA_VERSION,
    ApiKey,
    AuditEntry,
    CurrentVersion,
    DocumentSummary,
    EmbeddingSpace,
    IndexStats,
    NewDocument,
    PendingEmbedding,
    Vectors,
    check_collection_name,
    check_vectors,
    decode_space,
    distinct_pending,
    embed_key,
    embedding_space_mismatch,
    encode_space,
    setting_key,
)
from quoteproof.store.codec import (
    decode_layout,
    decode_tables,
    encode_pages,
    encode_runs,
    encode_tables,
)
from quoteproof.store.failures import store_error, store_errors
from quoteproof.store.postgres_schema import (
    MIGRATIONS,
    SCHEMA_DDL,
    TEXT_SEARCH_CONFIG,
    WRITE_LOCK,
    embedding_ddl,
    redact_url,
    scrub,
)
from quoteproof.store.refs import chunk_ref
from quoteproof.store.sql import Cursor
from quoteproof.store.versions import latest_version, new_version_key
from quoteproof.terms import query_terms

CONNECT_TIMEOUT_S = 10
"""Seconds to wait for the server unless the URL or PGCONNECT_TIMEOUT says otherwise."""

_BM25_K1, _BM25_B = 1.2, 0.75
_LABEL_WEIGHT = 0.4  # a term in the label (weight C) counts 0.4, as in the SQLite store

# Okapi BM25 over the matching current chunks of the collections searched, each
# scored with its own collection's statistics: a term's frequency is read from the
# chunk's tsvector (its positions, label ones weighted), its document frequency is
# counted among the collection's matches (every chunk holding a query term matches),
# and the collection's size and average length come from `bm25_collection_stats`.
# `{only}` keeps the chunks of the collections asked for.
_BM25_SQL = f"""
WITH q AS (SELECT {{tsquery}} AS query),
matched AS (
    SELECT c.id, c.collection, length(c.search_text)::float8 AS length, u.lexeme,
        (SELECT sum(CASE w WHEN 'A' THEN 1.0 ELSE {_LABEL_WEIGHT} END) FROM unnest(u.weights) w)
            AS tf
    FROM chunks c, q, LATERAL unnest(c.search_text) u
    WHERE c.is_current AND c.search_text @@ q.query
        AND u.lexeme = ANY (SELECT lexeme FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)))
        AND {{only}}
),
df AS (SELECT collection, lexeme, count(*)::float8 AS n FROM matched GROUP BY collection, lexeme),
scored AS (
    SELECT m.id, sum(
        ln(1 + (s.chunks - df.n + 0.5) / (df.n + 0.5)) * m.tf * {_BM25_K1 + 1}
        / (m.tf + {_BM25_K1} * (1 - {_BM25_B} + {_BM25_B} * m.length
            / greatest(s.tokens::float8 / greatest(s.chunks, 1), 1)))
    ) AS score
    FROM matched m JOIN df USING (collection, lexeme)
        JOIN bm25_collection_stats s USING (collection)
    GROUP BY m.id
)
SELECT {{columns}}, scored.score FROM scored JOIN chunks c ON c.id = scored.id
    JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.doc_version
ORDER BY scored.score DESC, c.id LIMIT %s
"""

_EF_SEARCH_MIN, _EF_SEARCH_MAX = 40, 1000

# "end" is a reserved word in PostgreSQL.
_CHUNK_COLUMNS = """c.ref, c.doc_id, c.doc_version, c.ordinal, c.start, c."end", c.text,
    c.section, c.label, c.pages, c.language, c.source_uri, c.ocr, d.source_path"""
_CHUNK_FROM = "chunks c JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.doc_version"
_DOCUMENT_COLUMNS = "doc_id, version, source_path, title, format, text, sha256, collection"
_KEY_COLUMNS = "key_id, name, secret_sha256, collections, created, revoked"


def _chunk_from_row(row: DictRow) -> Chunk:
    return Chunk(
        ref=row["ref"],
        doc_id=row["doc_id"],
        doc_version=row["doc_version"],
        ordinal=row["ordinal"],
        start=row["start"],
        end=row["end"],
        text=row["text"],
        section=tuple(row["section"]),
        label=row["label"],
        source_path=row["source_path"],
        pages=tuple(row["pages"]) if row["pages"] is not None else None,
        language=row["language"],
        source_uri=row["source_uri"],
        ocr=row["ocr"],
    )


def _key_from_row(row: DictRow) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        name=row["name"],
        secret_sha256=row["secret_sha256"],
        collections=tuple(json.loads(row["collections"])),
        created=row["created"],
        revoked=row["revoked"],
    )


_CAUSES: dict[str, str] = {
    "53": (  # insufficient resources: disk full, out of memory, too many connections
        "the database server is out of disk space or another resource; the change was "
        "not made and the index holds what it held before"
    ),
    "08": "the connection to the PostgreSQL server was lost (is the server running?)",
    "57": (
        "the PostgreSQL server ended the connection or cancelled the work (a shutdown, "
        "or an administrator's command)"
    ),
    "25006": "the database is read-only (a standby server, or read-only transactions)",
    "42501": "the database user lacks the permission to do this",
    "55P03": "the database is locked by another session; try again",
    "XX": "the database server reports damaged data or an internal error",
}
"""Plain words for SQLSTATE codes and classes (their first two characters)."""


def _explain(exc: BaseException) -> str | None:
    """The cause of a psycopg error in plain words, None when there is nothing to add."""
    state = getattr(exc, "sqlstate", None)
    if state:
        return _CAUSES.get(state) or _CAUSES.get(state[:2])
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return _CAUSES["08"]  # a closed or broken connection carries no SQLSTATE
    return None


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


def _connect(url: str, location: str) -> psycopg.Connection[DictRow]:
    """Open an autocommit connection, or raise StoreError saying why not (no password)."""
    try:
        options: dict[str, Any] = {}
        if "connect_timeout" not in conninfo_to_dict(url) and "PGCONNECT_TIMEOUT" not in os.environ:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        return psycopg.connect(url, autocommit=True, row_factory=dict_row, **options)
    except psycopg.Error as exc:
        reason = scrub(str(exc), url) or type(exc).__name__
        raise StoreError(f"cannot connect to PostgreSQL at {location}: {reason}") from None


@store_errors(psycopg.Error, _explain, "PostgreSQL")
class PostgresStore:
    """A `Store` in a PostgreSQL database. Use `PostgresStore.open` to make one."""

    def __init__(self, connection: psycopg.Connection[DictRow], location: str) -> None:
        self._db = connection
        self.location = location
        self._space: EmbeddingSpace | None = None

    @classmethod
    def open(cls, url: str, *, create: bool = False) -> PostgresStore:
        """Open the index in the database at `url`; create it when `create` is true.

        Raises IndexNotFoundError when the database holds no index and `create` is
        false, and StoreError when the server cannot be reached, refuses the login,
        or the index was written by a newer quoteproof. Messages and `location`
        show the URL with its password masked.
        """
        location = redact_url(url)
        store = cls(_connect(url, location), location)
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
                        self._migrate(found)
                    self._db.execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                        (str(SCHEMA_VERSION),),
                    )
            register_vector(self._db)
        except psycopg.Error as exc:
            raise store_error(self.location, exc, _explain, "PostgreSQL") from exc

    def _schema_version(self) -> int | None:
        """The index's schema version, None when the database holds no index."""
        row = self._db.execute("SELECT to_regclass('meta') IS NOT NULL AS present").fetchone()
        if row is None or not row["present"]:
            return None
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise StoreError(f"{self.location} has a table `meta` that is not a quoteproof index")
        found = int(row["value"])
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"index {self.location} has schema {found}, newer than this "
                f"quoteproof understands ({SCHEMA_VERSION}); upgrade quoteproof"
            )
        return found

    def _migrate(self, found: int) -> None:
        for version in range(found + 1, SCHEMA_VERSION + 1):
            if version not in MIGRATIONS:
                raise StoreError(f"index {self.location} has schema {found}, which cannot be read")
            for statement in MIGRATIONS[version]:
                self._db.execute(statement)

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

    def current_version(self, source_path: str) -> CurrentVersion | None:
        """Return the current version of `source_path`, or None (never ingested, or retired)."""
        row = self._db.execute(
            "SELECT doc_id, version, sha256, file_sha256 FROM documents "
            "WHERE source_path = %s AND is_current ORDER BY version DESC LIMIT 1",
            (source_path,),
        ).fetchone()
        if row is None:
            return None
        return CurrentVersion(row["doc_id"], row["version"], row["sha256"], row["file_sha256"])

    def _execute(self, sql: str, params: Sequence[Any], /) -> Cursor:
        """Run SQL with `?` marks (the shared rules': `versions`, `audit_chain`)."""
        return self._db.execute(sql.replace("?", "%s"), params)

    def latest_version(self, source_path: str) -> int | None:
        """Return the newest version number stored for `source_path`, retired or not."""
        return latest_version(self._execute, source_path)

    def add_document(self, new: NewDocument) -> Document:
        """Store `new` as the next version of its source path, in one transaction.

        After the path's document was retired, the new version is current again
        (its number continues the retired ones'). Raises StoreError for text holding
        NUL characters, which PostgreSQL cannot store, and ValueError for an invalid
        collection name.
        """
        check_collection_name(new.collection)
        if any("\x00" in text for text in (new.text, new.title, new.source_path)):
            raise StoreError(
                f"{new.source_path}: the text holds NUL characters (U+0000), which a "
                "PostgreSQL index cannot store"
            )
        sha = sha256_text(new.text)
        with self._write():
            previous = self.current_version(new.source_path)
            if previous is not None and previous.sha256 == sha:
                stored = self.get_document(previous.doc_id, previous.version)
                assert stored is not None
                return stored
            doc_id, version = new_version_key(self._execute, new.source_path)
            if previous is not None:
                self._retire(doc_id, previous.version)
            self._db.execute(
                "INSERT INTO documents (doc_id, version, source_path, title, format, text, "
                "sha256, file_sha256, is_current, collection) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,true,%s)",
                (
                    doc_id,
                    version,
                    new.source_path,
                    new.title,
                    new.format,
                    new.text,
                    sha,
                    new.file_sha256,
                    new.collection,
                ),
            )
            self._db.cursor().executemany(
                'INSERT INTO chunks (ref, doc_id, doc_version, ordinal, start, "end", text, '
                "section, label, pages, language, source_uri, ocr, embed_key, is_current, "
                "collection) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,true,%s)",
                [
                    (
                        chunk_ref(doc_id, version, ordinal),
                        doc_id,
                        version,
                        ordinal,
                        chunk.start,
                        chunk.end,
                        new.text[chunk.start : chunk.end],
                        list(chunk.section),
                        chunk.label,
                        list(chunk.pages) if chunk.pages is not None else None,
                        chunk.language,
                        chunk.source_uri,
                        chunk.ocr,
                        embed_key(new.title, chunk.section, new.text[chunk.start : chunk.end]),
                        new.collection,
                    )
                    for ordinal, chunk in enumerate(new.chunks, start=1)
                ],
            )
            self._count_for_bm25(doc_id, version, 1)
            if new.layout is not None:
                self._db.execute(
                    "INSERT INTO layouts (doc_id, version, pages, char_runs) VALUES (%s,%s,%s,%s)",
                    (
                        doc_id,
                        version,
                        encode_pages(new.layout),
                        encode_runs(new.layout.char_runs) if new.layout.char_runs else None,
                    ),
                )
            if new.original is not None:
                self._db.execute(
                    "INSERT INTO originals (doc_id, version, content) VALUES (%s,%s,%s)",
                    (doc_id, version, new.original),
                )
            if new.tables:
                self._db.execute(
                    "INSERT INTO doc_tables (doc_id, version, tables) VALUES (%s,%s,%s)",
                    (doc_id, version, encode_tables(new.tables)),
                )
        return Document(
            doc_id, version, new.source_path, new.title, new.format, new.text, sha, new.collection
        )

    def _count_for_bm25(self, doc_id: str, version: int, sign: int) -> None:
        """Add (`sign` 1) or remove (-1) one version's chunks to the BM25 statistics
        of its collection."""
        self._db.execute(
            "INSERT INTO bm25_collection_stats (collection, chunks, tokens) "
            "SELECT collection, %s * count(*), %s * coalesce(sum(length(search_text)), 0) "
            "FROM chunks WHERE doc_id = %s AND doc_version = %s GROUP BY collection "
            "ON CONFLICT (collection) DO UPDATE SET "
            "chunks = bm25_collection_stats.chunks + EXCLUDED.chunks, "
            "tokens = bm25_collection_stats.tokens + EXCLUDED.tokens",
            (sign, sign, doc_id, version),
        )

    def _retire(self, doc_id: str, version: int) -> None:
        """Take a superseded or retired version out of the search indexes (it stays
        readable)."""
        self._count_for_bm25(doc_id, version, -1)
        self._db.execute(
            "UPDATE documents SET is_current = false WHERE doc_id = %s AND version = %s",
            (doc_id, version),
        )
        self._db.execute(
            "UPDATE chunks SET is_current = false WHERE doc_id = %s AND doc_version = %s",
            (doc_id, version),
        )

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """Return one stored version (the newest when `version` is None), or None."""
        row = self._db.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents WHERE doc_id = %s "
            "AND (%s::integer IS NULL OR version = %s) ORDER BY version DESC LIMIT 1",
            (doc_id, version, version),
        ).fetchone()
        if row is None:
            return None
        return Document(**row)

    def list_documents(self, collections: Iterable[str] | None = None) -> list[DocumentSummary]:
        """Return the current version of every stored document (of `collections`
        only, when given), by source path."""
        wanted = _collection_list(collections)
        rows = self._db.execute(
            "SELECT doc_id, version, source_path, title, format, sha256, collection "
            "FROM documents WHERE is_current AND (%s::text[] IS NULL OR collection = ANY (%s)) "
            'ORDER BY source_path COLLATE "C"',
            (wanted, wanted),
        ).fetchall()
        return [DocumentSummary(**row) for row in rows]

    def retire_document(self, doc_id: str) -> bool:
        """Take every version of `doc_id` out of search and listing (they stay
        readable); False when `doc_id` has no current version."""
        with self._write():
            rows = self._db.execute(
                "SELECT version FROM documents WHERE doc_id = %s AND is_current", (doc_id,)
            ).fetchall()
            for row in rows:
                self._retire(doc_id, row["version"])
        return bool(rows)

    def get_chunk(self, ref: str) -> Chunk | None:
        """Return the chunk with `ref` (of any version), or None."""
        row = self._db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} WHERE c.ref = %s", (ref,)
        ).fetchone()
        return _chunk_from_row(row) if row is not None else None

    def chunks_of(self, doc_id: str, version: int) -> list[Chunk]:
        """Return the chunks of one document version, in document order."""
        rows = self._db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} "
            "WHERE c.doc_id = %s AND c.doc_version = %s ORDER BY c.ordinal",
            (doc_id, version),
        ).fetchall()
        return [_chunk_from_row(row) for row in rows]

    def neighbours(self, chunk: Chunk, width: int = 1) -> list[Chunk]:
        """Return the chunks within `width` places of `chunk` in its version, in order."""
        rows = self._db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} "
            "WHERE c.doc_id = %s AND c.doc_version = %s AND c.ordinal BETWEEN %s AND %s "
            "AND c.ordinal <> %s ORDER BY c.ordinal",
            (
                chunk.doc_id,
                chunk.doc_version,
                chunk.ordinal - width,
                chunk.ordinal + width,
                chunk.ordinal,
            ),
        ).fetchall()
        return [_chunk_from_row(row) for row in rows]

    def get_layout(self, doc_id: str, version: int) -> Layout | None:
        """Return the page layout of one document version, or None if it has none."""
        row = self._db.execute(
            "SELECT pages, char_runs FROM layouts WHERE doc_id = %s AND version = %s",
            (doc_id, version),
        ).fetchone()
        return decode_layout(row["pages"], row["char_runs"]) if row is not None else None

    def get_tables(self, doc_id: str, version: int) -> tuple[SourceTable, ...]:
        """Return the tables of one document version (() when it has none)."""
        row = self._db.execute(
            "SELECT tables FROM doc_tables WHERE doc_id = %s AND version = %s",
            (doc_id, version),
        ).fetchone()
        return decode_tables(row["tables"]) if row is not None else ()

    def get_original(self, doc_id: str, version: int) -> bytes | None:
        """Return the stored original file bytes of one version (PDFs), or None."""
        row = self._db.execute(
            "SELECT content FROM originals WHERE doc_id = %s AND version = %s", (doc_id, version)
        ).fetchone()
        return bytes(row["content"]) if row is not None else None

    def source_paths_with_title(self, title: str) -> list[str]:
        """Return the source paths of stored documents whose title is `title`."""
        rows = self._db.execute(
            "SELECT DISTINCT source_path FROM documents WHERE title = %s ORDER BY source_path",
            (title,),
        ).fetchall()
        return [row["source_path"] for row in rows]

    def search_bm25(
        self, query: str, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by BM25, best first (of documents
        in `collections` only, when given).

        The question's terms (`query_terms`) are OR-ed, each as a plain-text query,
        so operators and punctuation in it are never interpreted.
        """
        terms = query_terms(query)
        wanted = _collection_list(collections)
        if not terms or limit <= 0 or wanted == []:
            return []
        tsquery = " || ".join([f"plainto_tsquery('{TEXT_SEARCH_CONFIG}', %s)"] * len(terms))
        only = "true" if wanted is None else "c.collection = ANY (%s)"
        rows = self._db.execute(
            _BM25_SQL.format(tsquery=tsquery, columns=_CHUNK_COLUMNS, only=only),
            (*terms, " ".join(terms), *([] if wanted is None else [wanted]), limit),
        ).fetchall()
        return [
            Hit(chunk=_chunk_from_row(row), score=float(row["score"]), rank=rank)
            for rank, row in enumerate(rows, start=1)
        ]

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
            f"SELECT {_CHUNK_COLUMNS}, c.id AS chunk_row, 1 - (e.vector <=> %s) AS score "
            f"FROM embeddings e JOIN {_CHUNK_FROM} ON c.embed_key = e.key "
            f"WHERE c.is_current {only}"
        )
        fetch = _PASSAGES_FETCHED * limit  # passages: a chunk may have several
        ef_search = min(max(_EF_SEARCH_MIN, 2 * fetch), _EF_SEARCH_MAX)
        with self._db.transaction():
            self._db.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef_search),))
            # Ordered by the distance operator, the HNSW index may answer (approximately).
            rows = _best_per_chunk(
                self._db.execute(
                    sql + "ORDER BY e.vector <=> %s LIMIT %s", (query, *extra, query, fetch)
                ).fetchall()
            )[:limit]
            if len(rows) < limit and len(rows) < self._embedded_current(limit, wanted):
                # Each chunk's best passage, ordered by the score, no index can: an exact scan.
                rows = self._db.execute(
                    "SELECT * FROM (SELECT DISTINCT ON (c.id) "
                    + sql.removeprefix("SELECT ")
                    + "ORDER BY c.id, score DESC) best ORDER BY score DESC, chunk_row LIMIT %s",
                    (query, *extra, limit),
                ).fetchall()
        return [
            Hit(chunk=_chunk_from_row(row), score=float(row["score"]), rank=rank)
            for rank, row in enumerate(rows, start=1)
        ]

    def _embedded_current(self, at_most: int, collections: list[str] | None = None) -> int:
        """The number of current chunks (of `collections`, when given) that have
        vectors, counted up to `at_most`."""
        row = self._db.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM chunks c WHERE c.is_current "
            "AND EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key) "
            "AND (%s::text[] IS NULL OR c.collection = ANY (%s)) LIMIT %s) found",
            (collections, collections, at_most),
        ).fetchone()
        return int(row["n"]) if row is not None else 0

    def embedding_space(self) -> EmbeddingSpace | None:
        """Return the model and dimension of the index's vectors, None before any."""
        if self._space is None:
            recorded = self.get_setting(EMBEDDING_SPACE_SETTING)
            if recorded is not None:
                self._space = decode_space(recorded)
        return self._space

    def set_embedding_space(self, space: EmbeddingSpace) -> None:
        """Record `space` once, giving `embeddings` its vector column and HNSW index;
        raise StoreError when a different one is recorded."""
        with self._write():
            recorded = self.embedding_space()
            if recorded is None:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s)",
                    (setting_key(EMBEDDING_SPACE_SETTING), encode_space(space)),
                )
                for statement in embedding_ddl(space.dimensions):
                    self._db.execute(statement)
            elif recorded != space:
                raise StoreError(embedding_space_mismatch(self.location, recorded, space))

    def pending_embeddings(self) -> list[PendingEmbedding]:
        """Return what current chunks lack a vector for, one item per distinct key."""
        rows = self._db.execute(
            f"SELECT c.embed_key, d.title, c.section, c.text FROM {_CHUNK_FROM} "
            "WHERE c.is_current AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.key = c.embed_key) ORDER BY c.id"
        ).fetchall()
        return distinct_pending(
            (row["embed_key"], row["title"], tuple(row["section"]), row["text"]) for row in rows
        )

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

    def get_setting(self, name: str) -> str | None:
        """Return an index-wide setting, or None when it was never set."""
        row = self._db.execute(
            "SELECT value FROM meta WHERE key = %s", (setting_key(name),)
        ).fetchone()
        return str(row["value"]) if row is not None else None

    def put_setting(self, name: str, value: str) -> None:
        """Store an index-wide setting, replacing any earlier value."""
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (setting_key(name), value),
        )

    def append_audit(
        self,
        entry_id: str,
        time: str,
        user: str | None,
        collections: tuple[str, ...],
        body: str,
        key: bytes | None = None,
    ) -> AuditEntry:
        """Append one entry to the audit log (`audit_chain.append_entry`, signed with
        `key` when given) in one transaction under the write lock. Raises StoreError
        when `entry_id` is already taken."""
        try:
            with self._write():
                return append_entry(self._execute, entry_id, time, user, collections, body, key)
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"audit entry {entry_id!r} cannot be added: {exc}") from exc

    def audit_entries(self, after_seq: int = 0, limit: int | None = None) -> list[AuditEntry]:
        """Return the audit entries with `seq > after_seq`, in order, at most `limit`."""
        rows = self._db.execute(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE seq > %s ORDER BY seq LIMIT %s",
            (after_seq, None if limit is None else max(limit, 0)),
        ).fetchall()
        return [audit_from_row(row) for row in rows]

    def get_audit_entry(self, entry_id: str) -> AuditEntry | None:
        """Return the audit entry with the public id `entry_id`, or None."""
        row = self._db.execute(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE entry_id = %s", (entry_id,)
        ).fetchone()
        return audit_from_row(row) if row is not None else None

    def add_api_key(self, key: ApiKey) -> None:
        """Store a new API key; raise StoreError when its `key_id` is taken."""
        try:
            self._db.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s)",
                (
                    key.key_id,
                    key.name,
                    key.secret_sha256,
                    json.dumps(list(key.collections), ensure_ascii=False),
                    key.created,
                    key.revoked,
                ),
            )
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"API key {key.key_id!r} cannot be added: {exc}") from exc

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """Return the key with `key_id` (revoked ones too), or None."""
        row = self._db.execute(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = %s", (key_id,)
        ).fetchone()
        return _key_from_row(row) if row is not None else None

    def list_api_keys(self) -> list[ApiKey]:
        """Return every key, oldest first."""
        rows = self._db.execute(
            f'SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created COLLATE "C", added'
        ).fetchall()
        return [_key_from_row(row) for row in rows]

    def revoke_api_key(self, key_id: str) -> bool:
        """Mark a key revoked; False when there is no such key."""
        cursor = self._db.execute("UPDATE api_keys SET revoked = true WHERE key_id = %s", (key_id,))
        return cursor.rowcount > 0

    def stats(self) -> IndexStats:
        """Return counts of current documents, all versions, current chunks and vectors."""
        row = self._db.execute(
            "SELECT (SELECT count(*) FROM documents WHERE is_current) AS documents, "
            "(SELECT count(*) FROM documents) AS versions, "
            "(SELECT count(*) FROM chunks WHERE is_current) AS chunks, "
            "(SELECT count(*) FROM chunks c WHERE c.is_current AND EXISTS "
            " (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)) AS embedded"
        ).fetchone()
        assert row is not None
        return IndexStats(row["documents"], row["versions"], row["chunks"], row["embedded"])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()
