"""The `quote` strategy: the model picks quotes (and may add short cited prose)."""

from __future__ import annotations

from collections.abc import Sequence

from quoteproof.llm.base import Backend, CompletionRequest
from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    Hit,
    LLMInfo,
    ProseSegment,
    Rejected,
    RetrievalInfo,
    SourceInfo,
)
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.prompt import build_messages
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD, SourceLookup, resolve_output

NO_RELEVANT_SOURCES = "no_relevant_sources"
MODEL_NO_ANSWER = "model_no_answer"
NOTHING_VERIFIABLE = "nothing_verifiable"


def source_infos(hits: Sequence[Hit]) -> tuple[SourceInfo, ...]:
    """Return what an answer records about each retrieved hit."""
    return tuple(
        SourceInfo(
            ref=h.chunk.ref,
            label=h.chunk.label,
            doc_id=h.chunk.doc_id,
            doc_version=h.chunk.doc_version,
            source_path=h.chunk.source_path,
            score=h.score,
            rank=h.rank,
        )
        for h in hits
    )


def refusal(
    question: str,
    reason: str,
    llm: LLMInfo,
    hits: Sequence[Hit] = (),
    rejected: tuple[Rejected, ...] = (),
    retrieval: RetrievalInfo | None = None,
) -> Answer:
    """Return a refused answer that says the sources contain no answer."""
    return Answer(
        question=question,
        status="refused",
        segments=(ProseSegment(REFUSAL_TEXT),),
        quotes=(),
        rejected=rejected,
        llm=llm,
        sources=source_infos(hits),
        refusal_reason=reason,
        retrieval=retrieval,
    )


def answer_with_quotes(
    question: str,
    hits: Sequence[Hit],
    backend: Backend,
    lookup: SourceLookup,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    retrieval: RetrievalInfo | None = None,
) -> Answer:
    """Ask `backend` to answer from `hits` and return the verified answer.

    No hits: a refusal without calling the model. A `<no-answer/>` reply, or a
    reply of which nothing resolves, is a refusal too (what the model wrote stays in
    `rejected` and `llm.raw_output`). `retrieval` is recorded in the answer as is.
    Raises `BackendError` when the model fails.
    """
    if not hits:
        llm_info = LLMInfo(backend.name, backend.model, "")
        return refusal(question, NO_RELEVANT_SOURCES, llm_info, retrieval=retrieval)
    sources = tuple(h.chunk for h in hits)
    completion = backend.complete(
        CompletionRequest(build_messages(question, sources), question, sources)
    )
    llm = LLMInfo(backend.name, completion.model, completion.text)
    resolution = resolve_output(parse_output(completion.text), sources, lookup, threshold=threshold)
    if resolution.no_answer:
        dropped = tuple(
            Rejected(q.claimed_text or q.ref, "the model also said the sources do not answer")
            for q in resolution.quotes
        )
        rejected = resolution.rejected + dropped
        return refusal(question, MODEL_NO_ANSWER, llm, hits, rejected, retrieval)
    if not resolution.segments:
        return refusal(question, NOTHING_VERIFIABLE, llm, hits, resolution.rejected, retrieval)
    return Answer(
        question=question,
        status="answered",
        segments=resolution.segments,
        quotes=resolution.quotes,
        rejected=resolution.rejected,
        llm=llm,
        sources=source_infos(hits),
        retrieval=retrieval,
    )
