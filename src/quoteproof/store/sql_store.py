"""The store both databases share: every query and rule of a `Store` that is the
same in SQLite and PostgreSQL, written once (`SQLStore`).

A dialect (`sqlite.SQLiteStore`, `postgres.PostgresStore`) subclasses `SQLStore`
and supplies only what differs: running SQL on its connection (`_run`, `_run_many`;
the shared SQL has `?` marks), its write transaction (`_write`), how list columns
are kept (`_encode_list`, `_decode_list`), what keeps its search indexes in step
with the current versions (`_index_version`, `_unindex_version`), and its own
search (`search_bm25`, `search_dense`), vector storage (`add_embeddings`), opening
and schema. Class attributes hold the few SQL fragments that differ.

The version rule (unchanged, retire, new version) is decided once, in
`store_document`'s write transaction (`versions.decide_version`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from quoteproof.errors import StoreError
from quoteproof.model import Chunk, Document, Hit, Layout, SourceTable, sha256_text
from quoteproof.store.base import (
    CurrentVersion,
    DocumentSummary,
    IndexStats,
    NewChunk,
    NewDocument,
    StoredDocument,
    check_collection_name,
    setting_key,
)
from quoteproof.store.codec import (
    decode_layout,
    decode_tables,
    encode_pages,
    encode_runs,
    encode_tables,
)
from quoteproof.store.kg import TripletStore
from quoteproof.store.refs import chunk_ref
from quoteproof.store.sql_records import SQLRecords, record
from quoteproof.store.vectors import (
    EMBEDDING_SPACE_SETTING,
    EmbeddingSpace,
    PendingEmbedding,
    decode_space,
    distinct_pending,
    embed_key,
    embedding_space_mismatch,
    encode_space,
)
from quoteproof.store.versions import decide_version, latest_version

if TYPE_CHECKING:
    pass

__all__ = ["CHUNK_COLUMNS", "CHUNK_FROM", "SQLStore", "marks"]

CHUNK_COLUMNS = """c.ref, c.doc_id, c.doc_version, c.ordinal, c.start, c."end", c.text,
    c.section, c.label, c.pages, c.language, c.source_uri, c.ocr, d.source_path"""
"""The columns `SQLStore._chunk` reads a chunk from (`"end"`: a reserved word)."""

CHUNK_FROM = "chunks c JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.doc_version"
"""Chunks with their document version, for `CHUNK_COLUMNS`."""

_CHUNK_INSERT_COLUMNS = (
    *("ref", "doc_id", "doc_version", "ordinal", "start", '"end"', "text", "section"),
    *("label", "pages", "language", "source_uri", "ocr", "embed_key"),
)


def marks(count: int) -> str:
    """`count` comma-separated `?` marks, for an `IN (...)` list."""
    return ",".join("?" * count)


class SQLStore(TripletStore, SQLRecords):
    """A `Store` over a SQL database, less what its dialect supplies (see the module);
    its settings, audit log and API keys are `SQLRecords`', its knowledge-graph
    triplets `TripletStore`'s."""

    _CURRENT_CHUNK: ClassVar[str]
    """A condition on `CHUNK_FROM` that holds for the chunks of current versions."""

    _NOW: ClassVar[str]
    """The SQL expression of the time a document version is ingested."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._space: EmbeddingSpace | None = None

    # --- what each dialect supplies (and `_run`, `_run_many`, `_write`: SQLRecords) -

    @abstractmethod
    def _encode_list(self, values: Sequence[Any]) -> Any:
        """A chunk's section path or pages as its column holds them."""

    @abstractmethod
    def _decode_list(self, value: Any) -> tuple[Any, ...]:
        """Inverse of `_encode_list`."""

    @abstractmethod
    def _index_version(self, doc_id: str, version: int, collection: str) -> None:
        """Add a version whose chunks were just written to the search indexes."""

    @abstractmethod
    def _unindex_version(self, doc_id: str, version: int) -> None:
        """Take a version just marked not current out of the search indexes."""

    def _check_storable(self, new: NewDocument) -> None:
        """Raise StoreError when the database cannot hold `new` (nothing by default)."""
        return None

    def _chunk_extras(self, collection: str) -> dict[str, Any]:
        """Columns of the dialect's own that every new chunk gets, with their values."""
        return {}

    def _prepare_vectors(self, space: EmbeddingSpace) -> None:
        """Ready the schema for vectors of `space` (in `set_embedding_space`'s
        transaction); nothing by default."""
        return None

    # --- documents and chunks ----------------------------------------------------

    def _chunk(self, row: Any) -> Chunk:
        """The chunk of a row of `CHUNK_COLUMNS`."""
        pages = row["pages"]
        return record(
            Chunk,
            row,
            section=self._decode_list(row["section"]),
            pages=self._decode_list(pages) if pages is not None else None,
            ocr=bool(row["ocr"]),
        )

    def _hits(self, rows: Iterable[Any]) -> list[Hit]:
        """Hits of rows of `CHUNK_COLUMNS` and a `score`, ranked in row order."""
        return [
            Hit(chunk=self._chunk(row), score=float(row["score"]), rank=rank)
            for rank, row in enumerate(rows, start=1)
        ]

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

    def current_version(self, source_path: str) -> CurrentVersion | None:
        """Return the current version of `source_path`, or None (never ingested, or retired)."""
        row = self._run(
            "SELECT doc_id, version, sha256, file_sha256 FROM documents "
            "WHERE source_path = ? AND is_current = TRUE ORDER BY version DESC LIMIT 1",
            (source_path,),
        ).fetchone()
        return record(CurrentVersion, row) if row is not None else None

    def latest_version(self, source_path: str) -> int | None:
        """Return the newest version number stored for `source_path`, retired or not."""
        return latest_version(self._run, source_path)

    def add_document(self, new: NewDocument) -> Document:
        """`store_document(new).document`: the version that holds `new`'s text."""
        return self.store_document(new).document

    def store_document(self, new: NewDocument) -> StoredDocument:
        """Store `new` as the next version of its source path, in one transaction that
        decides the version (`versions.decide_version`), and say what was done.

        After the path's document was retired, the new version is current again
        (its number continues the retired ones'). Raises ValueError for an invalid
        collection name, and StoreError for a document the database cannot hold.
        """
        check_collection_name(new.collection)
        self._check_storable(new)
        sha = sha256_text(new.text)
        with self._write():
            decision = decide_version(self._run, new.source_path, sha)
            doc_id, version = decision.doc_id, decision.version
            if decision.outcome == "unchanged":
                stored = self.get_document(doc_id, version)
                assert stored is not None
                return StoredDocument(stored, "unchanged")
            if decision.retires is not None:
                self._retire(doc_id, decision.retires)
            if callable(new.chunks):
                chunks = new.chunks(version, self.source_paths_with_title(new.title))
            else:
                chunks = new.chunks
            self._insert_version(new, doc_id, version, sha, chunks)
        document = Document(
            doc_id, version, new.source_path, new.title, new.format, new.text, sha, new.collection
        )
        return StoredDocument(document, decision.outcome)

    def _insert_version(
        self, new: NewDocument, doc_id: str, version: int, sha: str, chunks: Sequence[NewChunk]
    ) -> None:
        """Write version `version` of `new` with `chunks`, and index it for search."""
        self._run(
            "INSERT INTO documents (doc_id, version, source_path, title, format, text, "
            "sha256, file_sha256, ingested_at, is_current, collection) "
            f"VALUES (?,?,?,?,?,?,?,?,{self._NOW},TRUE,?)",
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
        extras = self._chunk_extras(new.collection)
        columns = [*_CHUNK_INSERT_COLUMNS, *extras]
        self._run_many(
            f"INSERT INTO chunks ({', '.join(columns)}) VALUES ({marks(len(columns))})",
            (
                (
                    chunk_ref(doc_id, version, ordinal),
                    doc_id,
                    version,
                    ordinal,
                    chunk.start,
                    chunk.end,
                    new.text[chunk.start : chunk.end],
                    self._encode_list(chunk.section),
                    chunk.label,
                    self._encode_list(chunk.pages) if chunk.pages is not None else None,
                    chunk.language,
                    chunk.source_uri,
                    chunk.ocr,
                    embed_key(new.title, chunk.section, new.text[chunk.start : chunk.end]),
                    *extras.values(),
                )
                for ordinal, chunk in enumerate(chunks, start=1)
            ),
        )
        self._index_version(doc_id, version, new.collection)
        if new.layout is not None:
            runs = new.layout.char_runs
            self._run(
                "INSERT INTO layouts (doc_id, version, pages, char_runs) VALUES (?,?,?,?)",
                (doc_id, version, encode_pages(new.layout), encode_runs(runs) if runs else None),
            )
        if new.original is not None:
            self._run(
                "INSERT INTO originals (doc_id, version, content) VALUES (?,?,?)",
                (doc_id, version, new.original),
            )
        if new.tables:
            self._run(
                "INSERT INTO doc_tables (doc_id, version, tables) VALUES (?,?,?)",
                (doc_id, version, encode_tables(new.tables)),
            )

    def _retire(self, doc_id: str, version: int) -> None:
        """Take a superseded or retired version out of search (it stays readable)."""
        self._run(
            "UPDATE documents SET is_current = FALSE WHERE doc_id = ? AND version = ?",
            (doc_id, version),
        )
        self._unindex_version(doc_id, version)

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """Return one stored version (the newest when `version` is None), or None."""
        sql = (
            "SELECT doc_id, version, source_path, title, format, text, sha256, collection "
            "FROM documents WHERE doc_id = ?"
        )
        params: tuple[object, ...] = (doc_id,)
        if version is not None:
            sql += " AND version = ?"
            params += (version,)
        row = self._run(sql + " ORDER BY version DESC LIMIT 1", params).fetchone()
        return record(Document, row) if row is not None else None

    def list_documents(self, collections: Iterable[str] | None = None) -> list[DocumentSummary]:
        """Return the current version of every stored document (of `collections`
        only, when given), by source path in code-point order."""
        sql = (
            "SELECT doc_id, version, source_path, title, format, sha256, collection "
            "FROM documents WHERE is_current = TRUE"
        )
        wanted: tuple[str, ...] = ()
        if collections is not None:
            wanted = tuple(collections)
            if not wanted:
                return []
            sql += f" AND collection IN ({marks(len(wanted))})"
        rows = self._run(f"{sql} ORDER BY source_path{self._CODE_POINT_ORDER}", wanted)
        return [record(DocumentSummary, row) for row in rows.fetchall()]

    def count_documents(self, collections: Iterable[str] | None = None) -> int:
        """Return how many current documents there are (of `collections` only, when
        given): one count over the documents table."""
        sql = "SELECT count(*) AS n FROM documents WHERE is_current = TRUE"
        wanted: tuple[str, ...] = ()
        if collections is not None:
            wanted = tuple(collections)
            if not wanted:
                return 0
            sql += f" AND collection IN ({marks(len(wanted))})"
        return int(self._run(sql, wanted).fetchone()["n"])

    def retire_document(self, doc_id: str) -> bool:
        """Take every version of `doc_id` out of search and listing (they stay
        readable); False when `doc_id` has no current version."""
        with self._write():
            rows = self._run(
                "SELECT version FROM documents WHERE doc_id = ? AND is_current = TRUE", (doc_id,)
            ).fetchall()
            for row in rows:
                self._retire(doc_id, row["version"])
        return bool(rows)

    def get_chunk(self, ref: str) -> Chunk | None:
        """Return the chunk with `ref` (of any version), or None."""
        row = self._run(
            f"SELECT {CHUNK_COLUMNS} FROM {CHUNK_FROM} WHERE c.ref = ?", (ref,)
        ).fetchone()
        return self._chunk(row) if row is not None else None

    def chunks_of(self, doc_id: str, version: int) -> list[Chunk]:
        """Return the chunks of one document version, in document order."""
        rows = self._run(
            f"SELECT {CHUNK_COLUMNS} FROM {CHUNK_FROM} "
            "WHERE c.doc_id = ? AND c.doc_version = ? ORDER BY c.ordinal",
            (doc_id, version),
        ).fetchall()
        return [self._chunk(row) for row in rows]

    def neighbours(self, chunk: Chunk, width: int = 1) -> list[Chunk]:
        """Return the chunks within `width` places of `chunk` in its version, in order."""
        rows = self._run(
            f"SELECT {CHUNK_COLUMNS} FROM {CHUNK_FROM} "
            "WHERE c.doc_id = ? AND c.doc_version = ? AND c.ordinal BETWEEN ? AND ? "
            "AND c.ordinal <> ? ORDER BY c.ordinal",
            (
                chunk.doc_id,
                chunk.doc_version,
                chunk.ordinal - width,
                chunk.ordinal + width,
                chunk.ordinal,
            ),
        ).fetchall()
        return [self._chunk(row) for row in rows]

    def get_layout(self, doc_id: str, version: int) -> Layout | None:
        """Return the page layout of one document version, or None if it has none."""
        row = self._run(
            "SELECT pages, char_runs FROM layouts WHERE doc_id = ? AND version = ?",
            (doc_id, version),
        ).fetchone()
        return decode_layout(row["pages"], row["char_runs"]) if row is not None else None

    def get_tables(self, doc_id: str, version: int) -> tuple[SourceTable, ...]:
        """Return the tables of one document version (() when it has none)."""
        row = self._run(
            "SELECT tables FROM doc_tables WHERE doc_id = ? AND version = ?", (doc_id, version)
        ).fetchone()
        return decode_tables(row["tables"]) if row is not None else ()

    def get_original(self, doc_id: str, version: int) -> bytes | None:
        """Return the stored original file bytes of one version (PDFs), or None."""
        row = self._run(
            "SELECT content FROM originals WHERE doc_id = ? AND version = ?", (doc_id, version)
        ).fetchone()
        return bytes(row["content"]) if row is not None else None

    def source_paths_with_title(self, title: str) -> list[str]:
        """Return the source paths of stored documents whose title is `title`."""
        rows = self._run(
            "SELECT DISTINCT source_path FROM documents WHERE title = ? ORDER BY source_path",
            (title,),
        ).fetchall()
        return [row["source_path"] for row in rows]

    # --- vectors -----------------------------------------------------------------

    def embedding_space(self) -> EmbeddingSpace | None:
        """Return the model and dimension of the index's vectors, None before any
        (kept once read: it is recorded once and never changes)."""
        if self._space is None:
            recorded = self.get_setting(EMBEDDING_SPACE_SETTING)
            if recorded is not None:
                self._space = decode_space(recorded)
        return self._space

    def set_embedding_space(self, space: EmbeddingSpace) -> None:
        """Record `space` once (readying the schema for its vectors); raise StoreError
        when a different one is recorded."""
        with self._write():
            recorded = self.embedding_space()
            if recorded is None:
                self._run(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    (setting_key(EMBEDDING_SPACE_SETTING), encode_space(space)),
                )
                self._prepare_vectors(space)
            elif recorded != space:
                raise StoreError(embedding_space_mismatch(self.location, recorded, space))

    def pending_embeddings(self) -> list[PendingEmbedding]:
        """Return what current chunks lack a vector for, one item per distinct key."""
        rows = self._run(
            f"SELECT c.embed_key, d.title, c.section, c.text FROM {CHUNK_FROM} "
            f"WHERE {self._CURRENT_CHUNK} AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.key = c.embed_key) ORDER BY c.id"
        ).fetchall()
        return distinct_pending(
            (row["embed_key"], row["title"], self._decode_list(row["section"]), row["text"])
            for row in rows
        )

    # --- counts (settings, the audit log and API keys: `SQLRecords`) -----------------

    def stats(self) -> IndexStats:
        """Return counts of current documents, all versions, current chunks and vectors."""
        current = f"{CHUNK_FROM} WHERE {self._CURRENT_CHUNK}"
        row = self._run(
            "SELECT (SELECT count(*) FROM documents WHERE is_current = TRUE) AS documents, "
            "(SELECT count(*) FROM documents) AS versions, "
            f"(SELECT count(*) FROM {current}) AS chunks, "
            f"(SELECT count(*) FROM {current} AND EXISTS "
            " (SELECT 1 FROM embeddings e WHERE e.key = c.embed_key)) AS embedded"
        ).fetchone()
        return record(IndexStats, row)
