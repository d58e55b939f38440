"""`ScopedIndex`: the index as one principal sees it.

Everything a face shows goes through it, so the principal's collections are
enforced here once: answers and searches are limited to them, a document, chunk,
layout or original of another collection does not exist (None), and the audit
log shows only the entries the principal may see (`audit.visible_to`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from quoteproof.audit import list_entries, record_answer, visible_to
from quoteproof.codec import answer_to_dict
from quoteproof.defaults import DEFAULT_MAX_STEPS
from quoteproof.index import DEFAULT_ASK_TOP_K, DEFAULT_SEARCH_TOP_K, Index
from quoteproof.llm.base import Backend
from quoteproof.model import (
    Answer,
    AnswerMode,
    Chunk,
    Document,
    Hit,
    Layout,
    SourceTable,
)
from quoteproof.quoting.citations import Strictness
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD
from quoteproof.receipts import AnswerCheck, verify_saved
from quoteproof.seal import SEAL_KEY, seal_entry
from quoteproof.service.principal import Principal
from quoteproof.store.base import AuditEntry, CurrentVersion, DocumentSummary, Store
from quoteproof.streaming import EventSink

__all__ = ["AnswerOptions", "Asked", "ScopedIndex"]


@dataclass(frozen=True)
class AnswerOptions:
    """How to answer (as `Index.ask`): the mode, cite's strictness, the agent's
    steps, the sources given to the model and the quote match threshold."""

    mode: AnswerMode = "quote"
    strictness: Strictness = "strict"
    max_steps: int = DEFAULT_MAX_STEPS
    top_k: int = DEFAULT_ASK_TOP_K
    threshold: float = DEFAULT_THRESHOLD


@dataclass(frozen=True)
class Asked:
    """An answer and its audit log entry (for permanent links)."""

    answer: Answer
    entry: AuditEntry


class _ScopedStore:
    """A read-only view of a store in which documents outside `principal`'s
    collections, and their chunks, layouts and originals, do not exist."""

    def __init__(self, store: Store, principal: Principal) -> None:
        self._store = store
        self._principal = principal

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        document = self._store.get_document(doc_id, version)
        visible = document is not None and self._principal.allows(document.collection)
        return document if visible else None

    def get_chunk(self, ref: str) -> Chunk | None:
        chunk = self._store.get_chunk(ref)
        if chunk is None or self.get_document(chunk.doc_id, chunk.doc_version) is None:
            return None
        return chunk

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

    def current_version(self, source_path: str) -> CurrentVersion | None:
        current = self._store.current_version(source_path)
        if current is None or self.get_document(current.doc_id, current.version) is None:
            return None
        return current


class ScopedIndex:
    """`index` as `principal` sees it (see the module docstring). Methods that take
    `collections` narrow the principal's own to them and raise `AccessDeniedError`
    for one it lacks (`Principal.narrow`)."""

    def __init__(self, index: Index, principal: Principal) -> None:
        self._index = index
        self.principal = principal
        self.store: Store = (
            index.store
            if principal.collections is None
            else cast(Store, _ScopedStore(index.store, principal))
        )
        """The store's reading methods (documents, chunks, neighbours, layouts,
        originals, tables, current versions) limited to the principal's collections;
        nothing else may be used."""

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
        principal's name, scope: those collections) and return both.

        Raises as `Index.ask` does, and `AccessDeniedError`.
        """
        options = options or AnswerOptions()
        scope = self.principal.narrow(collections)
        answer = self._index.ask(
            question,
            backend=backend,
            top_k=options.top_k,
            threshold=options.threshold,
            mode=options.mode,
            strictness=options.strictness,
            max_steps=options.max_steps,
            events=events,
            collections=scope,
        )
        entry = record_answer(self._index, answer, user=self.principal.name, collections=scope)
        return Asked(answer, entry)

    def search(
        self,
        query: str,
        *,
        top_k: int = DEFAULT_SEARCH_TOP_K,
        collections: Iterable[str] | None = None,
    ) -> list[Hit]:
        """The `top_k` chunks most relevant to `query`, best first (`Index.search`)."""
        scope = self.principal.narrow(collections)
        return self._index.search(query, top_k=top_k, collections=scope)

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
        """How many current documents the principal may see."""
        if self.principal.collections is None:
            return self._index.store.stats().documents
        return len(self.documents())

    def retire(self, doc_id: str) -> bool:
        """Retire a visible document (`Store.retire_document`); False when it does
        not exist or belongs to another collection."""
        if self.document(doc_id) is None:
            return False
        return self._index.store.retire_document(doc_id)

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
