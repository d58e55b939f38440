"""Tests of plain-text ingest: canonical text, paragraph blocks, title."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quoteproof.errors import IngestError
from quoteproof.ingest.plain.text import (
    decode_plain_text,
    heading_level,
    paragraph_spans,
    parse_text,
)
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


def test_an_issuer_and_the_title_in_capitals_are_the_title_together() -> None:
    """A newcomer's bylaw was titled "BOROUGH OF EASTMERE", its issuer, over "DOG
    CONTROL AND PUBLIC SPACES BYLAW 2024": two such lines are the title together, in
    either order; a title over a sentence stays the title."""
    text = "BOROUGH OF EASTMERE\nDOG CONTROL AND PUBLIC SPACES BYLAW 2024\n\nMade in 2024."
    title = "BOROUGH OF EASTMERE — DOG CONTROL AND PUBLIC SPACES BYLAW 2024"
    assert parse_text(text.encode(), "bylaw.txt").title == title
    under = "PARKING BYLAW 2024\nISSUED BY THE BOROUGH COUNCIL\n\nMade in 2024."
    assert parse_text(under.encode(), "parking.txt").title.startswith("PARKING BYLAW 2024")
    plain = "SIDE EFFECTS\nMost people have none.\n"
    assert parse_text(plain.encode(), "leaflet.txt").title == "SIDE EFFECTS"


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


LEAFLET = (
    "PACKAGE LEAFLET: INFORMATION FOR THE USER\n\n"
    "Paracetamol 500 mg Tablets\nParacetamol 250 mg/5 ml Oral Suspension\n\n"
    "1. WHAT PARACETAMOL IS AND WHAT IT IS USED FOR\n\n"
    "Paracetamol is a pain reliever.\n\n"
    "3. HOW TO TAKE PARACETAMOL\n\n"
    "3.1 Tablets for Adults\n\n"
    "Take 1 or 2 tablets every 4 to 6 hours.\n\n"
    "OVERDOSE\n\n"
    "Talk to a doctor at once.\n\n"
    "1. Wash your hands\n\n"
    "Store below 25 degrees C.\n"
)


def sections_of(text: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each block of `text` parsed as a `.txt` file: its kind and section path."""
    doc = parse_text(text.encode(), "doc.txt")
    return {doc.text[b.start : b.end]: (b.kind, b.section) for b in doc.blocks}


def test_a_plain_text_leaflet_s_headings_set_the_section_path() -> None:
    # a newcomer's leaflet was labelled "PACKAGE LEAFLET: ... (1/2)" only: its numbered
    # headings in capitals never named the part of the leaflet a dose came from
    doc = parse_text(LEAFLET.encode(), "leaflet.txt")
    sections = sections_of(LEAFLET)
    how = "3. HOW TO TAKE PARACETAMOL"
    assert sections["Paracetamol is a pain reliever."] == (
        "paragraph",
        ("1. WHAT PARACETAMOL IS AND WHAT IT IS USED FOR",),
    )
    assert sections[how] == ("heading", (how,))
    assert sections["Take 1 or 2 tablets every 4 to 6 hours."] == (
        "paragraph",
        (how, "3.1 Tablets for Adults"),
    )
    # a heading in capitals goes under the numbered ones open above it
    under = (how, "3.1 Tablets for Adults", "OVERDOSE")
    assert sections["Talk to a doctor at once."] == ("paragraph", under)
    # a numbered line in sentence case is a list item, no heading
    assert sections["1. Wash your hands"] == ("paragraph", under)
    assert doc.title == "PACKAGE LEAFLET: INFORMATION FOR THE USER"


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("3. HOW TO TAKE PARACETAMOL", 1),
        ("2.1 Dosage and Administration", 2),
        ("SIDE EFFECTS", 0),
        ("1. Wash your hands", None),
        ("Paracetamol 500 mg Tablets", None),
        ("NOTE: READ THIS.", None),
        ("IMPORTANT:", None),
        ("FIRST LINE\nSECOND LINE", None),
    ],
)
def test_what_reads_as_a_plain_text_heading(line: str, level: int | None) -> None:
    assert heading_level(line) == level


