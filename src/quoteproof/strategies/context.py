"""The model calls of the triplet context forms (`ask --context triplets|both`):
extracting triplets from the retrieved paragraphs, and answering from triplets alone.

Triplets reach the model as context lines `TID-1: subject | relation | object` in a
`<facts>` block after the sources (`facts.with_facts`, added by the session to every
call), and its sentences and rationale statements may cite them like a source,
`[TID-1]`.

`--context triplets` answers from the triplets alone in one call
(`answer_from_facts`): the model sees no paragraph. Without a model the triplets
come from the imported graph only, and the best of them are shown as they are.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from functools import partial

from quoteproof.errors import Hint, UsageError
from quoteproof.llm.base import Backend, Capability, CompletionRequest
from quoteproof.model import Answer, Chunk, Hit, Message
from quoteproof.quoting.grammar import facts_grammar, triplet_grammar
from quoteproof.quoting.parse import parse_output
from quoteproof.quoting.prompt import SOURCES_RULE, build_messages, format_sources
from quoteproof.quoting.resolve import SourceLookup, resolve_output
from quoteproof.quoting.units import SourceUnits, source_units
from quoteproof.retrieval.triplets import TripletHit
from quoteproof.store.base import DocumentSummary, Store
from quoteproof.strategies.cite import CITE_SYSTEM_PROMPT
from quoteproof.strategies.facts import (
    FACTS_RULE,
    NO_MODEL_FACTS,
    ContextFact,
    facts_block,
    imported_fact,
    parse_triplet_lines,
)
from quoteproof.strategies.options import AnswerOptions
from quoteproof.strategies.session import MODEL_NO_ANSWER, AnswerSession

__all__ = [
    "EXTRACT_SYSTEM_PROMPT",
    "FACTS_ANSWER_PROMPT",
    "MAX_WHOLE_CHARS",
    "answer_from_facts",
    "check_context",
    "context_facts",
    "extract_facts",
    "whole_corpus",
]

FACTS_ANSWER_PROMPT = f"""\
You answer questions using only the facts you are given. {FACTS_RULE}

Rules for your reply:
1. Answer in a few short sentences. End EVERY sentence with the ids of the facts \
that support it, like [TID-1] or [TID-1][TID-2], before the full stop.
2. Use only ids that appear in the facts below. Do not state anything the facts do \
not say.
3. If the facts do not answer the question, reply with exactly <no-answer/> and nothing else.
"""

EXTRACT_SYSTEM_PROMPT = f"""\
You extract facts from sources as knowledge-graph triplets. {SOURCES_RULE}

