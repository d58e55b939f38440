"""Ingest keeps each table's rows and cells (spans of the canonical text) and its
header row, for HTML, Markdown, DOCX, SPL and ruled PDF tables, and the store gives
them back."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest

from helpers.table_docs import (
    COLUMNS,
    ROWS,
    ingest_table_docs,
    table_docx,
    table_html,
    table_markdown,
    table_pdf,
)
from quoteproof import Index
from quoteproof.ingest.blocks import row_line
from quoteproof.ingest.html.parse import parse_html
from quoteproof.ingest.html.spl import parse_spl
from quoteproof.ingest.office.docx import parse_docx
from quoteproof.ingest.pdf.parse import parse_pdf
from quoteproof.ingest.plain.markdown import parse_markdown
from quoteproof.model import ParsedDocument

REAL_SPL = Path(__file__).resolve().parents[3] / "shared/data/fda-remdesivir-label"
REAL_SPL /= "veklury_remdesivir_spl_oct2020.xml"


def cell_texts(doc: ParsedDocument) -> list[list[tuple[bool, tuple[str, ...]]]]:
    """Each table as (header, cell texts) per row, read from the canonical text."""
    return [
        [(row.header, tuple(doc.text[lo:hi] for lo, hi in row.cells)) for row in table.rows]
        for table in doc.tables
    ]


EXPECTED = [[(True, COLUMNS), *((False, row) for row in ROWS)]]


@pytest.mark.parametrize(
    "parse",
    [
        lambda: parse_html(table_html().encode(), "eliquis.html"),
        lambda: parse_markdown(table_markdown().encode(), "eliquis.md"),
        lambda: parse_docx(table_docx(), "eliquis.docx"),
        lambda: parse_pdf(table_pdf(), "eliquis.pdf"),
    ],
    ids=["html", "markdown", "docx", "pdf"],
)
def test_rows_cells_and_header_are_kept(parse: object) -> None:
    doc = parse()  # type: ignore[operator]
    assert cell_texts(doc) == EXPECTED
    table_block = next(b for b in doc.blocks if b.kind == "table")
    rows = doc.tables[0].rows
    assert table_block.start <= rows[0].start and rows[-1].end <= table_block.end


def test_the_canonical_text_of_a_table_is_unchanged() -> None:
    doc = parse_html(table_html().encode(), "eliquis.html")
    lines = [" | ".join(row) for row in (COLUMNS, *ROWS)]
    assert "\n".join(lines) in doc.text


def test_html_header_only_where_the_page_marks_it() -> None:
    marked = (
        "<table><tr><th>Reaction</th><th>Rate</th></tr><tr><td>Rash</td><td>2%</td></tr></table>",
        "<table><thead><tr><td>Reaction</td><td>Rate</td></tr></thead>"
        "<tr><td>Rash</td><td>2%</td></tr></table>",
    )
    for page in marked:
        doc = parse_html(f"<html><body>{page}</body></html>".encode(), "t.html")
        assert cell_texts(doc) == [[(True, ("Reaction", "Rate")), (False, ("Rash", "2%"))]]
    plain = (
        "<table><tr><td>Adults</td><td>5 mg</td></tr>"
        "<tr><td>Children</td><td>2 mg</td></tr></table>"
    )
    doc = parse_html(f"<html><body>{plain}</body></html>".encode(), "t.html")
    assert cell_texts(doc) == [[(False, ("Adults", "5 mg")), (False, ("Children", "2 mg"))]]


def test_empty_end_cells_get_empty_spans_inside_their_line() -> None:
    line, spans = row_line(["", "x", ""])
    assert line == "| x |"
    assert [line[lo:hi] for lo, hi in spans] == ["", "x", ""]
    assert row_line(["", ""]) == ("", ())


def test_markdown_escaped_pipe_stays_in_its_cell() -> None:
    raw = b"| Reaction | Rate |\n|---|---|\n| Bleeding \\| major | 5% |\n"
    doc = parse_markdown(raw, "t.md")
    assert cell_texts(doc) == [
        [(True, ("Reaction", "Rate")), (False, ("Bleeding \\| major", "5%"))]
    ]


def test_markdown_table_in_a_block_quote_keeps_no_structure() -> None:
    doc = parse_markdown(b"> | Reaction | Rate |\n> |---|---|\n> | Rash | 2% |\n", "t.md")
    assert [b.kind for b in doc.blocks] == ["table"]  # a table block of text
    assert doc.tables == ()  # but its lines start with "> ": no cell spans to read


def test_docx_without_a_repeating_or_styled_header_has_no_header() -> None:
    doc = parse_docx(table_docx(header_repeats=False, first_row_styled=False), "t.docx")
    assert cell_texts(doc) == [[(False, row) for row in (COLUMNS, *ROWS)]]


def test_docx_whose_style_sets_the_first_row_apart_has_it_as_header() -> None:
    doc = parse_docx(table_docx(header_repeats=False), "t.docx")
    assert cell_texts(doc) == [[(True, COLUMNS), *((False, row) for row in ROWS)]]


def test_real_spl_adverse_reaction_table_has_its_thead_header() -> None:
    if not REAL_SPL.is_file():
        pytest.skip(f"{REAL_SPL} is absent")
    doc = parse_spl(REAL_SPL.read_bytes(), str(REAL_SPL))
    assert sum(b.kind == "table" for b in doc.blocks) == 17
    assert len(doc.tables) == 9  # the 8 others have merged cells
    table = next(t for t in cell_texts(doc) if t[0][1][1] == "VEKLURY 5 Days N=200 n (%)")
    assert table[0] == (
        True,
        ("Types of Adverse Reactions", "VEKLURY 5 Days N=200 n (%)", "VEKLURY 10 Days N=197 n (%)"),
    )
    assert table[1] == (False, ("Any adverse reaction, all Grades", "33 (17%)", "40 (20%)"))


def test_the_store_keeps_the_tables(tmp_path: Path) -> None:
    paths = ingest_table_docs(tmp_path / "index", tmp_path / "docs")
    with Index.open(tmp_path / "index") as index:
        for path in paths.values():
            summary = next(d for d in index.store.list_documents() if d.source_path == str(path))
            document = index.store.get_document(summary.doc_id, summary.version)
            assert document is not None
            tables = index.store.get_tables(summary.doc_id, summary.version)
            stored = [
                [(r.header, tuple(document.text[lo:hi] for lo, hi in r.cells)) for r in t.rows]
                for t in tables
            ]
            assert stored == EXPECTED, path


@pytest.mark.parametrize(
    "table",
    [
        "<tr><th colspan='2'>Reaction rate</th></tr><tr><td>Rash</td><td>2%</td></tr>",
        "<tr><th>Group</th><th>Reaction</th></tr><tr><td rowspan='2'>Skin</td><td>Rash</td></tr>"
        "<tr><td>Itch</td></tr>",
        "<tr><th>Reaction</th><th>Rate</th></tr><tr><td>Rash</td></tr>",
    ],
    ids=["colspan", "rowspan", "short-row"],
)
def test_a_table_whose_cells_do_not_line_up_keeps_no_structure(table: str) -> None:
    doc = parse_html(f"<html><body><table>{table}</table></body></html>".encode(), "t.html")
    assert any(b.kind == "table" for b in doc.blocks)  # still a table block of text
    assert doc.tables == ()  # but no columns a cell could be misread under


def test_docx_merged_cells_keep_no_structure() -> None:
    from docx import Document

    document = Document()
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Reaction rate"
    table.cell(1, 0).text, table.cell(1, 1).text = "Rash", "2%"
    buffer = io.BytesIO()
    document.save(buffer)
    assert parse_docx(buffer.getvalue(), "t.docx").tables == ()


def test_spl_merged_cells_keep_no_structure() -> None:
    spl = (
        '<document xmlns="urn:hl7-org:v3"><title>T</title><component><structuredBody>'
        "<component><section><title>6 ADVERSE</title><text><table>"
        '<thead><tr><th colspan="2">Reaction rate</th></tr></thead>'
        "<tbody><tr><td>Rash</td><td>2%</td></tr></tbody></table></text></section></component>"
        "</structuredBody></component></document>"
    )
    doc = parse_spl(spl.encode(), "t.xml")
    assert any(b.kind == "table" for b in doc.blocks) and doc.tables == ()


def test_pdf_table_text_is_rows_of_cells_and_each_character_keeps_its_page_box() -> None:
    from quoteproof.locations import quote_boxes

    raw = table_pdf()
    doc = parse_pdf(raw, "eliquis.pdf")
    assert "\n".join(" | ".join(row) for row in (COLUMNS, *ROWS)) in doc.text
    assert doc.layout is not None
    (table,) = doc.tables
    mapped = {i for r in doc.layout.char_runs for i in range(r.start, r.start + r.length)}
    bands = []
    for row in table.rows:
        for lo, hi in row.cells:  # every character of a cell but a join is PDFium's
            assert {i for i in range(lo, hi) if doc.text[i] != " "} <= mapped
        boxes = quote_boxes(raw, doc.layout, row.start, row.end)
        assert boxes
        bands.append((min(b.y0 for b in boxes), max(b.y1 for b in boxes)))
    for upper, lower in itertools.pairwise(bands):
        assert lower[1] <= upper[0]  # a row's highlight lies below the row above, apart


def test_pdf_section_row_is_text_of_the_one_table_but_no_row() -> None:
    doc = parse_pdf(table_pdf(section="Nervous system disorders"), "eliquis.pdf")
    assert cell_texts(doc) == EXPECTED
    assert f"{' | '.join(ROWS[1])}\nNervous system disorders\n{' | '.join(ROWS[2])}" in doc.text


def test_pdf_first_row_in_the_body_font_is_the_header_when_it_names_columns_of_values() -> None:
    """Not bold, but "ELIQUIS N=9088 n (%)" stands over "327 (2.13)", "52 (0.33)", ...
    (a first row that holds a value is no header: `test_pdf.py`)."""
    doc = parse_pdf(table_pdf(bold_header=False), "eliquis.pdf")
    assert cell_texts(doc) == EXPECTED


def test_pdf_table_with_a_merged_cell_keeps_no_structure() -> None:
    doc = parse_pdf(table_pdf(span=True), "eliquis.pdf")
    assert any(b.kind == "table" for b in doc.blocks) and doc.tables == ()
    assert " | " not in doc.text
