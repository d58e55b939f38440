"""Plain data types shared by every layer of quoteproof.

This module imports nothing of quoteproof's own but its defaults. All types are
frozen dataclasses: once built, a value never changes, so a `Quote` created by the
resolver stays equal to the source slice it was read from.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from typing import Literal

from quoteproof.defaults import DEFAULT_COLLECTION as DEFAULT_COLLECTION

ANSWER_SCHEMA = "quoteproof.answer/1"
REFUSAL_TEXT = "The sources contain no answer to this question."
NO_MODEL_BACKEND = "extractive"
"""The backend that answers without a language model (quotes chosen by retrieval)."""

BlockKind = Literal["heading", "paragraph", "list", "table", "code", "furniture"]
"""`furniture` is a running header or footer: kept in the text, never in a chunk."""
MatchKind = Literal["ref", "exact", "normalized", "fuzzy"]
AnswerStatus = Literal["answered", "refused"]
AnswerMode = Literal["quote", "cite", "rationale", "agent"]
"""How an answer was composed (`ask --mode`): see `quoteproof.strategies`."""
ContextForm = Literal["paragraphs", "triplets", "both", "whole"]
"""What the model is given as context (`ask --context`): retrieved paragraphs,
knowledge-graph triplets, both, or every chunk of the documents in scope."""
FactOrigin = Literal["imported", "generated"]
"""Where a triplet comes from: an imported graph file, or the model's extraction
from a paragraph."""
Role = Literal["system", "user", "assistant", "tool"]
StatementLabel = Literal[
    "CORRECT-EXPLICIT",
    "CORRECT-IMPLICIT",
    "CORRECT-ADDITIONAL_INFO",
    "INCORRECT-FALSE_INFO",
    "INCORRECT-DEVIATING_INFO",
    "INCORRECT-ILLOGICAL",
]
"""The verifier's verdict on a rationale statement (`rationale` mode)."""
FilterOp = Literal["=", "!=", "<", "<=", ">", ">=", "contains"]
AggregateOp = Literal["count", "sum", "mean", "min", "max", "distinct"]
Cell = str | None
"""A table cell as shown: the source's own text (JSON numbers and booleans as their
JSON text); None for a value the row lacks."""
Scalar = str | int | float | bool | None


def sha256_text(text: str) -> str:
    """Return the hex SHA-256 of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Block:
    """A structural unit of a document's canonical text: `text[start:end]`.

    `section` is the heading path that contains the block (outermost first); a
    heading block's own section path ends with its own title.
    """

    kind: BlockKind
    start: int
    end: int
    section: tuple[str, ...] = ()


@dataclass(frozen=True)
class CharRun:
    """Canonical characters `[start, start + length)` are PDF page `page`'s characters
    `[char, char + length)` in PDFium's text order (`page` counts from 1)."""

    start: int
    page: int
    char: int
    length: int


@dataclass(frozen=True)
class Layout:
    """Where a document's canonical text lies on its pages.

    `page_starts[i]` is the canonical offset at which page `i + 1` begins (the first
    is 0; offsets never decrease). `char_runs` (PDF only, sorted by `start`) map
    canonical characters back to PDFium character indexes, from which exact character
    boxes are read; characters in no run (line breaks, joins) have no box.
    `ocr_pages` lists the pages whose text came from OCR.
    """

    page_starts: tuple[int, ...]
    char_runs: tuple[CharRun, ...] = ()
    ocr_pages: tuple[int, ...] = ()

    def pages_of(self, start: int, end: int) -> tuple[int, ...]:
        """Return the pages (1-based, ascending) that `text[start:end]` touches.

        An empty span touches the page it starts on; a layout with no pages gives ().
        """
        if not self.page_starts:
            return ()
        first = bisect.bisect_right(self.page_starts, start)
        last = bisect.bisect_right(self.page_starts, max(start, end - 1))
        return tuple(range(max(first, 1), max(last, 1) + 1))


@dataclass(frozen=True)
class Box:
    """A rectangle on page `page` (1-based) in PDF points, origin bottom-left."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class TableRow:
    """One row of a table in a document's canonical text: each of `cells` is a span
    `(start, end)` of the text (in order, not overlapping; an empty cell is an empty
    span). `header` marks a header row (column names)."""

    cells: tuple[tuple[int, int], ...]
    header: bool = False

    @property
    def start(self) -> int:
        """Where the row's first cell begins."""
        return self.cells[0][0]

    @property
    def end(self) -> int:
        """Where the row's last cell ends."""
        return self.cells[-1][1]


@dataclass(frozen=True)
class SourceTable:
    """A table of a document: its rows in text order (at least one, each with at
    least one cell)."""

    rows: tuple[TableRow, ...]


@dataclass(frozen=True)
class ParsedDocument:
    """What a format parser returns: canonical text, title and blocks in order.

    `layout` is set for paged formats (PDF, DOCX with saved page breaks); `language`
    is a BCP 47 tag (from the document's metadata, else "en"); `warnings` are
    one-line notes for the user that did not stop ingest ("page 7 has no text
    layer; OCR is off"). `tables` holds the row and cell structure of the document's
    tables, where the format gives it (HTML, DOCX, SPL, Markdown, regular ruled PDF tables).
    """

    text: str
    title: str
    format: str
    blocks: tuple[Block, ...]
    layout: Layout | None = None
    language: str = "en"
    warnings: tuple[str, ...] = ()
    tables: tuple[SourceTable, ...] = ()


