"""An answer's layout: the blocks every format shows, in order, with all the wording
(the labels and notes named in capitals, `render.wording`).

`answer_layout` walks an `Answer` once and returns its blocks: the question, the
refusal, notices (partial answer, no language model, the answer's own notices, the
generated sentences removed), the escalation, the segments (generated prose with its
citations, verbatim quote boxes, data results, missing items), the faithfulness of the
prose, the rationale statements, the removed items and the footer. The terminal,
Markdown and HTML renderers only draw these blocks, so every format shows the same
things in the same order and in the same words.

Texts in blocks are unescaped: quoteproof's own wording, or text from the answer,
which each renderer escapes for its format. Multi-line texts (`Prose.text`,
`Escalation.reason`, `QuoteBox.text`, a statement's text) have their line endings
(`\\r\\n`, `\\r`, NEL, U+2028, U+2029) turned into `\\n`; every other text is shown
on one line by the renderers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from quoteproof.model import (
    REFUSAL_TEXT,
    Answer,
    DataResult,
    DataSegment,
    Fact,
    ProseSegment,
    Quote,
    Rejected,
    Statement,
)
from quoteproof.quoting.citations import excerpt
from quoteproof.render import wording
from quoteproof.render.dataresult import (
    cell_text,
    describe_aggregate,
    describe_filters,
    describe_rows,
    preview_header,
)
from quoteproof.render.provenance import NO_MODEL_FACTS_NOTICE, NO_MODEL_NOTICE, model_parts
from quoteproof.render.table_quote import table_notes
from quoteproof.render.visible import normalise_breaks
from quoteproof.render.wrapped import shown_unwrapped
from quoteproof.text.labels import with_pages

__all__ = [
    "REMOVED_SHOWN",
    "Block",
    "DataBox",
    "Escalation",
    "FactView",
    "Facts",
    "FaithfulnessView",
    "Footer",
    "Missing",
    "Notice",
    "Prose",
    "Question",
    "QuoteBox",
    "Refusal",
    "Removed",
    "StatementView",
    "Statements",
    "answer_layout",
    "removed_notice",
]

REMOVED_SHOWN = 10
"""Most removed sentences named in the notice (the JSON lists them all)."""


def _file_name(source_path: str) -> str:
    name = re.split(r"[\\/]", source_path)[-1]
    return name or source_path


@dataclass(frozen=True)
class Question:
    """The question asked (one line)."""

    text: str


@dataclass(frozen=True)
class Refusal:
    """A refused answer: `REFUSED_LABEL`, the fixed `REFUSAL_TEXT`, then `(reason)`."""

    reason: str
    text: str = REFUSAL_TEXT


@dataclass(frozen=True)
class Notice:
    """A note on the whole answer, shown as `label: text` (one line).

    `kind` is "partial" (the partial-answer notice), "no-model" (`NO_MODEL_NOTICE`)
    or "notice" (one of the answer's own notices, or `removed_notice`).
    """

    kind: Literal["partial", "no-model", "notice"]
    label: str
    text: str


@dataclass(frozen=True)
class Escalation:
    """An escalation to a person: `ESCALATION_HEADING`, `ESCALATION_LABEL`, then the
    model's reason (multi-line, generated text)."""

    reason: str


@dataclass(frozen=True)
class Prose:
    """Generated prose (multi-line, stripped) and the refs it cites (raw, in order);
    never both empty."""

    text: str
    citations: tuple[str, ...]


NoteKind = Literal["ocr", "differs", "table", "list"]
"""What a quote box's note is about (a renderer may style or place each kind apart)."""


@dataclass(frozen=True)
class QuoteBox:
    """A verbatim box: a quote segment's quote, or (`cited`) a passage cited by the
    prose before it. The only block whose text is drawn as a quote."""

    quote: Quote
    cited: bool = False

    @property
    def text(self) -> str:
        """The quote's text with normalised line endings."""
        return normalise_breaks(self.quote.text)

    @property
    def unwrapped(self) -> str:
        """`text` as a quote box draws it: the line breaks that wrap a paragraph of a
        Markdown or plain-text file at a margin shown as spaces
        (`wrapped.shown_unwrapped`); every other character as in `text`."""
        return shown_unwrapped(self.text, self.quote.source_path)

    @property
    def label(self) -> str:
        """The quote's full label, `document › section path › p. N`, naming the
        quote's own pages once (`labels.with_pages`); renderers shorten it to their
        width with `labels.fit_label`."""
        return with_pages(self.quote.label, self.quote.pages)

    @property
    def notes(self) -> tuple[tuple[NoteKind, str], ...]:
        """The caption's notes after the label, each `(kind, text)`: `OCR_NOTE`,
        `DIFFERS_LABEL: …`, what its tables show beyond the quote
        (`table_quote.table_notes`), `LIST_GOES_ON_NOTE` (one line each)."""
        notes: list[tuple[NoteKind, str]] = []
        if self.quote.ocr:
            notes.append(("ocr", wording.OCR_NOTE))
        if self.quote.differs:
            notes.append(("differs", f"{wording.DIFFERS_LABEL}: {self.quote.differs}"))
        notes.extend(("table", note) for note in table_notes(self.quote))
        if self.quote.list_goes_on:
            notes.append(("list", wording.LIST_GOES_ON_NOTE))
        return tuple(notes)

    @property
    def where(self) -> str:
        """`two_cities.txt, chars 0–80`: the source file's name and the character span."""
        return f"{_file_name(self.quote.source_path)}, chars {self.quote.start}–{self.quote.end}"


@dataclass(frozen=True)
class DataBox:
    """A data result (computed from a table, never a quote) with every parameter."""

    result: DataResult

    @property
    def source(self) -> str:
        """`people.csv (doc version 3)`, shown after `DATA_LABEL` and before `— NOT_A_QUOTE`."""
        return f"{self.result.table} (doc version {self.result.doc_version})"

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """`(name, value)` pairs of the query's parameters and the computed value:
        Query, Period, Columns, From query, Value (those that apply)."""
        result = self.result
        fields = [("Query", describe_filters(result.filters))]
        if result.period is not None:
            fields.append(("Period", result.period))
        if result.columns:
            fields.append(("Columns", ", ".join(result.columns)))
        if result.source is not None:
            fields.append(("From query", result.source))
        aggregate = describe_aggregate(result)
        if aggregate is not None:
            fields.append(("Value", aggregate))
        return tuple(fields)

    @property
    def row_count(self) -> str:
        """`12 matching rows, first 3 shown`."""
        return describe_rows(self.result)

    @property
    def header(self) -> tuple[str, ...]:
        """The preview table's column names (empty when there are no preview rows)."""
        return preview_header(self.result) if self.result.rows else ()

    @property
    def rows(self) -> tuple[tuple[str, ...], ...]:
        """The preview rows, each cell as text."""
        return tuple(tuple(cell_text(cell) for cell in row) for row in self.result.rows)


@dataclass(frozen=True)
class Missing:
    """A segment whose quote or data result the answer lacks: `Missing WHAT ID — not shown.`"""

    what: Literal["quote", "data result"]
    item_id: str


@dataclass(frozen=True)
class StatementView:
    """One rationale statement as shown: id (or `(no id)`), the verifier's verdict
    (or `UNVERIFIED`) and its kind, whether it was refined, its text (multi-line)
    with its refs, the justification and the earlier version (None when absent)."""

    id: str
    verdict: str
    verdict_kind: Literal["correct", "incorrect", "unverified"]
    refined: bool
    text: str
    refs: tuple[str, ...]
    justification: str | None
    original: str | None


@dataclass(frozen=True)
class Statements:
    """The rationale statements, under `STATEMENTS_LABEL`."""

    items: tuple[StatementView, ...]


@dataclass(frozen=True)
class Removed:
    """Model output removed as not verifiable, under `REJECTED_HEADING`: `raw — reason`."""

    items: tuple[Rejected, ...]


@dataclass(frozen=True)
class Footer:
    """The answer's metadata, one line each: the mode, the token usage, the model and
    server; formats that show it on one line join the lines with ` · `."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class FactView:
    """A cited triplet as shown: its id (`TID-n`), what it is (`FACT_ORIGINS`: the
    label makes it generated or imported, never a quote), the triplet on one line,
    where it comes from (the graph file and line, or the passage it was extracted
    from), a note on its provenance (None when none), and the quote that supports
    it (the source sentence, or the graph file's quote found in its document; None
    when there is none), drawn as any verbatim box."""

    id: str
    origin: str
    text: str
    provenance: str
    note: str | None
    source: QuoteBox | None


@dataclass(frozen=True)
class Facts:
    """The triplets of the answer under their `label`: `FACTS_LABEL` when a model
    cited them, `FACTS_FOUND_LABEL` when the graph search chose them (no model)."""

    items: tuple[FactView, ...]
    label: str = wording.FACTS_LABEL


@dataclass(frozen=True)
class FaithfulnessView:
    """The answer's faithfulness, shown after its prose under `FAITHFULNESS_LABEL`
    (one line): `summary` (`2 of 3 claims supported (67%)`), `method` (how they were
    checked), and each generated sentence shown that is not supported, as
    `(excerpt, reason)`. Generated text: never drawn as a verbatim box."""

    summary: str
    method: str
    unsupported: tuple[tuple[str, str], ...]


Block = (
    Question
    | Refusal
    | Notice
    | Escalation
    | Prose
    | QuoteBox
    | DataBox
    | Missing
    | Statements
    | Facts
    | FaithfulnessView
    | Removed
    | Footer
)


def _statement_view(statement: Statement) -> StatementView:
    label = statement.label
    kind: Literal["correct", "incorrect", "unverified"] = "unverified"
    if label is not None and label.startswith("CORRECT"):
        kind = "correct"
    elif label is not None and label.startswith("INCORRECT"):
        kind = "incorrect"
    return StatementView(
        id=statement.id if statement.id.strip() else wording.NO_ID,
        verdict=wording.UNVERIFIED if label is None else label,
        verdict_kind=kind,
        refined=statement.original is not None,
        text=normalise_breaks(statement.text.strip()),
        refs=statement.refs,
        justification=statement.justification,
        original=statement.original,
    )


def _fact_view(answer: Answer, fact: Fact) -> FactView:
    if fact.origin == "imported":
        provenance = f"{fact.graph_file or '?'}, line {fact.row if fact.row is not None else '?'}"
    else:
        provenance = f"extracted from passage [{fact.ref or '?'}]"
    note = fact.provenance_note
    source = None
    if fact.quote_id is not None:
        try:
            source = QuoteBox(answer.quote(fact.quote_id))
        except KeyError:
            note = wording.FACT_QUOTE_GONE
    text = " | ".join(" ".join(part.split()) for part in (fact.subject, fact.relation, fact.object))
    return FactView(
        fact.id, wording.FACT_ORIGINS.get(fact.origin, fact.origin), text, provenance, note, source
    )


def removed_notice(removed: Sequence[Rejected]) -> str:
    """`2 generated sentences were removed: "…" (reason); "…" (reason)`, naming at
    most `REMOVED_SHOWN` of `removed` (each cut by `excerpt`) and counting the rest."""
    count = len(removed)
    named = "; ".join(f'"{excerpt(r.raw)}" ({r.reason})' for r in removed[:REMOVED_SHOWN])
    rest = f"; and {count - REMOVED_SHOWN} more" if count > REMOVED_SHOWN else ""
    verb = "sentence was" if count == 1 else "sentences were"
    return f"{count} generated {verb} removed: {named}{rest}"


def _faithfulness(answer: Answer) -> FaithfulnessView | None:
    """The faithfulness block, or None when the answer has no score (no claim)."""
    found = answer.faithfulness
    if found is None or found.score is None:
        return None
    total = len(found.claims) + found.removed
    supported = sum(claim.supported for claim in found.claims)
    summary = f"{supported} of {total} claims supported ({found.score:.0%})"
    if found.removed:
        verb = "counts" if found.removed == 1 else "count"
        summary += f"; {found.removed} removed {verb} as unsupported"
    unsupported = []
    for claim in found.claims:
        segment = answer.segments[claim.segment] if claim.segment < len(answer.segments) else None
        if not claim.supported and isinstance(segment, ProseSegment):
            why = claim.reason or "not supported"
            if claim.checked_by != found.method:
                why += f" ({wording.FAITHFULNESS_METHODS[claim.checked_by]})"
            unsupported.append((excerpt(segment.text), why))
    method = wording.FAITHFULNESS_METHODS.get(found.method, found.method)
    return FaithfulnessView(summary, method, tuple(unsupported))


def _footer(answer: Answer) -> Footer | None:
    lines = [] if answer.mode == "quote" else [f"Mode: {answer.mode}"]
    if answer.usage is not None:
        usage = answer.usage
        lines.append(f"tokens: {usage.prompt_tokens} prompt · {usage.completion_tokens} completion")
    model = model_parts(answer.llm)
    if model:
        lines.append(" · ".join(model))
    return Footer(tuple(lines)) if lines else None


def _segments(answer: Answer, show_cited: bool) -> list[Block]:
    blocks: list[Block] = []
    for segment in answer.segments:
        if isinstance(segment, ProseSegment):
            text = normalise_breaks(segment.text.strip())
            if text or segment.citations:
                blocks.append(Prose(text, segment.citations))
            if show_cited:
                cited = answer.cited_passages(segment.citations)
                blocks += [QuoteBox(quote, cited=True) for quote in cited]
        elif isinstance(segment, DataSegment):
            try:
                blocks.append(DataBox(answer.data_result(segment.data_id)))
            except KeyError:
                blocks.append(Missing("data result", segment.data_id))
        else:
            try:
                blocks.append(QuoteBox(answer.quote(segment.quote_id)))
            except KeyError:
                blocks.append(Missing("quote", segment.quote_id))
    return blocks


def answer_layout(answer: Answer, show_cited: bool = False) -> list[Block]:
    """Return the blocks of `answer`, in the order every format shows them.

    Order: `Question`; `Refusal` for a refused answer (whose segments are then not
    shown); the `Notice`s (partial answer, no language model unless refused, the
    answer's notices, `removed_notice` when sentences were removed);
    `Escalation`; for an answered answer the segments in order (`Prose` when it has
    text or citations, followed with `show_cited` by a `QuoteBox(cited=True)` per
    passage it cites; `QuoteBox`; `DataBox`; `Missing` for a segment whose quote or
    data result is absent); `FaithfulnessView` when the answer's faithfulness has a
    score; `Statements`; `Facts` (the cited triplets, each with
    the verbatim box of the quote that supports it); `Removed`; `Footer` (mode unless "quote",
    token usage when known, model and server: `model_parts`). Blocks with nothing
    to show are left out.
    """
    blocks: list[Block] = [Question(answer.question)]
    if answer.status == "refused":
        blocks.append(Refusal(answer.refusal_reason or wording.NO_REASON))
    if answer.partial:
        blocks.append(Notice("partial", wording.PARTIAL_LABEL, wording.PARTIAL_NOTICE))
    if not answer.llm.language_model and answer.status != "refused":  # quotes to check
        notice = NO_MODEL_FACTS_NOTICE if answer.context == "triplets" else NO_MODEL_NOTICE
        blocks.append(Notice("no-model", wording.NOTE_LABEL, notice))
    blocks += [Notice("notice", wording.NOTE_LABEL, notice) for notice in answer.notices]
    if answer.removed_sentences:
        blocks.append(
            Notice("notice", wording.NOTE_LABEL, removed_notice(answer.removed_sentences))
        )
    if answer.escalation is not None:
        reason = normalise_breaks(answer.escalation.strip())
        blocks.append(Escalation(reason or f"({wording.NO_REASON})"))
    if answer.status == "answered":
        blocks += _segments(answer, show_cited)
    faithfulness = _faithfulness(answer)
    if faithfulness is not None:
        blocks.append(faithfulness)
    if answer.statements:
        blocks.append(Statements(tuple(map(_statement_view, answer.statements))))
    if answer.facts:
        label = wording.FACTS_LABEL if answer.llm.language_model else wording.FACTS_FOUND_LABEL
        blocks.append(Facts(tuple(_fact_view(answer, fact) for fact in answer.facts), label))
    if answer.rejected:
        blocks.append(Removed(answer.rejected))
    footer = _footer(answer)
    if footer is not None:
        blocks.append(footer)
    return blocks
