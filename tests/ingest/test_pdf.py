"""Tests of PDF ingest: real PDFs (FDA label, CDC and WHO guides, pdfplumber's test
PDFs) and small PDFs built with reportlab (`helpers.pdfs`)."""

from __future__ import annotations

import itertools
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pdfplumber
import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pytest

from helpers import pdfs as build
from quoteproof.errors import IngestError
from quoteproof.ingest.pdf.page import PdfLine, upright
from quoteproof.ingest.pdf.parse import NO_TEXT_AT_ALL, meaningful_title, parse_pdf
from quoteproof.ingest.pdf.tables import find_grids, merge_edges
from quoteproof.ingest.pdf.text import WordSet, clean_line, keep_hyphen
from quoteproof.model import Block, ParsedDocument
from quoteproof.text.labels import make_label

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
VEKLURY = DATA / "fda-remdesivir-label" / "veklury_remdesivir_label_oct2020.pdf"
CDC = DATA / "pdfs-medical" / "cdc_outpatient_infection_prevention_guide_v2.3_2016.pdf"
WHO = DATA / "pdfs-medical" / "who_ipc_core_components_guidelines_2016.pdf"
STRUCTURE = DATA / "pdfs-structure-pdfplumber"
SHARED_PDFS = sorted(
    [VEKLURY, *(DATA / "pdfs-medical").glob("*.pdf"), *STRUCTURE.glob("*.pdf")],
    key=lambda path: path.name,
)

pytestmark = pytest.mark.skipif(not VEKLURY.exists(), reason="shared PDFs not present")

_PARSED: dict[Path, ParsedDocument] = {}


def parsed(path: Path) -> ParsedDocument:
    """Parse a shared PDF once per test session."""
    if path not in _PARSED:
        _PARSED[path] = parse_pdf(path.read_bytes(), str(path))
    return _PARSED[path]


def block_with(document: ParsedDocument, needle: str) -> Block:
    """The block whose text contains `needle` (which must occur once in the text)."""
    start = document.text.find(needle)
    assert start >= 0, needle
    assert document.text.find(needle, start + 1) < 0, f"{needle!r} occurs twice"
    (block,) = [b for b in document.blocks if b.start <= start < b.end]
    assert start + len(needle) <= block.end
    return block


def headings_starting(document: ParsedDocument, prefix: str) -> list[Block]:
    """The heading blocks whose text starts with `prefix`."""
    return [
        b
        for b in document.blocks
        if b.kind == "heading" and document.text[b.start : b.end].startswith(prefix)
    ]


def block_texts(document: ParsedDocument, kind: str) -> list[str]:
    return [document.text[b.start : b.end] for b in document.blocks if b.kind == kind]


# --- the shared real PDFs ------------------------------------------------------------


@pytest.mark.parametrize("path", SHARED_PDFS, ids=lambda path: path.name)
def test_every_shared_pdf_parses_into_consistent_blocks(path: Path) -> None:
    document = parsed(path)
    with pdfium.PdfDocument(path) as pdf:
        pages = len(pdf)
    assert document.format == "pdf"
    assert document.layout is not None
    assert len(document.layout.page_starts) == pages
    assert document.warnings == ()
    previous_end = 0
    for block in document.blocks:
        text = document.text[block.start : block.end]
        assert text and text == text.strip()
        assert block.start >= previous_end
        assert document.text[previous_end : block.start] in ("", "\n\n")
        assert len(document.layout.pages_of(block.start, block.end)) == 1
        previous_end = block.end
    assert previous_end == len(document.text)


@pytest.mark.parametrize("path", SHARED_PDFS, ids=lambda path: path.name)
def test_page_starts_follow_the_blocks_pages(path: Path) -> None:
    document = parsed(path)
    assert document.layout is not None
    starts = document.layout.page_starts
    assert list(starts) == sorted(starts)
    assert all(0 <= start <= len(document.text) for start in starts)
    for block in document.blocks:
        (page,) = document.layout.pages_of(block.start, block.end)
        assert starts[page - 1] <= block.start
        assert page == len(starts) or block.end <= starts[page]
    for run in document.layout.char_runs:
        (page,) = document.layout.pages_of(run.start, run.start + run.length)
        assert page == run.page


