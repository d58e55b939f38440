"""The data types of documents and what is read from them: blocks and layouts,
stored documents and chunks, table cells, locations, search hits and retrieval
evidence (see `quoteproof.model`)."""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
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
EntityMatch = Literal["exact", "normalized", "fuzzy", "hop"]
"""How triplet search found a triplet: an entity the question names, matched
exactly, after normalising (stemming) or fuzzily, or one hop from such a triplet."""
Role = Literal["system", "user", "assistant", "tool"]
FaithfulnessMethod = Literal["deterministic", "model"]
"""How an answer's claims are checked against the passages they cite
(`quoteproof.faithfulness`): by the deterministic support checks (numbers, units,
dates, names, negation), or by the answering model as a judge."""
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
class NewTriplet:
    """A knowledge-graph triplet as its graph file gives it: `subject` `relation`
    `object` from row `row`, with the provenance the file gives (each None when
    absent): `doc_id`, `page` and `quote`, the file's claim of the supporting words,
    never shown as a quote until it is found in the document."""

    subject: str
    relation: str
    object: str
    row: int
    doc_id: str | None = None
    page: int | None = None
    quote: str | None = None


@dataclass(frozen=True, kw_only=True)
class Triplet(NewTriplet):
    """A knowledge-graph triplet as stored: a `NewTriplet` of one collection, imported
    from the graph file `graph_file` (its name).

    `triplet_id` is stable for the same row content of the same file and
    collection. `is_current` is False once retired (or replaced by a later import of
    the file).
    """

    triplet_id: str
    collection: str
    graph_file: str
    is_current: bool = True
