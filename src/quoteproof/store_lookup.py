"""`StoreLookup`: a store read as the resolver's `SourceLookup`, which also gives
every location of a quote (pages, PDF boxes, OCR, table rows) from the index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from quoteproof.model import Box, Chunk, Document, Layout, Location, SourceTable
from quoteproof.store.base import Store
from quoteproof.tables.quoted import chunk_rows, quoted_tables

if TYPE_CHECKING:
    from quoteproof.locations import PdfBoxReader

__all__ = ["StoreLookup"]


class StoreLookup:
    """Adapts a `Store` to the resolver's `SourceLookup`: documents, neighbours, and
    locations (pages from the stored layout, PDF boxes from the stored file, table
    rows from the stored tables).

    Keeps the layouts and tables it read, and each PDF it reads boxes from open, until `close`
    (use as a context manager); stored versions never change, so the caches hold.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._readers: dict[tuple[str, int], PdfBoxReader] = {}
        self._layouts: dict[tuple[str, int], Layout | None] = {}
        self._tables: dict[tuple[str, int], tuple[SourceTable, ...]] = {}

    def __enter__(self) -> StoreLookup:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the PDFs opened for boxes."""
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self._layouts.clear()
        self._tables.clear()

    def document(self, doc_id: str, version: int) -> Document | None:
        """Return one stored document version, or None."""
        return self._store.get_document(doc_id, version)

    def neighbours(self, chunk: Chunk) -> Sequence[Chunk]:
        """Return the chunks next to `chunk` in its document version."""
        return self._store.neighbours(chunk)

    def _reader(self, document: Document) -> PdfBoxReader | None:
        key = (document.doc_id, document.version)
        if key not in self._readers:
            original = self._store.get_original(*key)
            if original is None:
                return None
            from quoteproof.locations import PdfBoxReader  # loads PDFium only when needed

            self._readers[key] = PdfBoxReader(original)
        return self._readers[key]

    def _stored_tables(self, doc_id: str, version: int) -> tuple[SourceTable, ...]:
        key = (doc_id, version)
        if key not in self._tables:
            self._tables[key] = self._store.get_tables(*key)
        return self._tables[key]

    def table_rows(self, chunk: Chunk) -> Sequence[tuple[int, int]]:
        """Return the body rows of the stored tables in `chunk`, as spans of its text."""
        return chunk_rows(self._stored_tables(chunk.doc_id, chunk.doc_version), chunk)

    def locate(self, document: Document, start: int, end: int, *, boxes: bool = True) -> Location:
        """Return the pages of `document.text[start:end]`, its boxes when the document
        is a PDF (and `boxes` is true), whether its text came from OCR, and the table
        rows it covers (`tables.quoted_tables`)."""
        key = (document.doc_id, document.version)
        tables = self._stored_tables(*key)
        rows = quoted_tables(document.text, tables, start, end)
        if key not in self._layouts:
            self._layouts[key] = self._store.get_layout(*key)
        layout = self._layouts[key]
        if layout is None:
            return Location(None, tables=rows)
        pages = layout.pages_of(start, end)
        reader = self._reader(document) if layout.char_runs and boxes else None
        found: tuple[Box, ...] = reader.boxes(layout, start, end) if reader else ()
        ocr = bool(set(pages) & set(layout.ocr_pages))
        return Location(pages or None, found, ocr, rows)
