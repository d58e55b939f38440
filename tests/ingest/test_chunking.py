"""Tests of chunking: examples, then properties on random documents.

The property tests build documents from headings, paragraphs of sentences, tables
and code, and check every rule of `chunk_document` against sentence ends computed
here directly with sentencex (the oracle).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import sentencex
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof.ingest.chunking import ChunkSpan, chunk_document, make_label
from quoteproof.ingest.markdown import parse_markdown
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


def test_short_paragraphs_merge_within_section_only() -> None:
    a, b = ("A",), ("A", "B")
    doc = _doc(
        [
            ("heading", "A", a),
            ("paragraph", "One.", a),
            ("paragraph", "Two.", a),
            ("heading", "B", b),
            ("paragraph", "Three.", b),
            ("list", "Four.", b),
        ]
    )
    chunks = chunk_document(doc)
    assert _texts(doc, chunks) == ["One.\n\nTwo.", "Three.\n\nFour."]
    assert [(c.section, c.paragraph) for c in chunks] == [(a, 1), (b, 1)]


def test_merging_stops_at_min_chars() -> None:
    paragraphs = [f"Paragraph number {i} is here." for i in range(6)]  # 27 chars each
    doc = _doc([("paragraph", p, ()) for p in paragraphs])
    chunks = chunk_document(doc, min_chars=50, max_chars=1000)
    assert _texts(doc, chunks) == [
        "\n\n".join(paragraphs[0:2]),
        "\n\n".join(paragraphs[2:4]),
        "\n\n".join(paragraphs[4:6]),
    ]
    assert [c.paragraph for c in chunks] == [1, 2, 3]


def test_long_paragraph_is_cut_at_sentence_ends() -> None:
    sentences = [f"This is sentence number {i} of the paragraph." for i in range(10)]
    paragraph = " ".join(sentences)  # 10 x 44 chars + spaces
    doc = _doc([("paragraph", paragraph, ("S",))])
    chunks = chunk_document(doc, min_chars=10, max_chars=100)
    assert _texts(doc, chunks) == [" ".join(sentences[i : i + 2]) for i in range(0, 10, 2)]
    assert [c.paragraph for c in chunks] == [1, 2, 3, 4, 5]


def test_single_long_sentence_and_big_table_stay_whole() -> None:
    sentence = "word " * 60 + "end."
    table = "\n".join(f"Row {i}. | Value {i}. Note." for i in range(40))
    doc = _doc([("paragraph", sentence, ()), ("table", table, ()), ("code", "x = 1\n" * 30, ())])
    chunks = chunk_document(doc, min_chars=10, max_chars=50)
    assert _texts(doc, chunks) == [sentence, table, ("x = 1\n" * 30).strip()]


def test_headings_are_not_chunks() -> None:
    doc = _doc([("heading", "Only a heading", ("Only a heading",))])
    assert chunk_document(doc) == []


def test_paragraph_numbers_continue_when_a_section_path_returns() -> None:
    doc = _doc(
        [
            ("paragraph", "x" * 300, ("A",)),
            ("heading", "B", ("B",)),
            ("paragraph", "y" * 300, ("B",)),
            ("heading", "A", ("A",)),
            ("paragraph", "z" * 300, ("A",)),
        ]
    )
    assert [(c.section, c.paragraph) for c in chunk_document(doc)] == [
        (("A",), 1),
        (("B",), 1),
        (("A",), 2),
    ]


def test_markdown_document_chunks() -> None:
    source = "# Guide\n\nIntro text.\n\n## Dosage\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.\n"
    doc = parse_markdown(source.encode(), "guide.md")
    chunks = chunk_document(doc)
    assert _texts(doc, chunks) == ["Intro text.", "| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter."]
    assert [c.section for c in chunks] == [("Guide",), ("Guide", "Dosage")]


def test_make_label() -> None:
    assert make_label("Title", ("Section", "Sub"), 3) == "Title › Section › Sub › ¶3"
    assert make_label("Title", ("Title", "Dosage"), 1) == "Title › Dosage › ¶1"
    assert make_label("Title", (), 2) == "Title › ¶2"
    assert make_label("", ("S",), 1) == "S › ¶1"


# Property tests ---------------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "dose", "mg", "cell", "x1", "e.g"])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=12))
    end = draw(st.sampled_from([".", "!", "?", ";", ""]))
    return " ".join(words).capitalize() + end


KINDS: list[BlockKind] = ["heading", "paragraph", "paragraph", "list", "table", "code"]


@st.composite
def blocks(draw: st.DrawFn) -> tuple[BlockKind, str]:
    kind = draw(st.sampled_from(KINDS))
    if kind == "heading":
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
    """Places a chunk may start and end: block edges and sentence edges (sentencex)."""

    starts: frozenset[int]
    ends: frozenset[int]
    sentences: frozenset[tuple[int, int]]


def _oracle(doc: ParsedDocument) -> Oracle:
    starts: set[int] = set()
    ends: set[int] = set()
    spans: set[tuple[int, int]] = set()
    for block in doc.blocks:
        starts.add(block.start)
        ends.add(block.end)
        text = doc.text[block.start : block.end]
        for boundary in sentencex.get_sentence_boundaries("en", text):
            piece = text[boundary["start_index"] : boundary["end_index"]]
            if piece.strip():
                first = block.start + boundary["start_index"] + len(piece) - len(piece.lstrip())
                last = block.start + boundary["end_index"] - (len(piece) - len(piece.rstrip()))
                starts.add(first)
                ends.add(last)
                spans.add((first, last))
    return Oracle(frozenset(starts), frozenset(ends), frozenset(spans))


@settings(max_examples=150, deadline=None)
@given(documents(), st.integers(0, 120), st.integers(20, 400))
def test_chunk_properties(doc: ParsedDocument, min_chars: int, max_chars: int) -> None:
    chunks = chunk_document(doc, min_chars=min_chars, max_chars=max_chars)
    oracle = _oracle(doc)
    previous_end = 0
    numbers: dict[tuple[str, ...], int] = {}
    for chunk in chunks:
        text = doc.text[chunk.start : chunk.end]
        # non-empty, trimmed, ordered, not overlapping
        assert text and text == text.strip()
        assert previous_end <= chunk.start
        previous_end = chunk.end
        # starts and ends only at block or sentence edges: no sentence is ever cut
        assert chunk.start in oracle.starts
        assert chunk.end in oracle.ends
        # inside one section, never across (or on) a heading
        overlapping = [b for b in doc.blocks if b.start < chunk.end and chunk.start < b.end]
        assert overlapping
        assert all(b.kind != "heading" for b in overlapping)
        assert {b.section for b in overlapping} == {chunk.section}
        # tables and code are never cut
        for block in overlapping:
            if block.kind in ("table", "code"):
                assert chunk.start <= block.start and block.end <= chunk.end
        # over max_chars only when it is one table/code block or one sentence
        if len(text) > max_chars:
            whole = [(b.start, b.end) for b in overlapping if b.kind in ("table", "code")]
            assert (chunk.start, chunk.end) in set(whole) | oracle.sentences
        # paragraph numbers count from 1 within each section
        numbers[chunk.section] = numbers.get(chunk.section, 0) + 1
        assert chunk.paragraph == numbers[chunk.section]
    # every non-whitespace character of every non-heading block is in a chunk
    covered = [False] * len(doc.text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    for block in doc.blocks:
        if block.kind != "heading":
            for index in range(block.start, block.end):
                assert covered[index] or doc.text[index].isspace()


@settings(max_examples=60, deadline=None)
@given(documents())
def test_short_neighbours_are_merged(doc: ParsedDocument) -> None:
    """Two neighbouring chunks of one section never both fit in one short chunk."""
    min_chars, max_chars = 80, 300
    chunks = chunk_document(doc, min_chars=min_chars, max_chars=max_chars)
    for first, second in pairwise(chunks):
        between = doc.text[first.end : second.start]
        same_run = first.section == second.section and not any(
            b.kind == "heading" and first.end <= b.start < second.start for b in doc.blocks
        )
        if same_run and not between.strip():
            assert first.end - first.start >= min_chars or second.end - first.start > max_chars
