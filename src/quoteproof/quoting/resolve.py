"""Turning parsed model output into verified segments: the only place Quotes are made.

Every `Quote` built here takes its text from `Document.text[start:end]` of the stored
document; the model's words survive only as `claimed_text`. What cannot be resolved
becomes a `Rejected` entry with a reason, never a quote.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

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
from quoteproof.quoting.differs import describe_difference
from quoteproof.quoting.parse import MalformedItem, ParsedOutput, ProseItem, QuoteItem
from quoteproof.quoting.validate import quote_problems

DEFAULT_THRESHOLD = 90.0


class SourceLookup(Protocol):
    """Read access to stored documents, as the resolver needs it."""

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
    chunk: Chunk
    start: int  # offsets into chunk.text
    end: int
    match: MatchKind
    score: float


def _tiers(
    item: QuoteItem, by_ref: dict[str, Chunk], lookup: SourceLookup
) -> Iterator[list[Chunk]]:
    """Groups of chunks to search in turn: the cited chunk and its neighbours, then the
    other retrieved chunks. Lazy: neighbours are read only if the first group is needed.
    """
    cited = by_ref.get(item.ref) if item.ref else None
    seen: set[str] = set()
    if cited is not None:
        first = [cited, *lookup.neighbours(cited)]
        seen = {chunk.ref for chunk in first}
        yield first
    yield [chunk for chunk in by_ref.values() if chunk.ref not in seen]


def _locate(claimed: str, candidates: Iterable[Chunk], threshold: float) -> _Span | None:
    """Find `claimed` in the candidates: the first exact/normalised hit, else the best fuzzy."""
    best: _Span | None = None
    for chunk in candidates:
        found = find_span(claimed, chunk.text, threshold=threshold)
        if found is None:
            continue
        span = _Span(chunk, found.start, found.end, found.match, found.score)
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
    start = span.chunk.start + span.start
    end = span.chunk.start + span.end
    text = document.text[start:end]
    location = lookup.locate(document, start, end, boxes=boxes)
    return Quote(
        id=quote_id,
        ref=span.chunk.ref,
        label=span.chunk.label,
        doc_id=document.doc_id,
        doc_version=document.version,
        source_path=document.source_path,
        start=start,
        end=end,
        text=text,
        claimed_text=claimed,
        match=span.match,
        score=span.score,
        doc_sha256=document.sha256,
        text_sha256=sha256_text(text),
        section=span.chunk.section,
        pages=location.pages,
        differs=describe_difference(claimed, text) if claimed and span.match != "exact" else None,
        boxes=location.boxes,
        ocr=location.ocr,
    )


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
    if claimed is None:
        if item.ref is None:
            return Rejected(item.raw, "quote names no source and contains no words")
        chunk = by_ref.get(item.ref)
        if chunk is None:
            return Rejected(item.raw, f"unknown reference '{item.ref}': not a retrieved source")
        span = _Span(chunk, 0, len(chunk.text), "ref", 100.0)
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
    document = lookup.document(span.chunk.doc_id, span.chunk.doc_version)
    if document is None:
        return Rejected(item.raw, f"document of '{span.chunk.ref}' is missing from the index")
    quote = _make_quote(quote_id, span, document, claimed, lookup, boxes=boxes)
    problems = quote_problems(quote, document)
    if problems or quote.text != span.chunk.text[span.start : span.end]:
        return Rejected(item.raw, "internal check failed: " + "; ".join(problems))
    return quote


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
    `sources` exactly as `resolve_output` does; `raw` is what the model wrote, kept in
    a `Rejected` when nothing matches."""
    by_ref = {chunk.ref: chunk for chunk in sources}
    return _resolve_quote(QuoteItem(ref, claimed, raw), quote_id, by_ref, lookup, threshold)


def _prose_segment(
    item: ProseItem, by_ref: dict[str, Chunk]
) -> tuple[ProseSegment, list[Rejected]]:
    known = tuple(dict.fromkeys(ref for ref in item.citations if ref in by_ref))
    rejected = [
        Rejected(f"[{ref}]", f"citation '{ref}' names no retrieved source")
        for ref in dict.fromkeys(item.citations)
        if ref not in by_ref
    ]
    return ProseSegment(item.text, known), rejected


def _same_span(outcome: Quote | Rejected, quotes: Sequence[Quote]) -> Quote | None:
    """The earlier quote of exactly the same passage as `outcome`, if any."""
    if isinstance(outcome, Rejected):
        return None
    key = (outcome.doc_id, outcome.doc_version, outcome.start, outcome.end)
    return next((q for q in quotes if (q.doc_id, q.doc_version, q.start, q.end) == key), None)


def resolve_output(
    parsed: ParsedOutput,
    sources: Sequence[Chunk],
    lookup: SourceLookup,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> Resolution:
    """Resolve every item of `parsed` against the retrieved `sources`.

    Quotes resolve in the order of DESIGN.md §5: whole chunk by ref; else the
    claimed words in the cited chunk and its neighbours (the first exact or
    normalised hit, else the best fuzzy one at `threshold`), then the same in the
    other sources. Citations to refs outside `sources` are dropped and reported,
    and so is a quote of a passage already quoted. O(items × sources × chunk
    length) at worst.
    """
    by_ref = {chunk.ref: chunk for chunk in sources}
    segments: list[Segment] = []
    quotes: list[Quote] = []
    rejected: list[Rejected] = []
    for item in parsed.items:
        if isinstance(item, MalformedItem):
            rejected.append(Rejected(item.raw, item.reason))
        elif isinstance(item, ProseItem):
            segment, bad_citations = _prose_segment(item, by_ref)
            rejected.extend(bad_citations)
            if segment.text:
                segments.append(segment)
        else:
            outcome = _resolve_quote(item, f"q{len(quotes) + 1}", by_ref, lookup, threshold)
            earlier = _same_span(outcome, quotes)
            if isinstance(outcome, Rejected):
                rejected.append(outcome)
            elif earlier is not None:
                rejected.append(Rejected(item.raw, f"repeats quote {earlier.id}"))
            else:
                quotes.append(outcome)
                segments.append(QuoteSegment(outcome.id))
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
