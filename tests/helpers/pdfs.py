"""Small PDFs built with reportlab (and one with pypdfium2) for the PDF ingest tests.

Each builder returns the file's bytes. Positions are in PDF points on a US Letter
page (612 x 792), origin bottom-left; texts are fixed so tests can look for them.
"""

from __future__ import annotations

import io
import zlib

import pypdfium2 as pdfium  # type: ignore[import-untyped]
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib import colors
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas
from reportlab.platypus import SimpleDocTemplate, Table, TableStyle

HEADER = "Quoteproof Test Report"
"""Running header at the top of every page of `report_pdf`."""

TITLE = "Report on Hand Hygiene"
INTRO = "1 Introduction"
BACKGROUND = "1.1 Background"
METHODS = "2 Methods"

TWO_LINES = (
    "Hand hygiene is the single most important measure",
    "to prevent the spread of infection.",
)
"""A paragraph drawn on two lines of page 1 of `report_pdf`, at y = 640 and 626."""

HYPHENATED = (
    "Staff who touch a patient must prevent infec-",
    "tion and follow evidence-",
    "based advice.",
)
"""Three lines of page 2 of `report_pdf`: "infec-"/"tion" (the word "infection" is
elsewhere) and "evidence-"/"based" (no "evidencebased" anywhere)."""

OCR_WORDS = "QUOTEPROOF SCANNED PAGE"
"""The text drawn as an image on `image_only_pdf`."""

TABLE_ROWS = (
    ("Drug", "Dose", "Route"),
    ("Alpha", "5 mg", "oral"),
    ("Beta", "10 mg", "intravenous"),
    ("Gamma", "20 mg", "oral"),
)


def _save(draw: canvas.Canvas) -> bytes:
    return bytes(draw.getpdfdata())


def _running_lines(draw: canvas.Canvas, number: int, pages: int) -> None:
    draw.setFont("Helvetica", 9)
    draw.drawString(72, 760, HEADER)
    draw.drawCentredString(306, 30, f"Page {number} of {pages}")


def report_pdf(*, outline: bool = False, pages: int = 4) -> bytes:
    """A report of `pages` pages (4: the first two and two of results) with headings
    set only by font size and weight, a running header and footer, a two-line
    paragraph, hyphenated line ends and, when `outline`, a bookmark outline (whose
    titles omit the headings' numbers)."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setTitle("")
    for number in range(1, pages + 1):
        _running_lines(draw, number, pages)
        if number == 1:
            draw.setFont("Helvetica-Bold", 22)
            draw.drawString(72, 700, TITLE)
            draw.setFont("Helvetica-Bold", 16)
            draw.drawString(72, 665, INTRO)
            if outline:
                draw.bookmarkPage("intro")
                draw.addOutlineEntry("Introduction", "intro", level=0)
            draw.setFont("Helvetica", 11)
            for index, line in enumerate(TWO_LINES):
                draw.drawString(72, 640 - 14 * index, line)
            draw.drawString(72, 600, "Cleaning hands prevents infection in every setting.")
        elif number == 2:
            draw.setFont("Helvetica-Bold", 13)
            draw.drawString(72, 700, BACKGROUND)
            if outline:
                draw.bookmarkPage("background")
                draw.addOutlineEntry("Background", "background", level=1)
            draw.setFont("Helvetica", 11)
            for index, line in enumerate(HYPHENATED):
                draw.drawString(72, 675 - 14 * index, line)
        else:
            draw.setFont("Helvetica-Bold", 16)
            heading = METHODS if number == 3 else "3 Results"
            draw.drawString(72, 700, heading)
            if outline:
                key = f"p{number}"
                draw.bookmarkPage(key)
                draw.addOutlineEntry(heading.split(" ", 1)[1], key, level=0)
            draw.setFont("Helvetica", 11)
            draw.drawString(72, 675, f"Body text of page {number} about hand washing.")
        draw.showPage()
    return _save(draw)


def itinerary_pdf() -> bytes:
    """Two pages, each with its heading "Day N" set high, in the band where running
    headers live, a sentence, and a footer "Printed copies are uncontrolled - Page N"."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setTitle("")
    for number in (1, 2):
        draw.setFont("Helvetica-Bold", 16)
        draw.drawString(72, 750, f"Day {number}")
        draw.setFont("Helvetica", 11)
        draw.drawString(72, 700, f"The group visits site number {number} in the morning.")
        draw.setFont("Helvetica", 9)
        draw.drawString(72, 30, f"Printed copies are uncontrolled - Page {number}")
        draw.showPage()
    return _save(draw)


