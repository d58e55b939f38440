"""What parsing one file needs and gives: the ingest settings, and `parse_and_chunk`,
which a limited child process (`parse_worker`) runs on a file's bytes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from quoteproof.errors import IngestError
from quoteproof.ingest.chunking import ChunkSettings, ChunkSpan, chunk_document
from quoteproof.ingest.files import DEFAULT_MAX_FILE_MB, parse_bytes, source_name
from quoteproof.ingest.formats import ParseOptions
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.model import DEFAULT_COLLECTION, ParsedDocument
from quoteproof.store.base import check_collection_name


@dataclass(frozen=True)
class IngestSettings:
    """How files are ingested: size limit, OCR, chunk sizes, the collection new
    versions go to (raises ValueError for an invalid collection name), and what
    parsing one file may cost (`limits`).

    The collection is set on new and changed files only: a file already stored
    unchanged keeps the collection of its current version.
    """

    max_file_mb: float = DEFAULT_MAX_FILE_MB
    ocr: bool = False
    chunking: ChunkSettings = field(default_factory=ChunkSettings)
    collection: str = DEFAULT_COLLECTION
    limits: ParseLimits = field(default_factory=ParseLimits)

    def __post_init__(self) -> None:
        check_collection_name(self.collection)


@dataclass(frozen=True)
class Parsed:
    """The outcome of `parse_and_chunk`: a document and its chunk spans."""

    document: ParsedDocument
    spans: list[ChunkSpan]


def parse_and_chunk(raw: bytes, path: Path, settings: IngestSettings) -> Parsed | str:
    """Parse and chunk one file's bytes; return the result, or the cause of failure.

    Pure (touches no store), so it can run in a worker process; failures come back
    as a string because `IngestError` does not survive pickling.
    """
    try:
        document = parse_bytes(raw, path, ParseOptions(ocr=settings.ocr))
        if "\x00" in document.text:
            raise IngestError(
                source_name(path), "the text contains NUL characters (a binary file?)"
            )
        spans = chunk_document(document, settings.chunking)
        if not spans:
            raise IngestError(source_name(path), "empty document: no text to index")
    except IngestError as exc:
        return exc.cause
    return Parsed(document, spans)
