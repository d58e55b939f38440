"""The data types of answers: quotes (as recorded and as shown), the segments and
statements of an answer, model calls and their usage, data results, and an answer
as recorded in the audit log (see `quoteproof.model`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from quoteproof.model.documents import (
    ANSWER_SCHEMA,
    NO_MODEL_BACKEND,
    AggregateOp,
    AnswerMode,
    AnswerStatus,
    Box,
    Cell,
    ContextForm,
    FactOrigin,
    FaithfulnessMethod,
    FilterOp,
    MatchKind,
    QuotedTable,
    RetrievalInfo,
    Role,
    Scalar,
    SourceInfo,
    StatementLabel,
)


@dataclass(frozen=True)
class QuoteReceipt:
    """What an answer records of a quotation: its text, where that text lies (`start`,
    `end` in document `doc_id` version `doc_version`, chunk `ref`) and both hashes.

    `claimed_text` keeps the model's own words (or None when it quoted a whole chunk
    by reference) and is never shown as a quote. `differs` describes numbers, units
    or negations the model's words changed. `pages` are the pages the quote's own
    span touches; `boxes` (PDF only) cover its characters; `ocr` says the source text
    came from OCR; `tables` holds the rows of source tables the quote covers (each
    cell a span of the document, header rows carried along), in text order, for a
    quote that crosses table cells. `list_goes_on` says the quote ends with an item
    of a list that goes on in the source (`quotable.list_goes_on`): the quote is not
    the whole list. Only the subclass `Quote` is displayable.
    """

    id: str
    ref: str
    label: str
    doc_id: str
    doc_version: int
    source_path: str
    start: int
    end: int
    text: str
    claimed_text: str | None
    match: MatchKind
    score: float
    doc_sha256: str
    text_sha256: str
    section: tuple[str, ...]
    pages: tuple[int, ...] | None = None
    differs: str | None = None
    boxes: tuple[Box, ...] = ()
    ocr: bool = False
    tables: tuple[QuotedTable, ...] = ()
    list_goes_on: bool = False


@dataclass(frozen=True)
class Quote(QuoteReceipt):
    """A verbatim quotation: `text` is always `document.text[start:end]`.

    Built only by `quoting.resolve`, and by `receipts.verify_recorded` from a
    recorded quote it has re-read from the store.
    """


@dataclass(frozen=True)
class ClaimedQuote(QuoteReceipt):
    """A quote as an answer record (JSON) claims it: its `text` has not been read
    from the store, so it is never shown as verbatim (`receipts.verify_recorded`)."""


@dataclass(frozen=True)
class ProseSegment:
    """Model-written prose (always shown as generated, escaped) with its citations."""

    text: str
    citations: tuple[str, ...] = ()
    type: Literal["prose"] = "prose"


@dataclass(frozen=True)
class DataSegment:
    """A place in the answer where the data result with `data_id` is shown."""

    data_id: str
    type: Literal["data"] = "data"


@dataclass(frozen=True)
class QuoteSegment:
    """A place in the answer where the quote with `quote_id` is shown."""

    quote_id: str
    type: Literal["quote"] = "quote"


Segment = ProseSegment | QuoteSegment | DataSegment


@dataclass(frozen=True)
class Rejected:
    """Something the model wrote that was not shown: its raw text and why."""

    raw: str
    reason: str


@dataclass(frozen=True)
class LLMInfo:
    """Which backend and model produced the raw output, and that output verbatim.

    `server` is the URL of the model server that answered; None when no server was
    involved (the `extractive` backend, or a `local` model run in-process, whose
    file name is `model`). It never holds an API key.
    """

    backend: str
    model: str | None
    raw_output: str
    server: str | None = None

    @property
    def language_model(self) -> bool:
        """False when the answer was made without a language model: its quotes were
        chosen by retrieval alone (the `extractive` backend)."""
        return self.backend != NO_MODEL_BACKEND


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the model server (summed over calls in an `Answer`)."""

    prompt_tokens: int
    completion_tokens: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for: `arguments` is the JSON text it wrote (for
    Anthropic, the JSON encoding of the `input` object)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One chat message. `tool_calls` only on assistant messages; `tool_call_id` (the
    call answered) only on `tool` messages, whose `content` is the tool's result."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ModelCall:
    """One request to the model, kept in the answer for audit.

    `stage` names the step (`answer`, `retry`, `generate`, `verify`, `refine`,
    `agent`); `messages` are the messages this call added to the conversation (the
    whole prompt for a fresh conversation; for agent steps after the first, only the
    tool results sent back); `output` and `tool_calls` are the model's reply;
    `problems` say why validation failed (empty: accepted).
    """

    stage: str
    messages: tuple[Message, ...]
    output: str
    tool_calls: tuple[ToolCall, ...] = ()
    problems: tuple[str, ...] = ()
    usage: Usage | None = None


