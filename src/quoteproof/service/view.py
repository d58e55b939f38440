"""`ScopedIndex`: the index as one principal sees it.

Everything a face shows goes through it, so the principal's collections are
enforced here once: answers and searches are limited to them, a document, chunk,
layout or original of another collection does not exist (None), and the audit
log shows only the entries the principal may see (`audit.visible_to`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from quoteproof.answer_timing import AnswerTiming
from quoteproof.audit import answer_of, list_entries, record_answer, visible_to
from quoteproof.codec import answer_to_dict
from quoteproof.defaults import DEFAULT_COLLECTION
from quoteproof.errors import AccessDeniedError, UsageError
from quoteproof.index import Index
from quoteproof.llm.base import Backend
from quoteproof.model import (
    Answer,
    Chunk,
    Document,
    Layout,
    Location,
    Quote,
    Rejected,
    SourceTable,
    Triplet,
)
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD, resolve_quote
from quoteproof.receipts import AnswerCheck, verify_recorded, verify_saved
from quoteproof.retrieval.evidence import Calibration
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.seal import SEAL_KEY, seal_entry
from quoteproof.service.catalog import ContextChoice, ModeChoice, context_choices, mode_choices
from quoteproof.service.opened import OpenedIndex
from quoteproof.service.principal import Principal
from quoteproof.service.questions import check_question
from quoteproof.store.base import (
    AuditEntry,
    CurrentVersion,
    DocumentSummary,
    Store,
    check_collection_name,
)
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.options import AnswerOptions
from quoteproof.streaming import EventSink

if TYPE_CHECKING:
    from quoteproof.ingest.graph_file import GraphImport

__all__ = ["AnswerObserver", "Asked", "HasCollection", "ScopedIndex", "Span", "SpanError"]

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Asked:
    """An answer and its audit log entry (for permanent links)."""

    answer: Answer
    entry: AuditEntry


@dataclass(frozen=True)
class Span:
    """`document.text[start:end]`, a span a face shows (`ScopedIndex.span`)."""

    document: Document
    start: int
    end: int

    @property
    def text(self) -> str:
        """The span's text."""
        return self.document.text[self.start : self.end]


AnswerObserver = Callable[[Asked, "tuple[str, ...] | None", AnswerTiming], None]
"""Told of each answer once it is recorded: the answer and its entry, the
collections it was asked over (None: all) and where its time went (the server's
metrics)."""


class SpanError(UsageError):
    """A span that is not within its document's text (or empty, where it must not be)."""


class HasCollection(Protocol):
    """Anything that belongs to a collection (an ingest job)."""

    @property
    def collection(self) -> str: ...


J = TypeVar("J", bound=HasCollection)


class _ScopedStore:
    """A read-only view of a store in which documents outside `principal`'s
    collections, and their chunks, layouts and originals, do not exist, nor do
    their triplets."""

    def __init__(self, store: Store, principal: Principal) -> None:
        self._store = store
        self._principal = principal

    def _visible(self, item: J | None) -> J | None:
        """`item` when the principal may see its collection, else None."""
        return item if item is not None and self._principal.allows(item.collection) else None

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        return self._visible(self._store.get_document(doc_id, version))

    def get_chunk(self, ref: str) -> Chunk | None:
        chunk = self._store.get_chunk(ref)
        seen = chunk is not None and self.get_document(chunk.doc_id, chunk.doc_version)
        return chunk if seen else None

    def neighbours(self, chunk: Chunk, width: int = 1) -> list[Chunk]:
        if self.get_document(chunk.doc_id, chunk.doc_version) is None:
            return []
        return self._store.neighbours(chunk, width)

    def get_layout(self, doc_id: str, version: int) -> Layout | None:
        if self.get_document(doc_id, version) is None:
            return None
        return self._store.get_layout(doc_id, version)

    def get_original(self, doc_id: str, version: int) -> bytes | None:
        if self.get_document(doc_id, version) is None:
            return None
        return self._store.get_original(doc_id, version)

    def get_tables(self, doc_id: str, version: int) -> tuple[SourceTable, ...]:
        if self.get_document(doc_id, version) is None:
            return ()
        return self._store.get_tables(doc_id, version)

    def get_triplet(self, triplet_id: str) -> Triplet | None:
        return self._visible(self._store.get_triplet(triplet_id))

    def current_version(self, source_path: str) -> CurrentVersion | None:
        current = self._store.current_version(source_path)
        seen = current is not None and self.get_document(current.doc_id, current.version)
        return current if seen else None


