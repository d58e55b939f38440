"""Chunking: cut a parsed document into paragraph-sized, retrievable spans.

Rules, in order of precedence:

1. a chunk never crosses a heading (so it lies inside one section);
2. a table or code block is never cut, however long;
3. a paragraph or list block longer than `max_chars` is cut only at sentence ends
   (found by sentencex); a single sentence longer than `max_chars` stays whole;
4. consecutive pieces of one section are merged while the chunk is shorter than
   `min_chars` and the merged span stays within `max_chars`;
5. heading blocks are never chunks: their titles reach the chunk's label instead.

Every chunk is a contiguous span of `doc.text` with no whitespace at either end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import sentencex

from quoteproof.ingest.text import trim_span
from quoteproof.model import Block, ParsedDocument

DEFAULT_MIN_CHARS = 200
DEFAULT_MAX_CHARS = 1500
LABEL_SEPARATOR = " › "
_ATOMIC_KINDS = frozenset({"table", "code"})


@dataclass(frozen=True)
class ChunkSpan:
    """One chunk: `text[start:end]` inside `section`; `paragraph` counts from 1 per section."""

    start: int
    end: int
    section: tuple[str, ...]
    paragraph: int


def sentence_spans(text: str, start: int, end: int, language: str = "en") -> list[tuple[int, int]]:
    """Return the trimmed, non-empty sentences of `text[start:end]` as absolute spans.

    Sentences come from `sentencex.get_sentence_boundaries`; spans are in order and do
    not overlap (overlapping boundaries are merged). If sentencex finds none, the
    whole trimmed span is one sentence.
    """
    spans: list[tuple[int, int]] = []
    for boundary in sentencex.get_sentence_boundaries(language, text[start:end]):
        first, last = trim_span(
            text, start + boundary["start_index"], start + boundary["end_index"]
        )
        if first >= last:
            continue
        if spans and first < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    if not spans:
        whole = trim_span(text, start, end)
        if whole[0] < whole[1]:
            spans.append(whole)
    return spans


def _split_at_sentences(
    text: str, start: int, end: int, max_chars: int, language: str
) -> Iterator[tuple[int, int]]:
    """Cut trimmed `text[start:end]` at sentence ends into pieces of <= `max_chars`.

    Pieces cover the span (only whitespace between them is left out); a piece is
    longer than `max_chars` only when it is a single sentence that long.
    """
    cuts = sorted({last for _, last in sentence_spans(text, start, end, language)} | {end})
    piece_start = start
    previous: int | None = None  # the last cut that still fits the current piece
    for cut in cuts:
        if cut <= piece_start:
            continue
        if previous is None or cut - piece_start <= max_chars:
            previous = cut
            continue
        yield trim_span(text, piece_start, previous)
        piece_start = trim_span(text, previous, end)[0]
        previous = cut
    if piece_start < end:
        yield trim_span(text, piece_start, end)


def _pieces(
    doc: ParsedDocument, block: Block, max_chars: int, language: str
) -> Iterator[tuple[int, int]]:
    """The trimmed spans a block contributes: itself, or sentence runs if too long."""
    start, end = trim_span(doc.text, block.start, block.end)
    if start >= end:
        return
    if block.kind in _ATOMIC_KINDS or end - start <= max_chars:
        yield start, end
        return
    yield from _split_at_sentences(doc.text, start, end, max_chars, language)


def _runs(blocks: Sequence[Block]) -> Iterator[list[Block]]:
    """Maximal runs of consecutive non-heading blocks that share one section."""
    run: list[Block] = []
    for block in blocks:
        if block.kind == "heading" or (run and block.section != run[-1].section):
            if run:
                yield run
            run = []
        if block.kind != "heading":
            run.append(block)
    if run:
        yield run


def chunk_document(
    doc: ParsedDocument,
    *,
    min_chars: int = DEFAULT_MIN_CHARS,
    max_chars: int = DEFAULT_MAX_CHARS,
    language: str = "en",
) -> list[ChunkSpan]:
    """Cut `doc` into chunks by the module's rules; return them in text order.

    Chunks are non-empty, trimmed, in order and never overlap; together they cover
    all non-whitespace text of every non-heading block. `paragraph` numbers chunks
    from 1 within each distinct section path. Assumes `doc.blocks` are in order and
    do not overlap (as every parser guarantees). Cost: O(len(doc.text)) plus
    sentence splitting of blocks longer than `max_chars`.
    """
    if min_chars < 0 or max_chars <= 0:
        raise ValueError("min_chars must be >= 0 and max_chars > 0")
    chunks: list[ChunkSpan] = []
    numbers: Counter[tuple[str, ...]] = Counter()
    for run in _runs(doc.blocks):
        section = run[0].section
        spans = [piece for block in run for piece in _pieces(doc, block, max_chars, language)]
        if not spans:
            continue
        first, last = spans[0]
        merged: list[tuple[int, int]] = []
        for start, end in spans[1:]:
            if last - first < min_chars and end - first <= max_chars:
                last = end
            else:
                merged.append((first, last))
                first, last = start, end
        merged.append((first, last))
        for start, end in merged:
            numbers[section] += 1
            chunks.append(ChunkSpan(start, end, section, numbers[section]))
    return chunks


LABEL_PART_CHARS = 48


def _shorten(part: str) -> str:
    if len(part) <= LABEL_PART_CHARS:
        return part
    return part[: LABEL_PART_CHARS - 1].rstrip() + "…"


def make_label(title: str, section: tuple[str, ...], paragraph: int) -> str:
    """Return a chunk's human-readable label, e.g. `"Title › Section › Sub › ¶3"`.

    Section titles equal to the document title are skipped (an h1 repeating the
    title would otherwise show twice); an empty title is left out; each part is cut
    to `LABEL_PART_CHARS` characters with an ellipsis so labels fit a panel title.
    """
    parts = [title] if title else []
    parts.extend(name for name in section if name != title)
    parts = [_shorten(part) for part in parts]
    parts.append(f"¶{paragraph}")
    return LABEL_SEPARATOR.join(parts)