@dataclass(frozen=True)
class Statement:
    """A rationale statement (`rationale` mode): model-written, always shown as
    generated, with the refs it relies on and the verifier's label.

    `text` is the statement as used for the answer (the refined text when it was
    refined); `original` the first version when refined, else None. `label` and
    `justification` are the verifier's (None when the verifier gave none).
    """

    id: str
    text: str
    refs: tuple[str, ...]
    label: StatementLabel | None
    justification: str | None
    original: str | None = None


@dataclass(frozen=True)
class Filter:
    """One row condition of a table query: `column op value`."""

    column: str
    op: FilterOp
    value: Scalar


@dataclass(frozen=True)
class DataResult:
    """A result computed deterministically from a table (`agent` mode), with every
    parameter that produced it.

    `id` is the pointer the model used (`r1`). The table is the stored document
    `doc_id` version `doc_version` (hash `doc_sha256`). `filters` and `columns` are
    those of the query (an aggregate repeats the query it was computed from, named
    in `source`); `row_count` counts the matching rows and `rows` holds the first of
    them (at most a preview). `operation`, `column` and `value` are set for an
    aggregate. `period` describes a date range the filters select, when they do.
    """

    id: str
    table: str
    doc_id: str
    doc_version: int
    doc_sha256: str
    source_path: str
    filters: tuple[Filter, ...]
    columns: tuple[str, ...]
    row_count: int
    rows: tuple[tuple[Cell, ...], ...] = ()
    operation: AggregateOp | None = None
    column: str | None = None
    value: Scalar = None
    source: str | None = None
    period: str | None = None


