"""Chunking: one algorithm for every format, cutting a parsed document into
section-sized or window-sized spans.

Rules, in order of precedence:

1. a chunk never crosses a heading (so it lies inside one section) nor a running
   header or footer (`furniture`); headings and furniture are never in a chunk;
2. a chunk is never longer than `max_chars` characters, whatever the text: a
   sentence, table or code block longer than that is cut at line breaks, else
   between words, else between characters (a line of text with no sentence break
   or space is still cut);
3. otherwise a sentence (found by sentencex) and a table or code block are never cut;
4. a section of at most `section_tokens` tokens (and `max_chars` characters) is one
   chunk;
5. a longer section is cut into windows of at most `window_tokens` tokens and
   `max_chars` characters (a single sentence or table longer than `window_tokens`
   is a window of its own); each window after the first starts so that it repeats
   about `overlap_tokens` tokens of the window before it, and windows restart at
   each section boundary.

Tokens are estimated as words plus punctuation marks (`count_tokens`), close to what
subword tokenizers give for English prose. Every chunk is a contiguous, trimmed span
of `doc.text`; windows of one section may overlap, chunks of different sections
never do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import sentencex

from quoteproof.defaults import DEFAULT_OVERLAP_TOKENS as DEFAULT_OVERLAP_TOKENS
from quoteproof.defaults import DEFAULT_SECTION_TOKENS as DEFAULT_SECTION_TOKENS
from quoteproof.defaults import DEFAULT_WINDOW_TOKENS as DEFAULT_WINDOW_TOKENS
from quoteproof.errors import UsageError
from quoteproof.ingest.text import trim_span
from quoteproof.model import Block, ParsedDocument

DEFAULT_MAX_CHARS = 20_000
"""The hard bound on a chunk's length: far above a 500-token section (about 3,000
characters of prose), so only text without structure (a huge one-line file, a
giant table) is cut by it."""
_ATOMIC_KINDS = frozenset({"table", "code"})
_SKIPPED_KINDS = frozenset({"heading", "furniture"})
_PUNCTUATION = ".,;:()"
_LAST_SPACE = re.compile(r"\s\S*\Z")


@dataclass(frozen=True)
class ChunkSettings:
    """Chunk sizes in tokens, and the hard bound on a chunk in characters; see the
    module docstring for how they are used."""

    section_tokens: int = DEFAULT_SECTION_TOKENS
    window_tokens: int = DEFAULT_WINDOW_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS

    def __post_init__(self) -> None:
        if self.window_tokens <= 0 or self.section_tokens <= 0:
            raise UsageError("section_tokens and window_tokens must be > 0")
        if self.max_chars <= 0:
            raise UsageError("max_chars must be > 0")
        if not 0 <= self.overlap_tokens < self.window_tokens:
            raise UsageError("overlap_tokens must be >= 0 and < window_tokens")


@dataclass(frozen=True)
class ChunkSpan:
    """One chunk: `text[start:end]`, inside the section path `section`."""

    start: int
    end: int
    section: tuple[str, ...]


@dataclass(frozen=True)
class _Unit:
    """An uncuttable piece of a section: a sentence, a table or a code block, or a
    piece of one longer than `max_chars`."""

    start: int
    end: int
    tokens: int


def count_tokens(text: str) -> int:
    """Estimate the tokens of `text`: its whitespace-separated words plus its common
    punctuation marks (`.,;:()`), each of which subword tokenizers count apart.

    An estimate, computed in C-speed string operations (about ten times faster than
    a regular expression over words and marks).
    """
    return len(text.split()) + sum(text.count(mark) for mark in _PUNCTUATION)


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


def _sections(blocks: Sequence[Block]) -> Iterator[list[Block]]:
    """Maximal runs of consecutive content blocks that share one section path.

    Headings and furniture end a run: a chunk is one contiguous span of the text, so
    it must stop before a running header or footer (a section that crosses a page
    break is chunked page by page).
    """
    run: list[Block] = []
    for block in blocks:
        if block.kind in _SKIPPED_KINDS or (run and block.section != run[-1].section):
            if run:
                yield run
            run = []
        if block.kind not in _SKIPPED_KINDS:
            run.append(block)
    if run:
        yield run


def _cut(text: str, start: int, limit: int) -> int:
    """Where to end a piece of `text` that starts at `start` (not whitespace) and may
    end at `limit` at the latest: at the last line break, else the last whitespace,
    in `text[start + 1 : limit + 1]`, else at `limit`. O(limit - start)."""
    line_break = text.rfind("\n", start + 1, limit + 1)
    if line_break != -1:
        return line_break
    space = _LAST_SPACE.search(text, start + 1, limit + 1)
    return space.start() if space else limit


def _pieces(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """`text[start:end]` (trimmed) as trimmed spans of at most `max_chars` characters
    that cover all its non-whitespace text, cut by `_cut`. O(end - start)."""
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        cut = _cut(text, start, start + max_chars)
        pieces.append(trim_span(text, start, cut))
        start = trim_span(text, cut, end)[0]
    if start < end:
        pieces.append((start, end))
    return pieces


def _units(text: str, run: Sequence[Block], language: str, max_chars: int) -> list[_Unit]:
    """The sentences and atomic blocks of a section, in order, with token counts; one
    longer than `max_chars` comes as pieces no longer than that (`_pieces`)."""
    units: list[_Unit] = []
    for block in run:
        if block.kind in _ATOMIC_KINDS:
            start, end = trim_span(text, block.start, block.end)
            spans = [(start, end)] if start < end else []
        else:
            spans = sentence_spans(text, block.start, block.end, language)
        units.extend(
            _Unit(s, e, count_tokens(text[s:e]))
            for span_start, span_end in spans
            for s, e in _pieces(text, span_start, span_end, max_chars)
        )
    return units


def _windows(units: Sequence[_Unit], settings: ChunkSettings) -> Iterator[tuple[int, int]]:
    """Overlapping windows over `units` (non-empty, each at most `max_chars` long) as
    (first, last) unit indexes; a window spans at most `max_chars` characters."""

    def fits(first: int, last: int) -> bool:
        return units[last].end - units[first].start <= settings.max_chars

    first = 0
    while True:
        last, tokens = first, units[first].tokens
        while (
            last + 1 < len(units)
            and tokens + units[last + 1].tokens <= settings.window_tokens
            and fits(first, last + 1)
        ):
            last += 1
            tokens += units[last].tokens
        yield first, last
        if last == len(units) - 1:
            return
        following, overlap = last + 1, 0
        while (
            following - 1 > first
            and overlap + units[following - 1].tokens <= settings.overlap_tokens
            and fits(following - 1, last + 1)
        ):
            following -= 1
            overlap += units[following].tokens
        first = following


def chunk_document(doc: ParsedDocument, settings: ChunkSettings | None = None) -> list[ChunkSpan]:
    """Cut `doc` into chunks by the module's rules; return them in text order.

    Chunks are non-empty, trimmed and at most `settings.max_chars` characters long;
    together they cover all non-whitespace text of every content block (not
    headings, not furniture). Assumes `doc.blocks` are in order and do not overlap,
    as every parser guarantees. Cost: O(len(doc.text)), plus sentence splitting of
    sections longer than `section_tokens` or `max_chars`.
    """
    settings = settings or ChunkSettings()
    chunks: list[ChunkSpan] = []
    for run in _sections(doc.blocks):
        section = run[0].section
        start, end = trim_span(doc.text, run[0].start, run[-1].end)
        if start >= end:
            continue
        short = end - start <= settings.max_chars
        if short and count_tokens(doc.text[start:end]) <= settings.section_tokens:
            chunks.append(ChunkSpan(start, end, section))
            continue
        units = _units(doc.text, run, doc.language, settings.max_chars)
        for first, last in _windows(units, settings):
            chunks.append(ChunkSpan(units[first].start, units[last].end, section))
    return chunks
