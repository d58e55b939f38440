"""Tests of plain-text ingest: canonical text, paragraph blocks, title."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quoteproof.errors import IngestError
from quoteproof.ingest.plain.text import decode_plain_text, paragraph_spans, parse_text
from quoteproof.text.spans import trim_span


def test_crlf_and_lone_cr_become_lf() -> None:
    raw = b"one\r\ntwo\rthree\n\r\nfour\r\r"
    assert decode_plain_text(raw, "a.txt") == "one\ntwo\nthree\n\nfour\n\n"


def test_nothing_else_changes() -> None:
    text = "\ufeffTabs\there  and  spaces \u00a0 caf\u00e9 \u201cquoted\u201d\n\n\n  indented\n"
    assert decode_plain_text(text.encode("utf-8"), "a.txt") == text


def test_invalid_utf8_names_file_and_offset() -> None:
    with pytest.raises(IngestError) as info:
        decode_plain_text(b"abc\xffdef", "notes/bad.txt")
    assert info.value.path == "notes/bad.txt"
    assert str(info.value).startswith(
        "notes/bad.txt: not valid UTF-8 (byte offset 3: 0xFF, line 1); "
    )


def test_invalid_utf8_says_where_and_what_a_latin1_file_may_be() -> None:
    latin1 = "Policy\ncaf\u00e9 na\u00efve\n".encode("latin-1")
    with pytest.raises(IngestError) as info:
        decode_plain_text(latin1, "policy.txt")
    assert info.value.cause == (
        "not valid UTF-8 (byte offset 10: 0xE9, line 2); it may be Latin-1 or "
        "Windows-1252 text: save it as UTF-8 and ingest it again"
    )
    with pytest.raises(IngestError) as info:
        decode_plain_text(b"ok\n\x81\x8d", "odd.txt")  # undefined in Windows-1252
    assert info.value.cause == (
        "not valid UTF-8 (byte offset 3: 0x81, line 2); save it as UTF-8 and ingest it again"
    )


def test_parse_text_paragraphs_and_offsets() -> None:
    raw = b"My Title\r\n\r\nFirst para\r\nstill first.\r\n \t \r\n\r\n  Second para.  \n\nThird."
    doc = parse_text(raw, "dir/notes.txt")
    assert doc.format == "text"
    assert doc.title == "My Title"
    assert doc.text == raw.decode().replace("\r\n", "\n")
    assert [doc.text[b.start : b.end] for b in doc.blocks] == [
        "My Title",
        "First para\nstill first.",
        "Second para.",
        "Third.",
    ]
    assert all(b.kind == "paragraph" and b.section == () for b in doc.blocks)


def test_title_falls_back_to_stem_when_first_line_is_long() -> None:
    doc = parse_text(("x" * 101 + "\n\nbody").encode(), "/data/long-line.txt")
    assert doc.title == "long-line"
    assert parse_text(("x" * 100).encode(), "a.txt").title == "x" * 100


def test_title_skips_blank_lines_and_bom() -> None:
    doc = parse_text("\ufeff\n\n  Heading here  \nmore".encode(), "a.txt")
    assert doc.title == "Heading here"
    assert doc.text.startswith("\ufeff")
    assert doc.text[doc.blocks[0].start : doc.blocks[0].end] == "Heading here  \nmore"


def test_empty_file_has_no_blocks() -> None:
    doc = parse_text(b"  \n\n \n", "empty.txt")
    assert doc.blocks == ()
    assert doc.title == "empty"


def test_trim_span() -> None:
    assert trim_span("  ab \n", 0, 6) == (2, 4)
    assert trim_span("   ", 0, 3) == (3, 3)
    assert trim_span("\ufeffx", 0, 2) == (1, 2)


@given(st.lists(st.text(alphabet="ab \t\n", max_size=12), max_size=8))
def test_paragraph_spans_cover_all_non_whitespace(parts: list[str]) -> None:
    text = "".join(parts)
    spans = paragraph_spans(text)
    covered: set[int] = set()
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end
        piece = text[start:end]
        assert piece == piece.strip()
        assert "\n\n" not in piece.replace(" ", "").replace("\t", "")
        covered.update(range(start, end))
        previous_end = end
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())