@pytest.mark.parametrize("path", [VEKLURY, CDC, WHO, STRUCTURE / "chelsea_pdta.pdf"], ids=str)
def test_char_runs_hold_pdfium_characters_exactly(path: Path) -> None:
    document = parsed(path)
    assert document.layout is not None
    runs = document.layout.char_runs
    assert [run.start for run in runs] == sorted(run.start for run in runs)
    assert all(a.start + a.length <= b.start for a, b in itertools.pairwise(runs))
    sample = random.Random(7).sample(runs, 60)
    with pdfium.PdfDocument(path) as pdf:
        for run in sample:
            page = pdf[run.page - 1]
            textpage = page.get_textpage()
            try:
                expected = textpage.get_text_range(run.char, run.length)
                assert document.text[run.start : run.start + run.length] == expected
                offset = random.Random(run.start).randrange(run.length)
                one = textpage.get_text_range(run.char + offset, 1)
                assert document.text[run.start + offset] == one
            finally:
                textpage.close()
                page.close()


def test_runs_cover_every_non_generated_character() -> None:
    document = parsed(VEKLURY)
    assert document.layout is not None
    covered = bytearray(len(document.text))
    for run in document.layout.char_runs:
        covered[run.start : run.start + run.length] = b"\x01" * run.length
    uncovered = {document.text[i] for i, flag in enumerate(covered) if not flag}
    assert uncovered <= {" ", "\n", "-", "|"}  # "|" from table cell separators


def test_veklury_sentence_of_section_5_1_is_on_page_8_under_its_heading() -> None:
    document = parsed(VEKLURY)
    assert document.layout is not None
    block = block_with(
        document,
        "Hypersensitivity reactions, including infusion-related and anaphylactic reactions, "
        "have been observed during and following administration of VEKLURY.",
    )
    assert block.kind == "paragraph"
    assert document.layout.pages_of(block.start, block.end) == (8,)
    assert block.section == (
        "5 WARNINGS AND PRECAUTIONS",
        "5.1 Hypersensitivity Including Infusion-related and Anaphylactic Reactions",
    )
    heading = document.blocks[document.blocks.index(block) - 1]
    assert heading.kind == "heading"
    assert heading.section == block.section
    assert document.text[heading.start : heading.end] == block.section[-1]
    # "HIGHLIGHTS OF PRESCRIBING INFORMATION" heads every FDA label: not a title
    assert document.title.startswith("VEKLURY® (remdesivir) for injection")


def test_veklury_two_line_heading_and_table_caption_nest_under_numbered_sections() -> None:
    document = parsed(VEKLURY)
    (heading,) = headings_starting(document, "5.3 Risk of Reduced Antiviral Activity")
    assert document.text[heading.start : heading.end].endswith(
        "Chloroquine Phosphate or Hydroxychloroquine Sulfate"
    )
    table = block_with(document, "Serious adverse reactions | 2 (0.4%)a | 3 (0.6%)")
    assert table.kind == "table"
    assert table.section[:2] == ("6 ADVERSE REACTIONS", "6.1 Clinical Trials Experience")
    assert table.section[-1].startswith("Table 5 Summary of Adverse Reaction Rates")


def test_veklury_table_12_caption_heads_its_table_and_not_the_text_after_it() -> None:
    document = parsed(VEKLURY)
    pk = ("12 CLINICAL PHARMACOLOGY", "12.3. Pharmacokinetics")
    (caption,) = headings_starting(document, "Table 12 Multiple Dose PK Parameters")
    table = document.blocks[document.blocks.index(caption) + 1]
    assert table.kind == "table" and table.section[:2] == pk
    assert table.section[-1].startswith("Table 12 Multiple Dose PK Parameters")
    after = block_with(document, "The pharmacokinetics of VEKLURY in pediatric patients")
    assert after.section == pk