def table_pdf() -> bytes:
    """One page: a paragraph, a ruled 4 x 3 table (`TABLE_ROWS`), a paragraph."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, Spacer

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    table = Table([list(row) for row in TABLE_ROWS], colWidths=[120, 90, 120])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.75, colors.black)]))
    story = [
        Paragraph("Doses are listed in the table below.", styles["BodyText"]),
        Spacer(1, 12),
        table,
        Spacer(1, 12),
        Paragraph("Give each dose with water.", styles["BodyText"]),
    ]
    SimpleDocTemplate(buffer, pagesize=letter).build(story)
    return buffer.getvalue()


ALARM_ROWS = (
    ("Alarm", "Priority", "Operator action"),
    ("Occlusion downstream", "High", "Check the clamps and relieve the pressure"),
    ("Air in line", "High", "Clear the air and restart"),
    ("Call back", "Low", "Resume the infusion"),
)
"""The rows of `horizontal_rules_pdf`'s table (the first cell of the second row wraps
onto two lines in the row-ruled form)."""

TABLE_NOTE = "a Tones repeat every 10 seconds."
"""A note set right under `horizontal_rules_pdf`'s table, in one cell's place."""

TITLE_BLOCK = ("Sepsis Management Guideline", "Version 2.1", "Approved March 2020")
"""A document's title over its version and approval date, between three rules of one
width (`title_block_pdf`): no table."""

CALLOUT = (
    "Note: the pump keeps its settings for 8 hours.",
    "Warning: never open the door while the clamp is open.",
)
"""Two sentences `horizontal_rules_pdf` sets between three rules of the table's width,
each on its own, as a call-out (no table)."""


def horizontal_rules_pdf(*, every_row: bool) -> bytes:
    """One page with a rule under its running header and one over its footer, a call-out
    (`CALLOUT`) between three rules, and the `ALARM_ROWS` table drawn with no column
    rulings: a rule above the header row, one under it and one under the last row,
    and, when `every_row`, a thin rule under every row. Every rule is 360 points wide,
    the table's width. Cell texts are bold in the header row."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, Spacer

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    left, width = 126, 360

    def running_rules(draw: canvas.Canvas, _: object) -> None:
        draw.setFont("Helvetica", 9)
        draw.drawString(left, 750, "VP-300 Instructions for Use")
        draw.line(left, 744, left + width, 744)
        draw.line(left, 50, left + width, 50)
        draw.drawString(left, 38, "Rev. D")

    def callout(draw: canvas.Canvas, _: object) -> None:
        running_rules(draw, _)
        draw.setFont("Helvetica", 10)
        for y in (230, 195, 160):
            draw.line(left, y, left + width, y)
        for y, sentence in zip((210, 175), CALLOUT, strict=True):
            draw.drawString(left, y, sentence)

    style = [
        ("LINEABOVE", (0, 0), (-1, 0), 1.0, colors.black),
        ("LINEBELOW", (0, 0), (-1, 0), 0.6, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 1.0, colors.black),
        ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
    ]
    if every_row:
        style.append(("LINEBELOW", (0, 1), (-1, -2), 0.25, colors.grey))
    cell = styles["BodyText"]
    rows = [list(ALARM_ROWS[0])] + [
        [Paragraph(row[0], cell), row[1], row[2]] if every_row else list(row)
        for row in ALARM_ROWS[1:]
    ]
    table = Table(rows, colWidths=[70 if every_row else 110, 60, 230 if every_row else 190])
    table.setStyle(TableStyle(style))
    story = [
        Paragraph("Alarms stop the infusion.", styles["BodyText"]),
        Spacer(1, 12),
        table,
        Paragraph(TABLE_NOTE, styles["BodyText"]),
        Spacer(1, 12),
        Paragraph("Press SILENCE to mute the tone for 2 minutes.", styles["BodyText"]),
    ]
    SimpleDocTemplate(
        buffer, pagesize=letter, leftMargin=left, rightMargin=612 - left - width
    ).build(story, onFirstPage=callout)
    return buffer.getvalue()


