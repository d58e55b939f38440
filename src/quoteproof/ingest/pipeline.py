"""Ingesting one file into a store: read, parse, chunk, label, store as a new version."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from quoteproof.errors import IngestError
from quoteproof.ingest.chunking import ChunkSpan
from quoteproof.ingest.files import Discovery, format_of, read_file, source_name
from quoteproof.ingest.parse_worker import ParseFunction, ParseWorker
from quoteproof.ingest.parsing import IngestSettings, Parsed
from quoteproof.model import ParsedDocument
from quoteproof.store.base import NewChunk, NewDocument, Store
from quoteproof.text.labels import display_title, make_label, number_duplicates

IngestStatus = Literal["added", "updated", "unchanged", "failed", "skipped"]


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file: its status, the stored version, the error, or
    (status "skipped": a file a folder walk left out) the `reason`.

    `path` is the file's `source_name`. `pages` counts the pages parsed (0 for
    unpaged formats and skipped files); `warnings` are notes that did not stop
    ingest ("page 7 has no text layer").
    """

    path: str
    status: IngestStatus
    doc_id: str | None = None
    version: int | None = None
    chunks: int = 0
    pages: int = 0
    error: str | None = None
    warnings: tuple[str, ...] = ()
    reason: str | None = None


def skipped_results(discovery: Discovery) -> list[IngestResult]:
    """A "skipped" result for each file `discovery` left out, with its reason."""
    return [
        IngestResult(source_name(s.path), "skipped", reason=s.reason) for s in discovery.skipped
    ]


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


@dataclass(frozen=True)
class PendingFile:
    """A file read and found new or changed: what parsing and storing need (see
    `prepare_file`, `parse_and_chunk`, `store_parsed`)."""

    path: Path
    raw: bytes
    file_sha256: str


def prepare_file(store: Store, path: Path, settings: IngestSettings) -> PendingFile | IngestResult:
    """Read `path`; return an `unchanged` result when its bytes are already stored,
    a `failed` one when it cannot be read or is over the size limit."""
    name = source_name(path)
    try:
        raw = read_file(path, settings.max_file_mb)
    except IngestError as exc:
        return IngestResult(name, "failed", error=exc.cause)
    file_sha = hashlib.sha256(raw).hexdigest()
    current = store.current_version(name)
    if current is not None and current.file_sha256 == file_sha:
        return IngestResult(name, "unchanged", current.doc_id, current.version)
    return PendingFile(path, raw, file_sha)


def store_parsed(
    store: Store, pending: PendingFile, parsed: Parsed | str, settings: IngestSettings
) -> IngestResult:
    """Write a parsed file as the next version of its path in one transaction (or
    report its failure: `parsed` is then the cause). The store decides the version
    (`Store.store_document`): `unchanged` when the current version holds the same
    text; the chunk labels name the version it decides."""
    source_path = source_name(pending.path)
    if isinstance(parsed, str):
        return IngestResult(source_path, "failed", error=parsed)
    document = parsed.document
    page_count = len(document.layout.page_starts) if document.layout else 0

    def make_chunks(version: int, same_title_paths: list[str]) -> tuple[NewChunk, ...]:
        shown_title = display_title(document.title, source_path, version, same_title_paths)
        return build_chunks(document, parsed.spans, pending.path, shown_title)

    stored = store.store_document(
        NewDocument(
            source_path=source_path,
            title=document.title,
            format=document.format,
            text=document.text,
            file_sha256=pending.file_sha256,
            chunks=make_chunks,
            layout=document.layout,
            original=pending.raw if format_of(pending.path).keep_original else None,
            collection=settings.collection,
            tables=document.tables,
        )
    )
    doc_id, version = stored.document.doc_id, stored.document.version
    if stored.outcome == "unchanged":
        return IngestResult(source_path, "unchanged", doc_id, version, pages=page_count)
    return IngestResult(
        source_path,
        stored.outcome,
        doc_id,
        version,
        chunks=len(parsed.spans),
        pages=page_count,
        warnings=document.warnings,
    )


def ingest_file(store: Store, path: Path, settings: IngestSettings | None = None) -> IngestResult:
    """Ingest `path` (absolute) into `store` and say what happened.

    An unchanged file (same bytes, or same canonical text) is left alone; a changed
    one becomes a new version. Errors are returned as a `failed` result naming the
    cause, with nothing written to the store (writes are one transaction). The file
    is parsed in a limited child process, as by `ingest_files`.
    """
    return next(ingest_files(store, [path], settings))


def ingest_files(
    store: Store,
    paths: Sequence[Path],
    settings: IngestSettings | None = None,
    jobs: int = 1,
    parse: ParseFunction | None = None,
) -> Generator[IngestResult, None, None]:
    """Ingest `paths` in order, yielding one result per file as it is stored.

    Each file is parsed and chunked in its own child process under the limits of
    `settings.limits` (`parse_worker.ParseWorker`), `jobs` files at a time, while
    this process stores them one by one, in order: a parser that runs out of
    memory or time, or crashes, fails its file with the cause and the batch goes
    on. `parse` replaces `parse_and_chunk` in the children (for tests). Closing
    the generator early (an interrupt) kills the parses in progress.
    """
    settings = settings or IngestSettings()
    in_flight: deque[_Slot] = deque()
    waiting = deque(paths)
    try:
        while waiting or in_flight:
            while waiting and sum(not isinstance(s, IngestResult) for s in in_flight) < jobs:
                in_flight.append(_submit(store, waiting.popleft(), settings, parse))
            slot = in_flight[0]  # left in place while waited on: `finally` kills it
            if isinstance(slot, IngestResult):
                result = slot
            else:
                pending, worker = slot
                result = store_parsed(store, pending, worker.result(), settings)
            in_flight.popleft()
            yield result
    finally:
        for slot in in_flight:
            if not isinstance(slot, IngestResult):
                slot[1].kill()


_Slot = IngestResult | tuple[PendingFile, ParseWorker]
"""A file in flight: its final result already, or its bytes and the worker parsing it."""


def _submit(
    store: Store, path: Path, settings: IngestSettings, parse: ParseFunction | None
) -> _Slot:
    """Read `path` and start parsing it unless it is unchanged or unreadable."""
    pending = prepare_file(store, path, settings)
    if isinstance(pending, IngestResult):
        return pending
    worker = ParseWorker(parse)
    worker.start(pending.raw, path, settings)
    return pending, worker
