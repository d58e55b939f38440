"""Running a question set against an index: `Index.ask` per item, then scoring.

For each item the runner times `ask`, re-reads every shown quote from the store
(the verbatim check), locates the gold quotes in the stored documents, looks up
the chunks of the cited refs and, for items with gold refs, runs `Index.search`
once at the deepest k to rank the gold sources. The scoring itself is
`evaluation.metrics` (pure). With a grader backend, every answer to an item with a
`gold_answer` is also graded (`evaluation.grading`).

An item whose ask fails with a `BackendError` (the model server timed out, sent
garbage) is recorded with its error and the run goes on; configuration errors
(`BackendConfigError`, `RetrievalError`, `StoreError`) stop the run, as they would
fail every item alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol

from quoteproof.errors import BackendError
from quoteproof.evaluation.evalset import EvalItem
from quoteproof.evaluation.grading import Grade, grade_answer
from quoteproof.evaluation.metrics import (
    DocKey,
    GoldQuote,
    ItemScores,
    QuoteOverlap,
    RunMetrics,
    Span,
    citation_counts,
    gold_ranks,
    locate,
    normalize_whitespace,
    quote_overlap,
    ref_matches,
    summarize,
)
from quoteproof.index import Index
from quoteproof.llm.base import Backend
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.model import Answer, Document, ProseSegment, Quote
from quoteproof.store.base import DocumentSummary, Store
from quoteproof.strategies.options import AnswerOptions

__all__ = [
    "AskOptions",
    "DocumentSource",
    "EvalRun",
    "ItemResult",
    "NotVerbatim",
    "StoreDocuments",
    "evaluate_item",
    "run_eval",
    "score_answer",
]


@dataclass(frozen=True, kw_only=True)
class AskOptions(AnswerOptions):
    """The options every `ask` of a run gets (those of `quoteproof ask`): the answer
    options, the `backend` and the `collections` asked over (None: all)."""

    backend: Backend = field(default_factory=ExtractiveBackend)
    collections: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NotVerbatim:
    """A shown quote whose text is not the stored text at its offsets."""

    item_id: str
    quote_id: str
    ref: str
    doc_id: str
    doc_version: int
    start: int
    end: int
    reason: str


@dataclass(frozen=True)
class ItemResult:
    """One item of a run: its answer (None when ask failed: `error`), timing, the
    quotes that failed the verbatim check and its scores. `unlocated` lists the gold
    quotes found in no candidate document, `missing_refs` the gold refs no stored
    document matches (both point at a set that does not fit the index). `grade` is
    the grader's judgement (None: no grader, no gold answer or no answer)."""

    item: EvalItem
    answer: Answer | None
    scores: ItemScores
    error: str | None = None
    not_verbatim: tuple[NotVerbatim, ...] = ()
    unlocated: tuple[str, ...] = ()
    missing_refs: tuple[str, ...] = ()
    grade: Grade | None = None

    @property
    def status(self) -> str:
        """`answered`, `refused` or `error`."""
        return self.answer.status if self.answer is not None else "error"

    def hit_at(self, k: int) -> bool | None:
        """Whether a gold source was among the first `k` hits (None without gold refs)."""
        ranks = self.scores.ranks
        if not ranks:
            return None
        return any(rank is not None and rank <= k for rank in ranks.values())


@dataclass(frozen=True)
class EvalRun:
    """A finished run: per-item results in set order, the metrics, the options, the
    retrieval depths recall is reported at (`ks`, the ask top_k among them), when it
    started (UTC, ISO 8601), how long it took, and the grader's backend and model
    (None: not graded)."""

    items: tuple[ItemResult, ...]
    metrics: RunMetrics
    options: AskOptions
    ks: tuple[int, ...]
    started: str
    duration_s: float
    depth: int = 0
    grader: tuple[str, str | None] | None = None


class DocumentSource(Protocol):
    """What scoring reads from an index: stored document versions, the current
    documents a gold ref names, and the span of a chunk ref."""

    def get(self, doc_id: str, version: int) -> Document | None:
        """One stored document version, or None."""
        ...

    def matching(self, gold_ref: str) -> list[DocKey]:
        """The current document versions whose source path ends with `gold_ref`."""
        ...

    def chunk_span(self, ref: str) -> Span | None:
        """The span of the chunk with `ref`, or None when there is none."""
        ...


