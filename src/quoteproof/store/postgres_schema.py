"""The PostgreSQL schema of a quoteproof index.

The tables both stores keep are written once (`sql_schema.shared_tables`); here
PostgreSQL spells them with native types (arrays, booleans, bytea, timestamps) and
three additions that keep search over current versions cheap:
`chunks.is_current` (a copy of `documents.is_current`), `chunks.collection` (a copy
of `documents.collection`, which never changes) and `chunks.search_text`, a
generated tsvector of the chunk text (weight A) and label (weight C) under the
`TEXT_SEARCH_CONFIG` configuration, with a GIN index over current chunks only. The
`embeddings.vector` column and its HNSW index are added by `embedding_ddl` once the
dimension is known. `bm25_collection_stats` holds, per collection, the number of
current chunks and of their tokens (positions of `search_text`), kept up to date by
every write, for BM25; `bm25_postings` and `bm25_terms` are the impact-ordered
postings of bounded BM25 (`postgres_bm25`).

The audit log (`audit_log`) is append-only: triggers refuse UPDATE, DELETE and
TRUNCATE. Its `time` and `collections` (JSON) are kept as the exact text they were
hashed as.

The tables live in the first schema of the connection's `search_path` (`public`
unless the URL sets `options=-csearch_path=...`).
"""

from __future__ import annotations

from quoteproof.store.audit_chain import AUDIT_APPEND_ONLY
from quoteproof.store.postgres_bm25 import DDL as BM25_POSTINGS_DDL
from quoteproof.store.postgres_bm25 import FILL as BM25_POSTINGS_FILL
from quoteproof.store.sql_schema import SchemaDialect, shared_tables

WRITE_LOCK = 0x71756F74
"""The `pg_advisory_xact_lock` key every write transaction takes: writers of one
database queue up, as SQLite's `BEGIN IMMEDIATE` makes them."""

TEXT_SEARCH_CONFIG = "quoteproof_english"
"""The text search configuration of chunks and queries: PostgreSQL's `english`
with its Snowball stemmer but no stopwords, as the SQLite store's porter tokenizer
(questions drop stopwords themselves, unless nothing else is left)."""

_POSTGRES = SchemaDialect(
    boolean="BOOLEAN",
    false="false",
    blob="BYTEA",
    row_id="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    audit_seq="BIGINT PRIMARY KEY CHECK (seq > 0)",
    ingested_at="TIMESTAMPTZ NOT NULL DEFAULT now()",
    text_list="TEXT[]",
    int_list="INTEGER[]",
    document_keys=",\n    UNIQUE (source_path, version)",
    chunk_columns=f""",
    is_current BOOLEAN NOT NULL,
    collection TEXT NOT NULL DEFAULT 'default',
    search_text TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, text), 'A')
        || setweight(to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, label), 'C')
    ) STORED,
    UNIQUE (doc_id, doc_version, ordinal)""",
    key_order_column=",\n    added BIGINT GENERATED ALWAYS AS IDENTITY",
)
"""PostgreSQL's spelling of the shared tables: native types, and the copies and
search column of `chunks`."""

_TABLES = shared_tables(_POSTGRES)

_DOCUMENTS_BY_COLLECTION = (
    "CREATE INDEX IF NOT EXISTS documents_by_collection ON documents (collection) WHERE is_current"
)

_AUDIT_TRIGGERS = f"""CREATE OR REPLACE FUNCTION quoteproof_audit_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{AUDIT_APPEND_ONLY}';
END
$$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION quoteproof_audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION quoteproof_audit_append_only()"""
"""The audit log is append-only: triggers refuse UPDATE, DELETE and TRUNCATE."""

_SCHEMA_7_DDL = """ALTER TABLE embeddings ADD COLUMN IF NOT EXISTS part INTEGER NOT NULL DEFAULT 0;
ALTER TABLE embeddings DROP CONSTRAINT IF EXISTS embeddings_pkey;
ALTER TABLE embeddings ADD PRIMARY KEY (key, part)"""
"""A key holds one row per passage of its chunk (`part` 0, 1, ...)."""

