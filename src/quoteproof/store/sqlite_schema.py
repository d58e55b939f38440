"""The SQLite schema of a quoteproof index: its tables and migrations, the FTS5
table of each collection and the BM25 search over them, and SQLite's errors in
plain words.

The tables both stores keep are written once (`sql_schema.shared_tables`); here
SQLite spells them with 0 and 1 for booleans and JSON text for lists, and adds the
`embeddings` table and the triggers that keep the audit log append-only. Each
collection has an FTS5 table of its own (`fts_table`) over its current chunks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from quoteproof.store.audit_chain import AUDIT_APPEND_ONLY
from quoteproof.store.sql_schema import SchemaDialect, shared_tables
from quoteproof.store.sql_store import CHUNK_COLUMNS
from quoteproof.store.sqlite_bm25 import TOKENIZE, scores_sql
from quoteproof.store.vectors import embed_key

_SQLITE = SchemaDialect(
    boolean="INTEGER",
    false="0",
    blob="BLOB",
    row_id="INTEGER PRIMARY KEY",
    audit_seq="INTEGER PRIMARY KEY",
    ingested_at="TEXT NOT NULL",
    text_list="TEXT",
    int_list="TEXT",
)
"""SQLite's spelling of the shared tables: 0 and 1 for booleans, JSON text for lists."""

SCHEMA = (
    *shared_tables(_SQLITE).values(),
    "CREATE INDEX IF NOT EXISTS documents_by_path ON documents (source_path, version)",
    "CREATE INDEX IF NOT EXISTS documents_by_collection ON documents (collection, is_current)",
    "CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_id, doc_version, ordinal)",
    "CREATE INDEX IF NOT EXISTS chunks_by_embed_key ON chunks (embed_key)",
    "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS audit_log_no_{event.lower()} BEFORE {event} ON audit_log "
        f"BEGIN SELECT RAISE(ABORT, '{AUDIT_APPEND_ONLY}'); END"
        for event in ("UPDATE", "DELETE")
    ),
)
"""The statements that make (or complete, after migrations) the current schema."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (
        "ALTER TABLE chunks ADD COLUMN language TEXT NOT NULL DEFAULT 'en'",
        "ALTER TABLE chunks ADD COLUMN source_uri TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE chunks ADD COLUMN ocr INTEGER NOT NULL DEFAULT 0",
    ),
    3: (
        "ALTER TABLE chunks ADD COLUMN embed_key TEXT NOT NULL DEFAULT ''",
        "UPDATE chunks SET embed_key = qp_embed_key((SELECT d.title FROM documents d "
        "WHERE d.doc_id = chunks.doc_id AND d.version = chunks.doc_version), section, text)",
    ),
    4: ("ALTER TABLE documents ADD COLUMN collection TEXT NOT NULL DEFAULT 'default'",),
    5: (
        # The log as schema 4 made it (an index of schema 3 has none yet), then signed.
        "CREATE TABLE IF NOT EXISTS audit_log (seq INTEGER PRIMARY KEY, entry_id TEXT NOT NULL "
        "UNIQUE, time TEXT NOT NULL, user TEXT, collections TEXT NOT NULL, body TEXT NOT NULL, "
        "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)",
        "ALTER TABLE audit_log ADD COLUMN signature TEXT",
    ),
    6: (),  # doc_tables, created by SCHEMA
    # an embeddings blob may hold several vectors (a chunk's passages); vectors made
    # before are one per chunk, truncated (vectors.TRUNCATED_VECTORS_SETTING)
    7: (
        # (an index of schema 2 or older has no embeddings table yet)
        "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)",
        "INSERT OR IGNORE INTO meta (key, value) SELECT 'setting:truncated_vectors', '1' "
        "WHERE EXISTS (SELECT 1 FROM embeddings)",
    ),
    # one full-text table per collection (`fts_table`), filled by `_fill_search_tables`
    8: ("DROP TABLE IF EXISTS chunks_fts",),
    9: (),  # kg_triplets, created by SCHEMA
    10: (),  # PostgreSQL's BM25 postings; nothing in SQLite
}
"""The statements that bring an index of schema version N-1 to version N (for N >= 2);
tables new in N are made by `SCHEMA` itself."""

SEARCH_TABLES_SINCE = 8
"""The schema version from which each collection has a full-text table of its own."""


def embed_key_of_row(title: str, section_json: str, text: str) -> str:
    """`vectors.embed_key` of a chunk row (its section as the JSON text SQLite keeps);
    the SQL function `qp_embed_key` of the migration to schema 3."""
    return embed_key(title, tuple(json.loads(section_json)), text)


def fts_table(collection: str) -> str:
    """The name of the FTS5 table of `collection`'s current chunks: the name written
    in hex, so that every valid collection name makes a plain identifier."""
    return "chunks_fts_" + collection.encode("utf-8").hex()


def create_fts_sql(collection: str) -> str:
    """The statement that makes `collection`'s FTS5 table (`fts_table`) if missing."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts_table(collection)} USING fts5 ("
        "text, label, content='chunks', content_rowid='id', "
        f"tokenize='{TOKENIZE}')"
    )


def bm25_search_sql(limit: int, collections: Sequence[str]) -> str:
    """Return the SQL of a BM25 search over the current chunks of `collections` (one
    `?` per collection: the MATCH query), each scored with its own collection's
    statistics, best first (ties by chunk id); only the best `limit` are joined to
    their chunks."""
    scored = " UNION ALL ".join(map(scores_sql, map(fts_table, collections)))
    best = f"SELECT id, score FROM ({scored}) ORDER BY score DESC, id LIMIT {int(limit)}"
    return (
        f"SELECT {CHUNK_COLUMNS}, s.score AS score FROM ({best}) s "
        "JOIN chunks c ON c.id = s.id "
        "JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.doc_version "
        "ORDER BY s.score DESC, c.id"
    )


_CAUSES: dict[tuple[int, ...], str] = {
    (13,): (  # SQLITE_FULL
        "the disk is full (or the database reached its size limit); the change was not "
        "made and the index holds what it held before"
    ),
    (5, 6): "the database is locked: another process kept it busy too long; try again",
    (3, 8, 14): (  # SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN
        "the database cannot be opened for writing: is the index directory or its "
        "database file read-only, or not accessible to this user?"
    ),
    (11, 26): "the database file is damaged or is not a quoteproof index",  # CORRUPT, NOTADB
    (10,): "reading or writing the database file failed (a disk or file system error)",
}
"""Plain words for SQLite's primary result codes (`sqlite3.Error.sqlite_errorcode`)."""


def explain(exc: BaseException) -> str | None:
    """The cause of a SQLite error in plain words, None for other errors."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    return next((cause for codes, cause in _CAUSES.items() if code & 0xFF in codes), None)