def title_block_pdf() -> bytes:
    """One page: `TITLE_BLOCK`'s title in 18-point bold between two rules, its version
    and date apart on the line under it over a third rule, then a paragraph."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setTitle("")
    for y in (740, 705, 680):
        draw.line(72, y, 540, y)
    draw.setFont("Helvetica-Bold", 18)
    draw.drawString(72, 715, TITLE_BLOCK[0])
    draw.setFont("Helvetica", 10)
    draw.drawString(72, 688, TITLE_BLOCK[1])
    draw.drawString(400, 688, TITLE_BLOCK[2])
    draw.drawString(72, 650, "Start antibiotics within one hour of recognising sepsis.")
    draw.showPage()
    return _save(draw)


def encrypted_pdf() -> bytes:
    """A one-page PDF that needs the user password "pw"."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter, encrypt="pw")
    draw.drawString(72, 700, "Secret text")
    draw.showPage()
    return _save(draw)


def _text_image(text: str) -> Image.Image:
    image = Image.new("L", (1800, 300), color=255)
    font = ImageFont.load_default(size=110)
    ImageDraw.Draw(image).text((40, 80), text, fill=0, font=font)
    return image


def image_only_pdf(*, text_page: bool = False) -> bytes:
    """A page showing `OCR_WORDS` as a picture only (no text layer); with
    `text_page`, a first page with real text comes before it."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    if text_page:
        draw.setFont("Helvetica", 11)
        draw.drawString(72, 700, "This page has a text layer.")
        draw.showPage()
    draw.drawImage(ImageReader(_text_image(OCR_WORDS)), 36, 500, width=540, height=90)
    draw.showPage()
    return _save(draw)


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty (written by PDFium itself)."""
    document = pdfium.PdfDocument.new()
    buffer = io.BytesIO()
    try:
        document.save(buffer)
    finally:
        document.close()
    return buffer.getvalue()


