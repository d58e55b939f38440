"""Tests of chunking: examples, then properties on random documents.

The property tests build documents from headings, paragraphs of sentences, tables,
code and running headers/footers, and check every rule of `chunk_document` against
sentence ends computed here directly with sentencex (the oracle).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
import sentencex
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof.ingest.chunking import (
    DEFAULT_MAX_CHARS,
    ChunkSettings,
    ChunkSpan,
    chunk_document,
    count_tokens,
)
from quoteproof.ingest.plain.markdown import parse_markdown
from quoteproof.ingest.plain.text import parse_text
from quoteproof.model import Block, BlockKind, ParsedDocument


def _doc(parts: list[tuple[BlockKind, str, tuple[str, ...]]]) -> ParsedDocument:
    """A document whose blocks are `parts` joined by blank lines (like the HTML parser)."""
    blocks: list[Block] = []
    texts: list[str] = []
    offset = 0
    for kind, text, section in parts:
        blocks.append(Block(kind, offset, offset + len(text), section))
        texts.append(text)
        offset += len(text) + 2
    return ParsedDocument("\n\n".join(texts), "Doc", "test", tuple(blocks))


def _texts(doc: ParsedDocument, chunks: list[ChunkSpan]) -> list[str]:
    return [doc.text[c.start : c.end] for c in chunks]


def _sentence(number: int) -> str:
    return f"Sentence number {number} has exactly eight tokens."  # 8 tokens


def test_count_tokens() -> None:
    assert count_tokens("Give 200 mg, then stop.") == 7
    assert count_tokens("") == 0
    assert count_tokens(_sentence(1)) == 8


def test_short_section_is_one_chunk_and_sections_never_mix() -> None:
    doc = _doc(
        [
            ("heading", "Dosing", ("Dosing",)),
            ("paragraph", "Give 200 mg.", ("Dosing",)),
            ("list", "one\ntwo", ("Dosing",)),
            ("table", "a | b\n1 | 2", ("Dosing",)),
            ("heading", "Warnings", ("Warnings",)),
            ("paragraph", "Watch the liver.", ("Warnings",)),
        ]
    )
    chunks = chunk_document(doc)
    assert _texts(doc, chunks) == [
        "Give 200 mg.\n\none\ntwo\n\na | b\n1 | 2",
        "Watch the liver.",
    ]
    assert [c.section for c in chunks] == [("Dosing",), ("Warnings",)]


def test_long_section_becomes_overlapping_windows_at_sentence_ends() -> None:
    text = " ".join(_sentence(n) for n in range(1, 31))  # 240 tokens
    doc = _doc([("paragraph", text, ("S",))])
    settings_ = ChunkSettings(section_tokens=100, window_tokens=80, overlap_tokens=16)
    chunks = chunk_document(doc, settings_)
    texts = _texts(doc, chunks)
    assert texts[0] == " ".join(_sentence(n) for n in range(1, 11))  # 10 sentences = 80
    assert texts[1].startswith(_sentence(9))  # 2 sentences (16 tokens) repeated
    assert texts[-1].endswith(_sentence(30))
    assert all(count_tokens(t) <= 80 for t in texts)
    for first, second in itertools.pairwise(chunks):
        assert first.start < second.start < first.end  # overlapping, moving forward


def test_windows_restart_at_each_section() -> None:
    long_text = " ".join(_sentence(n) for n in range(1, 21))  # 160 tokens
    doc = _doc([("paragraph", long_text, ("A",)), ("paragraph", long_text, ("B",))])
    settings_ = ChunkSettings(section_tokens=100, window_tokens=80, overlap_tokens=8)
    chunks = chunk_document(doc, settings_)
    b_chunks = [c for c in chunks if c.section == ("B",)]
    assert doc.text[b_chunks[0].start :].startswith(_sentence(1))
    assert all(c.start >= doc.blocks[1].start for c in b_chunks)


def test_a_window_never_ends_on_a_lead_in_so_its_list_follows_it() -> None:
    lead_in = "The airway can be blocked because:"
    items = ["The throat muscles relax.", "The tonsils are large.", "The neck is short."]
    before = [_sentence(n) for n in range(1, 10)]  # 72 tokens, + 7 of the lead-in
    doc = _doc([("paragraph", p, ("S",)) for p in [*before, lead_in, *items]])
    settings_ = ChunkSettings(section_tokens=60, window_tokens=80, overlap_tokens=8)
    texts = _texts(doc, chunk_document(doc, settings_))
    assert not any(t.endswith(":") for t in texts)
    holding = [t for t in texts if lead_in in t]
    assert holding and all(item in t for t in holding for item in items)


def test_a_window_ends_before_a_lead_in_whose_list_it_would_cut() -> None:
    lead_in = "The airway can be blocked because:"
    items = [f"Cause number {n} narrows the airway at night." for n in range(1, 5)]
    before = [_sentence(n) for n in range(1, 8)]  # 56 tokens, + 7 of the lead-in
    doc = _doc([("paragraph", p, ("S",)) for p in [*before, lead_in, *items]])
    settings_ = ChunkSettings(section_tokens=60, window_tokens=80, overlap_tokens=8)
    texts = _texts(doc, chunk_document(doc, settings_))
    holding = [t for t in texts if lead_in in t]
    assert holding and all(item in t for t in holding for item in items)


def test_single_long_sentence_and_big_table_stay_whole() -> None:
    sentence = "word " * 60 + "end."
    table = "\n".join(f"row {n} | value {n}" for n in range(40))
    doc = _doc([("paragraph", sentence, ()), ("table", table, ())])
    chunks = chunk_document(
        doc, ChunkSettings(section_tokens=20, window_tokens=10, overlap_tokens=2)
    )
    assert _texts(doc, chunks) == [sentence.strip(), table]


def test_headings_and_furniture_are_not_chunks_and_split_runs() -> None:
    doc = _doc(
        [
            ("heading", "Title", ("Title",)),
            ("paragraph", "Before the page break.", ("Title",)),
            ("furniture", "Page 1 of 2", ("Title",)),
            ("paragraph", "After the page break.", ("Title",)),
        ]
    )
    assert _texts(doc, chunk_document(doc)) == ["Before the page break.", "After the page break."]
    assert chunk_document(_doc([("heading", "Only", ("Only",))])) == []


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="overlap_tokens"):
        ChunkSettings(window_tokens=50, overlap_tokens=50)
    with pytest.raises(ValueError, match="window_tokens"):
        ChunkSettings(window_tokens=0)
    with pytest.raises(ValueError, match="max_chars"):
        ChunkSettings(max_chars=0)
    with pytest.raises(ValueError, match="embed_tokens"):
        ChunkSettings(embed_tokens=-1)


def _assert_bounded_cover(doc: ParsedDocument, chunks: list[ChunkSpan], bound: int) -> None:
    """Every chunk is a trimmed span of at most `bound` characters, in order, and
    together they leave out no non-whitespace character of the text."""
    assert all(0 < c.end - c.start <= bound for c in chunks)
    assert all(doc.text[c.start : c.end] == doc.text[c.start : c.end].strip() for c in chunks)
    assert not doc.text[: chunks[0].start].strip() and not doc.text[chunks[-1].end :].strip()
    for before, after in itertools.pairwise(chunks):
        assert before.start < after.start
        assert not doc.text[before.end : after.start].strip()


@pytest.mark.parametrize(
    "line",
    [
        "the dose for adults is 200 mg on day one then 100 mg daily " * 50_000,  # no sentence end
        "x" * 3_000_000,  # no space either
    ],
    ids=["words", "characters"],
)
def test_a_one_line_file_of_megabytes_is_cut_within_the_bound(line: str) -> None:
    doc = parse_text(line.encode(), "one-line.txt")
    assert len(doc.text) > 2_900_000
    chunks = chunk_document(doc)
    _assert_bounded_cover(doc, chunks, DEFAULT_MAX_CHARS)


def test_an_oversize_table_is_cut_at_rows_then_words() -> None:
    rows = [f"row {n} | " + "cell " * 30 for n in range(20)] + ["long " * 100]
    doc = _doc([("table", "\n".join(rows), ())])
    chunks = chunk_document(doc, ChunkSettings(max_chars=400))
    _assert_bounded_cover(doc, chunks, 400)
    texts = _texts(doc, chunks)
    pairs = ["\n".join(rows[n : n + 2]).strip() for n in range(0, 20, 2)]  # 2 rows fit, not 3
    assert texts == [*pairs, "long " * 79 + "long", "long " * 19 + "long"]


def test_markdown_document_chunks() -> None:
    raw = b"# Guide\n\nIntro text.\n\n## Dose\n\nGive 1 mg.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    doc = parse_markdown(raw, "g.md")
    chunks = chunk_document(doc)
    assert [c.section for c in chunks] == [("Guide",), ("Guide", "Dose")]
    assert _texts(doc, chunks)[1].startswith("Give 1 mg.")


# Property tests ---------------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "dose", "mg", "cell", "x1", "e.g"])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=12))
    end = draw(st.sampled_from([".", "!", "?", ";", ""]))
    return " ".join(words).capitalize() + end


KINDS: list[BlockKind] = ["heading", "paragraph", "paragraph", "list", "table", "code", "furniture"]


@st.composite
def blocks(draw: st.DrawFn) -> tuple[BlockKind, str]:
    kind = draw(st.sampled_from(KINDS))
    if kind in ("heading", "furniture"):
        return kind, draw(WORDS).title()
    if kind == "table":
        rows = draw(st.lists(st.lists(sentences(), min_size=1, max_size=4), min_size=1, max_size=8))
        return kind, "\n".join(" | ".join(row) for row in rows)
    if kind == "code":
        return kind, "\n".join(draw(st.lists(WORDS, min_size=1, max_size=5)))
    separator = draw(st.sampled_from([" ", "  ", "\n"]))
    return kind, separator.join(draw(st.lists(sentences(), min_size=1, max_size=15)))


@st.composite
def documents(draw: st.DrawFn) -> ParsedDocument:
    """Random documents; some keep sections but lose their heading blocks (as PDFs may)."""
    parts: list[tuple[BlockKind, str, tuple[str, ...]]] = []
    headings: list[tuple[int, str]] = []
    keep_headings = draw(st.booleans())
    for kind, text in draw(st.lists(blocks(), min_size=1, max_size=12)):
        if kind == "heading":
            level = draw(st.integers(1, 3))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, text))
        section = tuple(title for _, title in headings)
        if kind != "heading" or keep_headings:
            parts.append((kind, text, section))
    return _doc(parts)


@dataclass(frozen=True)
class Oracle:
    """Places a chunk may start and end: atomic-block and sentence edges (sentencex)."""

    starts: frozenset[int]
    ends: frozenset[int]
    units: frozenset[tuple[int, int]]  # sentences and whole tables/code blocks


def _oracle(doc: ParsedDocument) -> Oracle:
    starts: set[int] = set()
    ends: set[int] = set()
    units: set[tuple[int, int]] = set()
    for block in doc.blocks:
        text = doc.text[block.start : block.end]
        first = block.start + len(text) - len(text.lstrip())
        last = block.end - (len(text) - len(text.rstrip()))
        starts.add(first)
        ends.add(last)
        if block.kind in ("table", "code"):
            units.add((first, last))
        for boundary in sentencex.get_sentence_boundaries("en", text):
            piece = text[boundary["start_index"] : boundary["end_index"]]
            if piece.strip():
                first = block.start + boundary["start_index"] + len(piece) - len(piece.lstrip())
                last = block.start + boundary["end_index"] - (len(piece) - len(piece.rstrip()))
                starts.add(first)
                ends.add(last)
                units.add((first, last))
    return Oracle(frozenset(starts), frozenset(ends), frozenset(units))


@settings(max_examples=150, deadline=None)
@given(documents(), st.integers(5, 120), st.integers(5, 80), st.integers(0, 30))
def test_chunk_properties(doc: ParsedDocument, section: int, window: int, overlap: int) -> None:
    settings_ = ChunkSettings(section, window, min(overlap, window - 1), embed_tokens=0)
    chunks = chunk_document(doc, settings_)
    oracle = _oracle(doc)
    previous: ChunkSpan | None = None
    for chunk in chunks:
        text = doc.text[chunk.start : chunk.end]
        # non-empty, trimmed, moving forward; overlap only inside one section
        assert text and text == text.strip()
        if previous is not None:
            assert previous.start < chunk.start
            if chunk.start < previous.end:
                assert chunk.section == previous.section
        previous = chunk
        # starts and ends only at block or sentence edges: no sentence is ever cut
        assert chunk.start in oracle.starts
        assert chunk.end in oracle.ends
        # inside one section, never across (or on) a heading or furniture
        overlapping = [b for b in doc.blocks if b.start < chunk.end and chunk.start < b.end]
        assert overlapping
        assert all(b.kind not in ("heading", "furniture") for b in overlapping)
        assert {b.section for b in overlapping} == {chunk.section}
        # tables and code are never cut
        for block in overlapping:
            if block.kind in ("table", "code"):
                assert chunk.start <= block.start and block.end <= chunk.end
        # a chunk bigger than both sizes can only be one uncuttable unit
        tokens = count_tokens(text)
        if tokens > settings_.section_tokens and tokens > settings_.window_tokens:
            assert (chunk.start, chunk.end) in oracle.units
    # every non-whitespace character of every content block is in a chunk
    covered = [False] * len(doc.text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    for block in doc.blocks:
        if block.kind not in ("heading", "furniture"):
            for index in range(block.start, block.end):
                assert covered[index] or doc.text[index].isspace()


@settings(max_examples=100, deadline=None)
@given(documents(), st.integers(1, 300), st.integers(5, 120))
def test_chunks_never_exceed_max_chars(doc: ParsedDocument, bound: int, window: int) -> None:
    chunks = chunk_document(doc, ChunkSettings(window, window, window // 5, max_chars=bound))
    assert all(0 < c.end - c.start <= bound for c in chunks)
    covered = [False] * len(doc.text)
    for chunk in chunks:
        text = doc.text[chunk.start : chunk.end]
        assert text == text.strip()
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    for block in doc.blocks:
        if block.kind not in ("heading", "furniture"):
            for index in range(block.start, block.end):
                assert covered[index] or doc.text[index].isspace()


@settings(max_examples=60, deadline=None)
@given(documents())
def test_short_sections_are_single_chunks(doc: ParsedDocument) -> None:
    """With a large section size, each run of a section between headings or
    furniture is exactly one chunk."""
    chunks = chunk_document(doc, ChunkSettings(section_tokens=10_000, embed_tokens=0))
    runs = 0
    previous: Block | None = None
    for block in doc.blocks:
        content = (
            block.kind not in ("heading", "furniture") and doc.text[block.start : block.end].strip()
        )
        if content and (previous is None or previous.section != block.section):
            runs += 1
        previous = block if content else None
    assert len(chunks) == runs
