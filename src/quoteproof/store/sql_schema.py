"""The tables both stores keep, written once (`shared_tables`): each database names
its own column types and extra clauses in a `SchemaDialect`.

What is a database's own stays with it: SQLite's full-text tables, vector blobs
and triggers (`sqlite`), PostgreSQL's text search configuration, search columns,
vector column, partial indexes and triggers (`postgres_schema`). Every statement
is `CREATE ... IF NOT EXISTS`, so a migration may run it on an older index to add
a table that index lacks.

The rule of schema versions is both stores' too: an index of a newer schema than
this quoteproof's (`base.SCHEMA_VERSION`) is refused (`check_schema_version`), an
older one is brought up to it by each database's migrations, in order
(`migration_statements`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quoteproof.errors import StoreError
from quoteproof.store.base import SCHEMA_VERSION

__all__ = ["SchemaDialect", "check_schema_version", "migration_statements", "shared_tables"]


def check_schema_version(location: str, found: int) -> int:
    """Return `found`, the schema version of the index at `location`; raise StoreError
    when it is newer than this quoteproof understands (`SCHEMA_VERSION`)."""
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"index {location} has schema {found}, newer than this "
            f"quoteproof understands ({SCHEMA_VERSION}); upgrade quoteproof"
        )
    return found


def migration_statements(
    location: str, found: int, migrations: Mapping[int, Sequence[str]]
) -> list[str]:
    """The statements, in order, that bring the index at `location` from schema
    `found` to `SCHEMA_VERSION` (`migrations[N]` brings N-1 to N); raise StoreError
    when a step is missing (no migration reads an index that old)."""
    statements: list[str] = []
    for version in range(found + 1, SCHEMA_VERSION + 1):
        if version not in migrations:
            raise StoreError(f"index {location} has schema {found}, which cannot be read")
        statements += migrations[version]
    return statements


@dataclass(frozen=True)
class SchemaDialect:
    """How a database spells what the shared tables need."""

    boolean: str
    """The type of a true/false column."""
    false: str
    """The literal false, for defaults."""
    blob: str
    """The type of a column of bytes."""
    row_id: str
    """The column type of a generated row number that is the table's primary key."""
    audit_seq: str
    """The column type of the audit log's `seq` (the key; numbered by the store)."""
    ingested_at: str
    """The column type of `documents.ingested_at`, with its constraints."""
    text_list: str
    """The type of a list of texts (a chunk's section path)."""
    int_list: str
    """The type of a list of integers (a chunk's pages)."""
    document_keys: str = ""
    """Constraints `documents` has beside its primary key (each after `, `)."""
    chunk_columns: str = ""
    """Columns and constraints `chunks` has beside the shared ones (each after `, `)."""
    key_order_column: str = ""
    """A column of `api_keys` that numbers keys as they are added (after `, `), for
    a database without row ids."""


def shared_tables(dialect: SchemaDialect) -> dict[str, str]:
    """The statements that create the tables both stores keep, as `dialect` spells
    them, and the indexes both have (documents by title, triplets by collection),
    by the name they create,
    in an order that creates a table before those that refer to it."""
    d = dialect
    return {
        "meta": "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "documents": f"""CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    source_path TEXT NOT NULL,
    title TEXT NOT NULL,
    format TEXT NOT NULL,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    ingested_at {d.ingested_at},
    is_current {d.boolean} NOT NULL,
    collection TEXT NOT NULL DEFAULT 'default',
    PRIMARY KEY (doc_id, version){d.document_keys}
)""",
        "documents_by_title": "CREATE INDEX IF NOT EXISTS documents_by_title ON documents (title)",
        "chunks": f"""CREATE TABLE IF NOT EXISTS chunks (
    id {d.row_id},
    ref TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    doc_version INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    section {d.text_list} NOT NULL,
    label TEXT NOT NULL,
    pages {d.int_list},
    language TEXT NOT NULL DEFAULT 'en',
    source_uri TEXT NOT NULL DEFAULT '',
    ocr {d.boolean} NOT NULL DEFAULT {d.false},
    embed_key TEXT NOT NULL{d.chunk_columns},
    FOREIGN KEY (doc_id, doc_version) REFERENCES documents (doc_id, version)
)""",
        **{
            table: f"""CREATE TABLE IF NOT EXISTS {table} (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    {columns},
    PRIMARY KEY (doc_id, version),
    FOREIGN KEY (doc_id, version) REFERENCES documents (doc_id, version)
)"""
            for table, columns in (
                ("layouts", f"pages TEXT NOT NULL,\n    char_runs {d.blob}"),
                ("doc_tables", "tables TEXT NOT NULL"),
                ("originals", f"content {d.blob} NOT NULL"),
            )
        },
        "audit_log": f"""CREATE TABLE IF NOT EXISTS audit_log (
    seq {d.audit_seq},
    entry_id TEXT NOT NULL UNIQUE,
    time TEXT NOT NULL,
    "user" TEXT,
    collections TEXT NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    signature TEXT
)""",
        "kg_triplets": f"""CREATE TABLE IF NOT EXISTS kg_triplets (
    triplet_id TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    subject TEXT NOT NULL,
    relation TEXT NOT NULL,
    object TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    object_key TEXT NOT NULL,
    graph_file TEXT NOT NULL,
    file_row INTEGER NOT NULL,
    doc_id TEXT,
    page INTEGER,
    quote TEXT,
    is_current {d.boolean} NOT NULL
)""",
        "kg_triplets_by_collection": (
            "CREATE INDEX IF NOT EXISTS kg_triplets_by_collection "
            "ON kg_triplets (collection, is_current)"
        ),
        "api_keys": f"""CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY{d.key_order_column},
    name TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    collections TEXT NOT NULL,
    created TEXT NOT NULL,
    revoked {d.boolean} NOT NULL DEFAULT {d.false}
)""",
    }