def truncated_pdf() -> bytes:
    """The first third of `report_pdf`'s bytes."""
    raw = report_pdf()
    return raw[: len(raw) // 3]


GIANT_SIDE = 7200.0
"""The side of `giant_page_pdf`'s square page, in points (100 inches)."""
GIANT_WORDS = "Enormous page marker"
"""The one line of `giant_page_pdf`, in 150 pt Helvetica with its baseline at
(1000, 6000)."""


def giant_page_pdf() -> bytes:
    """One 7200 x 7200 pt page (a few hundred bytes) holding `GIANT_WORDS`: at 1.5
    pixels per point its image would have 10800 x 10800 pixels."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=(GIANT_SIDE, GIANT_SIDE))
    draw.setFont("Helvetica", 150)
    draw.drawString(1000, 6000, GIANT_WORDS)
    draw.showPage()
    return _save(draw)


def fuzz_seed_pdf() -> bytes:
    """Two small pages written uncompressed, so that byte mutations reach the page
    content: a heading with a bookmark, a hyphenated paragraph, a ruled 2 x 3 grid
    with text in it, a running footer, and a page 2 rotated by 90 degrees."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter, pageCompression=0)
    draw.setTitle("Fuzz seed")
    for number in (1, 2):
        draw.setFont("Helvetica-Bold", 16)
        draw.drawString(72, 700, f"{number} Section")
        draw.bookmarkPage(f"s{number}")
        draw.addOutlineEntry("Section", f"s{number}", level=0)
        draw.setFont("Helvetica", 11)
        draw.drawString(72, 675, "Wash hands to prevent infec-")
        draw.drawString(72, 661, "tion in every setting.")
        for x in (72, 200, 328, 456):
            draw.line(x, 560, x, 620)
        for y in (560, 590, 620):
            draw.line(72, y, 456, y)
        draw.drawString(80, 600, "Drug")
        draw.drawString(208, 600, "Dose")
        draw.drawString(80, 570, "Alpha")
        draw.drawString(208, 570, "5 mg")
        draw.setFont("Helvetica", 9)
        draw.drawCentredString(306, 30, f"Page {number} of 2")
        if number == 2:
            draw.setPageRotation(90)
        draw.showPage()
    return _save(draw)


PANEL_TITLE = ("Dosinex (dosivir) for injection", "Dosinex (dosivir) injection")
"""The two lines of `label_panel_pdf`'s title: one label naming two forms."""
PANEL_SECTION = "1 Dosing"
PANEL_CAPTION = (
    "Table 2 Recommended dilution volumes for each vial strength used in adults",
    "and in pediatric patients weighing at least 40 kg with normal renal function",
)
"""A bold caption of 25 words on two lines, over a ruled table."""
PANEL_AFTER_TABLE = "After the table the text goes on about storage of the vials."
PANEL_FRAGMENTS = (
    "100 mg/vial",
    "(dosivir) for injection",
    "Must be reconstituted and",
    "See 17 for PATIENT COUNSELING INFORMATION and",
)
"""Lines of `label_panel_pdf` styled like headings that are none: a quantity, a
fragment starting in lower case, and sentences broken after "and"."""


def label_panel_pdf() -> bytes:
    """Two pages like a drug label's: page 1 a two-line title naming two forms, a
    numbered bold section, body text, a long bold table caption over a ruled 3 x 3
    table, a small note and body text after it; page 2 a carton panel whose large or
    bold lines (`PANEL_FRAGMENTS`) are fragments, each followed by its sentence."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setTitle("")
    draw.setFont("Helvetica-Bold", 20)
    draw.drawString(72, 700, PANEL_TITLE[0])
    draw.drawString(72, 676, PANEL_TITLE[1])
    draw.setFont("Helvetica-Bold", 11)
    draw.drawString(72, 640, PANEL_SECTION)
    draw.setFont("Helvetica", 11)
    body = "Give the dose once a day by slow infusion over thirty to one hundred minutes."
    for index in range(6):
        draw.drawString(72, 620 - 14 * index, body)
    draw.setFont("Helvetica-Bold", 11)
    draw.drawString(72, 520, PANEL_CAPTION[0])
    draw.drawString(72, 506, PANEL_CAPTION[1])
    xs, ys = [72, 222, 372, 522], [490, 470, 450, 430]
    draw.grid(xs, ys)
    draw.setFont("Helvetica", 11)
    for row, y in enumerate((476, 456, 436)):
        for column, x in enumerate((78, 228, 378)):
            draw.drawString(x, y, f"cell {row}{column}")
    draw.setFont("Helvetica", 8)
    draw.drawString(72, 415, "a. Values are for one vial.")
    draw.setFont("Helvetica", 11)
    for index in range(3):
        draw.drawString(72, 390 - 14 * index, PANEL_AFTER_TABLE)
    draw.showPage()
    draw.setFont("Helvetica", 16)
    draw.drawString(72, 650, PANEL_FRAGMENTS[0])
    draw.drawString(72, 600, PANEL_FRAGMENTS[1])
    draw.setFont("Helvetica-Bold", 9)
    draw.drawString(72, 560, PANEL_FRAGMENTS[2])
    draw.setFont("Helvetica", 9)
    draw.drawString(72, 549, "further diluted prior to use.")
    draw.setFont("Helvetica-Bold", 11)
    draw.drawString(72, 510, PANEL_FRAGMENTS[3])
    draw.setFont("Helvetica", 11)
    draw.drawString(72, 496, "FDA-approved patient labeling.")
    for index in range(4):
        draw.drawString(72, 460 - 14 * index, body)
    draw.showPage()
    return _save(draw)


BOMB_WORDS = "Flate bomb marker"
"""The text on `flate_bomb_pdf`'s page, before the blanks it inflates to."""


def flate_bomb_pdf(inflated: int) -> bytes:
    """A one-page PDF, written by hand, whose page content stream (`BOMB_WORDS` then
    blanks) is Flate-compressed and inflates to `inflated` bytes: about a thousandth
    of that in the file (a gigabyte in a 1 MB file)."""
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(f"BT /F1 12 Tf 72 700 Td ({BOMB_WORDS}) Tj ET\n".encode())]
    blanks = b" " * 2**20
    for start in range(0, inflated, len(blanks)):
        parts.append(compressor.compress(blanks[: inflated - start]))
    parts.append(compressor.flush())
    return _one_page_pdf(b"".join(parts))