def test_veklury_carton_panels_and_broken_sentences_are_no_headings() -> None:
    document = parsed(VEKLURY)
    assert document.layout is not None
    texts = [
        (document.text[b.start : b.end], document.layout.pages_of(b.start, b.end))
        for b in document.blocks
        if b.kind == "heading"
    ]
    carton = [text for text, pages in texts if pages and pages[0] >= 26]
    assert not [text for text in carton if text[:1].isdigit() or text.startswith("(")]
    assert not [text for text, _ in texts if text.split()[-1] in ("and", "or", "for")]
    assert document.title == "VEKLURY® (remdesivir) for injection, for intravenous use"


def test_veklury_running_footer_and_page_numbers_are_furniture() -> None:
    document = parsed(VEKLURY)
    furniture = block_texts(document, "furniture")
    assert furniture.count("Reference ID: 4690158") == 30
    assert "8" in furniture
    assert "Reference ID: 4690158" not in "".join(block_texts(document, "paragraph"))


def test_cdc_guide_sections_come_from_font_size_and_colour() -> None:
    document = parsed(CDC)
    assert document.layout is not None
    assert document.title.startswith("Guide to Infection Prevention For Outpatient Settings")
    assert document.language == "en"
    block = block_with(
        document,
        "Infection prevention must be made a priority in any setting where healthcare is "
        "delivered.",
    )
    assert document.layout.pages_of(block.start, block.end) == (6,)
    assert block.section == (
        "FUNDAMENTAL ELEMENTS NEEDED TO PREVENT TRANSMISSION OF INFECTIOUS AGENTS IN "
        "OUTPATIENT SETTINGS",
        "Dedicate Resources to Infection Prevention (Administrative Resources)",
    )
    cover = block_with(document, "GUIDE TO INFECTION PREVENTION")
    assert cover.kind == "heading"
    assert cover.section[0] not in block.section  # a cover title is no parent section


def test_cdc_cover_headings_repeating_the_title_stay_out_of_labels() -> None:
    document = parsed(CDC)
    assert document.layout is not None
    first = [b for b in document.blocks if document.layout.pages_of(b.start, b.end) == (1,)]
    assert any("GUIDE TO INFECTION PREVENTION" in part for b in first for part in b.section)
    for block in first:
        label = make_label(document.title, block.section, (1,))
        assert "GUIDE TO INFECTION PREVENTION" not in label
        assert "MINIMUM EXPECTATIONS FOR SAFE CARE" not in label


def test_cdc_running_footer_is_furniture() -> None:
    furniture = block_texts(parsed(CDC), "furniture")
    assert furniture.count("Version 2.3 - September 2016") >= 39
    assert sum(text.isdigit() for text in furniture) >= 40


def test_who_guideline_sections_follow_its_outline() -> None:
    document = parsed(WHO)
    assert document.layout is not None
    assert document.language == "en-US"
    assert document.title.startswith("Guidelines on Core Components of Infection Prevention")
    block = block_with(
        document, "The panel recommends that an IPC programme with a dedicated, trained team"
    )
    assert document.layout.pages_of(block.start, block.end) == (30,)
    assert block.section == (
        "8 Core components",
        "Core component 1: Infection prevention and control programmes 1a. Health care "
        "facility level",
    )
    (background,) = headings_starting(document, "1 Background")
    assert document.layout.pages_of(background.start, background.end) == (18,)
    assert background.section == ("1 Background",)


def test_who_running_footers_are_furniture() -> None:
    furniture = block_texts(parsed(WHO), "furniture")
    footer = "Guidelines on Core Components of Infection Prevention and Control Programmes"
    assert sum(footer in text for text in furniture) >= 88


def test_federal_register_margin_note_and_footer_are_furniture() -> None:
    document = parsed(STRUCTURE / "federal-register-2020-17221.pdf")
    margin = "jbell on DSKJLSW7X2PROD with PROPOSALS"  # printed up the page's left side
    assert block_texts(document, "furniture").count(margin) == 15
    assert not any(margin in text for text in block_texts(document, "paragraph"))
    # page 1's footer, which PDFium joins to a word hyphenated at a column's foot
    footers = [text for text in block_texts(document, "furniture") if "VerDate" in text]
    assert len(footers) == 15
    lion_air = block_with(document, "accident after takeoff from Soekarno")
    assert "VerDate" not in document.text[lion_air.start : lion_air.end]


