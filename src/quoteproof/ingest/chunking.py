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
   each section boundary;
6. with `embed_tokens` (a dense model's input limit, 256 for all-MiniLM-L6-v2; 0 by
   default: `retrieval.embed_index` uses this rule to cut a chunk into the
   passages it embeds), every chunk's embedding input
   (`store.vectors.embedding_input`: the document title and section path, then the
   chunk's text) fits in that many of the model's own
   tokens, special tokens included (`model_tokens.default_counter`): a section
   or window ends before it would overflow, and a sentence or table that alone
   would overflow is cut as in rule 2 (at line breaks, so a table between its
   rows, else between words), so the model reads every word of every chunk. A
   title and section path longer than three quarters of the limit leave the text
   a quarter of it.

Tokens for rules 4 and 5 are estimated as words plus punctuation marks
(`count_tokens`), close to what subword tokenizers give for English prose; rule 6
counts the model's tokens. Every chunk is a contiguous, trimmed span of
`doc.text`; windows of one section may overlap, chunks of different sections
never do.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from quoteproof.defaults import DEFAULT_OVERLAP_TOKENS as DEFAULT_OVERLAP_TOKENS
from quoteproof.defaults import DEFAULT_SECTION_TOKENS as DEFAULT_SECTION_TOKENS
from quoteproof.defaults import DEFAULT_WINDOW_TOKENS as DEFAULT_WINDOW_TOKENS
from quoteproof.errors import UsageError
from quoteproof.ingest.model_tokens import TokenCounter, default_counter, tokens_between
from quoteproof.model import Block, ParsedDocument
from quoteproof.store.vectors import embedding_input
from quoteproof.text.spans import sentence_spans, trim_span

DEFAULT_MAX_CHARS = 20_000
"""The hard bound on a chunk's length: far above a 500-token section (about 3,000
characters of prose), so only text without structure (a huge one-line file, a
giant table) is cut by it."""
_ATOMIC_KINDS = frozenset({"table", "code"})
_SKIPPED_KINDS = frozenset({"heading", "furniture"})
_PUNCTUATION = ".,;:()"
_LAST_SPACE = re.compile(r"\s\S*\Z")
LIST_UNITS = 8
"""How many units after a lead-in a window's end may cut (a list's usual length)."""


@dataclass(frozen=True)
class ChunkSettings:
    """Chunk sizes in tokens, the hard bound on a chunk in characters, and the dense
    model's input limit in its own tokens (0: none); see the module docstring for
    how they are used."""

    section_tokens: int = DEFAULT_SECTION_TOKENS
    window_tokens: int = DEFAULT_WINDOW_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS
    embed_tokens: int = 0

    def __post_init__(self) -> None:
        if self.window_tokens <= 0 or self.section_tokens <= 0:
            raise UsageError("section_tokens and window_tokens must be > 0")
        if self.max_chars <= 0:
            raise UsageError("max_chars must be > 0")
        if self.embed_tokens < 0:
            raise UsageError("embed_tokens must be >= 0 (0: no limit)")
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
    piece of one longer than `max_chars` or than the model's limit; `tokens` is the
    estimate (`count_tokens`), `model_tokens` the model's count (0 without a limit)."""

    start: int
    end: int
    tokens: int
    model_tokens: int = 0


def count_tokens(text: str) -> int:
    """Estimate the tokens of `text`: its whitespace-separated words plus its common
    punctuation marks (`.,;:()`), each of which subword tokenizers count apart.

    An estimate, computed in C-speed string operations (about ten times faster than
    a regular expression over words and marks).
    """
    return len(text.split()) + sum(text.count(mark) for mark in _PUNCTUATION)


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
    return _split(text, start, end, lambda at: end - at > max_chars, lambda at: at + max_chars)


def _token_pieces(
    text: str, start: int, end: int, starts: Sequence[int], budget: int
) -> list[tuple[int, int]]:
    """`text[start:end]` (trimmed) as trimmed spans of at most `budget` model tokens
    (`starts`: where the tokens start, sorted) that cover all its non-whitespace
    text: each ends at the last line break, else the last whitespace, before the
    first token that does not fit (`_cut`), else at that token."""

    def limit(at: int) -> int:
        # past `at` even where a word's tokens share an offset (normalization)
        return max(starts[bisect_left(starts, at) + budget], at + 1)

    return _split(text, start, end, lambda at: tokens_between(starts, at, end) > budget, limit)


def _split(
    text: str,
    start: int,
    end: int,
    too_long: Callable[[int], bool],
    limit: Callable[[int], int],
) -> list[tuple[int, int]]:
    """`text[start:end]` as trimmed spans: while what is left from `at` is
    `too_long(at)`, a span is cut (`_cut`) before `limit(at)`; the rest is the last."""
    pieces: list[tuple[int, int]] = []
    while too_long(start):
        cut = _cut(text, start, limit(start))
        pieces.append(trim_span(text, start, cut))
        start = trim_span(text, cut, end)[0]
    if start < end:
        pieces.append((start, end))
    return pieces


def _units(
    text: str,
    run: Sequence[Block],
    language: str,
    max_chars: int,
    model: tuple[Sequence[int], int] | None,
) -> list[_Unit]:
    """The sentences and atomic blocks of a section, in order, with token counts; one
    longer than `max_chars` comes as pieces no longer than that (`_pieces`), and
    with `model` (the section's token starts and the text's budget) one longer
    than the budget as pieces that fit it (`_token_pieces`)."""
    units: list[_Unit] = []
    for block in run:
        if block.kind in _ATOMIC_KINDS:
            start, end = trim_span(text, block.start, block.end)
            spans = [(start, end)] if start < end else []
        else:
            spans = sentence_spans(text, block.start, block.end, language)
        for span_start, span_end in spans:
            for s, e in _pieces(text, span_start, span_end, max_chars):
                if model is None:
                    units.append(_Unit(s, e, count_tokens(text[s:e])))
                    continue
                starts, budget = model
                units.extend(
                    _Unit(ps, pe, count_tokens(text[ps:pe]), tokens_between(starts, ps, pe))
                    for ps, pe in _token_pieces(text, s, e, starts, budget)
                )
    return units


def _windows(
    units: Sequence[_Unit], settings: ChunkSettings, budget: int | None, lead_ins: Sequence[bool]
) -> Iterator[tuple[int, int]]:
    """Overlapping windows over `units` (non-empty, each at most `max_chars` long and
    `budget` model tokens) as (first, last) unit indexes; a window spans at most
    `max_chars` characters and, with a `budget`, holds at most that many model
    tokens. A window that more units follow ends before a unit that `lead_ins` marks
    (a list's lead-in) near its end (`_before_a_cut_list`)."""
    model = [0, *itertools.accumulate(unit.model_tokens for unit in units)]

    def fits(first: int, last: int) -> bool:
        if units[last].end - units[first].start > settings.max_chars:
            return False
        return budget is None or model[last + 1] - model[first] <= budget

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
        if last + 1 < len(units):
            last = _before_a_cut_list(first, last, lead_ins)
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


def _before_a_cut_list(first: int, last: int, lead_ins: Sequence[bool]) -> int:
    """The last unit of a window `first..last` that more units follow: `last`, or the
    unit before a lead-in among its last LIST_UNITS units and in its second half (its
    list would be cut by the window's end; the next window starts at the lead-in)."""
    for lead_in in range(last, max(first + (last - first) // 2, last - LIST_UNITS), -1):
        if lead_ins[lead_in] and lead_in > first:
            return lead_in - 1
    return last


def _text_budget(title: str, section: tuple[str, ...], limit: int, counter: TokenCounter) -> int:
    """The model tokens a chunk's text may hold in `section`: the limit less the
    special tokens and the whole context line (`embedding_input`), at least a
    quarter of the limit."""
    context = embedding_input(title, section, "")
    used = counter.special + len(counter.starts(context))
    return max(limit - used, limit // 4)


def chunk_document(
    doc: ParsedDocument, settings: ChunkSettings | None = None, counter: TokenCounter | None = None
) -> list[ChunkSpan]:
    """Cut `doc` into chunks by the module's rules; return them in text order.

    Chunks are non-empty, trimmed and at most `settings.max_chars` characters long;
    with `settings.embed_tokens`, each one's embedding input holds at most that many
    tokens of `counter` (default: `model_tokens.default_counter()`). Together they
    cover all non-whitespace text of every content block (not headings, not
    furniture). Assumes `doc.blocks` are in order and do not overlap, as every
    parser guarantees. Cost: O(len(doc.text)), plus tokenizing sections longer than
    the limit in characters, and sentence splitting of sections over a size.
    """
    settings = settings or ChunkSettings()
    if settings.embed_tokens and counter is None:
        counter = default_counter()
    budgets: dict[tuple[str, ...], int] = {}
    chunks: list[ChunkSpan] = []
    for run in _sections(doc.blocks):
        section = run[0].section
        start, end = trim_span(doc.text, run[0].start, run[-1].end)
        if start >= end:
            continue
        model: tuple[list[int], int] | None = None
        fits_model = True
        if settings.embed_tokens and counter is not None:
            if section not in budgets:
                budgets[section] = _text_budget(doc.title, section, settings.embed_tokens, counter)
            budget = budgets[section]
            if end - start > budget:  # a token is at least one character
                starts = [start + offset for offset in counter.starts(doc.text[start:end])]
                model = (starts, budget)
                fits_model = len(starts) <= budget
        short = end - start <= settings.max_chars
        if short and fits_model and count_tokens(doc.text[start:end]) <= settings.section_tokens:
            chunks.append(ChunkSpan(start, end, section))
            continue
        units = _units(doc.text, run, doc.language, settings.max_chars, model)
        lead_ins = [doc.text[unit.start : unit.end].endswith(":") for unit in units]
        for first, last in _windows(units, settings, model[1] if model else None, lead_ins):
            chunks.append(ChunkSpan(units[first].start, units[last].end, section))
    return chunks
