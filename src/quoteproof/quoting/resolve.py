"""Turning parsed model output into verified segments: the only place Quotes are made.

Every `Quote` built here takes its text from `Document.text[start:end]` of the stored
document; the model's words survive only as `claimed_text`. What cannot be resolved
becomes a `Rejected` entry with a reason, never a quote.

A pointer (`<quote ref="REF" unit="N"/>`) resolves to unit N of the cited chunk
(`quoting.units`, numbered as the prompt showed them), re-read from the stored
document; an unknown ref or a number the chunk has no unit for is rejected. A
pointer is resolved by its number alone: words written inside it are kept as
`claimed_text` (with `differs` saying how they differ), never searched for.

A quote may run over the boundary between the cited chunk and the next or previous
one (`passages.around`): it is still one span `Document.text[start:end]`, which then
includes what lies between the chunks (a heading, page furniture), and its `ref`,
`label` and `section` are those of the chunk where it starts. Of a quote that does
not resolve whole, `resolve_output` shows the longest run of its sentences that does
(`partial.longest_run`) and rejects the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from quoteproof.defaults import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from quoteproof.llm.quotable import list_goes_on
from quoteproof.model import (
    Chunk,
    Document,
    Location,
    MatchKind,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Segment,
    sha256_text,
)
from quoteproof.quoting.align import find_span
from quoteproof.quoting.citations import split_sentences
from quoteproof.quoting.differs import describe_difference
from quoteproof.quoting.parse import MalformedItem, ParsedOutput, ProseItem, QuoteItem
from quoteproof.quoting.partial import MIN_PARTIAL_WORDS, longest_run, word_count
from quoteproof.quoting.passages import Passage, around
from quoteproof.quoting.units import TableRowLookup, chunk_units, unit_at
from quoteproof.quoting.validate import quote_problems


class SourceLookup(TableRowLookup, Protocol):
    """Read access to stored documents, as the resolver needs it (and a chunk's
    table rows, which make its numbered units)."""

    def document(self, doc_id: str, version: int) -> Document | None:
        """Return one stored document version, or None."""
        ...

    def neighbours(self, chunk: Chunk) -> Sequence[Chunk]:
        """Return the chunks next to `chunk` in its document version."""
        ...

    def locate(self, document: Document, start: int, end: int, *, boxes: bool = True) -> Location:
        """Return the pages (and, when `boxes`, the PDF boxes) of
        `document.text[start:end]`."""
        ...


@dataclass(frozen=True)
class Resolution:
    """The verified outcome of one model reply."""

    segments: tuple[Segment, ...]
    quotes: tuple[Quote, ...]
    rejected: tuple[Rejected, ...]
    no_answer: bool


@dataclass(frozen=True)
class _Span:
    passage: Passage
    start: int  # offsets into passage.text
    end: int
    match: MatchKind
    score: float


def _tiers(
    item: QuoteItem, by_ref: dict[str, Chunk], lookup: SourceLookup
) -> Iterator[list[Passage]]:
    """Groups of passages to search in turn: the cited chunk and its neighbours each
    alone, and last the cited chunk joined with its adjacent neighbours (a quote over
    a chunk boundary, which a fuzzy match in one chunk would cover only in part);
    then the other retrieved chunks. Lazy: neighbours are read only if the first
    group is needed.
    """
    cited = by_ref.get(item.ref) if item.ref else None
    seen: set[str] = set()
    if cited is not None:
        neighbours = lookup.neighbours(cited)
        first = [cited, *neighbours]
        seen = {chunk.ref for chunk in first}
        joined = around(cited, neighbours)
        yield [Passage.of(chunk) for chunk in first] + ([joined] if joined else [])
    yield [Passage.of(chunk) for chunk in by_ref.values() if chunk.ref not in seen]


def _locate(claimed: str, candidates: Iterable[Passage], threshold: float) -> _Span | None:
    """Find `claimed` in the candidates: the first exact/normalised hit, else the best fuzzy."""
    best: _Span | None = None
    for passage in candidates:
        found = find_span(claimed, passage.text, threshold=threshold)
        if found is None:
            continue
        span = _Span(passage, found.start, found.end, found.match, found.score)
        if found.match != "fuzzy":
            return span
        if best is None or span.score > best.score:
            best = span
    return best


def _make_quote(
    quote_id: str,
    span: _Span,
    document: Document,
    claimed: str | None,
    lookup: SourceLookup,
    *,
    boxes: bool = True,
) -> Quote:
    """The quote of `document.text` at the span; `ref`, `label` and `section` are those
    of the chunk where it starts. `differs` compares the claim with the searched text
    (which leaves out what lies between joined chunks)."""
    start, end = span.passage.document_span(span.start, span.end)
    chunk = span.passage.chunk_at(start)
    matched = span.passage.text[span.start : span.end]
    location = lookup.locate(document, start, end, boxes=boxes)
    return quote_at(
        chunk,
        document,
        start,
        end,
        location,
        id=quote_id,
        claimed_text=claimed,
        match=span.match,
        score=span.score,
        differs=describe_difference(claimed, matched)
        if claimed and span.match != "exact"
        else None,
    )


def quote_at(
    chunk: Chunk,
    document: Document,
    start: int,
    end: int,
    location: Location,
    *,
    id: str,
    claimed_text: str | None,
    match: MatchKind,
    score: float,
    differs: str | None,
) -> Quote:
    """The quote of `document.text[start:end]`, which starts in `chunk` and lies at
    `location`: every field the index fixes (where it is, its text and hashes, the
    chunk's ref, label and section) read from them; the answer's own fields (`id`,
    `claimed_text`, `match`, `score`, `differs`) as given."""
    text = document.text[start:end]
    return Quote(
        id=id,
        ref=chunk.ref,
        label=chunk.label,
        doc_id=document.doc_id,
        doc_version=document.version,
        source_path=document.source_path,
        start=start,
        end=end,
        text=text,
        claimed_text=claimed_text,
        match=match,
        score=score,
        doc_sha256=document.sha256,
        text_sha256=sha256_text(text),
        section=chunk.section,
        pages=location.pages,
        differs=differs,
        boxes=location.boxes,
        ocr=location.ocr,
        tables=location.tables,
        list_goes_on=list_goes_on(document.text, start, end),
    )


def _unit_span(
    item: QuoteItem, unit: int, by_ref: dict[str, Chunk], lookup: SourceLookup
) -> _Span | Rejected:
    """The span of unit `unit` of the chunk `item` names, or why there is none."""
    if item.ref is None:
        return Rejected(item.raw, f"unit {unit} names no source")
    chunk = by_ref.get(item.ref)
    if chunk is None:
        return Rejected(item.raw, f"unknown reference '{item.ref}': not a retrieved source")
    units = chunk_units(chunk, lookup)
    found = unit_at(units, unit)
    if found is None:
        return Rejected(
            item.raw,
            f"source '{item.ref}' has no unit {unit} (its units are 1-{len(units)})"
            if units
            else f"source '{item.ref}' has no numbered units",
        )
    return _Span(Passage.of(chunk), found.start, found.end, "ref", 100.0)


def _resolve_quote(
    item: QuoteItem,
    quote_id: str,
    by_ref: dict[str, Chunk],
    lookup: SourceLookup,
    threshold: float,
    *,
    boxes: bool = True,
) -> Quote | Rejected:
    claimed = (item.claimed or "").strip() or None
    if item.unit is not None:
        pointed = _unit_span(item, item.unit, by_ref, lookup)
        if isinstance(pointed, Rejected):
            return pointed
        span = pointed
    elif claimed is None:
        if item.ref is None:
            return Rejected(item.raw, "quote names no source and contains no words")
        chunk = by_ref.get(item.ref)
        if chunk is None:
            return Rejected(item.raw, f"unknown reference '{item.ref}': not a retrieved source")
        span = _Span(Passage.of(chunk), 0, len(chunk.text), "ref", 100.0)
    else:
        located = None
        for tier in _tiers(item, by_ref, lookup):
            located = _locate(claimed, tier, threshold)
            if located is not None:
                break
        if located is None:
            return Rejected(
                item.raw,
                f"no source passage matches these words closely enough (threshold {threshold:g})",
            )
        span = located
    first = span.passage.chunks[0]
    document = lookup.document(first.doc_id, first.doc_version)
    if document is None:
        return Rejected(item.raw, f"document of '{first.ref}' is missing from the index")
    quote = _make_quote(quote_id, span, document, claimed, lookup, boxes=boxes)
    problems = quote_problems(quote, document)
    if problems or not span.passage.agrees_with(document.text, span.start, span.end):
        return Rejected(item.raw, "internal check failed: " + "; ".join(problems))
    return quote


def _resolve_item(
    item: QuoteItem,
    quote_id: str,
    by_ref: dict[str, Chunk],
    lookup: SourceLookup,
    threshold: float,
) -> tuple[Quote | Rejected, tuple[str, ...]]:
    """The quote of `item` whole; else, when its words do not resolve whole, the
    longest run of its sentences that does (`longest_run`) and the parts of the words
    around that run (to reject), when the run's source text has at least
    `MIN_PARTIAL_WORDS` words; else the whole quote's rejection. A pointer resolves
    whole or not at all."""
    outcome = _resolve_quote(item, quote_id, by_ref, lookup, threshold)
    if isinstance(outcome, Quote) or not item.claimed or item.unit is not None:
        return outcome, ()

    def shown_part(words: str) -> Quote | None:
        part = _resolve_quote(
            QuoteItem(item.ref, words, item.raw), quote_id, by_ref, lookup, threshold
        )
        if isinstance(part, Quote) and word_count(part.text) >= MIN_PARTIAL_WORDS:
            return part
        return None

    run = longest_run(item.claimed.strip(), shown_part)
    return (outcome, ()) if run is None else (run.found, run.rest)


def resolve_quote(
    ref: str | None,
    claimed: str | None,
    quote_id: str,
    sources: Sequence[Chunk],
    lookup: SourceLookup,
    *,
    raw: str,
    threshold: float = DEFAULT_THRESHOLD,
) -> Quote | Rejected:
    """Resolve one quote request (whole chunk `ref`, or the `claimed` words) against
    `sources` as `resolve_output` does, but whole: no partial quote (a tool caller is
    told the reason and may quote fewer words); `raw` is what the model wrote, kept in
    a `Rejected` when nothing matches."""
    by_ref = {chunk.ref: chunk for chunk in sources}
    return _resolve_quote(QuoteItem(ref, claimed, raw), quote_id, by_ref, lookup, threshold)


def resolve_pointer(
    ref: str, unit: int, quote_id: str, sources: Sequence[Chunk], lookup: SourceLookup
) -> Quote | Rejected:
    """Resolve a pointer to unit `unit` of source `ref` (one of `sources`), as a
    model's `<quote ref="REF" unit="N"/>` resolves: the unit's span re-read from the
    stored document, or `Rejected` with the reason (an unknown ref or unit)."""
    by_ref = {chunk.ref: chunk for chunk in sources}
    raw = f'<quote ref="{ref}" unit="{unit}"/>'
    return _resolve_quote(QuoteItem(ref, None, raw, unit), quote_id, by_ref, lookup, 0.0)


def _prose_segments(
    item: ProseItem, known: Collection[str]
) -> tuple[list[ProseSegment], list[Rejected]]:
    """One segment per sentence of `item` (`citations.split_sentences`), each with the
    `known` refs it cites, or one uncited segment for prose without any marker;
    each citation of another ref is reported once."""
    if not item.citations:
        segments = [ProseSegment(item.text)] if item.text else []
    else:
        segments = [ProseSegment(s.text, s.known) for s in split_sentences(item, known)]
    rejected = [
        Rejected(f"[{ref}]", f"citation '{ref}' names no retrieved source")
        for ref in dict.fromkeys(item.citations)
        if ref not in known
    ]
    return segments, rejected


def _same_span(outcome: Quote, quotes: Sequence[Quote]) -> Quote | None:
    """The earlier quote of exactly the same passage as `outcome`, if any."""
    key = (outcome.doc_id, outcome.doc_version, outcome.start, outcome.end)
    return next((q for q in quotes if (q.doc_id, q.doc_version, q.start, q.end) == key), None)


def resolve_output(
    parsed: ParsedOutput,
    sources: Sequence[Chunk],
    lookup: SourceLookup,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    facts: Collection[str] = (),
) -> Resolution:
    """Resolve every item of `parsed` against the retrieved `sources`; prose may
    also cite the context's triplets, `facts` (their refs, `TID-n`).

    Prose becomes one segment per sentence, with the refs that sentence cites (prose
    with no citation marker at all, one uncited segment).
    Quotes resolve in this order (see `quoting.align`): a pointer to its unit of the
    cited chunk (`quoting.units`); whole chunk by ref; else the
    claimed words in the cited chunk and its neighbours (the first exact or
    normalised hit, else the best fuzzy one at `threshold`), then in the cited chunk
    joined with its adjacent neighbours (a quote over a chunk boundary), then in the
    other sources. Words that do not resolve whole are split into sentences: the
    longest run of them that resolves is shown (when its source text has at least
    `MIN_PARTIAL_WORDS` words) and each part before or after it is rejected as "not
    found in the source next to the part shown (rest of quote qN)". Citations to
    refs outside `sources` are dropped and reported, and so is a quote of a passage
    already quoted. O(items × sources × chunk length) at worst; a partial quote of
    n sentences resolves up to n(n-1)/2 runs.
    """
    by_ref = {chunk.ref: chunk for chunk in sources}
    segments: list[Segment] = []
    quotes: list[Quote] = []
    rejected: list[Rejected] = []
    for item in parsed.items:
        if isinstance(item, MalformedItem):
            rejected.append(Rejected(item.raw, item.reason))
        elif isinstance(item, ProseItem):
            sentences, bad_citations = _prose_segments(item, {*by_ref, *facts})
            rejected.extend(bad_citations)
            segments.extend(sentences)
        else:
            outcome, rest = _resolve_item(item, f"q{len(quotes) + 1}", by_ref, lookup, threshold)
            if isinstance(outcome, Rejected):
                rejected.append(outcome)
                continue
            earlier = _same_span(outcome, quotes)
            if earlier is None:
                quotes.append(outcome)
                segments.append(QuoteSegment(outcome.id))
            else:
                rejected.append(Rejected(item.raw, f"repeats quote {earlier.id}"))
            shown = earlier or outcome
            rejected.extend(
                Rejected(
                    part,
                    f"not found in the source next to the part shown (rest of quote {shown.id})",
                )
                for part in rest
            )
    return Resolution(tuple(segments), tuple(quotes), tuple(rejected), parsed.no_answer)


def cite_passages(
    refs: Iterable[str], sources: Sequence[Chunk], lookup: SourceLookup
) -> tuple[tuple[Quote, ...], tuple[Rejected, ...]]:
    """Return the whole retrieved passage of each distinct ref in `refs` as a verbatim
    quote (ids `c1`, `c2`, … in order), for showing what a sentence cites.

    Refs outside `sources` are skipped (prose resolution already reported them); a
    passage that fails its internal check is returned as `Rejected`, never as a quote.
    Cited passages carry their pages but no PDF boxes (a whole chunk has hundreds of
    characters to box; the source viewer reads boxes when the passage is opened).
    """
    by_ref = {chunk.ref: chunk for chunk in sources}
    quotes: list[Quote] = []
    rejected: list[Rejected] = []
    for ref in dict.fromkeys(r for r in refs if r in by_ref):
        item = QuoteItem(ref, None, f"[{ref}]")
        outcome = _resolve_quote(
            item, f"c{len(quotes) + 1}", by_ref, lookup, DEFAULT_THRESHOLD, boxes=False
        )
        if isinstance(outcome, Rejected):
            rejected.append(outcome)
        else:
            quotes.append(outcome)
    return tuple(quotes), tuple(rejected)
