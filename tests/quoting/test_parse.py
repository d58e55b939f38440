"""Tests of quoting.parse: the tolerant parser of the model's output protocol."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quoteproof.quoting.parse import (
    UNIT_DIGITS,
    MalformedItem,
    ParsedOutput,
    ProseItem,
    QuoteItem,
    paragraph_ids,
    parse_output,
    with_source_refs,
)


def items(raw: str) -> tuple[ProseItem | QuoteItem | MalformedItem, ...]:
    return parse_output(raw).items


def test_protocol_forms() -> None:
    raw = (
        'Intro [S1]. <quote ref="S1"/> and then\n'
        '<quote ref="S2">some words</quote> more [S1, S2][S3] end.'
    )
    assert parse_output(raw) == ParsedOutput(
        (
            ProseItem("Intro.", ("S1",)),
            QuoteItem("S1", None, '<quote ref="S1"/>'),
            ProseItem("and then", ()),
            QuoteItem("S2", "some words", '<quote ref="S2">some words</quote>'),
            ProseItem("more end.", ("S1", "S2", "S3")),
        ),
        False,
    )


@pytest.mark.parametrize(
    "raw",
    [
        '<quote ref="S1">w</quote>',
        "<quote ref='S1'>w</quote>",
        "<quote ref=S1>w</quote>",
        '<quote ref = "S1" >w</quote>',
        '<QUOTE REF="S1">w</Quote>',
        "<quote ref=“S1”>w</quote>",
        "<quote ref=‘S1’>w</quote>",
        "<quote ref=«S1»>w</quote>",
        '<quote ref="[S1]">w</quote>',
        '< quote  ref="S1" >w< / quote >',
        "<quote><title>S1</title>w</quote>",
        "<quote>\n  <TITLE> S1 </TITLE>\n  w\n</quote>",
        "<quote S1>w</quote>",
    ],
)
def test_tolerated_quote_spellings(raw: str) -> None:
    (item,) = items(raw)
    assert item == QuoteItem("S1", "w", raw)


@pytest.mark.parametrize(
    "raw",
    ['<quote ref="S1"/>', "<quote ref=S1/>", "<quote ref='S1' />", '<quote ref="S1"></quote>'],
)
def test_whole_chunk_quotes(raw: str) -> None:
    assert items(raw) == (QuoteItem("S1", None, raw),)


def test_quote_without_ref_searches_everywhere() -> None:
    assert items("<quote>the words</quote>") == (
        QuoteItem(None, "the words", "<quote>the words</quote>"),
    )
    assert items("<quote/>") == (
        MalformedItem("<quote/>", "quote with neither a ref nor any words"),
    )


def test_unclosed_quote_runs_to_the_next_quote_or_the_end() -> None:
    raw = '<quote ref="S1">first words <quote ref="S2">second</quote> tail'
    assert items(raw) == (
        QuoteItem("S1", "first words", '<quote ref="S1">first words '),
        QuoteItem("S2", "second", '<quote ref="S2">second</quote>'),
        ProseItem("tail", ()),
    )
    assert items('Prose. <quote ref="S3">to the end\n') == (
        ProseItem("Prose.", ()),
        QuoteItem("S3", "to the end", '<quote ref="S3">to the end\n'),
    )


def test_nested_quotes_are_flattened() -> None:
    raw = '<quote ref="A">foo <quote ref="B">bar</quote> baz <quote ref="C"/>qux</quote> after'
    assert items(raw) == (
        QuoteItem("A", "foo bar baz qux", raw[: -len(" after")]),
        ProseItem("after", ()),
    )


def test_broken_tags_are_malformed() -> None:
    assert items('<quote ref="S1" words words</quote> after') == (
        MalformedItem('<quote ref="S1" words words</quote>', "quote tag without a closing '>'"),
        ProseItem("after", ()),
    )
    assert items('text <quote ref="S1') == (
        ProseItem("text", ()),
        MalformedItem('<quote ref="S1', "quote tag without a closing '>'"),
    )


@pytest.mark.parametrize(
    "raw",
    [
        "<no-answer/>",
        "<no-answer>",
        "<no_answer/>",
        "<NO-ANSWER />",
        " <no answer> ",
        "<noanswer/>",
    ],
)
def test_no_answer(raw: str) -> None:
    assert parse_output(raw) == ParsedOutput((), True)


def test_no_answer_with_a_reason() -> None:
    assert parse_output("<no-answer>The sources do not say.</no-answer>") == ParsedOutput(
        (ProseItem("The sources do not say.", ()),), True
    )


def test_stray_closing_tags_are_dropped() -> None:
    assert items("a </quote> b") == (ProseItem("a  b", ()),)


def test_citations() -> None:
    assert items("One [S1]; two [S2; S3] and [doc-1:p4]. [1]") == (
        ProseItem("One; two and.", ("S1", "S2", "S3", "doc-1:p4", "1")),
    )
    # Brackets that do not hold refs stay: [sic], Markdown links, prose in brackets.
    text = "He said [sic] it, see [the docs](http://x/1) and [S1, p. 3] or [a b]."
    assert items(text) == (ProseItem(text, ()),)
    # A prose item of citations alone keeps them.
    assert items('<quote ref="S1"/> [S1]') == (
        QuoteItem("S1", None, '<quote ref="S1"/>'),
        ProseItem("", ("S1",)),
    )


def test_prose_keeps_other_markup_literally() -> None:
    raw = "<b>bold</b> > not a quote\n> block quote <source ref='S1'>x</source> **md**"
    assert items(raw) == (ProseItem(raw, ()),)


def test_empty_and_whitespace() -> None:
    assert parse_output("") == ParsedOutput((), False)
    assert parse_output(" \n\t ") == ParsedOutput((), False)


# -- properties ---------------------------------------------------------------------

TAG_SOUP = st.lists(
    st.sampled_from(
        [
            "<quote",
            "<quote ",
            "<quote>",
            "</quote>",
            "<QUOTE ref=S1>",
            '<quote ref="S2"/>',
            "<quote ref='S3'>",
            "<quote ref=“S4”>",
            "ref=",
            '"',
            "'",
            "“",
            "/>",
            ">",
            "<",
            "/",
            "<title>",
            "</title>",
            "S5",
            "<no-answer/>",
            "<no_answer>",
            "</no-answer>",
            "[S1]",
            "[S1, S2]",
            "[sic]",
            "[",
            "]",
            "words",
            " ",
            "\n",
            "&lt;",
            "…",
        ]
    ),
    max_size=30,
).map("".join)

TAG = re.compile(r"<\s*/?\s*(?:quote|no[-_ ]?answer)\b[^<>]*>", re.IGNORECASE)


def check_invariants(raw: str, parsed: ParsedOutput) -> None:
    assert isinstance(parsed, ParsedOutput)
    pos = 0
    for item in parsed.items:
        if isinstance(item, ProseItem):
            assert item.text == item.text.strip()
            assert item.text or item.citations
            assert TAG.search(item.text) is None
        else:
            assert isinstance(item, QuoteItem | MalformedItem)
            found = raw.find(item.raw, pos)
            assert found >= 0  # raw text, in order
            pos = found + len(item.raw)
            if isinstance(item, QuoteItem):
                assert item.ref is not None or item.claimed is not None
                assert item.claimed is None or (item.claimed and TAG.search(item.claimed) is None)
    assert parsed.no_answer == bool(re.search(r"<\s*/?\s*no[-_ ]?answer\b[^<>]*>", raw, re.I))


@settings(max_examples=400)
@given(TAG_SOUP)
def test_tag_soup_never_raises(raw: str) -> None:
    check_invariants(raw, parse_output(raw))


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_random_text_never_raises(raw: str) -> None:
    check_invariants(raw, parse_output(raw))


def test_long_input_is_fast() -> None:
    raw = "<quote " + " " * 50_000 + "[S1 " * 10_000 + "<quote ref=S1>" * 2_000
    parsed = parse_output(raw)
    assert parsed.items


# -- the pointing form ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '<quote ref="S1" unit="3"/>',
        "<quote ref='S1' unit='3'/>",
        "<quote ref=S1 unit=3/>",
        '<quote ref = "S1"  unit = " 3 " />',
        '<QUOTE REF="S1" UNIT="3"/>',
        "<quote ref=“S1” unit=“3”/>",
        '<quote ref="S1" unit="#3"/>',
        '<quote ref="S1" #3/>',
        '<quote ref="S1#3"/>',
        "<quote ref=S1#3 />",
        "<quote S1 #3/>",
        '<quote ref="S1" n="3"/>',
        '<quote ref="S1" sentence="3"/>',
        '<quote unit="3" ref="S1"/>',
        '<quote ref="S1" unit="03"/>',
    ],
)
def test_pointer_spellings(raw: str) -> None:
    assert items(raw) == (QuoteItem("S1", None, raw, 3),)


def test_a_pointer_needs_no_body_and_keeps_words_written_inside() -> None:
    # An unclosed pointer is complete: what follows is prose, not its words.
    assert items('<quote ref="S1" unit="2"> and more [S1]') == (
        QuoteItem("S1", None, '<quote ref="S1" unit="2">', 2),
        ProseItem("and more", ("S1",)),
    )
    raw = '<quote ref="S1" unit="2">some words</quote>'
    assert items(raw) == (QuoteItem("S1", "some words", raw, 2),)
    # Two pointers, the first unclosed: the closing tag belongs to the second.
    assert items("<quote ref=A unit=1> <quote ref=B unit=2></quote>") == (
        QuoteItem("A", None, "<quote ref=A unit=1>", 1),
        QuoteItem("B", None, "<quote ref=B unit=2></quote>", 2),
    )


def test_older_forms_have_no_unit() -> None:
    assert items('<quote ref="S1"/>') == (QuoteItem("S1", None, '<quote ref="S1"/>', None),)
    assert items('<quote ref="S1">w</quote>')[0] == QuoteItem(
        "S1", "w", '<quote ref="S1">w</quote>'
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('<quote ref="S1" unit="three"/>', "unit 'three' is not a unit number"),
        ('<quote ref="S1" unit=""/>', "unit '' is not a unit number"),
        ('<quote ref="S1" unit="-1"/>', "unit '-1' is not a unit number"),
        ('<quote ref="S1" unit="2.5"/>', "unit '2.5' is not a unit number"),
        ('<quote ref="S1" unit="1234567"/>', "unit '1234567' is not a unit number"),
        ('<quote ref="S1#x"/>', "unit 'x' is not a unit number"),
        ('<quote unit="3"/>', "quote with neither a ref nor any words"),
    ],
)
def test_unreadable_pointers_are_malformed(raw: str, reason: str) -> None:
    assert items(raw) == (MalformedItem(raw, reason),)


def test_a_huge_unit_number_is_never_converted() -> None:
    raw = f'<quote ref="S1" unit="{"9" * 5000}"/>'
    (item,) = items(raw)
    assert isinstance(item, MalformedItem) and len(item.reason) < 60


def test_an_html_entity_is_not_a_unit() -> None:
    raw = "<quote ref=&#39;S1&#39;>w</quote>"
    (item,) = items(raw)
    assert isinstance(item, QuoteItem) and item.unit is None


POINTER_SOUP = st.lists(
    st.sampled_from(
        [
            '<quote ref="S1" unit="1"/>',
            "<quote ref=S2 unit=",
            "unit=",
            "unit='",
            "#",
            "&#",
            "#12",
            "999999999",
            "3",
            "-",
            '"',
            "/>",
            ">",
            "<quote",
            "</quote>",
            "<script>alert(1)</script>",
            '<a href="x#3">',
            "<no-answer/>",
            "[S1]",
            "words",
            " ",
        ]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=400)
@given(POINTER_SOUP)
def test_pointer_soup_never_raises(raw: str) -> None:
    parsed = parse_output(raw)
    check_invariants(raw, parsed)
    for item in parsed.items:
        if isinstance(item, QuoteItem) and item.unit is not None:
            assert 0 <= item.unit < 10**UNIT_DIGITS
            assert str(item.unit) in item.raw or f"0{item.unit}" in item.raw


def test_paragraph_ids_in_markers_and_quote_tags_become_refs() -> None:
    ids = paragraph_ids(["k3m9qa.4", "z81b.2"])
    assert ids == {1: "k3m9qa.4", 2: "z81b.2"}
    for raw, named in [
        ("Dose [PID-1]. Rash [pid-2, TID-1][PID-3].",
         "Dose [k3m9qa.4]. Rash [z81b.2, TID-1][PID-3]."),
        ('<quote ref="PID-2" unit="3"/>', '<quote ref="z81b.2" unit="3"/>'),
        ("<quote ref=PID-1#2/> <QUOTE src='pid-2'>w</QUOTE>",
         "<quote ref=k3m9qa.4#2/> <QUOTE src='z81b.2'>w</QUOTE>"),
        ("<quote><title>PID-1</title>words</quote>",
         "<quote><title>k3m9qa.4</title>words</quote>"),
        # prose, a bracket that is not refs alone, and look-alike tokens stay
        ("PID-1 says [PID-1 is wrong] [xPID-1] [PID-1.5]",
         "PID-1 says [PID-1 is wrong] [xPID-1] [PID-1.5]"),
    ]:  # fmt: skip
        assert with_source_refs(raw, ids) == named
    assert with_source_refs("[PID-1]", {}) == "[PID-1]"
    parsed = parse_output(with_source_refs('Dose [PID-2]. <quote ref="PID-1" unit="1"/>', ids))
    assert parsed.items == (
        ProseItem("Dose.", ("z81b.2",)),
        QuoteItem("k3m9qa.4", None, '<quote ref="k3m9qa.4" unit="1"/>', 1),
    )