def _plumber_table_words(path: Path) -> set[str]:
    words: set[str] = set()
    with pdfplumber.open(path) as pdf:
        for table in pdf.pages[0].find_tables():
            for row in table.extract():
                words.update(word for cell in row if cell for word in re.findall(r"\w+", cell))
    return words


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        ("senate-expenditures.pdf", "DOCUMENT NO. DATE PAYEE NAME", "37,499.96"),
        ("nics-background-checks-2015-11.pdf", "State / Territory Permit Handgun", "Wyoming"),
        ("word365_structure.pdf", "En-tête 1 En-tête 2 En-tête 3", "Linge 2 Belette Bibitte"),
    ],
)
def test_a_ruled_table_is_one_table_block(name: str, first: str, last: str) -> None:
    document = parsed(STRUCTURE / name)
    tables = block_texts(document, "table")
    assert len(tables) == 1
    assert tables[0].startswith(first)
    assert last in tables[0]
    assert "\n" in tables[0]
    # pdfplumber as the oracle: no word of its table cells is outside our table block
    elsewhere = {
        word
        for block in document.blocks
        if block.kind != "table"
        for word in re.findall(r"\w+", document.text[block.start : block.end])
    }
    assert not (
        _plumber_table_words(STRUCTURE / name) & elsewhere - set(re.findall(r"\w+", tables[0]))
    )


def test_outline_titles_match_headings_without_a_space_after_their_number() -> None:
    document = parsed(STRUCTURE / "chelsea_pdta.pdf")
    block = block_with(document, "Depuis l’adoption du Plan d’Urbanisme (PU) en 2005")
    assert block.section == ("1.Mise en contexte",)
    (sub,) = headings_starting(document, "1.1. Pourquoi avons-nous besoin")
    assert sub.section[0] == "1.Mise en contexte"


def test_three_level_outline_of_a_tagged_pdf() -> None:
    document = parsed(STRUCTURE / "pdf_structure.pdf")
    assert document.title == "PDF avec Structure"
    assert document.language == "fr-CA"
    assert block_texts(document, "heading") == ["Titre 1", "Titre 2", "Tableau"]
    assert block_with(document, "Encore du contenu!").section == ("Titre 1", "Titre 2")
    table = block_with(document, "Chose | Truc")  # ruled by horizontal lines only
    assert table.section == ("Titre 1", "Titre 2", "Tableau")
    assert table.kind == "table"
    rows = "Chose | Truc\nChose 1 | Truc 1\nChose 2 | Truc 2"
    assert document.text[table.start : table.end] == rows


# --- built PDFs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def report() -> ParsedDocument:
    return parse_pdf(build.report_pdf(), "report.pdf")


def test_headings_by_font_size_give_nested_sections(report: ParsedDocument) -> None:
    assert report.title == build.TITLE
    # the title's style appears on page 1 only: a cover title, parent of no section
    assert block_with(report, build.TITLE).section == (build.TITLE,)
    paragraph = block_with(report, " ".join(build.TWO_LINES))
    assert paragraph.section == (build.INTRO,)
    background = block_with(report, "Staff who touch a patient")
    assert background.section == (build.INTRO, build.BACKGROUND)
    methods = block_with(report, "Body text of page 3")
    assert methods.section == (build.METHODS,)
    assert [report.text[b.start : b.end] for b in report.blocks if b.kind == "heading"] == [
        build.TITLE,
        build.INTRO,
        build.BACKGROUND,
        build.METHODS,
        "3 Results",
    ]


def test_header_and_footer_repeated_on_four_pages_are_furniture(report: ParsedDocument) -> None:
    furniture = block_texts(report, "furniture")
    assert furniture.count(build.HEADER) == 4
    assert [text for text in furniture if text.startswith("Page")] == [
        f"Page {n} of 4" for n in range(1, 5)
    ]
    assert report.layout is not None
    starts = report.layout.page_starts
    assert report.text[starts[1] : starts[1] + len(build.HEADER)] == build.HEADER