_SCHEMA_8_DDL = """CREATE TABLE IF NOT EXISTS bm25_collection_stats (
    collection TEXT PRIMARY KEY,
    chunks BIGINT NOT NULL,
    tokens BIGINT NOT NULL
);
INSERT INTO bm25_collection_stats (collection, chunks, tokens)
    SELECT collection, count(*), coalesce(sum(length(search_text)), 0) FROM chunks
    WHERE is_current GROUP BY collection ON CONFLICT (collection) DO NOTHING;
DROP TABLE IF EXISTS bm25_stats"""
"""BM25 statistics per collection (they were the whole index's, in `bm25_stats`)."""

SCHEMA_DDL = ";\n".join(
    [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"CREATE TEXT SEARCH DICTIONARY {TEXT_SEARCH_CONFIG}_stem "
        "(TEMPLATE = snowball, Language = english)",
        f"CREATE TEXT SEARCH CONFIGURATION {TEXT_SEARCH_CONFIG} (COPY = english)",
        f"ALTER TEXT SEARCH CONFIGURATION {TEXT_SEARCH_CONFIG} "
        f"ALTER MAPPING REPLACE english_stem WITH {TEXT_SEARCH_CONFIG}_stem",
        *_TABLES.values(),
        "CREATE INDEX IF NOT EXISTS chunks_search ON chunks USING gin (search_text) "
        "WHERE is_current",
        "CREATE INDEX IF NOT EXISTS chunks_by_embed_key ON chunks (embed_key) WHERE is_current",
        _DOCUMENTS_BY_COLLECTION,
        "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY)",
        _AUDIT_TRIGGERS,
        _SCHEMA_7_DDL,
        _SCHEMA_8_DDL,
        *BM25_POSTINGS_DDL,
    ]
)
"""The schema of a new index (one script)."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    4: (
        "ALTER TABLE documents ADD COLUMN collection TEXT NOT NULL DEFAULT 'default'",
        "ALTER TABLE chunks ADD COLUMN collection TEXT NOT NULL DEFAULT 'default'",
        _DOCUMENTS_BY_COLLECTION,
        _TABLES["audit_log"],  # with schema 5's `signature` column
        _AUDIT_TRIGGERS,
        _TABLES["api_keys"],
    ),
    5: ("ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS signature TEXT",),
    6: (_TABLES["doc_tables"],),
    7: (
        # vectors made before are one per chunk, truncated (vectors.TRUNCATED_VECTORS_SETTING)
        "INSERT INTO meta (key, value) SELECT 'setting:truncated_vectors', '1' "
        "WHERE EXISTS (SELECT 1 FROM embeddings) ON CONFLICT (key) DO NOTHING",
        *_SCHEMA_7_DDL.split(";\n"),
    ),
    8: tuple(_SCHEMA_8_DDL.split(";\n")),
    9: (_TABLES["kg_triplets"], _TABLES["kg_triplets_by_collection"]),
    10: (*BM25_POSTINGS_DDL, *BM25_POSTINGS_FILL),
}
"""Statements that bring a PostgreSQL index of schema version N-1 to N (the first
PostgreSQL index had schema 3)."""

HNSW_MAX_DIMENSIONS = 2000
"""pgvector indexes vectors of at most this many dimensions; longer ones are
searched exactly."""


def embedding_ddl(dimensions: int) -> list[str]:
    """The statements that give `embeddings` its `vector(dimensions)` column and the
    HNSW index (cosine distance, pgvector's default m=16, ef_construction=64)."""
    statements = [f"ALTER TABLE embeddings ADD COLUMN vector vector({int(dimensions)}) NOT NULL"]
    if dimensions <= HNSW_MAX_DIMENSIONS:
        statements.append(
            "CREATE INDEX embeddings_hnsw ON embeddings USING hnsw (vector vector_cosine_ops)"
        )
    return statements