STROKES_WORDS = "Costly page of strokes"
"""The text on `strokes_pdf`'s page, above its strokes."""


def strokes_pdf(segments: int) -> bytes:
    """A one-page PDF of `STROKES_WORDS` and `segments` stroked lines across the page
    (a few bytes each, compressed): PDFium takes about a minute to render a million
    of them, and milliseconds to read the text."""
    lines = b"".join(
        b"%d %d m %d %d l S\n" % (x, y, 612 - x, 792 - y)
        for x, y in ((50 + (i * 7) % 500, 50 + (i * 13) % 650) for i in range(segments))
    )
    content = f"BT /F1 12 Tf 72 740 Td ({STROKES_WORDS}) Tj ET\n1 w\n".encode() + lines
    return _one_page_pdf(zlib.compress(content, 9))


def _one_page_pdf(stream: bytes) -> bytes:
    """A one-page US Letter PDF, written by hand, whose page content is the Flate
    `stream` and whose font F1 is Helvetica."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
    pdf += b"startxref\n%d\n%%%%EOF\n" % table
    return bytes(pdf)


CARRIED = ("The committee decided that", "every ward keeps a spare kit.")
"""A sentence whose first line ends column 1 of each page of `columns_pdf` and whose
second line starts column 2."""
MARGIN_NOTE = "printed for ward use only"
"""A note printed up the left margin of every page of `columns_pdf`."""


def columns_pdf(pages: int = 3) -> bytes:
    """Pages of two columns, a footer, a sentence carried from column 1 into column 2
    (`CARRIED`), and a rotated note in the left margin (`MARGIN_NOTE`)."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    for number in range(1, pages + 1):
        draw.setFont("Helvetica", 10)
        draw.drawString(60, 700, "Each ward keeps its own emergency supplies.")
        draw.drawString(60, 686, CARRIED[0])
        draw.setFont("Helvetica", 8)
        draw.drawCentredString(306, 30, f"Ward handbook, page {number}")
        draw.saveState()
        draw.translate(20, 300)
        draw.rotate(90)
        draw.drawString(0, 0, MARGIN_NOTE)
        draw.restoreState()
        draw.setFont("Helvetica", 10)
        draw.drawString(250, 700, CARRIED[1])
        draw.showPage()
    return _save(draw)


