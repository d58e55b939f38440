"""Search texts over adjacent chunks: what is joined, what is not, and the offset map."""

from __future__ import annotations

from dataclasses import replace

from helpers.lookups import make_chunks, overlapping_windows
from quoteproof.quoting.passages import JOIN, Passage, around

BREAK = "\n\nPage 2 of 9\n\n"
PARTS = ["First part of the text.", "Second part here.", "Third and last part."]
TEXT = BREAK.join(PARTS)
CHUNKS = make_chunks(paragraphs=PARTS, separator=BREAK)


def test_adjacent_chunks_join_without_what_lies_between() -> None:
    passage = Passage.join([CHUNKS[1], CHUNKS[0]])
    assert passage is not None and passage.text == PARTS[0] + JOIN + PARTS[1]
    start = passage.text.index("text.")
    end = passage.text.index("here") + len("here")
    doc_start, doc_end = passage.document_span(start, end)
    assert TEXT[doc_start:doc_end] == f"text.{BREAK}Second part here"
    assert passage.chunk_at(doc_start) == CHUNKS[0]
    assert passage.agrees_with(TEXT, start, end)


def test_overlapping_windows_share_their_text_once() -> None:
    text = " ".join(PARTS)
    passage = Passage.join(overlapping_windows(text, "here.", "Second"))
    assert passage is not None and passage.text == text
    assert passage.document_span(0, len(text)) == (0, len(text))


def test_non_adjacent_chunks_and_other_documents_are_not_joined() -> None:
    other = make_chunks(doc_id="other", paragraphs=PARTS, separator=BREAK)
    assert Passage.join([CHUNKS[0], CHUNKS[2]]) is None
    assert Passage.join([CHUNKS[0], other[1]]) is None
    assert Passage.join([CHUNKS[0], replace(CHUNKS[1], doc_version=2)]) is None
    assert around(CHUNKS[0], [CHUNKS[2], other[1]]) is None
    joined = around(CHUNKS[1], [CHUNKS[0], CHUNKS[2], other[0], other[2]])
    assert joined is not None and joined.chunks == tuple(CHUNKS)


def test_a_chunk_that_differs_from_its_document_is_caught() -> None:
    passage = Passage.join(CHUNKS[:2])
    assert passage is not None
    assert not passage.agrees_with(TEXT.replace("Second", "Sekond"), 0, len(passage.text))
