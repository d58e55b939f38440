"""Tests of `quoteproof.locations`: quote rectangles read on demand from PDF bytes.

The oracle is PDFium itself: the text it finds inside each returned rectangle
(`get_text_bounded`, slightly enlarged) must hold the quote's words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pytest

from helpers import pdfs as build
from quoteproof.ingest.pdf.parse import parse_pdf
from quoteproof.locations import PdfBoxReader, char_ranges, quote_boxes
from quoteproof.model import Box, ParsedDocument

VEKLURY = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "fda-remdesivir-label"
    / "veklury_remdesivir_label_oct2020.pdf"
)
HEADING_5_1 = "5.1 Hypersensitivity Including Infusion-related and Anaphylactic Reactions"
SENTENCE_5_1 = (
    "Hypersensitivity reactions, including infusion-related and anaphylactic reactions, "
    "have been observed during and following administration of VEKLURY."
)


def span(document: ParsedDocument, needle: str, after: int = 0) -> tuple[int, int]:
    start = document.text.index(needle, after)
    return start, start + len(needle)


def text_in(raw: bytes, box: Box, margin: float = 1.0) -> str:
    """What PDFium reads inside `box` enlarged by `margin` points."""
    with pdfium.PdfDocument(raw) as pdf:
        page = pdf[box.page - 1]
        textpage = page.get_textpage()
        try:
            return str(
                textpage.get_text_bounded(
                    box.x0 - margin, box.y0 - margin, box.x1 + margin, box.y1 + margin
                )
            )
        finally:
            textpage.close()
            page.close()


def mediabox(raw: bytes, page_number: int) -> tuple[float, float, float, float]:
    with pdfium.PdfDocument(raw) as pdf:
        page = pdf[page_number - 1]
        try:
            left, bottom, right, top = page.get_mediabox()
            return (left, bottom, right, top)
        finally:
            page.close()


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


def assert_covers(raw: bytes, boxes: tuple[Box, ...], quote: str) -> None:
    """Every box lies on its page and the boxes' text holds all the quote's words."""
    seen = ""
    for box in boxes:
        left, bottom, right, top = mediabox(raw, box.page)
        assert left <= box.x0 < box.x1 <= right
        assert bottom <= box.y0 < box.y1 <= top
        seen += " " + text_in(raw, box)
    assert words(quote) <= words(seen)


@pytest.fixture(scope="module")
def veklury() -> tuple[bytes, ParsedDocument]:
    if not VEKLURY.exists():
        pytest.skip("shared PDFs not present")
    raw = VEKLURY.read_bytes()
    return raw, parse_pdf(raw, str(VEKLURY))


@pytest.fixture(scope="module")
def report() -> tuple[bytes, ParsedDocument]:
    raw = build.report_pdf()
    return raw, parse_pdf(raw, "report.pdf")


def test_one_line_heading_gives_one_box_on_its_page(veklury: tuple[bytes, ParsedDocument]) -> None:
    raw, document = veklury
    assert document.layout is not None
    page_8 = document.layout.page_starts[7]
    start, end = span(document, HEADING_5_1, page_8)
    boxes = quote_boxes(raw, document.layout, start, end)
    assert len(boxes) == 1
    assert boxes[0].page == 8
    assert_covers(raw, boxes, HEADING_5_1)


def test_two_line_sentence_gives_one_box_per_line(veklury: tuple[bytes, ParsedDocument]) -> None:
    raw, document = veklury
    assert document.layout is not None
    start, end = span(document, SENTENCE_5_1)
    boxes = quote_boxes(raw, document.layout, start, end)
    assert [box.page for box in boxes] == [8, 8]
    first, second = boxes
    assert (first.y0 + first.y1) / 2 - (second.y0 + second.y1) / 2 > 10  # one line lower
    assert_covers(raw, boxes, SENTENCE_5_1)
    assert "during and following administration" in text_in(raw, second)
    assert "during" not in text_in(raw, first, margin=0.0)


def test_boxes_follow_the_drawn_lines_of_a_built_pdf(
    report: tuple[bytes, ParsedDocument],
) -> None:
    raw, document = report
    assert document.layout is not None
    quote = " ".join(build.TWO_LINES)
    start, end = span(document, quote)
    boxes = quote_boxes(raw, document.layout, start, end)
    assert len(boxes) == 2
    for box, baseline in zip(boxes, (640, 626), strict=True):
        assert box.page == 1
        assert box.x0 == pytest.approx(72, abs=1)
        assert box.y0 < baseline < box.y1
    assert_covers(raw, boxes, quote)


def test_a_word_joined_over_a_dropped_hyphen_has_a_box_on_each_line(
    report: tuple[bytes, ParsedDocument],
) -> None:
    raw, document = report
    assert document.layout is not None
    start, end = span(document, "infection and follow")
    boxes = quote_boxes(raw, document.layout, start, end)
    assert len(boxes) == 2
    assert "infec" in words(text_in(raw, boxes[0], margin=0.0))
    assert text_in(raw, boxes[1], margin=0.0).strip().startswith("tion and follow")


def test_a_quote_over_a_page_break_has_boxes_on_both_pages(
    report: tuple[bytes, ParsedDocument],
) -> None:
    raw, document = report
    assert document.layout is not None
    start = document.text.index("Cleaning hands prevents")
    end = document.text.index(build.BACKGROUND) + len(build.BACKGROUND)
    boxes = quote_boxes(raw, document.layout, start, end)
    assert boxes[0].page == 1
    assert boxes[-1].page == 2
    assert [box.page for box in boxes] == sorted(box.page for box in boxes)
    assert build.BACKGROUND in text_in(raw, boxes[-1])


def test_generated_characters_have_no_box(report: tuple[bytes, ParsedDocument]) -> None:
    raw, document = report
    assert document.layout is not None
    first, second = document.blocks[0], document.blocks[1]
    assert document.text[first.end : second.start] == "\n\n"
    assert quote_boxes(raw, document.layout, first.end, second.start) == ()
    assert quote_boxes(raw, document.layout, 5, 5) == ()
    assert list(char_ranges(document.layout, first.end, second.start)) == []


def test_reader_answers_several_quotes_like_quote_boxes(
    veklury: tuple[bytes, ParsedDocument],
) -> None:
    raw, document = veklury
    assert document.layout is not None
    spans = [span(document, SENTENCE_5_1), span(document, "Reference ID: 4690158")]
    with PdfBoxReader(raw) as reader:
        found = [reader.boxes(document.layout, start, end) for start, end in spans]
        again = [reader.boxes(document.layout, start, end) for start, end in spans]
    assert found == again
    assert found == [quote_boxes(raw, document.layout, start, end) for start, end in spans]


def test_bytes_pdfium_cannot_open_are_a_value_error(report: tuple[bytes, ParsedDocument]) -> None:
    _, document = report
    assert document.layout is not None
    with pytest.raises(ValueError, match="cannot open PDF"):
        quote_boxes(b"%PDF-1.4 not really", document.layout, 0, 10)