CLUB = (
    "HILLTOP SCHOOL HOLIDAY CLUB\n\n"
    "1. Who can come\n\n"
    "The club is open to pupils aged 5 to 11.\n\n"
    "2. Times and fees\n\n"
    "A day costs £20. The club opens at 8:00 am.\n\n"
    "3. What to bring\n\n"
    "1. A packed lunch\n\n"
    "2. A water bottle\n\n"
    "4. Food and allergies\n\n"
    "Tell the club leader about any allergy in writing.\n"
)


def test_numbered_lines_in_sentence_case_over_their_text_are_headings_in_sequence() -> None:
    # a newcomer's club policy: "5. Food and allergies" was no heading, so its text was
    # labelled with the heading before it, "4. Collection"
    sections = sections_of(CLUB)
    assert sections["The club is open to pupils aged 5 to 11."] == (
        "paragraph",
        ("1. Who can come",),
    )
    assert sections["A day costs £20. The club opens at 8:00 am."][1] == ("2. Times and fees",)
    assert sections["Tell the club leader about any allergy in writing."] == (
        "paragraph",
        ("4. Food and allergies",),
    )
    # a list of numbered items, one over the other, stays a list
    assert sections["1. A packed lunch"] == ("paragraph", ("3. What to bring",))
    assert sections["2. A water bottle"] == ("paragraph", ("3. What to bring",))


def test_a_list_item_numbered_next_after_the_heading_stays_a_list_item() -> None:
    # a review: "2. Their brothers and sisters" read as section 2, and the real
    # "2. Times and fees" then stayed a paragraph
    text = (
        "1. Who can come\n\nThe club is open to:\n\n1. Pupils of the school\n\n"
        "2. Their brothers and sisters\n\nPlaces are limited.\n\n2. Times and fees\n\n"
        "A day costs £20.\n\n3 eggs\n\n3. lower case start\n\nText.\n"
    )
    sections = sections_of(text)
    assert sections["2. Their brothers and sisters"] == ("paragraph", ("1. Who can come",))
    assert sections["A day costs £20."] == ("paragraph", ("2. Times and fees",))
    assert sections["Text."] == ("paragraph", ("2. Times and fees",))


def test_a_banner_s_rule_is_no_title_and_an_underlined_line_is_a_heading() -> None:
    """A newcomer's trial summary opened with a line of "=" (its title, and every
    chunk's label) and underlined its numbered headings with "-", which made no
    section at all."""
    text = (
        "=" * 60 + "\n   CLINICAL TRIAL PROTOCOL SUMMARY\n" + "=" * 60 + "\n\n"
        "1. STUDY DESIGN\n---------------\n\n1.1 The study enrols 240 participants.\n\n"
        "Eligibility\n===========\n\nParticipants must be aged 18 to 75 years.\n"
    )
    document = parse_text(text.encode(), "trial.txt")
    assert document.title == "CLINICAL TRIAL PROTOCOL SUMMARY"
    sections = {text[b.start : b.end].split("\n")[0]: b.section for b in document.blocks}
    assert sections["1.1 The study enrols 240 participants."] == ("1. STUDY DESIGN",)
    assert sections["Participants must be aged 18 to 75 years."] == ("Eligibility",)
    assert [b.kind for b in document.blocks].count("heading") == 2


def test_underlines_nest_by_their_character_and_a_sentence_over_a_rule_is_no_heading() -> None:
    text = (
        "DOSAGE\n======\n\nTake two.\n\nOverview\n--------\n\nMore text.\n\n"
        "STORAGE\n=======\n\nKeep cool.\n\nTake one daily.\n***\n\n+-----+\n| a |\n"
    )
    document = parse_text(text.encode(), "leaflet.txt")
    sections = {text[b.start : b.end]: b.section for b in document.blocks}
    assert sections["More text."] == ("DOSAGE", "Overview")
    assert sections["Keep cool."] == ("STORAGE",)
    assert sections["Take one daily.\n***"] == ("STORAGE",)
    assert [b.kind for b in document.blocks].count("heading") == 3