def test_a_running_header_on_both_pages_of_a_two_page_document_is_furniture() -> None:
    short = parse_pdf(build.report_pdf(pages=2), "short.pdf")
    assert block_texts(short, "furniture").count(build.HEADER) == 2
    assert build.HEADER not in block_texts(short, "paragraph")
    one_page = parse_pdf(build.report_pdf(pages=1), "one.pdf")
    assert build.HEADER not in block_texts(one_page, "furniture")  # one page: nothing repeats
    itinerary = parse_pdf(build.itinerary_pdf(), "itinerary.pdf")
    assert block_texts(itinerary, "furniture") == [
        f"Printed copies are uncontrolled - Page {n}" for n in (1, 2)
    ]
    assert block_texts(itinerary, "heading") == ["Day 1", "Day 2"]  # alike but in digits


@pytest.mark.parametrize("every_row", [True, False])
def test_a_table_ruled_by_horizontal_lines_only_is_read_row_by_row(every_row: bool) -> None:
    document = parse_pdf(build.horizontal_rules_pdf(every_row=every_row), "alarms.pdf")
    assert block_texts(document, "table") == [
        "\n".join(" | ".join(row) for row in build.ALARM_ROWS)
    ]
    (table,) = document.tables
    assert [row.header for row in table.rows] == [True, False, False, False]
    assert [document.text[a:b] for a, b in table.rows[2].cells] == list(build.ALARM_ROWS[2])
    paragraphs = block_texts(document, "paragraph")  # rules of the same width rule no table
    assert all(sentence in paragraphs for sentence in build.CALLOUT)
    assert "Alarms stop the infusion." in paragraphs
    assert build.TABLE_NOTE in paragraphs  # a note under the table is no row of it


def test_a_title_between_rules_is_no_table() -> None:
    document = parse_pdf(build.title_block_pdf(), "guideline.pdf")
    assert block_texts(document, "table") == []
    assert document.text.startswith(build.TITLE_BLOCK[0])


def test_hyphenated_line_ends_follow_the_word_rule(report: ParsedDocument) -> None:
    block = block_with(report, "Staff who touch")
    text = report.text[block.start : block.end]
    assert (
        text == "Staff who touch a patient must prevent infection and follow evidence-based advice."
    )
    assert report.layout is not None
    runs = {(run.start, run.length) for run in report.layout.char_runs}
    hyphen = text.index("evidence-based") + len("evidence")
    assert not any(start <= block.start + hyphen < start + length for start, length in runs)


def test_keep_hyphen_drops_only_for_words_seen_whole() -> None:
    words = WordSet(lambda: ["prevent infection now"])
    assert not keep_hyphen("must prevent infec", "tion and", words)
    assert keep_hyphen("follow evidence", "based advice", words)
    assert keep_hyphen("COVID", "19", words)
    assert keep_hyphen("type", "2 diabetes", words)


@pytest.mark.parametrize(
    ("raw", "text", "pieces"),
    [
        ("  one line ", "one line", [("one line", 102)]),
        ("a  b\tc", "a b c", [("a", 100), (" ", None), ("b", 103), (" ", None), ("c", 105)]),
        ("infec\ufffetion", "infection", [("infec", 100), ("tion", 106)]),
        ("COVID\ufffe19", "COVID-19", [("COVID", 100), ("-", None), ("19", 106)]),
        ("bad\ud800char", "badchar", [("bad", 100), ("char", 104)]),
    ],
)
def test_clean_line_maps_every_kept_character_to_its_pdfium_index(
    raw: str, text: str, pieces: list[tuple[str, int | None]]
) -> None:
    words = WordSet(lambda: ["infection"])
    assert clean_line(PdfLine(1, 100, raw), words) == (text, pieces)


def test_bookmarks_give_sections_despite_numbering_differences() -> None:
    document = parse_pdf(build.report_pdf(outline=True), "outlined.pdf")
    assert block_with(document, "Staff who touch").section == (build.INTRO, build.BACKGROUND)
    assert block_with(document, "Body text of page 4").section == ("3 Results",)
    assert block_with(document, build.TITLE).kind == "paragraph"  # not in the outline


