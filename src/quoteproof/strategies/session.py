"""What every answer strategy shares: the question and its sources, the model calls
made so far (kept for audit), streaming, and building the final `Answer`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from quoteproof.llm.answer_form import missing_value
from quoteproof.llm.base import (
    Backend,
    Capability,
    Completion,
    CompletionRequest,
    TextSink,
    ToolSpec,
)
from quoteproof.llm.bundled import BUNDLED_MODEL_NOTICE, BUNDLED_NAME
from quoteproof.model import (
    NO_MODEL_BACKEND,
    REFUSAL_TEXT,
    Answer,
    AnswerMode,
    AnswerStatus,
    Chunk,
    ContextForm,
    DataResult,
    Fact,
    Hit,
    LLMInfo,
    Message,
    ModelCall,
    ProseSegment,
    Quote,
    Rejected,
    RetrievalInfo,
    Segment,
    SourceInfo,
    Statement,
    Usage,
)
from quoteproof.quoting.citations import screen_prose
from quoteproof.quoting.parse import paragraph_ids, with_source_refs
from quoteproof.quoting.resolve import DEFAULT_THRESHOLD, SourceLookup, cite_passages
from quoteproof.quoting.support import chunk_passage, data_passage
from quoteproof.retrieval.evidence import WITH_SENTENCES
from quoteproof.strategies.facts import (
    NO_MODEL_FACTS,
    ContextFact,
    cited_facts,
    fact_passages,
    with_facts,
)
from quoteproof.streaming import DraftStream, EventSink, StageStarted

Grammar = Callable[[], str | None]
"""Makes the grammar of one model call (None: none), called only for a backend that
can constrain its output (`Capability.CONSTRAINED`)."""

NO_RELEVANT_SOURCES = "no_relevant_sources"
NOT_IN_SOURCES = "not_in_sources"
MODEL_NO_ANSWER = "model_no_answer"
NOTHING_VERIFIABLE = "nothing_verifiable"
VALIDATION_FAILED = "validation_failed"
ESCALATED = "escalated"
STEP_LIMIT = "step_limit"


CLOSE_CALL = 0.05
"""Evidence this near the refusal threshold makes a close call, said in a notice."""

MAX_REPLY_CHARS = 100_000
"""Most characters of one model reply that are read and kept (its text, and each
tool call's arguments): above the longest extractive reply (three quotes of a
chunk, whose length `ingest.chunking` bounds), far above what `max_tokens` lets a
model write, so only a runaway or hostile server is cut."""

MAX_TOOL_CALLS = 16
"""Most tool calls of one model reply that are run and kept."""


def bounded_reply(completion: Completion) -> tuple[Completion, str | None]:
    """Return `completion` cut to `MAX_REPLY_CHARS` characters of text and of each
    tool call's arguments and to its first `MAX_TOOL_CALLS` tool calls, and the
    notice saying what was cut (None when nothing was)."""
    calls = completion.tool_calls
    cuts = []
    if len(completion.text) > MAX_REPLY_CHARS:
        cuts.append(
            f"its text was {len(completion.text):,} characters long; only the first "
            f"{MAX_REPLY_CHARS:,} were read"
        )
    if len(calls) > MAX_TOOL_CALLS:
        cuts.append(f"it asked for {len(calls)} tool calls; only the first {MAX_TOOL_CALLS} ran")
    if any(len(call.arguments) > MAX_REPLY_CHARS for call in calls):
        cuts.append(f"tool call arguments were cut to {MAX_REPLY_CHARS:,} characters")
    if not cuts:
        return completion, None
    bounded = replace(
        completion,
        text=completion.text[:MAX_REPLY_CHARS],
        tool_calls=tuple(
            replace(call, arguments=call.arguments[:MAX_REPLY_CHARS])
            for call in calls[:MAX_TOOL_CALLS]
        ),
    )
    return bounded, f"A model reply was cut: {'; '.join(cuts)}."


def _first_chars(sink: TextSink, limit: int) -> TextSink:
    """A sink that passes on to `sink` only the first `limit` characters it is fed."""
    fed = 0

    def feed(piece: str) -> None:
        nonlocal fed
        if fed < limit:
            sink(piece[: limit - fed])
        fed += len(piece)

    return feed


def empty_index_notice(collections: Collection[str] | None) -> str:
    """What a refusal says when nothing in `collections` (None: the whole index) is
    indexed: the index is empty, or no collection was asked, not the question
    unanswered."""
    if collections is not None and not collections:
        return "No collection was searched: there is nothing to answer from."
    named = ", ".join(f"'{name}'" for name in sorted(collections or ()))
    kind = "collection" if len(collections or ()) == 1 else "collections"
    scope = f" in {kind} {named}" if named else ""
    return (
        f"The index holds no documents{scope}: there is nothing to answer from "
        "(`quoteproof ingest PATH` adds documents)."
    )


def refusal_notices(info: RetrievalInfo) -> list[str]:
    """Return what an answer must say about the refusal check behind it: key terms
    no source carries (then nothing more: the answer is refused for them, and no
    rephrasing or threshold changes that), a refusal that rests on the automatic
    threshold, evidence within CLOSE_CALL of the threshold, or no threshold at all."""
    notices = []
    if info.missing_terms:  # refused for the missing term: nothing else bears on it
        terms = ", ".join(f"'{term}'" for term in info.missing_terms)
        return [f"No retrieved source mentions {terms}."]
    if info.threshold is None or info.evidence is None:
        if info.threshold is None:
            notices.append(
                "No refusal threshold applies to this retrieval: the sources were "
                "screened only for the question's key terms (calibrating the index with "
                "labelled questions sets a threshold)."
            )
        return notices
    gap = info.evidence - info.threshold
    evidence, threshold = _distinct_figures(info.evidence, info.threshold)
    if info.below_threshold and info.threshold_source == "automatic":
        notices.append(
            "The documents may still answer this. It was refused because the best match "
            f"({evidence}) is below a threshold ({threshold}) estimated automatically from "
            "off-topic questions, not from questions about these documents. `quoteproof "
            "search` lists the closest passages; `quoteproof calibrate QUESTIONS.jsonl` "
            "(answerable questions and not) fits the threshold to your documents"
            f"{_match_meaning(info.evidence_kind)}."
        )
    elif info.below_threshold and -gap < CLOSE_CALL:
        notices.append(
            f"Close call: the best match ({evidence}) is just below the refusal "
            f"threshold ({threshold}); the documents may still answer a rephrased "
            "question."
        )
    elif not info.below_threshold and gap < CLOSE_CALL:
        notices.append(
            f"Close call: the best match ({evidence}) is just above the refusal "
            f"threshold ({threshold}); check that the quotes answer the question."
        )
    return notices


def _match_meaning(evidence_kind: str | None) -> str:
    """What the best match of a refusal measures, for the evidence a user cannot
    read off `quoteproof search`'s scores (`evidence.WITH_SENTENCES`), else ""."""
    if (evidence_kind or "").partition(":")[0] != WITH_SENTENCES:
        return ""
    return (
        " (the match averages the question's similarity to the best passage and to the "
        "best sentence, row, list or short paragraph of the passages an answer is drawn "
        "from; `quoteproof search` shows scores of another kind)"
    )


