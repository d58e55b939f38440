"""Ingesting one file into a store: parse, chunk, label, store as a new version."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from quoteproof.errors import IngestError
from quoteproof.ingest.chunking import chunk_document, make_label
from quoteproof.ingest.files import parse_bytes, read_file
from quoteproof.model import sha256_text
from quoteproof.store.base import NewChunk, NewDocument, Store

IngestStatus = Literal["added", "updated", "unchanged", "failed"]


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file: its status, the stored version, or the error."""

    path: str
    status: IngestStatus
    doc_id: str | None = None
    version: int | None = None
    chunks: int = 0
    error: str | None = None


def ingest_file(store: Store, path: Path) -> IngestResult:
    """Ingest `path` (absolute) into `store` and say what happened.

    An unchanged file (same bytes, or same canonical text) is left alone; a changed
    one becomes a new version. Errors are returned as a `failed` result naming the
    cause, with nothing written to the store.
    """
    source_path = str(path)
    try:
        raw = read_file(path)
        file_sha = hashlib.sha256(raw).hexdigest()
        current = store.current_version(source_path)
        if current is not None and current.file_sha256 == file_sha:
            return IngestResult(source_path, "unchanged", current.doc_id, current.version)
        parsed = parse_bytes(raw, path)
        if current is not None and current.sha256 == sha256_text(parsed.text):
            return IngestResult(source_path, "unchanged", current.doc_id, current.version)
        spans = chunk_document(parsed)
        if not spans:
            raise IngestError(source_path, "empty document: no text to index")
        new = NewDocument(
            source_path=source_path,
            title=parsed.title,
            format=parsed.format,
            text=parsed.text,
            file_sha256=file_sha,
            chunks=tuple(
                NewChunk(
                    s.start, s.end, s.section, make_label(parsed.title, s.section, s.paragraph)
                )
                for s in spans
            ),
        )
        document = store.add_document(new)
    except IngestError as exc:
        return IngestResult(source_path, "failed", error=exc.cause)
    status: IngestStatus = "added" if document.version == 1 else "updated"
    return IngestResult(source_path, status, document.doc_id, document.version, len(new.chunks))
