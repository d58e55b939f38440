"""The `cite` strategy: prose in which every sentence cites its sources, checked.

The model writes prose ending each sentence with `[REF]` markers (and may quote).
The reply is split into sentences and checked (`quoting.citations`): strict mode
wants a marker naming a retrieved source on every sentence; lenient mode drops the
sentences without one and marks the answer partial. A reply that fails is retried
once with the top 3 sources (the top 3 of those offered, showing their offered
units, when the first attempt was offered units) and a stricter prompt that lists
what was wrong; a second failure is a refusal (`validation_failed`) with both
attempts kept in `Answer.calls`. A reply written under the cite grammar (a backend
that constrains its output) cannot fail on its form, only on what it says (an
uncited or unsupported sentence): it is not retried, the same model would read the
same sources again; the no-model answer stands instead, with a notice, when there is
one (else the refusal).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from quoteproof.llm.capability import Capability
from quoteproof.model import Answer, Chunk, Message, Rejected
from quoteproof.quoting.citations import (
    UNCITED,
    Sentence,
    Strictness,
    excerpt,
    sentence_problems,
    split_sentences,
)
from quoteproof.quoting.grammar import CITE_REPLY_TOKENS, cite_grammar, finished_items
from quoteproof.quoting.parse import Item, ParsedOutput, ProseItem, parse_output
from quoteproof.quoting.prompt import QUOTE_RULE, SOURCES_RULE, build_messages
from quoteproof.quoting.resolve import resolve_output
from quoteproof.quoting.units import OfferedUnits, SourceUnits, source_units
from quoteproof.strategies.quote import (
    NoModelChoice,
    answer_from_reply,
    answer_from_resolution,
    fit_offer,
    resolve_reply,
)
from quoteproof.strategies.session import VALIDATION_FAILED, AnswerSession

RETRY_SOURCES = 3
NOTHING_CITED = "the reply has no cited sentence and no quote that resolves"
CUT_AT_BUDGET = "cut by the reply's token budget before its citation"
CITE_NO_MODEL_FALLBACK = (
    "The model's sentences did not pass the citation check (they are listed as "
    "removed); the answer below is the no-model answer (passages chosen without the model)."
)

CITE_SYSTEM_PROMPT = f"""\
You answer questions using only the sources you are given. {SOURCES_RULE}

Rules for your reply:
1. Answer in a few sentences of your own. End EVERY sentence with the refs of the \
sources that support it, like [REF] or [REF1][REF2], before the full stop.
2. Use only refs that appear in the sources below. Do not state anything the \
sources do not support.
3. You may quote a source. {QUOTE_RULE}
4. If the sources do not answer the question, reply with exactly <no-answer/> and nothing else.
"""


def retry_system_prompt(problems: Sequence[str], refs: Sequence[str]) -> str:
    """The retry's system prompt: the first attempt's `problems`, the allowed `refs`."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    markers = ", ".join(f"[{ref}]" for ref in refs)
    return f"""\
You answer questions using only the sources you are given. {SOURCES_RULE}

Your previous reply was rejected because:
{listed}

Rules, strictly enforced:
1. Every sentence you write MUST end with at least one marker naming a source below: \
{markers}. A sentence without a marker, or with any other ref, makes the whole answer fail.
2. Write only what these sources state. Prefer fewer, shorter sentences.
3. You may quote a source. {QUOTE_RULE}
4. If these sources do not answer the question, reply with exactly <no-answer/>.
"""


def retry_messages(
    question: str,
    sources: Sequence[Chunk],
    units: SourceUnits,
    problems: Sequence[str],
    offered: OfferedUnits | None = None,
) -> tuple[Message, ...]:
    """The retry's prompt: the failed checks, the allowed refs, only `sources` (with
    `offered`, only their offered units)."""
    system = retry_system_prompt(problems, [chunk.ref for chunk in sources])
    return build_messages(question, sources, units, offered, system=system)


def retry_sources(
    sources: Sequence[Chunk], offered: OfferedUnits
) -> tuple[tuple[Chunk, ...], OfferedUnits]:
    """The retry's sources and the units it shows: the first `RETRY_SOURCES` sources
    that hold offered units, with those units; when no unit was offered, the first
    `RETRY_SOURCES` sources, whole."""
    holding = tuple(chunk for chunk in sources if chunk.ref in offered)[:RETRY_SOURCES]
    if not holding:
        return tuple(sources[:RETRY_SOURCES]), {}
    return holding, {chunk.ref: offered[chunk.ref] for chunk in holding}