def test_ruled_table_built_with_reportlab_is_one_block() -> None:
    document = parse_pdf(build.table_pdf(), "table.pdf")
    assert [b.kind for b in document.blocks] == ["paragraph", "table", "paragraph"]
    assert block_texts(document, "table") == [
        "\n".join(" | ".join(row) for row in build.TABLE_ROWS)
    ]
    assert document.title == "table"  # reportlab's "(anonymous)" is no title


@pytest.mark.parametrize(
    ("raw", "cause"),
    [
        (build.encrypted_pdf, "encrypted PDF: a password is required"),
        (build.zero_page_pdf, "PDF has no pages"),
        (build.truncated_pdf, "corrupt or truncated PDF (PDFium: data format error)"),
        (build.image_only_pdf, NO_TEXT_AT_ALL),
    ],
    ids=["encrypted", "zero-pages", "truncated", "no-text"],
)
def test_unreadable_pdfs_raise_ingest_error_with_cause(raw: object, cause: str) -> None:
    assert callable(raw)
    with pytest.raises(IngestError) as caught:
        parse_pdf(raw(), "bad.pdf")
    assert caught.value.cause == cause
    assert caught.value.path == "bad.pdf"


def test_error_causes_do_not_leak_between_documents() -> None:
    for raw, cause in [
        (build.encrypted_pdf(), "encrypted PDF"),
        (build.zero_page_pdf(), "PDF has no pages"),
        (build.truncated_pdf(), "corrupt or truncated"),
        (build.zero_page_pdf(), "PDF has no pages"),
    ]:
        with pytest.raises(IngestError, match=cause):
            parse_pdf(raw, "x.pdf")


def test_page_without_text_layer_is_named_in_a_warning() -> None:
    document = parse_pdf(build.image_only_pdf(text_page=True), "mixed.pdf")
    assert document.warnings == ("page 2 has no text layer; OCR is off",)
    assert document.text == "This page has a text layer."
    assert document.layout is not None
    assert document.layout.page_starts == (0, len(document.text))
    assert document.layout.ocr_pages == ()


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract not installed")
def test_ocr_reads_a_page_without_text_layer() -> None:
    document = parse_pdf(build.image_only_pdf(text_page=True), "mixed.pdf", ocr=True)
    assert document.warnings == ("page 2: text from OCR",)
    assert document.layout is not None
    assert document.layout.ocr_pages == (2,)
    ocr_block = document.blocks[-1]
    assert ocr_block.kind == "paragraph"
    assert document.text[ocr_block.start : ocr_block.end] == build.OCR_WORDS
    assert document.layout.pages_of(ocr_block.start, ocr_block.end) == (2,)
    assert all(run.page == 1 for run in document.layout.char_runs)


def test_ocr_without_tesseract_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(IngestError) as caught:
        parse_pdf(build.image_only_pdf(), "scan.pdf", ocr=True)
    assert caught.value.cause == (
        "OCR requested but the tesseract command was not found (install tesseract-ocr)"
    )


@pytest.mark.parametrize(
    ("title", "meaningful"),
    [
        ("Guide to Safe Care", True),
        ("", False),
        ("   ", False),
        ("Microsoft Word - report.docx", False),
        ("10811.exe", False),
        ("report", False),
        ("(anonymous)", False),
        ("Untitled", False),
    ],
)
def test_meaningful_title(title: str, meaningful: bool) -> None:
    assert meaningful_title(title, "/docs/report.pdf") is meaningful


# --- table finding (pure geometry) ---------------------------------------------------


def grid(
    rows: int, columns: int, x0: float = 100, y0: float = 100
) -> Iterator[list[tuple[float, float, float]]]:
    width, height = 50.0 * columns, 20.0 * rows
    yield [(y0 + 20.0 * i, x0, x0 + width) for i in range(rows + 1)]
    yield [(x0 + 50.0 * j, y0, y0 + height) for j in range(columns + 1)]


def test_find_grids_finds_a_grid_with_its_rulings_and_ignores_boxes() -> None:
    horizontal, vertical = grid(3, 2)
    (found,) = find_grids(horizontal, vertical)
    assert found.box == (100.0, 100.0, 200.0, 160.0)
    assert sorted(found.horizontal) == sorted(horizontal)
    assert sorted(found.vertical) == sorted(vertical)
    box_h, box_v = grid(1, 1)
    assert find_grids(box_h, box_v) == ()
    callout_h, callout_v = grid(2, 1)  # a box with a title bar
    assert find_grids(callout_h, callout_v) == ()


