"""The `Store` protocol: what every index backend (SQLite, PostgreSQL) provides.

A store keeps every version of every ingested document with its chunks, and a
full-text (BM25) index over the chunks of current versions only. Writes of one
document are atomic: a store never holds half a document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from quoteproof.model import Chunk, Document, Hit, Layout

SCHEMA_VERSION = 2


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


@dataclass(frozen=True)
class NewDocument:
    """A parsed document about to be stored as the next version of `source_path`.

    `layout` maps the text to pages; `original` keeps the file's bytes where they
    are needed later (PDFs: character boxes are read from them on demand).
    """

    source_path: str
    title: str
    format: str
    text: str
    file_sha256: str
    chunks: tuple[NewChunk, ...]
    layout: Layout | None = None
    original: bytes | None = None


@dataclass(frozen=True)
class CurrentVersion:
    """The newest stored version of a source path, enough to tell whether it changed."""

    doc_id: str
    version: int
    sha256: str
    file_sha256: str


@dataclass(frozen=True)
class IndexStats:
    """Counts of what an index holds (current versions only, except `versions`)."""

    documents: int
    versions: int
    chunks: int


class Store(Protocol):
    """Persistent storage of documents, chunks and the BM25 index."""

    location: str

    def current_version(self, source_path: str) -> CurrentVersion | None:
        """Return the newest version stored for `source_path`, or None if never ingested."""
        ...

    def add_document(self, new: NewDocument) -> Document:
        """Store `new` as the next version of its source path, atomically.

        Allocates the document id (stable per source path), the version number and
        the chunk refs; earlier versions stay readable but leave the search index.
        """
        ...

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """Return one stored version (the newest when `version` is None), or None."""
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

    def source_paths_with_title(self, title: str) -> list[str]:
        """Return the source paths of stored documents whose title is `title`."""
        ...

    def search_bm25(self, query: str, limit: int) -> list[Hit]:
        """Return up to `limit` current chunks ranked by BM25 for `query`, best first."""
        ...

    def stats(self) -> IndexStats:
        """Return counts of documents, versions and chunks."""
        ...

    def close(self) -> None:
        """Release the connection; the store must not be used afterwards."""
        ...