def _sentence_items(
    parsed: ParsedOutput, refs: set[str]
) -> tuple[list[Item], list[Sentence], list[Rejected]]:
    """Replace each prose item by one item per cited sentence; return the new items,
    every sentence, and the uncited sentences (dropped)."""
    items: list[Item] = []
    sentences: list[Sentence] = []
    uncited: list[Rejected] = []
    for item in parsed.items:
        if not isinstance(item, ProseItem):
            items.append(item)
            continue
        for sentence in split_sentences(item, refs):
            sentences.append(sentence)
            if sentence.cited:
                items.append(ProseItem(sentence.text, sentence.known + sentence.unknown))
            else:
                uncited.append(Rejected(sentence.text, UNCITED))
    return items, sentences, uncited


def check_reply(
    session: AnswerSession,
    reply: str,
    sources: Sequence[Chunk],
    strictness: Strictness,
    dropped: Sequence[Rejected] = (),
) -> Answer | list[str]:
    """Return the answer `reply` makes (listing `dropped`, what was taken from the
    reply before, among its rejected parts), or the problems that make it fail.

    A `<no-answer/>` reply is a refusal, not a failure. A reply none of whose
    sentences and quotes can be shown (every sentence said what its passages do
    not) fails with the reason of each sentence removed.
    """
    parsed = parse_output(reply)
    if parsed.no_answer:
        return answer_from_reply(session, reply, sources)
    known = {chunk.ref for chunk in sources} | set(session.fact_refs)
    items, sentences, uncited = _sentence_items(parsed, known)
    problems = sentence_problems(sentences, strictness)
    if problems:
        return problems
    resolution = resolve_output(
        ParsedOutput(tuple(items), False),
        sources,
        session.lookup,
        threshold=session.threshold,
        facts=session.fact_refs,
    )
    if not resolution.segments:
        return [NOTHING_CITED]
    answer = session.answer(
        resolution.segments,
        resolution.quotes,
        resolution.rejected + tuple(uncited) + tuple(dropped),
        partial=bool(uncited),
    )
    if answer.status == "refused":
        removed = answer.removed_sentences
        return [NOTHING_CITED, *(f"{excerpt(r.raw)!r} was removed: {r.reason}" for r in removed)]
    return answer


def _failed_checks(session: AnswerSession) -> list[Rejected]:
    """What failed the citation check in the session's model calls, one per problem."""
    return [
        Rejected(problem, "citation check failed")
        for call in session.calls
        for problem in call.problems
    ]


def _no_model_answer(session: AnswerSession, reply: str) -> Answer:
    """The no-model answer (`reply`, its protocol reply) in place of a constrained
    reply that failed the citation check, with `CITE_NO_MODEL_FALLBACK`; the failed
    checks are listed in `rejected`."""
    session.notices.append(CITE_NO_MODEL_FALLBACK)
    return answer_from_resolution(
        session, resolve_reply(session, reply), rejected=_failed_checks(session)
    )


def answer_cite(
    session: AnswerSession,
    strictness: Strictness = "strict",
    no_model: NoModelChoice | None = None,
) -> Answer:
    """Ask for citation-mandatory prose; check it, retry once, else refuse (a
    constrained reply that fails: the no-model answer, see the module docstring).

    The sources are shown with their quotable units numbered and cut to the model's
    context window; with `no_model`, the first attempt shows only the units the
    no-model answer ranked best (as `quote` mode does: a prompt of a few hundred
    tokens instead of whole sources), and so does the retry (`retry_sources`). A
    backend that can constrain its output gets the cite grammar (refs and units of
    that attempt's sources) and at most `CITE_REPLY_TOKENS` tokens; the unfinished
    sentence a reply cut there ends with is dropped and listed in `rejected`. Raises
    `BackendError` when the model fails.
    """
    units = source_units(session.sources, session.lookup)
    choice = no_model(session.sources) if no_model is not None and session.offers else None
    offered = fit_offer(
        session,
        units,
        choice,
        lambda chunks, shown: build_messages(
            session.question, chunks, units, shown, system=CITE_SYSTEM_PROMPT
        ),
    )
    sources = session.sources
    messages = build_messages(session.question, sources, units, offered, system=CITE_SYSTEM_PROMPT)
    constrained = Capability.CONSTRAINED in session.backend.capabilities
    for stage in ("answer", "retry"):
        grammar = partial(cite_grammar, sources, units, session.fact_refs)
        completion = session.call(
            stage,
            messages,
            sources=sources,
            stream=True,
            grammar=grammar,
            grammar_tokens=CITE_REPLY_TOKENS,
        )
        reply, cut = finished_items(completion.text) if constrained else (completion.text, "")
        cut_off = (Rejected(cut, CUT_AT_BUDGET),) if cut else ()
        outcome = check_reply(session, reply, sources, strictness, cut_off)
        if isinstance(outcome, Answer):
            return outcome
        session.reject_last_call(outcome)
        if constrained and choice is not None and choice.offered:
            return _no_model_answer(session, choice.reply)
        sources, shown = retry_sources(session.sources, offered)
        messages = retry_messages(session.question, sources, units, outcome, shown)
    return session.refuse(VALIDATION_FAILED, _failed_checks(session))
