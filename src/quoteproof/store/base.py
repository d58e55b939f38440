"""The `Store` protocol: what every index backend (SQLite, PostgreSQL) provides.

A store keeps every version of every ingested document with its chunks, a
full-text (BM25) index over the chunks of current versions only, and dense vectors
of chunks (`store.vectors`: how they are keyed and checked). Writes of one document
are atomic: a store never holds half a document. This module holds the protocol and
the records it speaks in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from quoteproof.errors import UsageError
from quoteproof.model import DEFAULT_COLLECTION, Chunk, Document, Hit, Layout, SourceTable
from quoteproof.store.vectors import EmbeddingSpace, PendingEmbedding, Vectors
from quoteproof.store.versions import VersionOutcome

if TYPE_CHECKING:
    from quoteproof.model import NewTriplet, Triplet
    from quoteproof.store.kg import ImportOutcome

SCHEMA_VERSION = 10

_COLLECTION_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def check_collection_name(name: str) -> str:
    """Return `name` when it is a valid collection name (1 to 64 ASCII letters, digits,
    `-`, `_` or `.`); raise `UsageError` saying what is wrong otherwise."""
    if not isinstance(name, str) or _COLLECTION_NAME.fullmatch(name) is None:
        raise UsageError(
            f"invalid collection name {name!r}: use 1 to 64 letters, digits, '-', '_' or '.'"
        )
    return name


@dataclass(frozen=True)
class NewChunk:
    """A chunk about to be stored: a span of the new document's text, its label and
    location metadata (see `Chunk`)."""

    start: int
    end: int
    section: tuple[str, ...]
    label: str
    pages: tuple[int, ...] | None = None
    language: str = "en"
    source_uri: str = ""
    ocr: bool = False


ChunkMaker = Callable[[int, list[str]], tuple[NewChunk, ...]]
"""Makes a new document's chunks once the store has decided its version: called,
inside the write transaction, with the version number and the source paths of
the stored documents with the same title (both named in labels)."""


@dataclass(frozen=True)
class NewDocument:
    """A parsed document about to be stored as the next version of `source_path`.

    `chunks` are its chunks, or a `ChunkMaker` that makes them with the version
    number the store decides (chunk labels name it). `layout` maps the text to
    pages; `original` keeps the file's bytes where they are needed later (PDFs:
    character boxes are read from them on demand); `tables` the row and cell spans
    of the document's tables.
    """

    source_path: str
    title: str
    format: str
    text: str
    file_sha256: str
    chunks: tuple[NewChunk, ...] | ChunkMaker
    layout: Layout | None = None
    original: bytes | None = None
    collection: str = DEFAULT_COLLECTION
    tables: tuple[SourceTable, ...] = ()


@dataclass(frozen=True)
class StoredDocument:
    """What `Store.store_document` did (`versions.decide_version`): `outcome`, and the
    version of the path that holds the text now (the new one, or the unchanged
    current one)."""

    document: Document
    outcome: VersionOutcome


@dataclass(frozen=True)
class CurrentVersion:
    """The newest stored version of a source path, enough to tell whether it changed."""

    doc_id: str
    version: int
    sha256: str
    file_sha256: str


@dataclass(frozen=True)
class DocumentSummary:
    """A current document version without its text: what `Store.list_documents` lists."""

    doc_id: str
    version: int
    source_path: str
    title: str
    format: str
    sha256: str
    collection: str = DEFAULT_COLLECTION


@dataclass(frozen=True)
class AuditEntry:
    """One entry of the append-only, hash-chained audit log.

    `seq` counts from 1 without gaps; `entry_id` is the public id (unguessable);
    `time` is ISO 8601 UTC; `user` who asked (None: unknown); `collections` the
    collections the question was asked over; `body` the JSON text of what was
    recorded (the answer). `hash` is `audit_chain.audit_hash(prev_hash, ...)` of this
    entry and `prev_hash` the previous entry's hash (`GENESIS_HASH` for the first).
    `signature` is `audit_chain.entry_signature` of `hash` under the operator's key,
    None for an entry appended without one (all entries before schema 5).
    """

    seq: int
    entry_id: str
    time: str
    user: str | None
    collections: tuple[str, ...]
    body: str
    prev_hash: str
    hash: str
    signature: str | None = None


class NewEntry(NamedTuple):
    """An audit log entry about to be appended (`Store.append_audit`): the fields of
    `AuditEntry` the caller gives; the store adds its `seq`, hashes and signature."""

    entry_id: str
    time: str
    user: str | None
    collections: tuple[str, ...]
    body: str


@dataclass(frozen=True)
class ApiKey:
    """An API key as stored: never the secret itself, only its SHA-256.

    A key is presented as `qp_<key_id>_<secret>`; it grants access to `collections`
    only. `created` is ISO 8601 UTC.
    """

    key_id: str
    name: str
    secret_sha256: str
    collections: tuple[str, ...]
    created: str
    revoked: bool = False


@dataclass(frozen=True)
class IndexStats:
    """Counts of what an index holds (current versions only, except `versions`);
    `embedded` counts current chunks that have a vector."""

    documents: int
    versions: int
    chunks: int
    embedded: int = 0


def setting_key(name: str) -> str:
    """The key under which stores keep the index-wide setting `name` in their `meta`
    table (beside internal keys such as the schema version)."""
    return f"setting:{name}"


class Store(Protocol):
    """Persistent storage of documents, chunks and the BM25 index."""

    location: str

    def current_version(self, source_path: str) -> CurrentVersion | None:
        """Return the newest version stored for `source_path`, or None if never ingested."""
        ...

    def latest_version(self, source_path: str) -> int | None:
        """Return the newest version number stored for `source_path`, retired or not
        (None if never ingested)."""
        ...

    def store_document(self, new: NewDocument) -> StoredDocument:
        """Store `new` as the next version of its source path, atomically, and say
        what was done.

        In one write transaction: decides the version (`versions.decide_version`:
        unchanged when the current version has the same text, else a new version
        numbered after every stored one, retiring the current one), makes the
        chunks with that number when `new.chunks` is a `ChunkMaker`, and writes the
        document, its chunks (their refs allocated) and search entries. Earlier
        versions stay readable but leave the search index. When unchanged, nothing
        is written and the current version is returned.
        """
        ...

    def add_document(self, new: NewDocument) -> Document:
        """`store_document(new).document`: the version that holds `new`'s text."""
        ...

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """Return one stored version (the newest when `version` is None), or None."""
        ...

    def list_documents(self, collections: Iterable[str] | None = None) -> list[DocumentSummary]:
        """Return the current version of every stored document (without its text),
        ordered by source path (code-point order); only those in `collections` when
        given. Retired documents are not listed."""
        ...

    def count_documents(self, collections: Iterable[str] | None = None) -> int:
        """Return how many documents `list_documents(collections)` lists, counted
        without reading them (or any chunk)."""
        ...

    def retire_document(self, doc_id: str) -> bool:
        """Take every version of `doc_id` out of search and listing, keeping the stored
        versions readable (`get_document`, so old receipts still verify). Ingesting
        the same source path again makes a new, current version. Returns False when
        there is no such current document."""
        ...

    def get_chunk(self, ref: str) -> Chunk | None:
        """Return the chunk with `ref` (of any version), or None."""
        ...

    def chunks_of(self, doc_id: str, version: int) -> list[Chunk]:
        """Return the chunks of one document version, in document order."""
        ...

    def neighbours(self, chunk: Chunk, width: int = 1) -> list[Chunk]:
        """Return the chunks within `width` places of `chunk` in its version, in order."""
        ...

    def get_layout(self, doc_id: str, version: int) -> Layout | None:
        """Return the page layout of one document version, or None if it has none."""
        ...

    def get_original(self, doc_id: str, version: int) -> bytes | None:
        """Return the stored original file bytes of one version (PDFs), or None."""
        ...

    def get_tables(self, doc_id: str, version: int) -> tuple[SourceTable, ...]:
        """Return the tables (row and cell spans) of one document version, in text
        order; () when it has none, or was stored before tables were kept."""
        ...

    def source_paths_with_title(self, title: str) -> list[str]:
        """Return the source paths of stored documents whose title is `title`."""
        ...

    def search_bm25(
        self, query: str, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by BM25 for `query`, best first;
        with `collections`, only chunks of documents in those collections (filtered
        before ranking is cut, so a collection's results never depend on another's).
        Each chunk is scored with the BM25 statistics of its own collection: its score
        depends on nothing another collection holds."""
        ...

    def search_dense(
        self, vector: Vectors, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks that have vectors, ranked by cosine
        similarity to `vector` (one unit-length row), best first; `score` is the
        cosine similarity of the chunk's best passage (its vector most similar).
        `collections` filters as in `search_bm25`."""
        ...

    def embedding_space(self) -> EmbeddingSpace | None:
        """Return the model and dimension of the index's vectors, None before any."""
        ...

    def set_embedding_space(self, space: EmbeddingSpace) -> None:
        """Record `space` as the index's embedding model (once).

        Raises StoreError when the index already records a different one: vectors
        of two models cannot be compared.
        """
        ...

    def pending_embeddings(self) -> list[PendingEmbedding]:
        """Return what current chunks lack a vector for, one item per distinct key."""
        ...

    def add_embeddings(
        self, keys: list[str], vectors: Vectors, parts: Sequence[int] | None = None
    ) -> None:
        """Store the rows of `vectors` under `keys` in one transaction: `parts[i]`
        consecutive rows (the vectors of a chunk's passages, in order) under
        `keys[i]`, one row each when `parts` is None. A key already stored keeps
        its vectors. Raises StoreError before `set_embedding_space`, when the
        vectors' dimension differs from the recorded one, or the rows do not add up."""
        ...

    def get_setting(self, name: str) -> str | None:
        """Return an index-wide setting (e.g. the calibrated refusal threshold)."""
        ...

    def put_setting(self, name: str, value: str) -> None:
        """Store an index-wide setting, replacing any earlier value."""
        ...

    def delete_setting(self, name: str) -> None:
        """Forget an index-wide setting (nothing happens when it was never set)."""
        ...

    def append_audit(self, new: NewEntry, key: bytes | None = None) -> AuditEntry:
        """Append `new` to the audit log atomically (`audit_chain.append_entry`):
        the next `seq`, chained to the previous entry's hash, and the new head recorded
        as the setting `AUDIT_HEAD_SETTING` in the same transaction, both signed with
        `key` when given. Concurrent appends from several processes get distinct,
        gapless `seq` numbers. Entries can never be changed or deleted through the
        store."""
        ...

    def audit_entries(self, after_seq: int = 0, limit: int | None = None) -> list[AuditEntry]:
        """Return the audit entries with `seq > after_seq`, in order, at most `limit`."""
        ...

    def get_audit_entry(self, entry_id: str) -> AuditEntry | None:
        """Return the audit entry with the public id `entry_id`, or None."""
        ...

    def add_api_key(self, key: ApiKey) -> None:
        """Store a new API key (its `key_id` must be new)."""
        ...

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """Return the key with `key_id` (revoked ones too), or None."""
        ...

    def list_api_keys(self) -> list[ApiKey]:
        """Return every key, oldest first."""
        ...

    def revoke_api_key(self, key_id: str) -> bool:
        """Mark a key revoked; False when there is no such key."""
        ...

    def stats(self) -> IndexStats:
        """Return counts of documents, versions and chunks."""
        ...

    def import_triplets(
        self, collection: str, graph_file: str, triplets: Sequence[NewTriplet]
    ) -> ImportOutcome:
        """Make `triplets` the current triplets of `graph_file` in `collection`, in
        one transaction (`kg.TripletStore.import_triplets`)."""
        ...

    def list_triplets(
        self, collections: Iterable[str] | None = None, graph_file: str | None = None
    ) -> list[Triplet]:
        """The current triplets, of `collections` and `graph_file` when given."""
        ...

    def get_triplet(self, triplet_id: str) -> Triplet | None:
        """The triplet with `triplet_id`, current or retired, or None."""
        ...

    def retire_triplets(self, triplet_ids: Collection[str]) -> int:
        """Retire the current triplets among `triplet_ids`; return how many were."""
        ...

    def triplet_entities(self, collections: Iterable[str] | None = None) -> list[str]:
        """The distinct entity keys of current triplets of `collections`."""
        ...

    def triplets_with_entities(
        self, keys: Collection[str], collections: Iterable[str] | None = None
    ) -> list[Triplet]:
        """The current triplets of `collections` with a subject or object in `keys`."""
        ...

    def close(self) -> None:
        """Release the connection; the store must not be used afterwards."""
        ...