Rules for your reply:
1. Write the facts that help answer the question, one per line, in this form:
REF #N: subject | relation | object
where REF #N is the source ref and the number of the part the fact is stated in.
2. Each subject and object is a short name (a drug, a condition, a dose, a group of \
patients); each relation a few words (causes, is_contraindicated_in, has_dose).
3. State only what that part says. At most 12 lines, nothing else.
"""


def _triplet_grammar(sources: Sequence[Chunk], units: SourceUnits) -> str | None:
    """`triplet_grammar`, or None (no grammar) for sources it cannot describe."""
    try:
        return triplet_grammar(sources, units)
    except ValueError:
        return None


def extract_facts(session: AnswerSession, first: int) -> list[ContextFact]:
    """Ask the model for the triplets of the retrieved paragraphs that help answer
    the question (one call, stage `extract`; grammar-constrained where the backend
    can be), numbered from `TID-first`. Lines that do not name a retrieved source's
    part are dropped and named in a notice. [] without a model or sources."""
    sources = session.sources
    if Capability.MODEL not in session.backend.capabilities or not sources:
        return []
    units = source_units(sources, session.lookup)
    user = f"{format_sources(sources, units)}\n\nQuestion: {session.question.strip()}"
    messages = (Message("system", EXTRACT_SYSTEM_PROMPT), Message("user", user))
    reply = session.call(
        "extract", messages, grammar=partial(_triplet_grammar, sources, units), facts=False
    ).text
    facts, rejected = parse_triplet_lines(reply, sources, units, first)
    if rejected:
        named = "; ".join(f"{r.raw.strip()[:80]!r} ({r.reason})" for r in rejected[:5])
        session.notices.append(f"{len(rejected)} extracted triplet(s) were dropped: {named}")
    return facts


def answer_from_facts(session: AnswerSession) -> Answer:
    """Answer from the session's facts alone (`--context triplets`): one call whose
    prompt holds the `<facts>` block and the question, no paragraph; its sentences
    must cite facts, and are checked as any generated sentence against what they
    cite. The reply is streamed to the session's events as prose (it holds no
    quote). Without a model, the best `NO_MODEL_FACTS` facts are the answer."""
    facts = session.facts
    if Capability.MODEL not in session.backend.capabilities:
        return session.answer(
            (), (), (), passages=(), cited_refs=[f.id for f in facts[:NO_MODEL_FACTS]]
        )
    user = f"{facts_block(facts)}\n\nQuestion: {session.question.strip()}"
    messages = (Message("system", FACTS_ANSWER_PROMPT), Message("user", user))
    ids = [fact.id for fact in facts]
    reply = session.call(
        "answer",
        messages,
        sources=(),
        stream=True,
        grammar=partial(facts_grammar, ids),
        facts=False,
    ).text
    parsed = parse_output(reply)
    if parsed.no_answer:
        return session.refuse(MODEL_NO_ANSWER)
    resolution = resolve_output(parsed, (), session.lookup, facts=ids)
    return session.answer(resolution.segments, resolution.quotes, resolution.rejected, passages=())


def context_facts(store: Store, found: Sequence[TripletHit]) -> list[ContextFact]:
    """The context lines `TID-1`, `TID-2`, ... of the triplets `found`, in order, each
    with the chunks its graph file's quote is looked up in: those of the current
    version of its document, on its page when the file names one (all of them when
    no chunk is on that page)."""
    facts = []
    current: dict[str, DocumentSummary] = {}
    for collection in {hit.triplet.collection for hit in found if hit.triplet.doc_id}:
        current |= {d.doc_id: d for d in store.list_documents([collection])}
    for number, hit in enumerate(found, start=1):
        triplet = hit.triplet
        support: list[Chunk] = []
        document = current.get(triplet.doc_id or "")
        if document is not None and triplet.quote is not None:
            support = store.chunks_of(document.doc_id, document.version)
            on_page = [c for c in support if triplet.page in (c.pages or ())]
            support = on_page or support
        facts.append(imported_fact(number, triplet, support))
    return facts


MAX_WHOLE_CHARS = 1_000_000
"""Most characters of chunks a whole-corpus context may hold (about 250,000 tokens,
above the longest common context windows): a larger corpus is taken as not fitting
without building its prompt, also for a backend that cannot tell its window."""


def whole_corpus(
    store: Store,
    backend: Backend,
    question: str,
    collections: Collection[str] | None,
    document: str | None,
    lookup: SourceLookup,
) -> tuple[list[Hit], str | None]:
    """Every current chunk of the documents in scope (`collections`, None: all; only
    document `document` when given), in document order (by source path, then chunk
    order), as hits ranked in that order; or [] and the notice saying why not: they
    do not fit the model's context window (measured with the backend's token counter
    on the `cite` prompt of them all, their units numbered). Raises `UsageError` when
    `document` is not a current document in scope."""
    documents = store.list_documents(collections)
    if document is not None:
        names = {document, os.path.abspath(document)}
        documents = [d for d in documents if names & {d.doc_id, d.source_path}]
        if not documents:
            raise UsageError(f"no current document {document!r} in the collections asked")
    chunks = [c for d in documents for c in store.chunks_of(d.doc_id, d.version)]
    if not chunks:
        return [], "There is no document in scope to give the model whole."
    size = sum(len(chunk.text) for chunk in chunks)
    excess = size
    if size <= MAX_WHOLE_CHARS:
        messages = build_messages(
            question, chunks, source_units(chunks, lookup), system=CITE_SYSTEM_PROMPT
        )
        excess = backend.excess_tokens(CompletionRequest(messages, question, tuple(chunks)))
    if excess > 0:
        over = (
            f"over by {excess:,} tokens"
            if size <= MAX_WHOLE_CHARS
            else f"{size:,} characters, over the {MAX_WHOLE_CHARS:,} measured"
        )
        return [], (
            f"The {len(chunks)} passages of the {len(documents)} document(s) in scope do not "
            f"fit the model's context window ({over}); the answer uses the retrieved "
            "passages instead (the whole-corpus context fell back to retrieval)."
        )
    return [Hit(chunk, 0.0, rank) for rank, chunk in enumerate(chunks, start=1)], None


def check_context(options: AnswerOptions) -> None:
    """Raise `UsageError` when `options` ask for a context form their mode cannot
    use: the agent searches for itself, rationale checks its statements against
    paragraphs (so not `triplets` alone), and `document` applies to `whole` only."""
    if options.document is not None and options.context != "whole":
        raise UsageError(
            "one document can be given only as the whole-corpus context (context 'whole')",
            hint=Hint.DOCUMENT_NEEDS_WHOLE,
        )
    if options.context != "paragraphs" and options.mode == "agent":
        raise UsageError(
            "agent mode searches for itself: only the quote, cite and rationale modes "
            "take another context than paragraphs",
            hint=Hint.AGENT_CONTEXT,
        )
    if options.context == "triplets" and options.mode == "rationale":
        raise UsageError(
            "rationale mode checks its statements against paragraphs: give it the "
            "context 'both' to give it triplets too",
            hint=Hint.RATIONALE_CONTEXT,
        )
