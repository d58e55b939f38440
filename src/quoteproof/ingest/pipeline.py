"""Ingesting one file into a store: read, parse, chunk, label, store as a new version."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from quoteproof.errors import IngestError
from quoteproof.ingest.chunking import ChunkSettings, ChunkSpan, chunk_document
from quoteproof.ingest.files import DEFAULT_MAX_FILE_MB, ParseOptions, parse_bytes, read_file
from quoteproof.ingest.labels import display_title, make_label, number_duplicates
from quoteproof.model import ParsedDocument, sha256_text
from quoteproof.store.base import NewChunk, NewDocument, Store

IngestStatus = Literal["added", "updated", "unchanged", "failed"]

_KEEP_ORIGINAL = frozenset({"pdf"})
"""Formats whose file bytes are stored: PDF character boxes are read from them."""


@dataclass(frozen=True)
class IngestSettings:
    """How files are ingested: size limit, OCR, and chunk sizes."""

    max_file_mb: float = DEFAULT_MAX_FILE_MB
    ocr: bool = False
    chunking: ChunkSettings = field(default_factory=ChunkSettings)


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file: its status, the stored version, or the error.

    `pages` counts the pages parsed (0 for unpaged formats and skipped files);
    `warnings` are notes that did not stop ingest ("page 7 has no text layer").
    """

    path: str
    status: IngestStatus
    doc_id: str | None = None
    version: int | None = None
    chunks: int = 0
    pages: int = 0
    error: str | None = None
    warnings: tuple[str, ...] = ()


def _source_uri(path: Path, pages: tuple[int, ...] | None) -> str:
    """A URI that opens the source at the chunk: `file:///…/x.pdf#page=4` when paged."""
    uri = path.as_uri()
    return f"{uri}#page={pages[0]}" if pages else uri


def build_chunks(
    parsed: ParsedDocument, spans: list[ChunkSpan], path: Path, shown_title: str
) -> tuple[NewChunk, ...]:
    """Turn chunk spans into labelled chunks with pages, language, URI and OCR flag.

    Labels are unique within the document (`labels.number_duplicates`).
    """
    layout = parsed.layout
    pages = [layout.pages_of(s.start, s.end) if layout else None for s in spans]
    labels = number_duplicates(
        [
            make_label(parsed.title, s.section, p, shown_title=shown_title)
            for s, p in zip(spans, pages, strict=True)
        ]
    )
    ocr_pages = set(layout.ocr_pages) if layout else set()
    return tuple(
        NewChunk(
            start=s.start,
            end=s.end,
            section=s.section,
            label=label,
            pages=p or None,
            language=parsed.language,
            source_uri=_source_uri(path, p),
            ocr=bool(p and ocr_pages.intersection(p)),
        )
        for s, p, label in zip(spans, pages, labels, strict=True)
    )


def ingest_file(store: Store, path: Path, settings: IngestSettings | None = None) -> IngestResult:
    """Ingest `path` (absolute) into `store` and say what happened.

    An unchanged file (same bytes, or same canonical text) is left alone; a changed
    one becomes a new version. Errors are returned as a `failed` result naming the
    cause, with nothing written to the store (writes are one transaction).
    """
    settings = settings or IngestSettings()
    source_path = str(path)
    try:
        raw = read_file(path, settings.max_file_mb)
        file_sha = hashlib.sha256(raw).hexdigest()
        current = store.current_version(source_path)
        if current is not None and current.file_sha256 == file_sha:
            return IngestResult(source_path, "unchanged", current.doc_id, current.version)
        parsed = parse_bytes(raw, path, ParseOptions(ocr=settings.ocr))
        page_count = len(parsed.layout.page_starts) if parsed.layout else 0
        if current is not None and current.sha256 == sha256_text(parsed.text):
            return IngestResult(
                source_path, "unchanged", current.doc_id, current.version, pages=page_count
            )
        spans = chunk_document(parsed, settings.chunking)
        if not spans:
            raise IngestError(source_path, "empty document: no text to index")
        version = current.version + 1 if current is not None else 1
        shown_title = display_title(
            parsed.title, source_path, version, store.source_paths_with_title(parsed.title)
        )
        new = NewDocument(
            source_path=source_path,
            title=parsed.title,
            format=parsed.format,
            text=parsed.text,
            file_sha256=file_sha,
            chunks=build_chunks(parsed, spans, path, shown_title),
            layout=parsed.layout,
            original=raw if parsed.format in _KEEP_ORIGINAL else None,
        )
        document = store.add_document(new)
    except IngestError as exc:
        return IngestResult(source_path, "failed", error=exc.cause)
    status: IngestStatus = "added" if document.version == 1 else "updated"
    return IngestResult(
        source_path,
        status,
        document.doc_id,
        document.version,
        chunks=len(new.chunks),
        pages=page_count,
        warnings=parsed.warnings,
    )