@dataclass(frozen=True)
class Document:
    """One stored version of one source file.

    `doc_id` is stable for a source path; `version` starts at 1 and grows each time
    the file's canonical text changes. `sha256` is the hash of `text`. `collection`
    is the collection the document belongs to (access control works per collection).
    """

    doc_id: str
    version: int
    source_path: str
    title: str
    format: str
    text: str
    sha256: str
    collection: str = DEFAULT_COLLECTION


@dataclass(frozen=True)
class Chunk:
    """A retrievable passage: `document.text[start:end]` of one document version.

    `ref` is the short, index-wide unique key shown to the model; `label` is the
    human-readable form (`Veklury label › 5.1 Hypersensitivity › p. 4`). `pages` is
    None for unpaged documents; `ocr` is true when some of the text came from OCR;
    `source_uri` opens the source at the chunk (`file:///…/label.pdf#page=4`).
    """

    ref: str
    doc_id: str
    doc_version: int
    ordinal: int
    start: int
    end: int
    text: str
    section: tuple[str, ...]
    label: str
    source_path: str
    pages: tuple[int, ...] | None = None
    language: str = "en"
    source_uri: str = ""
    ocr: bool = False

    @property
    def parent_section(self) -> tuple[str, ...]:
        """The section path one level up from `section` (empty at the top)."""
        return self.section[:-1]


@dataclass(frozen=True)
class TableCell:
    """One cell of a quoted table row: `text` is `document.text[start:end]`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class QuotedRow:
    """A row of a source table shown with a quote: its cells as source text.

    `header` marks the table's header row; `quoted` is False for a header row
    carried along from the table although the quote does not reach it.
    """

    cells: tuple[TableCell, ...]
    header: bool = False
    quoted: bool = True


@dataclass(frozen=True)
class QuotedTable:
    """The rows of one source table that a quote touches, with the table's header
    rows first when the quote leaves them out (`quoted` False).

    `start` and `end` span the touched rows in the document text (a partly quoted
    row counts whole, so they may reach outside the quote).
    """

    start: int
    end: int
    rows: tuple[QuotedRow, ...]


@dataclass(frozen=True)
class Location:
    """Where a span of a document lies: its pages (None when unpaged), for PDFs
    rectangles covering its characters, and the table rows it covers."""

    pages: tuple[int, ...] | None
    boxes: tuple[Box, ...] = ()
    ocr: bool = False
    tables: tuple[QuotedTable, ...] = ()


@dataclass(frozen=True)
class Via:
    """How one retriever ranked a hit: its name (`bm25`, `dense`, `rerank`), the
    hit's rank in that retriever's list (1-based) and the score it gave."""

    retriever: str
    rank: int
    score: float


@dataclass(frozen=True)
class Hit:
    """A chunk returned by retrieval, with its score (higher is better) and rank (1-based).

    `via` says how each retriever behind a fused or reranked list ranked the chunk
    (empty for a single retriever's own list).
    """

    chunk: Chunk
    score: float
    rank: int
    via: tuple[Via, ...] = ()


ThresholdSource = Literal["calibrated", "automatic"]


@dataclass(frozen=True)
class RetrievalInfo:
    """How an answer's sources were retrieved, and the evidence behind a refusal.

    `evidence` is the best retrieval evidence for the question (e.g. the highest
    cosine similarity), `evidence_kind` what it measures; `threshold` is the
    refusal threshold that was applied (None when none applied) and
    `threshold_source` where it came from: `calibrated` on the user's labelled
    questions, or `automatic` (estimated from off-topic probes, weaker).
    `missing_terms` are the question's key terms (names, codes, numbers) that no
    retrieved source carries (see `retrieval.key_terms`).
    """

    retriever: str
    evidence: float | None = None
    evidence_kind: str | None = None
    threshold: float | None = None
    threshold_source: ThresholdSource | None = None
    missing_terms: tuple[str, ...] = ()

    @property
    def below_threshold(self) -> bool:
        """True when a threshold applies and the evidence is under it (or absent)."""
        return self.threshold is not None and (
            self.evidence is None or self.evidence < self.threshold
        )


@dataclass(frozen=True)
class SourceInfo:
    """A retrieved passage as recorded in an answer: where it is and how it ranked."""

    ref: str
    label: str
    doc_id: str
    doc_version: int
    source_path: str
    score: float
    rank: int


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
    quote that crosses table cells. Only the subclass `Quote` is displayable.
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
class Triplet:
    """A knowledge-graph triplet as stored: `subject` `relation` `object` of one
    collection, imported from row `row` of the graph file `graph_file` (its name).

    `triplet_id` is stable for the same row content of the same file and
    collection. `doc_id`, `page` and `quote` are the provenance the file gives (each
    None when absent): `quote` is the file's claim of the supporting words, never
    shown as a quote until it is found in the document. `is_current` is False once
    retired (or replaced by a later import of the file).
    """

    triplet_id: str
    collection: str
    subject: str
    relation: str
    object: str
    graph_file: str
    row: int
    doc_id: str | None = None
    page: int | None = None
    quote: str | None = None
    is_current: bool = True


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
    context the model was given (`ContextForm`).
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