def clauses_and_schedule_pdf() -> bytes:
    """A 3-page contract: clause headings numbered "2." and "11." (and "2.1"), set bold
    at one size, and on the last page "Schedule 1: Details of Processing" in the same
    style, each followed by a body line."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setTitle("Data Processing Agreement")
    pages = (
        (("2. Sub-processors", "The Processor shall not engage Sub-processors without consent."),
         ("2.1 Approval", "Sub-processors may be engaged with 30 days' written notice.")),
        (("11. Governing Law", "This Agreement is governed by the law of England and Wales."),),
        (("Schedule 1: Details of Processing",
          "The subject matter of the processing is clinical audit analytics."),),
    )  # fmt: skip
    for sections in pages:
        top = 700
        for heading, body in sections:
            draw.setFont("Helvetica-Bold", 13)
            draw.drawString(72, top, heading)
            draw.setFont("Helvetica", 11)
            draw.drawString(72, top - 22, body)
            top -= 60
        draw.showPage()
    return _save(draw)


DOSE_ROWS = (
    ("Body weight", "Initial dose (4 mg/kg)", "Maintenance dose (2 mg/kg)"),
    ("5.0 to 8.0 kg", "1/2 tablet", "1/4 tablet"),
    ("8.1 to 15.0 kg", "1 tablet", "1/2 tablet"),
    ("15.1 to 22.0 kg", "1 1/2 tablets", "3/4 tablet"),
)
"""A dose table whose first row names its columns in the body's font."""
HEADERLESS_TABLES = (
    (("Loading", "200 mg"), ("Day 2", "100 mg"), ("Day 3", "100 mg")),
    (
        ("Days 1 to 3", "Half a tablet twice daily"),
        ("Days 4 to 7", "1 tablet twice daily"),
        ("Day 8 onward", "2 tablets once daily"),
    ),
    (("Active substance", "Carprofen"), ("Strength", "50 mg"), ("Pack size", "10 tablets")),
)
"""Tables without a header row: a first row that holds a dose, a schedule whose later
rows start with a value in one column, a label's names and values."""


def plain_header_tables_pdf() -> bytes:
    """One page: `DOSE_ROWS` and each of `HEADERLESS_TABLES` as fully ruled tables in
    one font (the dose table's first row set apart by a grey background only, as a
    word processor's header style often is)."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, Spacer

    buffer = io.BytesIO()
    grid = [("GRID", (0, 0), (-1, -1), 0.5, colors.black)]
    dose = Table([list(row) for row in DOSE_ROWS])
    dose.setStyle(TableStyle([*grid, ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey)]))
    body = getSampleStyleSheet()["BodyText"]
    story = [Paragraph("Give the dose for the dog's weight.", body), dose, Spacer(1, 24)]
    for rows in HEADERLESS_TABLES:
        table = Table([list(row) for row in rows])
        table.setStyle(TableStyle(grid))
        story += [Paragraph("As follows.", body), table, Spacer(1, 24)]
    SimpleDocTemplate(buffer, pagesize=letter).build(story)
    return buffer.getvalue()


STEPS = ("Stop the transfusion at once.", "Keep the line open with saline.")
"""The items of `steps_and_wrapped_table_pdf`'s numbered list."""
AFTER_STEPS = (
    "A rise in temperature of less than 1.5 degrees with no other sign is a mild reaction, and "
    "the transfusion may start again at a slower rate once a doctor agrees."
)
"""The paragraph right after the list, at the margin and the list's line pitch."""
COMPONENT_ROWS = (
    ("Component", "Storage", "Rate"),
    ("Red cells", "2 to 6 degrees in a monitored refrigerator", "90 to 120 minutes"),
    ("Fresh frozen plasma", "Thawed, then 2 to 6 degrees for up to 24 hours", "10 to 20 mL/kg"),
)
"""A ruled table whose first column is so narrow that "Fresh frozen plasma" wraps."""


def steps_and_wrapped_table_pdf() -> bytes:
    """One page: a numbered list of `STEPS` with `AFTER_STEPS` right under it, then
    `COMPONENT_ROWS` as a fully ruled table whose first and second columns wrap
    their longer cells onto a second line."""
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.platypus import ListFlowable, ListItem, Paragraph, Spacer

    buffer = io.BytesIO()
    body = getSampleStyleSheet()["BodyText"]
    cell = ParagraphStyle("cell", parent=body, fontSize=9, leading=11)
    steps = ListFlowable(
        [ListItem(Paragraph(step, body), leftIndent=14) for step in STEPS],
        bulletType="1",
        leftIndent=16,
    )
    table = Table(
        [[Paragraph(text, cell) for text in row] for row in COMPONENT_ROWS],
        colWidths=[60, 140, 110],
    )
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    story = [Paragraph("If a reaction is suspected, take these steps:", body), steps]
    story += [Paragraph(AFTER_STEPS, body), Spacer(1, 18), table]
    SimpleDocTemplate(buffer, pagesize=letter).build(story)
    return buffer.getvalue()


