"""The Python API: `Index.open`, `.ingest`, `.search`, `.ask` and `.verify`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from quoteproof.ingest.files import discover
from quoteproof.ingest.pipeline import IngestResult, IngestSettings, ingest_files
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.model import Answer, Box, Chunk, Document, Hit, Layout, Location
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD
from quoteproof.receipts import QuoteCheck, verify_answer
from quoteproof.store.base import Store
from quoteproof.store.open import open_store
from quoteproof.strategies.quote import answer_with_quotes

if TYPE_CHECKING:
    from quoteproof.locations import PdfBoxReader

DEFAULT_INDEX = ".quoteproof"
DEFAULT_SEARCH_TOP_K = 10
DEFAULT_ASK_TOP_K = 5


class StoreLookup:
    """Adapts a `Store` to the resolver's `SourceLookup`: documents, neighbours, and
    locations (pages from the stored layout, PDF boxes from the stored file).

    Keeps the layouts it read, and each PDF it reads boxes from open, until `close`
    (use as a context manager); stored versions never change, so the caches hold.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._readers: dict[tuple[str, int], PdfBoxReader] = {}
        self._layouts: dict[tuple[str, int], Layout | None] = {}

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

    def locate(self, document: Document, start: int, end: int) -> Location:
        """Return the pages of `document.text[start:end]`, its boxes when the document
        is a PDF, and whether its text came from OCR."""
        key = (document.doc_id, document.version)
        if key not in self._layouts:
            self._layouts[key] = self._store.get_layout(*key)
        layout = self._layouts[key]
        if layout is None:
            return Location(None)
        pages = layout.pages_of(start, end)
        reader = self._reader(document) if layout.char_runs else None
        boxes: tuple[Box, ...] = reader.boxes(layout, start, end) if reader else ()
        return Location(pages or None, boxes, bool(set(pages) & set(layout.ocr_pages)))


class Index:
    """A document collection that answers questions with verifiable quotes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    def open(cls, location: str | Path = DEFAULT_INDEX, *, create: bool = False) -> Index:
        """Open the index at `location`, a directory (SQLite) or a `postgresql://`
        URL; create it if `create` is true.

        Raises `IndexNotFoundError` when it does not exist and `create` is false,
        `StoreError` when it cannot be used.
        """
        return cls(open_store(location, create=create))

    def __enter__(self) -> Index:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying store."""
        self.store.close()

    @staticmethod
    def discover(paths: Iterable[str | Path]) -> list[Path]:
        """Return the files `ingest` would read for `paths` (folders walked recursively).

        Raises `IngestError` for a path that does not exist.
        """
        return discover([Path(p) for p in paths])

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        settings: IngestSettings | None = None,
        jobs: int = 1,
        on_file: Callable[[IngestResult], None] | None = None,
    ) -> list[IngestResult]:
        """Ingest files and folders; return one result per file, failures included.

        A failing file does not stop the batch and leaves nothing in the index.
        `settings` sets the file size limit, OCR and chunk sizes; `jobs` > 1 parses
        in that many worker processes; `on_file` is called after each file, in
        order (for progress display).
        """
        results = []
        for result in ingest_files(self.store, self.discover(paths), settings, jobs):
            results.append(result)
            if on_file is not None:
                on_file(result)
        return results

    def chunk(self, ref: str) -> Chunk | None:
        """Return the chunk with `ref` (of any stored version), or None."""
        return self.store.get_chunk(ref)

    def search(self, query: str, *, top_k: int = DEFAULT_SEARCH_TOP_K) -> list[Hit]:
        """Return the `top_k` chunks most relevant to `query`, best first (BM25)."""
        return self.store.search_bm25(query, top_k)

    def ask(
        self,
        question: str,
        *,
        backend: Backend | None = None,
        top_k: int = DEFAULT_ASK_TOP_K,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> Answer:
        """Answer `question` from the index; quotes are verbatim by construction.

        `backend` defaults to the extractive backend (no model). `threshold` is the
        fuzzy-match score (0-100) a paraphrased quote needs to resolve. Raises
        `BackendError` when the model server fails.
        """
        hits = self.search(question, top_k=top_k)
        with StoreLookup(self.store) as lookup:
            return answer_with_quotes(
                question, hits, backend or ExtractiveBackend(), lookup, threshold=threshold
            )

    def verify(self, answer: Answer) -> list[QuoteCheck]:
        """Re-check every quote of `answer` against this index (see `receipts`)."""
        return verify_answer(answer, self.store)