class StoreDocuments:
    """A `DocumentSource` over a store, cached (stored versions never change)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._texts: dict[DocKey, Document | None] = {}
        self._summaries: list[DocumentSummary] | None = None

    def get(self, doc_id: str, version: int) -> Document | None:
        key = (doc_id, version)
        if key not in self._texts:
            self._texts[key] = self._store.get_document(doc_id, version)
        return self._texts[key]

    def matching(self, gold_ref: str) -> list[DocKey]:
        if self._summaries is None:
            self._summaries = self._store.list_documents()
        return [
            (s.doc_id, s.version) for s in self._summaries if ref_matches(s.source_path, gold_ref)
        ]

    def chunk_span(self, ref: str) -> Span | None:
        chunk = self._store.get_chunk(ref)
        if chunk is None:
            return None
        return Span((chunk.doc_id, chunk.doc_version), chunk.start, chunk.end)


def _check_verbatim(
    item_id: str, quotes: Sequence[Quote], documents: DocumentSource
) -> list[NotVerbatim]:
    failures = []
    for quote in quotes:
        document = documents.get(quote.doc_id, quote.doc_version)
        if document is None:
            reason = "document version not in the index"
        elif not 0 <= quote.start <= quote.end <= len(document.text):
            reason = f"offsets outside the document (length {len(document.text)})"
        elif document.text[quote.start : quote.end] != quote.text:
            reason = "text differs from the stored text at its offsets"
        else:
            continue
        failures.append(
            NotVerbatim(
                item_id,
                quote.id,
                quote.ref,
                quote.doc_id,
                quote.doc_version,
                quote.start,
                quote.end,
                reason,
            )
        )
    return failures


def _shown_quotes(answer: Answer) -> list[Quote]:
    return [*answer.quotes, *answer.cited]


def _candidate_docs(item: EvalItem, answer: Answer, documents: DocumentSource) -> list[DocKey]:
    """Where gold quotes are looked for: the documents of the gold refs when given,
    else every retrieved or quoted document."""
    if item.gold_refs:
        keys = [key for ref in item.gold_refs for key in documents.matching(ref)]
    else:
        keys = [(s.doc_id, s.doc_version) for s in answer.sources]
        keys += [(q.doc_id, q.doc_version) for q in _shown_quotes(answer)]
    return list(dict.fromkeys(keys))


def _gold_quotes(
    item: EvalItem, candidates: Sequence[DocKey], documents: DocumentSource
) -> list[GoldQuote]:
    found = []
    for text in item.gold_quotes:
        occurrences = []
        for key in candidates:
            document = documents.get(*key)
            if document is not None:
                occurrences += [Span(key, a, b) for a, b in locate(document.text, text)]
        found.append(GoldQuote(len(normalize_whitespace(text)[0]), tuple(occurrences)))
    return found


def _cited_refs(answer: Answer) -> list[str]:
    refs = [
        ref
        for segment in answer.segments
        if isinstance(segment, ProseSegment)
        for ref in segment.citations
    ]
    refs += [quote.ref for quote in answer.quotes]
    return list(dict.fromkeys(refs))


def _ref_span(answer: Answer, ref: str, documents: DocumentSource) -> Span | None:
    for passage in answer.cited:
        if passage.ref == ref:
            return Span((passage.doc_id, passage.doc_version), passage.start, passage.end)
    return documents.chunk_span(ref)


def score_answer(
    item: EvalItem,
    answer: Answer,
    documents: DocumentSource,
    *,
    ranks: Mapping[str, int | None] | None = None,
    latency_ms: float | None = None,
) -> ItemResult:
    """Score `answer` to `item`: re-read every shown quote (`answer.quotes` and
    `answer.cited`) from `documents`, locate the gold quotes (in the documents of the
    gold refs when given, else in the retrieved and quoted ones) and compare spans,
    check the cited refs' chunks against them. `ranks` (gold ref -> rank among the
    hits) and `latency_ms` are recorded as given."""
    shown = _shown_quotes(answer)
    failures = _check_verbatim(item.id, shown, documents)
    overlap: QuoteOverlap | None = None
    citations: tuple[int, int] | None = None
    unlocated: tuple[str, ...] = ()
    if item.gold_quotes:
        gold = _gold_quotes(item, _candidate_docs(item, answer, documents), documents)
        pairs = zip(item.gold_quotes, gold, strict=True)
        unlocated = tuple(text for text, found in pairs if not found.occurrences)
        shown_spans = [Span((q.doc_id, q.doc_version), q.start, q.end) for q in shown]
        overlap = quote_overlap(shown_spans, gold)
        ref_spans = {ref: _ref_span(answer, ref, documents) for ref in _cited_refs(answer)}
        citations = citation_counts(ref_spans, (s for g in gold for s in g.occurrences))
    usage = answer.usage
    scores = ItemScores(
        answerable=item.answerable,
        refused=answer.status == "refused",
        quotes_checked=len(shown),
        not_verbatim=len(failures),
        overlap=overlap,
        citations=citations,
        ranks=ranks,
        latency_ms=latency_ms,
        usage=(usage.prompt_tokens, usage.completion_tokens) if usage else None,
        mode=answer.mode,
        faithfulness=answer.faithfulness.score if answer.faithfulness is not None else None,
    )
    return ItemResult(
        item,
        answer,
        scores,
        not_verbatim=tuple(failures),
        unlocated=unlocated,
        missing_refs=tuple(ref for ref in item.gold_refs if not documents.matching(ref)),
    )


def evaluate_item(
    index: Index,
    item: EvalItem,
    options: AskOptions,
    depth: int,
    documents: DocumentSource | None = None,
    grader: Backend | None = None,
) -> ItemResult:
    """Ask one item and score it (`score_answer`); `depth` is how many hits to rank
    the gold refs in. With `grader`, an answer to an item with a `gold_answer` is
    graded (`grading.grade_answer`). Raises what `Index.ask` raises, except
    `BackendError`, which is recorded in the result."""
    documents = documents or StoreDocuments(index.store)
    ranks = None
    if item.gold_refs:
        hits = index.search(item.question, top_k=depth, collections=options.collections)
        ranks = gold_ranks([hit.chunk.source_path for hit in hits], item.gold_refs)
    started = time.perf_counter()
    try:
        answer = index.ask(
            item.question,
            options,
            backend=options.backend,
            collections=options.collections,
        )
    except BackendError as exc:
        scores = ItemScores(answerable=item.answerable, error=True, ranks=ranks)
        missing = tuple(ref for ref in item.gold_refs if not documents.matching(ref))
        grade = None
        if grader is not None and item.gold_answer is not None:
            grade = Grade("error", problem=f"no answer to grade: {exc}", model=grader.model)
        return ItemResult(item, None, scores, error=str(exc), missing_refs=missing, grade=grade)
    latency_ms = (time.perf_counter() - started) * 1000
    result = score_answer(item, answer, documents, ranks=ranks, latency_ms=latency_ms)
    if grader is None or item.gold_answer is None:
        return result
    return replace(result, grade=grade_answer(grader, item.question, item.gold_answer, answer))


def run_eval(
    index: Index,
    items: Sequence[EvalItem],
    options: AskOptions | None = None,
    *,
    recall_ks: Collection[int] = (),
    on_start: Callable[[int], None] | None = None,
    on_item: Callable[[ItemResult], None] | None = None,
    grader: Backend | None = None,
) -> EvalRun:
    """Ask every item of `items` in order and score the run (and grade it with
    `grader`, see `evaluate_item`).

    Retrieval recall is reported at the ask `top_k` and at each of `recall_ks`.
    `on_start(total)` is called once before the first item, `on_item(result)` after
    each (for progress display). O(items) asks and searches.
    """
    options = options or AskOptions()
    ks = tuple(sorted({options.top_k, *recall_ks}))
    if any(k < 1 for k in ks):
        raise ValueError("recall depths must be at least 1")
    depth = max(ks)
    documents = StoreDocuments(index.store)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    clock = time.perf_counter()
    if on_start is not None:
        on_start(len(items))
    results = []
    for item in items:
        result = evaluate_item(index, item, options, depth, documents, grader)
        results.append(result)
        if on_item is not None:
            on_item(result)
    return EvalRun(
        items=tuple(results),
        metrics=summarize([r.scores for r in results], ks),
        options=options,
        ks=ks,
        started=started,
        duration_s=time.perf_counter() - clock,
        depth=depth,
        grader=(grader.name, grader.model) if grader is not None else None,
    )
