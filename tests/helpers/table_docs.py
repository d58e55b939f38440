"""An Eliquis-like adverse-reaction table in HTML, Markdown, DOCX and PDF, ingested
into a real index, and quotes of its rows resolved as the resolver makes them."""

from __future__ import annotations

import io
from pathlib import Path

from quoteproof import Index
from quoteproof.model import Quote, Rejected
from quoteproof.store_lookup import StoreLookup

COLUMNS = ("Adverse reaction", "ELIQUIS N=9088 n (%)", "Warfarin N=9052 n (%)")
ROWS = (
    ("Major bleeding", "327 (2.13)", "462 (3.09)"),
    ("Intracranial hemorrhage", "52 (0.33)", "125 (0.82)"),
    ("Gastrointestinal bleeding", "128 (0.83)", "141 (0.93)"),
    ("Clinically relevant nonmajor bleeding", "318 (2.08)", "444 (3.00)"),
)
INTRO = "Table 1 lists bleeding events in patients with nonvalvular atrial fibrillation."
AFTER = "Bleeding was the most common reason for stopping treatment."


def table_html() -> str:
    """The table as an HTML page: header row in `<thead>` of `<th>` cells."""
    head = "".join(f"<th>{name}</th>" for name in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in ROWS)
    return (
        "<html><head><title>Eliquis label</title></head><body><main>"
        "<h1>6 ADVERSE REACTIONS</h1><h2>6.1 Clinical Trials Experience</h2>"
        f"<p>{INTRO}</p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<p>{AFTER}</p></main></body></html>"
    )


def table_markdown() -> str:
    """The table as a GFM pipe table (a pipe in a cell escaped)."""
    lines = ["# 6 Adverse reactions", "", INTRO, ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|---|---:|---:|")
    lines += ["| " + " | ".join(row) + " |" for row in ROWS]
    lines += ["", AFTER, ""]
    return "\n".join(lines)


def table_docx(header_repeats: bool = True, first_row_styled: bool = True) -> bytes:
    """The table in a Word document; its first row marked as the repeating header
    (`w:tblHeader`) when `header_repeats`, and set apart by the table's style
    (`w:tblLook` firstRow, as python-docx and Word make a table) when
    `first_row_styled`."""
    from docx import Document
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = Document()
    document.add_heading("6 ADVERSE REACTIONS", level=1)
    document.add_paragraph(INTRO)
    table = document.add_table(rows=1 + len(ROWS), cols=len(COLUMNS))
    for number, row in enumerate((COLUMNS, *ROWS)):
        for cell, text in zip(table.rows[number].cells, row, strict=True):
            cell.text = text
    look = table._tbl.tblPr.find(qn("w:tblLook"))
    if look is None:
        look = OxmlElement("w:tblLook")
        table._tbl.tblPr.append(look)
    look.set(qn("w:firstRow"), "1" if first_row_styled else "0")
    if header_repeats:
        properties = table.rows[0]._tr.get_or_add_trPr()
        properties.append(OxmlElement("w:tblHeader"))
        assert properties.find(qn("w:tblHeader")) is not None
    document.add_paragraph(AFTER)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def table_pdf(*, section: str | None = None, span: bool = False, bold_header: bool = True) -> bytes:
    """The table in a PDF (reportlab), ruled as a grid, its two drug column names
    drawn on two lines each, the header row in bold when `bold_header`. With
    `section`, a row of that text ruled as one cell across the table comes after
    the second body row (a system organ class, say); with `span`, the first body
    row's last two cells are one merged cell."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    header = [COLUMNS[0], *(name.replace(" ", "\n", 1) for name in COLUMNS[1:])]
    rows: list[list[str]] = [header, *(list(row) for row in ROWS)]
    commands: list[tuple[object, ...]] = [("GRID", (0, 0), (-1, -1), 0.75, colors.black)]
    if bold_header:
        commands.append(("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"))
    if section is not None:
        rows.insert(3, [section, "", ""])
        commands.append(("SPAN", (0, 3), (-1, 3)))
    if span:
        commands.append(("SPAN", (1, 1), (2, 1)))
    table = Table(rows, colWidths=[200, 110, 110])
    table.setStyle(TableStyle(commands))
    buffer = io.BytesIO()
    story = [
        Paragraph("6 ADVERSE REACTIONS", styles["Heading1"]),
        Paragraph(INTRO, styles["BodyText"]),
        Spacer(1, 12),
        table,
        Spacer(1, 12),
        Paragraph(AFTER, styles["BodyText"]),
    ]
    SimpleDocTemplate(buffer, pagesize=letter, title="Eliquis label").build(story)
    return buffer.getvalue()


def write_table_docs(folder: Path) -> dict[str, Path]:
    """Write the table in each format under `folder`; return the paths by format."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "html": folder / "eliquis.html",
        "markdown": folder / "eliquis.md",
        "docx": folder / "eliquis.docx",
        "pdf": folder / "eliquis.pdf",
    }
    paths["html"].write_text(table_html(), encoding="utf-8")
    paths["markdown"].write_text(table_markdown(), encoding="utf-8")
    paths["docx"].write_bytes(table_docx())
    paths["pdf"].write_bytes(table_pdf())
    return paths


def ingest_table_docs(location: Path, folder: Path) -> dict[str, Path]:
    """Create an index at `location` holding the table documents (no embeddings)."""
    paths = write_table_docs(folder)
    with Index.open(location, create=True) as index:
        results = index.ingest(list(paths.values()), embed=False)
    assert [r.status for r in results] == ["added"] * len(paths), results
    return paths


def quote_in(index: Index, path: Path, claimed: str, quote_id: str = "q1") -> Quote:
    """The resolver's quote of the words `claimed` in the document at `path`."""
    from quoteproof.quoting.resolve import resolve_quote

    doc = next(d for d in index.store.list_documents() if d.source_path == str(path))
    chunks = index.store.chunks_of(doc.doc_id, doc.version)
    with StoreLookup(index.store) as lookup:
        quote = resolve_quote(None, claimed, quote_id, chunks, lookup, raw=claimed)
    assert not isinstance(quote, Rejected), quote
    return quote
