"""One answer composed from an index: its sources retrieved, the refusal checks, the
context form the model is given (`model.ContextForm`) and the mode's strategy
(`strategies.registry`). `Index.ask` calls `compose` for every answer."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Protocol

from quoteproof.answer_timing import AnswerTiming
from quoteproof.defaults import SPARE_HITS
from quoteproof.llm.base import Backend
from quoteproof.llm.capability import Capability
from quoteproof.llm.extractive import ExtractiveChoice, choose_extractive
from quoteproof.llm.registry import IndexServices, bind_to_index
from quoteproof.model import Answer, Chunk
from quoteproof.retrieval.retriever import Retrieval
from quoteproof.retrieval.triplets import fuse_context, search_triplets
from quoteproof.store.base import Store
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.context import (
    answer_from_facts,
    context_facts,
    extract_facts,
    whole_corpus,
)
from quoteproof.strategies.facts import combined_facts
from quoteproof.strategies.options import AnswerOptions
from quoteproof.strategies.registry import StrategyInputs, strategy_for
from quoteproof.strategies.session import (
    NO_RELEVANT_SOURCES,
    NOT_IN_SOURCES,
    AnswerSession,
    empty_index_notice,
    refusal_notices,
)
from quoteproof.streaming import EventSink

if TYPE_CHECKING:
    from quoteproof.refusal import RefusalPolicy
    from quoteproof.tables.session import TableSession


class AnsweredIndex(Protocol):
    """What `compose` reads of an index (`Index`): its store, its refusal policy and
    its retrieval."""

    store: Store
    refusal: RefusalPolicy

    def retrieve(self, query: str, *, top_k: int, collections: Collection[str] | None) -> Retrieval:
        """The `top_k` best hits for `query` from `collections` (None: all)."""
        ...


def compose(
    index: AnsweredIndex,
    question: str,
    options: AnswerOptions,
    backend: Backend,
    events: EventSink | None,
    collections: Collection[str] | None,
    timing: AnswerTiming,
) -> Answer:
    """The answer of `Index.ask` to `question` (well formed), before its faithfulness
    is assessed: the sources of `collections` retrieved (their seconds in
    `timing.retrieval_s`), a refusal when the refusal policy says so, else the
    context form of `options` given to the strategy of `options.mode`."""
    top_k, mode, context = options.top_k, options.mode, options.context
    chosen = strategy_for(backend, mode)
    refusal, store = index.refusal, index.store
    backend = bind_to_index(
        backend, IndexServices(refusal.unit_embed, refusal.table_rows, refusal.following)
    )
    started = time.perf_counter()
    retrieved = index.retrieve(question, top_k=SPARE_HITS * top_k, collections=collections)
    retrieval = refusal.answer_sources(retrieved, top_k)
    timing.retrieval_s = time.perf_counter() - started
    info = refusal.check(question, retrieval)
    with StoreLookup(store) as lookup:
        hits, found, notice = list(retrieval.hits), [], None
        if context == "whole":
            whole, notice = whole_corpus(
                store, backend, question, collections, options.document, lookup
            )
            hits = whole or hits
        elif context in ("triplets", "both"):
            found = search_triplets(store, question, top_k, collections)
            if context == "both":
                hits, found = fuse_context(hits, found, 2 * top_k)
        session = AnswerSession(
            question, hits, backend, lookup, mode, options.threshold, info, events
        )
        session.context = context
        session.facts = context_facts(store, found)
        if not retrieval.hits and not store.count_documents(collections):
            session.notices.append(empty_index_notice(collections))
        else:
            session.notices.extend(refusal_notices(info))
        if notice is not None:
            session.notices.append(notice)
        if info.missing_terms and retrieval.hits:  # the more telling reason comes first
            return session.refuse(NOT_IN_SOURCES)
        if info.below_threshold or not retrieval.hits:
            return session.refuse(NO_RELEVANT_SOURCES)
        if context in ("triplets", "both"):
            extracted = extract_facts(session, len(session.facts) + 1)
            session.facts = combined_facts(session.facts, extracted)
        if context == "triplets":
            if not session.facts:
                return session.refuse(NO_RELEVANT_SOURCES)
            return answer_from_facts(session)
        inputs = StrategyInputs(
            options,
            lambda query: index.retrieve(query, top_k=top_k, collections=collections).hits,
            lambda: _tables(store, collections),
            _no_model(refusal, question) if Capability.MODEL in backend.capabilities else None,
        )
        return chosen.run(session, inputs)


def _no_model(
    refusal: RefusalPolicy, question: str
) -> Callable[[Sequence[Chunk]], ExtractiveChoice]:
    """The no-model answer to `question` from given sources (whose best units quote
    mode offers a model, and which it falls back to when nothing the model chose
    checks)."""
    embed, rows, following = refusal.unit_embed(), refusal.table_rows(), refusal.following()
    return lambda sources: choose_extractive(question, sources, embed, rows, following)


def _tables(store: Store, collections: Collection[str] | None) -> TableSession:
    """The tables of `collections` (None: all) for one answer's table tools."""
    from quoteproof.tables.session import TableSession

    return TableSession(store, collections=collections)
