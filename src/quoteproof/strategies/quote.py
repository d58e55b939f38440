"""The `quote` strategy: the model picks quotes (and may add short cited prose)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from quoteproof.llm.extractive import ExtractiveChoice, near_duplicate
from quoteproof.model import (
    Answer,
    Chunk,
    Message,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Statement,
)
from quoteproof.quoting.grammar import QUOTE_REPLY_TOKENS, quote_grammar
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.prompt import build_messages
from quoteproof.quoting.resolve import Resolution, resolve_output
from quoteproof.quoting.units import OfferedUnits, SourceUnits, offered_numbers, source_units
from quoteproof.strategies.session import MODEL_NO_ANSWER, NOTHING_VERIFIABLE, AnswerSession

NoModelChoice = Callable[[Sequence[Chunk]], ExtractiveChoice]
"""The no-model (extractive) answer for these sources and the session's question, with
the units it ranked best."""


def resolve_reply(
    session: AnswerSession, reply: str, sources: Sequence[Chunk] | None = None
) -> Resolution:
    """Parse and resolve a protocol `reply` against `sources` (default: all retrieved)."""
    chunks = session.sources if sources is None else sources
    return resolve_output(
        parse_output(reply),
        chunks,
        session.lookup,
        threshold=session.threshold,
        facts=session.fact_refs,
    )


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
    session's answer (see `answer_from_resolution`)."""
    return answer_from_resolution(
        session,
        resolve_reply(session, reply, sources),
        rejected=rejected,
        statements=statements,
        cited_refs=cited_refs,
    )


def answer_from_resolution(
    session: AnswerSession,
    resolution: Resolution,
    *,
    rejected: Sequence[Rejected] = (),
    statements: Sequence[Statement] = (),
    cited_refs: Sequence[str] = (),
) -> Answer:
    """Make a resolved reply the session's answer.

    A `<no-answer/>` reply, or one of which nothing resolves, is a refusal (what the
    model wrote stays in `rejected` and the recorded calls); so is a reply with no
    resolved quote and no cited sentence: prose that checks against nothing is not
    an answer. Uncited prose beside a quote or cited prose is kept, labelled as
    generated like all prose. What earlier stages
    produced is carried into the answer or refusal: `rejected` (listed first),
    `statements`, and `cited_refs` (added to the cited passages of an answer).
    """
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


def no_model_added(first: str, last: str) -> str:
    """The notice of an answer whose quotes `first` to `last` were added from the
    no-model answer after the model's own."""
    quotes = first if first == last else f"{first}-{last}"
    return (
        f"Quotes {quotes} were chosen without the model (the no-model answer) and are "
        "shown after the model's own choice, so that the answer holds at least what the "
        "no-model answer holds."
    )


def join_no_model(model: Resolution, found: Resolution) -> tuple[Resolution, int]:
    """Return the model's resolved reply with the no-model answer's quotes (`found`)
    joined to it, and how many were added after the model's own choice.

    The model's quotes come first, in its order; one that a quote of `found` holds
    whole is shown as that quote instead, so the no-model answer's words are never
    cut. Then every quote of `found` that repeats none of those (`near_duplicate`)
    is added after the model's reply; quotes are numbered again from q1."""
    chosen: list[Quote] = []
    position: dict[str, int] = {}  # a model quote's id -> its place in `chosen`
    for quote in model.quotes:
        shown = next((f for f in found.quotes if quote.text in f.text), quote)
        if shown not in chosen:
            chosen.append(shown)
        position[quote.id] = chosen.index(shown)
    own = len(chosen)
    chosen += [
        f
        for f in found.quotes
        if f not in chosen and not any(near_duplicate(f.text, c.text) for c in chosen)
    ]
    quotes = tuple(replace(q, id=f"q{n}") for n, q in enumerate(chosen, start=1))
    segments = [
        *dict.fromkeys(
            QuoteSegment(quotes[position[s.quote_id]].id) if isinstance(s, QuoteSegment) else s
            for s in model.segments
        ),
        *(QuoteSegment(q.id) for q in quotes[own:]),
    ]
    return replace(model, segments=tuple(segments), quotes=quotes), len(chosen) - own


def fit_offer(
    session: AnswerSession,
    units: SourceUnits,
    choice: ExtractiveChoice | None,
    prompt: Callable[[Sequence[Chunk], OfferedUnits], tuple[Message, ...]],
) -> OfferedUnits:
    """Fit the session's sources to the model's context window for `prompt` (of the
    sources and the units offered from them) and return the units of `choice` that
    are offered from the sources kept; when there is no choice, or no offered source
    fits, none (and the sources are fitted again for a prompt showing every unit)."""
    offered = offered_numbers(units, choice.offered) if choice is not None else {}
    session.fit_context(lambda sources: prompt(sources, offered))
    kept = {chunk.ref for chunk in session.sources}
    offered = {ref: numbers for ref, numbers in offered.items() if ref in kept}
    if not offered:  # nothing to offer, or no offered source fits: every unit is shown
        session.fit_context(lambda sources: prompt(sources, {}))
    return offered


def answer_quote(session: AnswerSession, no_model: NoModelChoice | None = None) -> Answer:
    """Ask the model for quotes (and short cited prose) and return the verified answer.

    With `no_model`, the model is offered the units the no-model answer ranked best
    (`ExtractiveChoice.offered`, best first) and chooses among them, and the answer
    never holds less than the no-model answer: its quotes that the model's do not
    hold are added after the model's (`join_no_model`), with a notice naming them;
    when nothing the model wrote checks against the sources (`nothing_verifiable`)
    the answer is the no-model answer, with a notice saying so (what the model wrote
    stays in `rejected`, `removed_sentences` and the calls); a model's own
    `<no-answer/>` stands. Without `no_model`, or when the no-model answer found no
    unit, every source is shown with its quotable units numbered, cut to the model's
    context window. A backend that can constrain its output gets the quote grammar
    (pointers to the units shown) and at most `QUOTE_REPLY_TOKENS` tokens. Raises
    `BackendError` when the model fails.
    """
    choice = no_model(session.sources) if no_model is not None and session.offers else None
    units = source_units(session.sources, session.lookup)
    offered = fit_offer(
        session,
        units,
        choice,
        lambda sources, shown: build_messages(session.question, sources, units, shown),
    )
    messages = build_messages(session.question, session.sources, units, offered)
    grammar = partial(quote_grammar, session.sources, units, offered, session.fact_refs)
    completion = session.call(
        "answer", messages, stream=True, grammar=grammar, grammar_tokens=QUOTE_REPLY_TOKENS
    )
    model = resolve_reply(session, completion.text)
    answer = answer_from_resolution(session, model)
    nothing_checked = answer.refusal_reason == NOTHING_VERIFIABLE
    if choice is None or (answer.status != "answered" and not nothing_checked):
        return answer  # no no-model answer, or the model's own refusal: it stands
    found = resolve_reply(session, choice.reply)
    if nothing_checked:
        session.notices.append(NO_MODEL_FALLBACK)
        fallback = answer_from_resolution(session, found, rejected=answer.rejected)
        return replace(
            fallback, removed_sentences=answer.removed_sentences + fallback.removed_sentences
        )
    joined, added = join_no_model(model, found)
    if joined == model:
        return answer
    if added:
        count = len(joined.quotes)
        session.notices.append(no_model_added(f"q{count - added + 1}", f"q{count}"))
    return answer_from_resolution(session, joined)