@dataclass(frozen=True)
class Fact:
    """A triplet the model was given as context line `id` (`TID-1`, `TID-2`, ...)
    and that the answer cites. Generated text: never drawn in a verbatim box.

    `origin` says whether it was `imported` (from `graph_file` row `row`, stored as
    `triplet_id`) or `generated` (extracted by the model from passage `ref`).
    `quote_id` names the quote of `Answer.quotes` that is its provenance, read from
    the document by lookup: the sentence it was extracted from, or the words the
    graph file gives as its support (None when there is none, or they were not
    found: `provenance_note` says why).
    """

    id: str
    subject: str
    relation: str
    object: str
    origin: FactOrigin
    triplet_id: str | None = None
    graph_file: str | None = None
    row: int | None = None
    ref: str | None = None
    quote_id: str | None = None
    provenance_note: str | None = None


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on one claim of an answer: the generated sentence shown as
    `Answer.segments[segment]` (a `ProseSegment`: model text, never a quote), the
    refs of it whose passages were checked, and whether they support it, as
    `checked_by` found; `reason` says why not (None when supported)."""

    segment: int
    refs: tuple[str, ...]
    supported: bool
    reason: str | None
    checked_by: FaithfulnessMethod


@dataclass(frozen=True)
class Faithfulness:
    """How much of an answer's generated text its cited passages support: a verdict
    on each generated sentence shown (`claims`), by `method`
    (`FaithfulnessMethod`); the `removed` generated sentences
    (`Answer.removed_sentences`) count as claims not supported. `score` is the share
    of all of them supported (None when the answer makes no claim of its own, e.g.
    quotes only, or a refusal before any model call)."""

    method: FaithfulnessMethod
    score: float | None
    claims: tuple[ClaimVerdict, ...] = ()
    removed: int = 0


@dataclass(frozen=True)
class Answer:
    """The result of `ask`: ordered segments, the quotes they show, what was rejected.

    `mode` says how it was composed. `partial` marks an answer from which uncited
    sentences were dropped (or an agent stopped by its step limit). `cited` holds the
    whole passages that prose cites, as verbatim quotes shown on demand.
    `statements` (rationale mode), `data` (agent mode) and `escalation` (the agent's
    reason for handing the question to a person, model-written) carry the extra
    parts of each mode; `calls` keeps every model request and reply for audit, and
    `usage` sums their token counts (None when no call reported any). `notices` say
    what the reader should know about how the answer was made (sources left out to
    fit the model's context, ...); they are quoteproof's words, not the model's.
    `removed_sentences` are the generated sentences (and rationale statements) taken
    out because they cite no retrieved source or say what the passages they cite do
    not (numbers, dates, names, negation: `quoting.support`), each with the reason.
    `facts` are the triplets the answer cites (`TID-n`), and `context` the form of
    context the model was given (`ContextForm`). `faithfulness` scores the claims of
    the generated text against the passages they cite (`quoteproof.faithfulness`;
    None for an answer recorded before it existed); it never changes a quote.
    """

    question: str
    status: AnswerStatus
    segments: tuple[Segment, ...]
    quotes: tuple[Quote, ...]
    rejected: tuple[Rejected, ...]
    llm: LLMInfo
    sources: tuple[SourceInfo, ...] = ()
    refusal_reason: str | None = None
    retrieval: RetrievalInfo | None = None
    mode: AnswerMode = "quote"
    partial: bool = False
    cited: tuple[Quote, ...] = ()
    statements: tuple[Statement, ...] = ()
    data: tuple[DataResult, ...] = ()
    escalation: str | None = None
    calls: tuple[ModelCall, ...] = ()
    usage: Usage | None = None
    notices: tuple[str, ...] = ()
    removed_sentences: tuple[Rejected, ...] = ()
    facts: tuple[Fact, ...] = ()
    context: ContextForm = "paragraphs"
    faithfulness: Faithfulness | None = None
    schema: str = field(default=ANSWER_SCHEMA)

    def quote(self, quote_id: str) -> Quote:
        """Return the quote with `quote_id`; raise KeyError if there is none."""
        for quote in self.quotes:
            if quote.id == quote_id:
                return quote
        raise KeyError(quote_id)

    def data_result(self, data_id: str) -> DataResult:
        """Return the data result with `data_id`; raise KeyError if there is none."""
        for result in self.data:
            if result.id == data_id:
                return result
        raise KeyError(data_id)

    def cited_passages(self, refs: tuple[str, ...]) -> tuple[Quote, ...]:
        """Return the verbatim passages in `cited` for `refs`, in the order of `refs`."""
        by_ref = {quote.ref: quote for quote in self.cited}
        return tuple(by_ref[ref] for ref in refs if ref in by_ref)


@dataclass(frozen=True)
class RecordedAnswer:
    """An answer read back from its record (`codec.answer_from_dict`), its quotes not
    yet checked against a store.

    `quotes` and `cited` are the recorded quotes and cited passages, as claims.
    `without_quotes` is everything else: an `Answer` whose `quotes` and `cited` are
    empty while its quote segments still name the claims, so it is never drawn;
    `receipts.verify_recorded` makes the displayable `Answer`.
    """

    without_quotes: Answer
    quotes: tuple[ClaimedQuote, ...]
    cited: tuple[ClaimedQuote, ...] = ()