def _distinct_figures(evidence: float, threshold: float) -> tuple[str, str]:
    """`evidence` and `threshold` written with three decimals, or as many more (up
    to six) as it takes for unequal values to read unequal: a notice never says
    that 0.614 is below 0.614."""
    decimals = 3
    while decimals < 6 and f"{evidence:.{decimals}f}" == f"{threshold:.{decimals}f}":
        decimals += 1
    return f"{evidence:.{decimals}f}", f"{threshold:.{decimals}f}"


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


def total_usage(calls: Sequence[ModelCall]) -> Usage | None:
    """Sum the usage of `calls` that reported one; None when none did."""
    reported = [call.usage for call in calls if call.usage is not None]
    if not reported:
        return None
    total = reported[0]
    for usage in reported[1:]:
        total = total + usage
    return total


@dataclass
class AnswerSession:
    """One `ask` in progress: the question, the retrieved hits, the backend, and the
    model calls made so far.

    `events` (optional) receives a `StageStarted` before each model call and, for
    calls made with `stream=True`, the draft events of the reply (see `streaming`).
    `removed_sentences` are generated sentences a strategy's own checks took out
    (rationale statements); every answer and refusal lists them in its
    `removed_sentences`, after them those `answer` takes out.
    """

    question: str
    hits: Sequence[Hit]
    backend: Backend
    lookup: SourceLookup
    mode: AnswerMode
    threshold: float = DEFAULT_THRESHOLD
    retrieval: RetrievalInfo | None = None
    events: EventSink | None = None
    calls: list[ModelCall] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    removed_sentences: list[Rejected] = field(default_factory=list)
    context: ContextForm = "paragraphs"
    facts: list[ContextFact] = field(default_factory=list)
    _last_model: str | None = None

    @property
    def offers(self) -> bool:
        """Whether the model may be shown only the no-model answer's best units
        (`strategies.quote.fit_offer`): with retrieved paragraphs as context, not when
        it is given the whole corpus or triplets."""
        return self.context == "paragraphs"

    @property
    def fact_refs(self) -> tuple[str, ...]:
        """The ids of the facts in the model's context (`TID-n`), which sentences and
        statements may cite as they cite sources."""
        return tuple(fact.id for fact in self.facts)

    @property
    def sources(self) -> tuple[Chunk, ...]:
        """The retrieved chunks, best first."""
        return tuple(hit.chunk for hit in self.hits)

    def fit_context(self, build: Callable[[Sequence[Chunk]], Sequence[Message]]) -> None:
        """Keep only the best sources whose prompt (`build(sources)`) fits the model's
        context window, at least one; the sources left out are named in a notice of
        the answer. A backend that cannot tell its window keeps every source."""
        kept = self.sources
        while len(kept) > 1:
            messages = with_facts(tuple(build(kept)), self.facts)
            request = CompletionRequest(messages, self.question, kept)
            if self.backend.excess_tokens(request) <= 0:
                break
            kept = kept[:-1]
        if len(kept) < len(self.hits):
            left_out = [hit.chunk.ref for hit in self.hits[len(kept) :]]
            self.notices.append(
                f"{len(left_out)} of {len(self.hits)} retrieved sources did not fit the "
                f"model's context window and were not given to it: {', '.join(left_out)}"
            )
            self.hits = self.hits[: len(kept)]

    def call(
        self,
        stage: str,
        messages: tuple[Message, ...],
        *,
        sources: Sequence[Chunk] | None = None,
        tools: tuple[ToolSpec, ...] = (),
        stream: bool = False,
        recorded: tuple[Message, ...] | None = None,
        grammar: Grammar | None = None,
        facts: bool = True,
        grammar_tokens: int = CompletionRequest.max_tokens,
    ) -> Completion:
        """Send `messages` to the model and record the call under `stage`.

        `sources` (default: all retrieved) are what quotes in a streamed draft resolve
        against; `stream` sends the reply's draft events as it arrives; `recorded`
        are the messages kept in the answer for this call (default: all of them);
        `grammar` makes the grammar that constrains the reply (see `quoting.grammar`),
        called only when the backend can constrain. With `facts` the session's facts
        are added to the prompt (`facts.with_facts`); `grammar_tokens` bounds a reply
        constrained by the grammar (an unconstrained one keeps the default bound).
        The reply is cut by `bounded_reply` (a notice of the answer says so), the
        draft stream too. The reply returned names `sources` by ref where it wrote
        `PID-n`, the n-th of them (`parse.with_source_refs`); the call records it as
        written, and records no messages when no language model read them (the
        no-model backend reads the question and sources, not the prompt).
        Raises `BackendError` when the model fails.
        """
        chunks = tuple(self.sources if sources is None else sources)
        constrained = Capability.CONSTRAINED in self.backend.capabilities
        ids = paragraph_ids([chunk.ref for chunk in chunks])
        if facts:
            messages = with_facts(messages, self.facts)
        request = CompletionRequest(
            messages,
            self.question,
            chunks,
            tools=tools,
            grammar=grammar() if grammar is not None and constrained else None,
        )
        if request.grammar is not None:
            request = replace(request, max_tokens=grammar_tokens)
        if self.events is not None:
            self.events(StageStarted(stage))
        if stream and self.events is not None:
            draft = DraftStream(chunks, self.lookup, self.threshold, self.events, ids)
            completion = self.backend.stream(request, _first_chars(draft.feed, MAX_REPLY_CHARS))
            draft.close()
        else:
            completion = self.backend.complete(request)
        completion, cut = bounded_reply(completion)
        if cut is not None:
            self.notices.append(cut)
        self._last_model = completion.model
        if self.backend.name == NO_MODEL_BACKEND:
            recorded = ()
        self.calls.append(
            ModelCall(
                stage=stage,
                messages=messages if recorded is None else recorded,
                output=completion.text,
                tool_calls=completion.tool_calls,
                usage=completion.usage,
            )
        )
        return replace(completion, text=with_source_refs(completion.text, ids))

    def reject_last_call(self, problems: Sequence[str]) -> None:
        """Record why the last call's reply failed validation."""
        self.calls[-1] = replace(self.calls[-1], problems=tuple(problems))

    def _llm(self) -> LLMInfo:
        raw = self.calls[-1].output if self.calls else ""
        model = self._last_model or self.backend.model
        return LLMInfo(self.backend.name, model, raw, server=self.backend.server)

    def answer(
        self,
        segments: Sequence[Segment],
        quotes: Sequence[Quote],
        rejected: Sequence[Rejected],
        *,
        partial: bool = False,
        statements: Sequence[Statement] = (),
        data: Sequence[DataResult] = (),
        cited_refs: Sequence[str] = (),
        passages: Sequence[Chunk] | None = None,
    ) -> Answer:
        """Return the answered `Answer` made of these parts, or the refusal
        `nothing_verifiable` when none is left to show.

        Every generated sentence is checked against `passages` (default: the
        retrieved sources; each with its label, `support.chunk_passage`) and the data
        results by `citations.screen_prose`: one
        that cites none of them, or says what they do not, is taken out and listed
        in `removed_sentences`; a repeated sentence is shown once. The passages cited
        by the prose shown (and by `cited_refs`, e.g. statement refs) are kept in
        `cited` as whole-chunk verbatim quotes; the facts they cite (`TID-n`; without
        a model, the best `NO_MODEL_FACTS` facts) are kept in `facts`, each with the
        quote of its provenance added to `quotes` (`facts.cited_facts`). An answer
        that shows nothing but facts is answered. An answer whose quotes give no value
        that the question asks for says so in a notice (`_value_notice`).
        """
        chunks = self.sources if passages is None else passages
        shown, removed = screen_prose(
            segments,
            {chunk.ref: chunk_passage(chunk) for chunk in chunks} | fact_passages(self.facts),
            {result.id: data_passage(result) for result in data},
        )
        refs = [ref for s in shown if isinstance(s, ProseSegment) for ref in s.citations]
        refs += cited_refs
        if Capability.MODEL not in self.backend.capabilities:
            refs += self.fact_refs[:NO_MODEL_FACTS]
        facts, fact_quotes = cited_facts(self.facts, refs, self.lookup)
        if not shown and not facts:
            return self.refuse(
                NOTHING_VERIFIABLE, rejected, statements=statements, data=data, removed=removed
            )
        cited, bad = cite_passages(refs, chunks, self.lookup)
        return self._build(
            "answered",
            tuple(shown),
            tuple(quotes) + fact_quotes,
            tuple(rejected) + bad,
            partial=partial,
            statements=statements,
            data=data,
            cited=cited,
            removed=removed,
            facts=facts,
            notices=self._value_notice((*quotes, *fact_quotes, *cited), data),
        )

    def _value_notice(self, quotes: Sequence[Quote], data: Sequence[DataResult]) -> tuple[str, ...]:
        """The notice an answer showing `quotes` carries when the question asks for a
        value (a number, a time, `answer_form.missing_value`) that none of them gives
        and no data result (`data`, which may give it) is shown; else none."""
        if data:
            return ()
        asked = missing_value(self.question, [quote.text for quote in quotes])
        if asked is None:
            return ()
        return (
            f"The question asks for {asked}, and no quote gives one beside what it asks "
            "about: the quotes may not answer it, and the sources may not state it.",
        )

    def refuse(
        self,
        reason: str,
        rejected: Sequence[Rejected] = (),
        *,
        statements: Sequence[Statement] = (),
        data: Sequence[DataResult] = (),
        escalation: str | None = None,
        removed: Sequence[Rejected] = (),
    ) -> Answer:
        """Return a refusal (the fixed refusal sentence) for `reason`; what the model
        wrote stays in `rejected`, `removed_sentences` (with `removed`), `calls` and
        `llm.raw_output`."""
        return self._build(
            "refused",
            (ProseSegment(REFUSAL_TEXT),),
            (),
            tuple(rejected),
            refusal_reason=reason,
            statements=statements,
            data=data,
            escalation=escalation,
            removed=removed,
        )

    def _build(
        self,
        status: AnswerStatus,
        segments: tuple[Segment, ...],
        quotes: tuple[Quote, ...],
        rejected: tuple[Rejected, ...],
        *,
        refusal_reason: str | None = None,
        partial: bool = False,
        statements: Sequence[Statement] = (),
        data: Sequence[DataResult] = (),
        cited: tuple[Quote, ...] = (),
        escalation: str | None = None,
        removed: Sequence[Rejected] = (),
        facts: tuple[Fact, ...] = (),
        notices: tuple[str, ...] = (),
    ) -> Answer:
        return Answer(
            question=self.question,
            status=status,
            segments=segments,
            quotes=quotes,
            rejected=rejected,
            llm=self._llm(),
            sources=source_infos(self.hits),
            refusal_reason=refusal_reason,
            retrieval=self.retrieval,
            mode=self.mode,
            partial=partial,
            cited=cited,
            statements=tuple(statements),
            data=tuple(data),
            escalation=escalation,
            calls=tuple(self.calls),
            usage=total_usage(self.calls),
            notices=tuple(self.notices) + notices + self._model_notices(),
            removed_sentences=tuple(dict.fromkeys([*self.removed_sentences, *removed])),
            facts=facts,
            context=self.context,
        )

    def _model_notices(self) -> tuple[str, ...]:
        """What the answer must say about the model that made it: that it is the
        bundled demo model, when it is and was called."""
        bundled = self.backend.name == "local" and self.backend.model == BUNDLED_NAME
        return (BUNDLED_MODEL_NOTICE,) if bundled and self.calls else ()