WRAPPED_DOSE_ROWS = (
    ("Reason for treatment", "Usual dose", "How long"),
    ("Stroke prevention in atrial fibrillation", "5 mg twice a day", "Long term"),
    ("Treating a new DVT or pulmonary embolism", "10 mg twice a day for the first 7 days, "
     "then 5 mg twice a day", "At least 3 months"),
    ("After knee replacement surgery", "2.5 mg twice a day", "10 to 14 days"),
)  # fmt: skip
"""A ruled table whose first and second columns wrap a row's cells (seven words of a
name, a dose that goes on "days, then ...")."""


def _paragraph_table_pdf(rows: tuple[tuple[str, ...], ...], widths: list[int]) -> bytes:
    """One page: `rows` as a fully ruled table of wrapping paragraphs, columns `widths`
    points wide ("<br/>" in a cell breaks its line)."""
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph

    buffer = io.BytesIO()
    cell = ParagraphStyle("cell", fontName="Helvetica", fontSize=9, leading=11)
    table = Table([[Paragraph(text, cell) for text in row] for row in rows], colWidths=widths)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    SimpleDocTemplate(buffer, pagesize=letter).build([table])
    return buffer.getvalue()


def wrapped_dose_table_pdf() -> bytes:
    """One page: `WRAPPED_DOSE_ROWS` as a fully ruled table with narrow first two columns."""
    return _paragraph_table_pdf(WRAPPED_DOSE_ROWS, [150, 150, 100])


STACKED_DOSE_ROWS = (
    ("Medicine", "Dose", "How often"),
    ("paracetamol 500 mg tablets<br/>ibuprofen 200 mg tablets", "1 or 2 tablets<br/>1 tablet",
     "every 4 to 6 hours<br/>every 8 hours"),
    ("aspirin 75 mg tablets", "1 tablet", "once a day"),
)  # fmt: skip
"""A ruled table with two rows of lower-case names set between one pair of rulings
(line breaks, not wrapping): which dose goes with which medicine is by line only."""


def stacked_dose_table_pdf() -> bytes:
    """One page: `STACKED_DOSE_ROWS` as a fully ruled table with wide columns."""
    return _paragraph_table_pdf(STACKED_DOSE_ROWS, [180, 120, 120])


FEE_ROWS = (
    ("Payment", "Amount", "When due"),
    *((f"Fee item {n}", f"£{10 * n}", f"Within {n} days") for n in range(1, 31)),
)
"""A fee schedule long enough that a page break splits it."""


def split_fee_table_pdf(*, text_between: bool = False, other_columns: bool = False) -> bytes:
    """`FEE_ROWS` as a fully ruled table under a bold header row, split by a page
    break after its first rows: page 2 goes on with its rows, the header not
    repeated; with
    `text_between`, page 2 opens with a paragraph before the rest of the table
    (another table, for all a reader can tell); with `other_columns`, page 2's rows
    are set in columns of other widths from the same left edge (another table of as
    many columns)."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, Spacer

    buffer = io.BytesIO()
    body = getSampleStyleSheet()["BodyText"]
    grid = ("GRID", (0, 0), (-1, -1), 0.5, colors.black)
    widths = [200, 100, 140]
    first = Table(FEE_ROWS[:8], colWidths=widths, hAlign="LEFT")
    rest = Table(
        FEE_ROWS[8:], colWidths=[100, 200, 140] if other_columns else widths, hAlign="LEFT"
    )
    first.setStyle(TableStyle([grid, ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold")]))
    rest.setStyle(TableStyle([grid]))
    between = [Paragraph("Other charges are listed below.", body)] if text_between else []
    story = [
        Paragraph("The following fees are due under this agreement.", body),
        Spacer(1, 400),
        first,
        PageBreak(),
        *between,
        rest,
    ]
    SimpleDocTemplate(buffer, pagesize=letter).build(story)
    return buffer.getvalue()


BARE_LEAD_IN = "If your child has been given too much, take these steps:"
BARE_STEPS = (
    ("1 Stop giving the medicine.",),
    ("2 Call your doctor or the poisons line at once and", "tell them how much was taken."),
    ("3 Take the bottle with you to the hospital.",),
)
"""Steps numbered without a mark, each a tuple of its lines (step 2 wraps at the margin)."""
BARE_PARAGRAPH = (
    "The trial enrolled children from four hospitals over two years.",
    "4 Children left the trial early and were not counted.",
)
"""A paragraph whose second line opens with the number after the last step's, after a
sentence: no list item, since a paragraph stands between."""


def bare_numbered_steps_pdf() -> bytes:
    """One page at one line pitch and one left margin, no indent and no gap:
    `BARE_LEAD_IN`, the lines of `BARE_STEPS`, then the two lines of `BARE_PARAGRAPH`."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    draw.setFont("Helvetica", 10)
    lines = (BARE_LEAD_IN, *(line for step in BARE_STEPS for line in step), *BARE_PARAGRAPH)
    for number, line in enumerate(lines):
        draw.drawString(72, 700 - 12 * number, line)
    draw.showPage()
    return _save(draw)