def test_merge_edges_snaps_and_joins_collinear_pieces() -> None:
    assert merge_edges([(100.0, 0.0, 50.0), (101.5, 52.0, 90.0), (140.0, 0.0, 10.0)]) == [
        (100.0, 0.0, 90.0),
        (140.0, 0.0, 10.0),
    ]


@pytest.mark.parametrize(
    ("rotation", "expected"),
    [
        (0, (10.0, 780.0, 100.0, 792.0)),
        (90, (780.0, 512.0, 792.0, 602.0)),  # the top strip is shown on the right
        (180, (512.0, 0.0, 602.0, 12.0)),
        (270, (0.0, 10.0, 12.0, 100.0)),
    ],
)
def test_upright_turns_boxes_like_the_page_is_shown(
    rotation: int, expected: tuple[float, float, float, float]
) -> None:
    assert upright((10.0, 780.0, 100.0, 792.0), rotation, (0.0, 0.0, 612.0, 792.0)) == expected


def test_a_hanging_indent_after_a_line_that_stops_mid_sentence_carries_the_paragraph_on() -> None:
    """The transcript's appearances wrap onto indented lines: "... General, Los" then
    "Angeles, Cal.; on behalf of the Petitioner." is one paragraph, not two."""
    document = parsed(STRUCTURE / "scotus-transcript-p1.pdf")
    block = block_with(document, "Deputy Attorney General, Los")
    assert "on behalf of the Petitioner." in document.text[block.start : block.end]
    respondent = block_with(document, "CHARLES M. SEVILLA")
    assert "of the Respondent." in document.text[respondent.start : respondent.end]


def test_a_note_printed_up_the_margin_of_every_page_is_furniture() -> None:
    document = parse_pdf(build.columns_pdf(pages=3), "columns.pdf")
    furniture = block_texts(document, "furniture")
    assert furniture.count(build.MARGIN_NOTE) == 3
    assert not any(build.MARGIN_NOTE in text for text in block_texts(document, "paragraph"))
    assert sum(build.CARRIED[1] in text for text in block_texts(document, "paragraph")) == 3


def test_a_row_naming_columns_of_values_heads_its_table_in_any_font() -> None:
    """A dose table whose header row was set apart by a grey background only had no
    header, so a question about the dose was answered with that row alone; a first
    row that holds a dose, a schedule's first day and a label's first name and value
    are no header."""
    document = parse_pdf(build.plain_header_tables_pdf(), "doses.pdf")
    dose, *others = document.tables
    assert [document.text[a:b] for a, b in dose.rows[0].cells] == list(build.DOSE_ROWS[0])
    assert [row.header for row in dose.rows] == [True, False, False, False]
    assert len(others) == len(build.HEADERLESS_TABLES)
    for table, rows in zip(others, build.HEADERLESS_TABLES, strict=True):
        assert [document.text[a:b] for a, b in table.rows[0].cells] == list(rows[0])
        assert not any(row.header for row in table.rows)


def test_a_short_last_item_ends_before_the_paragraph_under_it() -> None:
    """A numbered list's last step ran into the paragraph after it (one block of 168
    words quoted for "what is the first thing to do"); a ruled table whose first
    column wraps a name ("Fresh frozen" / "plasma") lost its cells."""
    document = parse_pdf(build.steps_and_wrapped_table_pdf(), "procedure.pdf")
    assert block_texts(document, "list")[-1].endswith(build.STEPS[-1])
    assert build.AFTER_STEPS in block_texts(document, "paragraph")
    (table,) = document.tables
    cells = [[document.text[a:b] for a, b in row.cells] for row in table.rows]
    assert cells == [list(row) for row in build.COMPONENT_ROWS]