def _narrowed(
    method: Callable[Concatenate[Index, P], R],
) -> Callable[Concatenate[ScopedIndex, P], R]:
    """The `Index` method `method` as a `ScopedIndex` one: the same call on the whole
    index, with its `collections` keyword narrowed to the principal's
    (`Principal.narrow`: None, the principal's own; one it lacks, `AccessDeniedError`)."""

    @functools.wraps(method)
    def scoped(view: ScopedIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        asked = cast("Iterable[str] | None", kwargs.get("collections"))
        kwargs["collections"] = view.principal.narrow(asked)
        return method(view._index, *args, **kwargs)

    return scoped


class ScopedIndex(OpenedIndex):
    """`index` as `principal` sees it (see the module docstring). Methods that take
    `collections` narrow the principal's own to them and raise `AccessDeniedError`
    for one it lacks (`Principal.narrow`)."""

    def __init__(
        self, index: Index, principal: Principal, *, observer: AnswerObserver | None = None
    ) -> None:
        super().__init__(index)
        self._owned = False
        self._observer = observer
        self.principal = principal
        self.store: Store = (
            index.store
            if principal.collections is None
            else cast(Store, _ScopedStore(index.store, principal))
        )
        """The store's reading methods (documents, chunks, neighbours, layouts,
        originals, tables, current versions, triplets by id) limited to the
        principal's collections;
        nothing else may be used."""

    @classmethod
    def open(
        cls,
        location: str,
        principal: Principal,
        *,
        create: bool = False,
        retrieval: RetrievalSettings | None = None,
        audit_key: Path | None = None,
    ) -> ScopedIndex:
        """Open the index at `location` (as `Index.open`) as `principal` sees it;
        `close` (or a `with` block) closes the index. Raises `IndexNotFoundError`,
        `StoreError`."""
        index = Index.open(location, create=create, retrieval=retrieval, audit_key=audit_key)
        view = cls(index, principal)
        view._owned = True
        return view

    def close(self) -> None:
        """Close the index when this view opened it (`open`); else nothing."""
        if self._owned:
            self._index.close()

    @property
    def index(self) -> Index:
        """The whole index, for the work of its operator that no principal's view
        limits (ingest, embedding, calibration, evaluation)."""
        return self._index

    def modes(self, backend: Backend) -> tuple[ModeChoice, ...]:
        """The answer modes this principal may ask `backend` for, each with its title
        and summary: those the backend can run (`catalog.mode_choices`)."""
        return mode_choices(backend)

    def contexts(self, backend: Backend) -> tuple[ContextChoice, ...]:
        """The context forms worth offering this principal for answers by `backend`
        (`catalog.context_choices`: without a model, the forms with facts only when
        the principal's collections hold imported triplets)."""
        store = self._index.store
        has_facts = bool(store.triplet_entities(self.principal.narrow(None)))
        return context_choices(backend, has_facts)

    def missing_verification_key(self) -> Path | None:
        """Where the audit key was looked for when there is none to check seals
        with; None when there is one."""
        return None if self._index.verification_key() is not None else self._index.audit_key_path

    def calibrate(self, labelled: Sequence[tuple[str, bool]]) -> Calibration:
        """Derive and store the refusal threshold from `(question, answerable)`
        pairs (`Index.calibrate`)."""
        return self._index.calibrate(labelled)

    def ask(
        self,
        question: str,
        backend: Backend,
        options: AnswerOptions | None = None,
        *,
        collections: Iterable[str] | None = None,
        events: EventSink | None = None,
    ) -> Asked:
        """Answer `question` from the principal's collections (or `collections` of
        them) with `backend`, record the answer in the audit log (user: the
        principal's name, scope: those collections), tell the observer (once per
        answer recorded) and return both.

        Raises `QuestionError` for a question no face may ask (`check_question`),
        `AccessDeniedError`, and what `Index.ask` raises.
        """
        check_question(question)
        scope = self.principal.narrow(collections)
        timing = AnswerTiming()
        answer = self._index.ask(
            question, options, backend=backend, events=events, collections=scope, timing=timing
        )
        entry = record_answer(self._index, answer, user=self.principal.name, collections=scope)
        asked = Asked(answer, entry)
        if self._observer is not None:
            self._observer(asked, scope, timing)
        return asked

    search = _narrowed(Index.search)
    search_facts = _narrowed(Index.search_facts)

    def document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version (default: the newest), or None when it does not exist
        or belongs to another collection."""
        return self.store.get_document(doc_id, version)

    def chunk(self, ref: str) -> Chunk | None:
        """The chunk with `ref`, or None (missing or another collection's)."""
        return self.store.get_chunk(ref)

    def documents(self, collections: Iterable[str] | None = None) -> list[DocumentSummary]:
        """The current version of every visible document, by source path."""
        return self._index.store.list_documents(self.principal.narrow(collections))

    def document_count(self) -> int:
        """How many current documents the principal may see: a count of documents
        only (the health check asks it; `stats` would count every chunk)."""
        return self._index.store.count_documents(self.principal.narrow())

    def retire(self, doc_id: str) -> bool:
        """Retire a visible document (`Store.retire_document`); False when it does
        not exist or belongs to another collection."""
        if self.document(doc_id) is None:
            return False
        return self._index.store.retire_document(doc_id)

    def import_graph(
        self, path: Path, collection: str | None = None, max_file_mb: float | None = None
    ) -> GraphImport:
        """Import a knowledge-graph file into `collection` (None: the default one),
        replacing its earlier import there (`Index.import_graph`). Raises
        `AccessDeniedError` when the principal may not write into it, `UsageError`
        for an invalid name, `IngestError` for a bad file (nothing is imported)."""
        chosen = check_collection_name(collection or DEFAULT_COLLECTION)
        if not self.principal.allows(chosen):
            raise AccessDeniedError(f"this key cannot write into collection '{chosen}'")
        limit = {} if max_file_mb is None else {"max_file_mb": max_file_mb}
        return self._index.import_graph(path, collection=chosen, **limit)

    def triplets(
        self, collections: Iterable[str] | None = None, graph_file: str | None = None
    ) -> list[Triplet]:
        """The current triplets of the principal's collections (or `collections` of
        them), of `graph_file` only when given."""
        return self._index.triplets(self.principal.narrow(collections), graph_file)

    def retire_triplets(
        self,
        triplet_ids: Sequence[str] = (),
        graph_file: str | None = None,
        collections: Iterable[str] | None = None,
    ) -> int:
        """Retire the visible current triplets named by `triplet_ids`, and those of
        `graph_file` when given (in `collections` of the principal's, when given);
        return how many were retired. Ids of triplets the principal may not see are
        not retired."""
        visible = self.triplets(collections)
        wanted = set(triplet_ids)
        chosen = [
            t.triplet_id
            for t in visible
            if t.triplet_id in wanted or (graph_file is not None and t.graph_file == graph_file)
        ]
        return self._index.store.retire_triplets(chosen) if chosen else 0

    def verify_saved(self, data: object) -> AnswerCheck:
        """Check a saved answer JSON, its quotes and its seal, with the index's audit
        key (`receipts.verify_saved`); documents of other collections count as
        absent, and so does an audit entry the principal may not see. Raises
        `ValueError` when `data` is not an answer, StoreError when the key cannot
        be read."""
        key = self._index.verification_key()
        return verify_saved(data, self.store, key, self.entry)

    def sealed_answer(self, asked: Asked) -> dict[str, Any]:
        """The answer of `asked` as answer JSON data (`codec.answer_to_dict`) with the
        seal of its audit entry as the last key (`seal.seal_entry`, signed with the
        index's audit key). Raises StoreError when the key cannot be read or made."""
        return self._with_seal(answer_to_dict(asked.answer), asked.entry)

    def sealed_record(self, entry: AuditEntry) -> dict[str, Any]:
        """The answer recorded in `entry` as answer JSON data with its seal, as
        `sealed_answer` gives it."""
        return self._with_seal(json.loads(entry.body), entry)

    def _with_seal(self, data: dict[str, Any], entry: AuditEntry) -> dict[str, Any]:
        data[SEAL_KEY] = seal_entry(entry, self._index.signing_key()).to_data()
        return data

    def entry(self, entry_id: str) -> AuditEntry | None:
        """An audit log entry, or None when it does not exist or is not visible."""
        entry = self._index.store.get_audit_entry(entry_id)
        if entry is None or not visible_to(entry, self.principal.collections):
            return None
        return entry

    def history(self, limit: int) -> list[AuditEntry]:
        """The newest `limit` visible audit log entries, newest first."""
        return list_entries(self._index.store, self.principal.collections, limit=limit)

    def was_ingested(self, doc_id_or_path: str) -> bool:
        """True when a visible document has the id `doc_id_or_path`, current or
        retired; or, for a principal that sees every collection (a path names no
        collection), when a document was ever read from that source path."""
        if self.store.get_document(doc_id_or_path) is not None:
            return True
        if self.principal.collections is not None:
            return False
        return self._index.store.latest_version(doc_id_or_path) is not None

    def is_current(self, document: Document) -> bool:
        """True when `document` is the current version of its source (not retired,
        not superseded)."""
        current = self.store.current_version(document.source_path)
        return current is not None and current.doc_id == document.doc_id

    def quote(
        self, ref: str, words: str | None, threshold: float = DEFAULT_THRESHOLD
    ) -> Quote | Rejected | None:
        """The whole passage `ref` as a verbatim quote, or the span of it (or of its
        neighbours) that `words` match, resolved as the answer pipeline resolves a
        model's quote (`quoting.resolve_quote`, `threshold` its fuzzy score); a
        `Rejected` when no span matches `words`; None when there is no visible
        passage `ref`."""
        chunk = self.chunk(ref)
        if chunk is None:
            return None
        raw = json.dumps({"ref": ref, "words": words}, ensure_ascii=False)
        sources = [chunk, *self.store.neighbours(chunk)]
        with StoreLookup(self.store) as lookup:
            return resolve_quote(ref, words, "q1", sources, lookup, raw=raw, threshold=threshold)

    def span(
        self,
        doc_id: str,
        version: int | None,
        start: int | None,
        end: int | None,
        *,
        allow_empty: bool = False,
    ) -> Span | None:
        """The span `[start:end]` of a visible document version (default: the
        newest; `start` 0 and `end` the text's end by default), or None when the
        document does not exist or belongs to another collection. Raises
        `SpanError` when the span is not within the text, or is empty without
        `allow_empty`."""
        document = self.document(doc_id, version)
        if document is None:
            return None
        length = len(document.text)
        lo = 0 if start is None else start
        hi = length if end is None else end
        if not 0 <= lo <= hi <= length or (lo == hi and not allow_empty):
            empty = "" if allow_empty else " (and not empty)"
            raise SpanError(
                f"the span {lo}-{hi} must lie within the document's text, 0-{length}{empty}"
            )
        return Span(document, lo, hi)

    def locate(self, span: Span) -> Location:
        """Where `span` is: its pages, its boxes on a PDF's pages, whether its text
        came from OCR, the table rows it covers (`StoreLookup.locate`)."""
        with StoreLookup(self.store) as lookup:
            return lookup.locate(span.document, span.start, span.end)

    def recorded_answer(self, entry: AuditEntry) -> Answer:
        """The answer recorded in `entry` as it may be shown: each claimed quote
        re-read from the documents this principal sees (`receipts.verify_recorded`;
        one that no longer matches is listed as removed). Raises ValueError when the
        entry holds no readable answer."""
        return verify_recorded(answer_of(entry), self.store)

    def upload_collection(self, collection: object) -> str:
        """The collection an upload goes into: `collection` (a form field; empty or
        None: the default collection). Raises `UsageError` when it is not a text or
        not a valid collection name, `AccessDeniedError` when the principal may not
        write into it."""
        chosen = collection or DEFAULT_COLLECTION
        if not isinstance(chosen, str):
            raise UsageError("'collection' must be a form field, not a file")
        check_collection_name(chosen)
        if not self.principal.allows(chosen):
            raise AccessDeniedError(f"this key cannot write into collection '{chosen}'")
        return chosen

    def job(self, find: Callable[[str], J | None], job_id: str) -> J | None:
        """The ingest job `find(job_id)` gives, or None when there is none or it
        belongs to another collection."""
        job = find(job_id)
        if job is None or not self.principal.allows(job.collection):
            return None
        return job