LETTERHEAD = "Willowbank Veterinary Clinic"
"""Centred on the page in `headings_pdf`, in the style of the heading under it."""
SHEET_HEADING = "Aftercare Sheet for Dogs"
WRAPPED_HEADINGS = (
    ("Caring for the wound in the first", "fortnight after surgery"),
    ("Medicines to give at home each", "morning with food"),
    ("5.1 Walks, play and rest in the", "weeks before the stitches come out"),
    ("When to call the", "clinic or the out-of-hours service"),
)
"""Headings on two lines: left-aligned, centred, with a hanging indent, and set
flush right."""


def headings_pdf(*, outline: bool = False) -> bytes:
    """One page: `LETTERHEAD` centred in 16-point bold, `SHEET_HEADING` under it at
    the left margin in the same font, then each of `WRAPPED_HEADINGS` (left-aligned,
    centred, hanging indent, flush right) in 16-point bold, each heading followed by
    a paragraph of three 10-point lines. With `outline`, a bookmark names each
    heading, the letterhead and the sheet title as one."""
    draw = canvas.Canvas(io.BytesIO(), pagesize=letter)
    y = 740.0
    if outline:
        titles = [f"{LETTERHEAD} {SHEET_HEADING}", *(" ".join(h) for h in WRAPPED_HEADINGS)]
        for number, title in enumerate(titles):
            draw.bookmarkPage(f"h{number}")
            draw.addOutlineEntry(title, f"h{number}", level=0)

    def heading(text: str, x: float | None = None, *, right: bool = False) -> None:
        nonlocal y
        draw.setFont("Helvetica-Bold", 16)
        if right:
            draw.drawRightString(540, y, text)
        elif x is None:
            draw.drawCentredString(306, y, text)
        else:
            draw.drawString(x, y, text)
        y -= 20

    def paragraph() -> None:
        nonlocal y
        draw.setFont("Helvetica", 10)
        y -= 6
        for line in (
            "Check the wound twice a day and keep your dog from licking or biting it",
            "while it heals; a little redness is normal for the first three days",
            "after the operation.",
        ):
            draw.drawString(72, y, line)
            y -= 12
        y -= 14

    heading(LETTERHEAD)
    heading(SHEET_HEADING, 72)
    paragraph()
    (left, centred, hanging, flush_right) = WRAPPED_HEADINGS
    heading(left[0], 72)
    heading(left[1], 72)
    paragraph()
    heading(centred[0])
    heading(centred[1])
    paragraph()
    heading(hanging[0], 72)
    heading(hanging[1], 96)
    paragraph()
    heading(flush_right[0], right=True)
    heading(flush_right[1], right=True)
    paragraph()
    draw.showPage()
    return _save(draw)