def test_a_ruled_table_whose_row_cells_wrap_keeps_its_cells() -> None:
    """A dose table with its cells wrapped: "Treating a new DVT or pulmonary" /
    "embolism" beside "10 mg twice a day for the first 7" / "days, then 5 mg twice a
    day" read as two rows stacked in one, so the table lost its cells and its rows
    were run-on text."""
    document = parse_pdf(build.wrapped_dose_table_pdf(), "leaflet.pdf")
    (table,) = document.tables
    cells = [[document.text[a:b] for a, b in row.cells] for row in table.rows]
    assert cells == [list(row) for row in build.WRAPPED_DOSE_ROWS]


def test_rows_set_one_under_another_between_two_rulings_are_no_wrapped_row() -> None:
    """Two medicines between one pair of rulings, each line short of its column's
    right ruling: no table row joins "paracetamol ... ibuprofen ..." with "1 or 2
    tablets 1 tablet", which would pair a dose with both."""
    document = parse_pdf(build.stacked_dose_table_pdf(), "doses.pdf")
    rows = [[document.text[a:b] for a, b in row.cells] for t in document.tables for row in t.rows]
    assert not any("ibuprofen" in cell and "paracetamol" in cell for row in rows for cell in row)
    assert "paracetamol 500 mg tablets" in document.text


def test_a_table_the_page_break_splits_is_one_table_under_its_header() -> None:
    """A tenancy's payment table went on at the top of page 2 without its header row,
    so "Lost key or fob replacement | £45" was quoted with no column names; rows
    after a paragraph that opens page 2, or in columns of other widths, are a table of
    their own."""
    document = parse_pdf(build.split_fee_table_pdf(), "fees.pdf")
    (table,) = document.tables
    cells = [[document.text[a:b] for a, b in row.cells] for row in table.rows]
    assert cells == [list(row) for row in build.FEE_ROWS]
    assert [row.header for row in table.rows].count(True) == 1
    for apart in (
        parse_pdf(build.split_fee_table_pdf(text_between=True), "fees.pdf"),
        parse_pdf(build.split_fee_table_pdf(other_columns=True), "fees.pdf"),
    ):
        assert len(apart.tables) == 2 and not any(row.header for row in apart.tables[1].rows)


def test_steps_numbered_without_a_mark_are_items_of_their_own() -> None:
    """A numbered list at the margin with no indent and no gap was read as the lead-in
    and step 1 in one paragraph and steps 2 and 3 in the next; a step wrapped at the
    margin keeps its second line, and a line of a later paragraph that opens with
    the next number after a sentence stays in its paragraph."""
    document = parse_pdf(build.bare_numbered_steps_pdf(), "leaflet.pdf")
    assert block_texts(document, "list") == [" ".join(step) for step in build.BARE_STEPS]
    assert block_texts(document, "paragraph") == [
        build.BARE_LEAD_IN,
        " ".join(build.BARE_PARAGRAPH),
    ]


def test_a_centred_letterhead_is_no_line_of_the_heading_under_it() -> None:
    """A centred clinic name over a left-aligned sheet title in the same font read as
    one heading, "Willowbank Veterinary Clinic Aftercare Sheet for Dogs", the first
    part of every label. Headings wrapped at the margin, centred, with a hanging
    indent or flush right still read whole."""
    document = parse_pdf(build.headings_pdf(), "aftercare.pdf")
    headings = block_texts(document, "heading")
    wrapped = [" ".join(lines) for lines in build.WRAPPED_HEADINGS]
    assert headings == [build.LETTERHEAD, build.SHEET_HEADING, *wrapped]
    first_paragraph = next(block for block in document.blocks if block.kind == "paragraph")
    assert first_paragraph.section == (build.SHEET_HEADING,)


def test_lines_one_bookmark_names_are_one_heading_however_aligned() -> None:
    """With headings from the outline, a bookmark that names the centred letterhead
    and the left-aligned title under it as one heading is taken at its word."""
    document = parse_pdf(build.headings_pdf(outline=True), "aftercare.pdf")
    headings = block_texts(document, "heading")
    wrapped = [" ".join(lines) for lines in build.WRAPPED_HEADINGS]
    assert headings == [f"{build.LETTERHEAD} {build.SHEET_HEADING}", *wrapped]
