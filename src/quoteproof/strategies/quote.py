"""The `quote` strategy: the model picks quotes (and may add short cited prose)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from quoteproof.model import Answer, Chunk, ProseSegment, Rejected, Statement
from quoteproof.quoting.grammar import quote_grammar
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.prompt import build_messages
from quoteproof.quoting.resolve import Resolution, resolve_output
from quoteproof.quoting.units import source_units
from quoteproof.strategies.session import MODEL_NO_ANSWER, NOTHING_VERIFIABLE, AnswerSession

NoModelReply = Callable[[Sequence[Chunk]], str]
"""The no-model (extractive) protocol reply for these sources and the session's question."""


def answer_from_reply(
    session: AnswerSession,
    reply: str,
    sources: Sequence[Chunk] | None = None,
    *,
    rejected: Sequence[Rejected] = (),
    statements: Sequence[Statement] = (),
    cited_refs: Sequence[str] = (),
) -> Answer:
    """Resolve a protocol `reply` against `sources` (default: all retrieved) into the
    session's answer.

    A `<no-answer/>` reply, or one of which nothing resolves, is a refusal (what the
    model wrote stays in `rejected` and the recorded calls); so is a reply with no
    resolved quote and no cited sentence: prose that checks against nothing is not
    an answer. Uncited prose beside a quote or cited prose is kept, labelled as
    generated like all prose. What earlier stages
    produced is carried into the answer or refusal: `rejected` (listed first),
    `statements`, and `cited_refs` (added to the cited passages of an answer).
    """
    chunks = session.sources if sources is None else sources
    resolution = resolve_output(
        parse_output(reply), chunks, session.lookup, threshold=session.threshold
    )
    earlier = tuple(rejected)
    if resolution.no_answer:
        dropped = tuple(
            Rejected(q.claimed_text or q.ref, "the model also said the sources do not answer")
            for q in resolution.quotes
        )
        return session.refuse(
            MODEL_NO_ANSWER, earlier + resolution.rejected + dropped, statements=statements
        )
    if not _checkable(resolution):
        uncited = tuple(
            Rejected(segment.text, "prose with no citation and no quote to check it against")
            for segment in resolution.segments
            if isinstance(segment, ProseSegment)
        )
        return session.refuse(
            NOTHING_VERIFIABLE, earlier + resolution.rejected + uncited, statements=statements
        )
    return session.answer(
        resolution.segments,
        resolution.quotes,
        earlier + resolution.rejected,
        statements=statements,
        cited_refs=cited_refs,
    )


def _checkable(resolution: Resolution) -> bool:
    """True when the reply holds a resolved quote or a sentence citing a source."""
    return bool(resolution.quotes) or any(
        isinstance(segment, ProseSegment) and segment.citations for segment in resolution.segments
    )


NO_MODEL_FALLBACK = (
    "The model chose no passage that checks against the sources; the answer below is "
    "the no-model answer (passages chosen without the model)."
)


def answer_quote(session: AnswerSession, no_model: NoModelReply | None = None) -> Answer:
    """Ask the model for quotes (and short cited prose) and return the verified answer.

    The sources are shown with their quotable units numbered and cut to the model's
    context window; a backend that can constrain its output gets the quote grammar
    (pointers to those units). When nothing the model wrote checks against the
    sources (`nothing_verifiable`) and `no_model` is given, the answer is the no-model
    reply `no_model(sources)` resolved the same way, with a notice saying so (what the
    model wrote stays in `rejected`, `removed_sentences` and the calls); a model's own
    `<no-answer/>` stands. Raises `BackendError` when the model fails.
    """
    units = source_units(session.sources, session.lookup)
    session.fit_context(lambda sources: build_messages(session.question, sources, units))
    messages = build_messages(session.question, session.sources, units)
    grammar = quote_grammar(session.sources, units)
    completion = session.call("answer", messages, stream=True, grammar=grammar)
    answer = answer_from_reply(session, completion.text)
    if no_model is None or answer.refusal_reason != NOTHING_VERIFIABLE:
        return answer
    session.notices.append(NO_MODEL_FALLBACK)
    fallback = answer_from_reply(session, no_model(session.sources), rejected=answer.rejected)
    return replace(
        fallback, removed_sentences=answer.removed_sentences + fallback.removed_sentences
    )
