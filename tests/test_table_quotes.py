"""The guarantee for table quotes: every cell shown with a quote is a span of the
stored document, read from it; a recorded quote's table rows are re-read from the
index, never taken from the record."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.answers import as_recorded, make_answer, make_quote
from helpers.table_docs import COLUMNS, ROWS, ingest_table_docs, quote_in, table_pdf
from quoteproof import Index
from quoteproof.ingest.html.parse import parse_html
from quoteproof.ingest.pdf.parse import parse_pdf
from quoteproof.llm.quotable import quotable_units
from quoteproof.model import Document, QuotedRow, QuoteSegment, TableCell
from quoteproof.receipts import check_quote, verify_recorded
from quoteproof.render.markdown import render_markdown
from quoteproof.render.table_quote import CARRIED_HEADER_NOTE, TableView, quote_parts
from quoteproof.store_lookup import StoreLookup
from quoteproof.tables.quoted import body_rows, quoted_tables


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("tables")
    ingest_table_docs(root / "index", root / "docs")
    with Index.open(root / "index") as opened:
        yield opened


def documents(index: Index) -> list[Document]:
    found = []
    for summary in index.store.list_documents():
        document = index.store.get_document(summary.doc_id, summary.version)
        assert document is not None
        found.append(document)
    return found


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_cell_of_a_table_quote_is_a_source_span(index: Index, data: st.DataObject) -> None:
    document = data.draw(st.sampled_from(documents(index)))
    (stored,) = index.store.get_tables(document.doc_id, document.version)
    near = (max(stored.rows[0].start - 30, 0), min(stored.rows[-1].end + 30, len(document.text)))
    start = data.draw(st.integers(*near))
    end = data.draw(st.integers(start, near[1]))
    with StoreLookup(index.store) as lookup:
        tables = lookup.locate(document, start, end).tables
    for table in tables:
        assert table.start < end and start < table.end
        for row in table.rows:
            for cell in row.cells:
                assert cell.text == document.text[cell.start : cell.end]
            lo, hi = row.cells[0].start, row.cells[-1].end
            if row.quoted:
                assert lo < end and start < hi  # the quote touches every quoted row
            else:
                assert row.header and hi <= start  # a carried row: a header before the quote
        assert any(row.quoted for row in table.rows)
    touched = [
        (lo, hi)
        for row in stored.rows
        for lo, hi in row.cells
        if lo < hi and lo < end and start < hi
    ]
    body = any(not row.header and row.start < end and start < row.end for row in stored.rows)
    assert bool(tables) == (len(touched) >= 2 and body)  # cells crossed, a body row among them


def test_a_quote_of_one_row_carries_the_header_row(index: Index) -> None:
    path = next(Path(d.source_path) for d in documents(index) if d.format == "html")
    quote = quote_in(index, path, " | ".join(ROWS[1]))
    (table,) = quote.tables
    assert [tuple(c.text for c in row.cells) for row in table.rows] == [COLUMNS, ROWS[1]]
    assert [(row.header, row.quoted) for row in table.rows] == [(True, False), (False, True)]


def test_a_quote_inside_one_cell_has_no_table(index: Index) -> None:
    path = next(Path(d.source_path) for d in documents(index) if d.format == "html")
    assert quote_in(index, path, "Clinically relevant nonmajor bleeding").tables == ()


def test_recorded_table_rows_are_re_read_from_the_index(index: Index) -> None:
    path = next(Path(d.source_path) for d in documents(index) if d.format == "markdown")
    quote = quote_in(index, path, " | ".join(ROWS[0]))
    table = quote.tables[0]
    forged_cell = TableCell(table.rows[1].cells[1].start, table.rows[1].cells[1].end, "0 (0.00)")
    forged_row = QuotedRow((table.rows[1].cells[0], forged_cell), quoted=True)
    forged = replace(quote, tables=(replace(table, rows=(table.rows[0], forged_row)),))
    (problem,) = check_quote(forged, index.store).problems
    assert problem.startswith("tables differ: the answer says [")
    assert "[Major bleeding | 0 (0.00)]" in problem
    indexed = " ".join(f"[{' | '.join(cells)}]" for cells in (COLUMNS, ROWS[0]))
    assert problem.endswith(f"the index says {indexed}")
    assert check_quote(quote, index.store).valid
    recorded = as_recorded(make_answer((QuoteSegment("q1"),), (replace(forged, tables=()),)))
    shown = verify_recorded(recorded, index.store)
    assert shown.quotes[0].tables == quote.tables  # read from the index, not the record


def test_a_no_model_answer_quotes_the_matching_row_with_its_header(index: Index) -> None:
    answer = index.ask("How often was intracranial hemorrhage reported?")
    assert answer.quotes
    for quote in answer.quotes:  # one per document: the row, not the whole table
        assert quote.text == " | ".join(ROWS[1])
        (table,) = quote.tables
        assert [tuple(c.text for c in row.cells) for row in table.rows] == [COLUMNS, ROWS[1]]


def test_a_pdf_section_row_inside_a_quote_is_drawn_and_no_header_only_table_appears() -> None:
    doc = parse_pdf(table_pdf(section="Nervous system disorders"), "eliquis.pdf")
    lines = [" | ".join(row) for row in (COLUMNS, *ROWS)]
    start = doc.text.index(lines[0])
    header_and_first = quoted_tables(doc.text, doc.tables, start, doc.text.index(lines[1]) + 5)
    assert len(header_and_first) == 1  # the quote touches one table, not a header-only one
    assert quoted_tables(doc.text, doc.tables, start, start + len(lines[0])) == ()
    lo, hi = doc.text.index(lines[2]), doc.text.index(lines[3]) + len(lines[3])
    quote = make_quote(doc.text, lo, hi, tables=quoted_tables(doc.text, doc.tables, lo, hi))
    parts = quote_parts(quote)
    assert parts[1] == "Nervous system disorders"
    for part in (parts[0], parts[2]):
        assert isinstance(part, TableView) and part.header == (COLUMNS,)
    (table,) = quote.tables
    for row in table.rows:
        assert all(cell.text == doc.text[cell.start : cell.end] for cell in row.cells)


HEADERLESS = (
    b"<html><body><h1>Doses</h1><p>Recommended doses by age group are below.</p>"
    b"<table><tr><td>Adults</td><td>5 mg twice daily</td></tr>"
    b"<tr><td>Children under 12</td><td>2.5 mg once daily</td></tr></table></body></html>"
)


def test_a_table_without_a_marked_header_shows_no_data_row_as_column_names() -> None:
    doc = parse_html(HEADERLESS, "doses.html")
    lo = doc.text.index("Children")
    hi = doc.text.index("once daily") + len("once daily")
    quote = make_quote(doc.text, lo, hi, tables=quoted_tables(doc.text, doc.tables, lo, hi))
    (table,) = quote.tables
    assert [tuple(cell.text for cell in row.cells) for row in table.rows] == [
        ("Children under 12", "2.5 mg once daily")
    ]
    shown = render_markdown(make_answer((QuoteSegment("q1"),), (quote,)))
    assert "Adults" not in shown and CARRIED_HEADER_NOTE not in shown
    units = quotable_units(doc.text, body_rows(doc.tables, 0, len(doc.text)))
    assert [doc.text[u.start : u.end] for u in units][-2:] == [
        "Adults | 5 mg twice daily",
        "Children under 12 | 2.5 mg once daily",
    ]
