"""Tests of DOCX ingest: headings, lists, tables, page breaks and hostile archives."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from docx import Document
from docx.document import Document as WordDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.text.run import Run

from helpers.fuzz import declare_size
from quoteproof.errors import IngestError
from quoteproof.ingest.office import archive as docx_archive
from quoteproof.ingest.office.docx import parse_docx
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.model import ParsedDocument
from quoteproof.store.open import open_store


def _save(document: WordDocument, path: Path) -> bytes:
    document.save(str(path))
    return path.read_bytes()


def _view(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.section) for b in doc.blocks]


def _report(tmp_path: Path) -> bytes:
    """Title, headings at three levels, lists, a table with merged cells, two breaks."""
    document = Document()
    document.add_paragraph("Dosing Report", style="Title")
    document.add_heading("Introduction", level=1)
    document.add_paragraph("First   paragraph,\twith a tab.")
    document.add_paragraph("Check the label.", style="List Bullet")
    document.add_paragraph("Weigh the patient.", style="List Number")
    document.add_heading("Adults", level=2)
    paragraph = document.add_paragraph("Give 200 mg on day 1. ")
    paragraph.add_run().add_break(WD_BREAK.PAGE)
    paragraph.add_run("Then 100 mg daily.")
    table = document.add_table(rows=3, cols=3)
    for column, name in enumerate(("Day", "Dose", "Route")):
        table.cell(0, column).text = name
    table.cell(1, 0).text, table.cell(1, 1).text = "1", "200 mg"
    table.cell(2, 0).text, table.cell(2, 1).text = "2-5", "100 mg"
    table.cell(1, 2).merge(table.cell(2, 2)).text = "IV"
    document.add_page_break()
    document.add_heading("Renal impairment", level=3)
    document.add_paragraph("Not recommended.")
    document.add_paragraph("Monitor eGFR.", style="List Bullet")
    document.add_heading("Storage", level=1)
    document.add_paragraph("Keep below 30 °C.")
    return _save(document, tmp_path / "report.docx")


def test_blocks_sections_and_text(tmp_path: Path) -> None:
    doc = parse_docx(_report(tmp_path), "dir/report.docx")
    top = ("Dosing Report",)
    intro, adults = (*top, "Introduction"), (*top, "Introduction", "Adults")
    renal = (*adults, "Renal impairment")
    expected = [
        ("heading", "Dosing Report", top),
        ("heading", "Introduction", intro),
        ("paragraph", "First paragraph, with a tab.", intro),
        ("list", "Check the label.\nWeigh the patient.", intro),
        ("heading", "Adults", adults),
        ("paragraph", "Give 200 mg on day 1. Then 100 mg daily.", adults),
        ("table", "Day | Dose | Route\n1 | 200 mg | IV\n2-5 | 100 mg", adults),
        ("heading", "Renal impairment", renal),
        ("paragraph", "Not recommended.", renal),
        ("list", "Monitor eGFR.", renal),
        ("heading", "Storage", (*top, "Storage")),
        ("paragraph", "Keep below 30 °C.", (*top, "Storage")),
    ]
    assert _view(doc) == expected
    assert doc.text == "\n\n".join(text for _, text, _ in expected)
    assert doc.format == "docx"
    assert doc.title == "Dosing Report"
    assert doc.language == "en"


def test_explicit_page_breaks_give_page_starts(tmp_path: Path) -> None:
    doc = parse_docx(_report(tmp_path), "report.docx")
    assert doc.layout is not None
    second = doc.text.index("Then 100 mg daily.")
    third = doc.text.index("Renal impairment")
    assert doc.layout.page_starts == (0, second, third)
    pages = {doc.text[b.start : b.end]: doc.layout.pages_of(b.start, b.end) for b in doc.blocks}
    assert pages["Introduction"] == (1,)
    assert pages["Give 200 mg on day 1. Then 100 mg daily."] == (1, 2)
    assert pages["Day | Dose | Route\n1 | 200 mg | IV\n2-5 | 100 mg"] == (2,)
    assert pages["Keep below 30 °C."] == (3,)


def test_no_saved_breaks_means_no_layout(tmp_path: Path) -> None:
    document = Document()
    document.add_heading("Only", level=1)
    document.add_paragraph("One page.")
    doc = parse_docx(_save(document, tmp_path / "plain.docx"), "plain.docx")
    assert doc.layout is None
    assert _view(doc) == [("heading", "Only", ("Only",)), ("paragraph", "One page.", ("Only",))]


def _rendered_break(run: Run) -> None:
    run._r.append(OxmlElement("w:lastRenderedPageBreak"))


def test_word_rendered_breaks_win_and_split_inside_a_paragraph(tmp_path: Path) -> None:
    """As Word saves: a hard break is followed by a rendered break; count it once."""
    document = Document()
    paragraph = document.add_paragraph("Alpha beta ")
    _rendered_break(paragraph.add_run())
    paragraph.add_run("gamma delta.")
    document.add_paragraph("Page two ends here.").add_run().add_break(WD_BREAK.PAGE)
    third = document.add_paragraph()
    _rendered_break(third.add_run())
    third.add_run("Page three.")
    doc = parse_docx(_save(document, tmp_path / "word.docx"), "word.docx")
    assert doc.layout is not None
    assert doc.layout.page_starts == (0, doc.text.index("gamma"), doc.text.index("Page three"))


def test_page_break_before_and_section_breaks(tmp_path: Path) -> None:
    document = Document()
    document.add_paragraph("Cover.")
    document.add_paragraph("Chapter one.").paragraph_format.page_break_before = True
    document.add_section()  # a new-page section break after "Chapter one."
    document.add_paragraph("Chapter two.")
    doc = parse_docx(_save(document, tmp_path / "sections.docx"), "sections.docx")
    assert doc.layout is not None
    starts = (0, doc.text.index("Chapter one."), doc.text.index("Chapter two."))
    assert doc.layout.page_starts == starts


def test_title_language_and_fallbacks(tmp_path: Path) -> None:
    document = Document()
    document.core_properties.title = "  Core   Title "
    document.core_properties.language = "fr-FR"
    document.add_paragraph("Styled Title", style="Title")
    doc = parse_docx(_save(document, tmp_path / "a.docx"), "a.docx")
    assert (doc.title, doc.language) == ("Core Title", "fr-FR")

    document = Document()
    document.core_properties.title = ""
    document.add_paragraph("Body first.")
    document.add_heading("First Heading", level=2)
    assert parse_docx(_save(document, tmp_path / "b.docx"), "b.docx").title == "First Heading"

    document = Document()
    document.core_properties.title = ""
    document.add_paragraph("No headings at all.")
    assert parse_docx(_save(document, tmp_path / "c.docx"), "x/c-notes.docx").title == "c-notes"


def test_outline_level_numbering_and_horizontal_merge(tmp_path: Path) -> None:
    document = Document()
    custom = document.add_paragraph("Custom Heading")
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), "0")
    custom._p.get_or_add_pPr().append(outline)
    numbered = document.add_paragraph("Numbered directly")
    num_pr = numbered._p.get_or_add_pPr().get_or_add_numPr()
    num_pr.get_or_add_numId().val = 1
    num_pr.get_or_add_ilvl().val = 0
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Wide header"
    table.cell(1, 0).text, table.cell(1, 1).text, table.cell(1, 2).text = "a", "b", "c"
    doc = parse_docx(_save(document, tmp_path / "o.docx"), "o.docx")
    section = ("Custom Heading",)
    assert _view(doc) == [
        ("heading", "Custom Heading", section),
        ("list", "Numbered directly", section),
        ("table", "Wide header\na | b | c", section),
    ]


def test_empty_and_contents_paragraphs_do_not_end_a_list(tmp_path: Path) -> None:
    document = Document()
    document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("Introduction\t1", style="toc 1")
    document.add_paragraph("First item", style="List Bullet")
    document.add_paragraph("")
    document.add_paragraph("Second item", style="List Bullet")
    document.add_paragraph("After.")
    doc = parse_docx(_save(document, tmp_path / "l.docx"), "l.docx")
    assert _view(doc) == [("list", "First item\nSecond item", ()), ("paragraph", "After.", ())]


def test_only_visible_text_is_read(tmp_path: Path) -> None:
    document = Document()
    paragraph = document.add_paragraph("Kept")
    w = nsdecls("w")
    for xml in (
        f'<w:del {w} w:id="1" w:author="a"><w:r><w:delText>DELETED</w:delText></w:r></w:del>',
        f'<w:ins {w} w:id="2" w:author="a"><w:r><w:t xml:space="preserve"> new</w:t></w:r></w:ins>',
        f"<w:r {w}><w:instrText>PAGEREF _Toc1 \\h</w:instrText></w:r>",
        f"<w:r {w}><w:rPr><w:vanish/></w:rPr><w:t>HIDDEN</w:t></w:r>",
        f'<w:hyperlink {nsdecls("w", "r")} r:id="rId99"><w:r><w:t xml:space="preserve"> link'
        "</w:t></w:r></w:hyperlink>",
    ):
        paragraph._p.append(parse_xml(xml))
    doc = parse_docx(_save(document, tmp_path / "v.docx"), "v.docx")
    assert doc.text == "Kept new link"


def test_deterministic(tmp_path: Path) -> None:
    raw = _report(tmp_path)
    assert parse_docx(raw, "r.docx") == parse_docx(raw, "r.docx")


def _cause(raw: bytes) -> str:
    with pytest.raises(IngestError) as info:
        parse_docx(raw, "in/file.docx")
    assert info.value.path == "in/file.docx"
    return info.value.cause


def test_not_a_zip_and_legacy_word() -> None:
    assert _cause(b"Just some text, not a zip.") == "not a DOCX file (not a ZIP archive)"
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512)
    assert _cause(ole) == "encrypted or legacy Word file (OLE container), not DOCX"


def test_zip_without_document_part() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    assert _cause(buffer.getvalue()) == "not a DOCX file (no word/document.xml)"


def test_truncated_and_corrupt_docx(tmp_path: Path) -> None:
    raw = _report(tmp_path)
    assert _cause(raw[: len(raw) // 2]).startswith("corrupt DOCX: damaged ZIP archive")
    source = zipfile.ZipFile(io.BytesIO(raw))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "word/document.xml":
                data = data[: len(data) // 2]
            archive.writestr(member, data)
    assert _cause(buffer.getvalue()).startswith("corrupt DOCX: ")


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_deep_nesting_is_refused_by_the_xml_parser(tmp_path: Path) -> None:
    # libxml2 stops at 256 levels, so 50,000 nested content controls cost no more.
    members = _members(_save(Document(), tmp_path / "deep.docx"))
    deep = "<w:sdt><w:sdtContent>" * 50_000 + "</w:sdtContent></w:sdt>" * 50_000
    body = members["word/document.xml"].decode()
    members["word/document.xml"] = body.replace("<w:body>", f"<w:body>{deep}", 1).encode()
    assert _cause(_zip(members)).startswith("corrupt DOCX: Excessive depth in document: 256")


def _members(raw: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_zip_bomb_by_declared_size_is_refused_unread() -> None:
    raw = declare_size(_zip({"word/document.xml": b"<w:document/>"}), "word/document.xml", 2**31)
    assert _cause(raw) == (
        "DOCX rejected as a zip bomb: word/document.xml would expand to 2.0 GiB (limit 512 MiB)"
    )


def test_zip_bomb_by_compression_ratio() -> None:
    zeros = bytes(60 * 2**20)  # deflates to about 60 KiB: a ratio near 1000
    raw = _zip({"word/document.xml": b"<w:document/>", "word/media/image1.png": zeros})
    cause = _cause(raw)
    assert cause.startswith(
        "DOCX rejected as a zip bomb: word/media/image1.png would expand to 60.0 MiB, "
    )
    assert cause.endswith("times its compressed size (limit 100 above 50 MiB)")


def test_zip_bomb_by_total_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docx_archive, "MAX_UNCOMPRESSED_BYTES", 2**20)
    raw = _zip({"word/document.xml": bytes(600_000), "word/styles.xml": bytes(600_000)})
    assert _cause(raw) == (
        "DOCX rejected as a zip bomb: its 2 members would expand to 1.1 MiB (limit 1 MiB)"
    )


def _with_document(raw: bytes, document: bytes, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """The DOCX `raw` with `word/document.xml` replaced by `document`, compressed by `method`."""
    source = zipfile.ZipFile(io.BytesIO(raw))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in source.infolist():
            if member.filename == "word/document.xml":
                archive.writestr(member.filename, document, compress_type=method)
            else:
                archive.writestr(member.filename, source.read(member))
    return buffer.getvalue()


def _lying_member(raw: bytes, inflated: int) -> bytes:
    """The DOCX `raw` with `word/document.xml` padded by a comment of `inflated` bytes,
    deflated to a thousandth of that, but declaring 5000 bytes."""
    xml = zipfile.ZipFile(io.BytesIO(raw)).read("word/document.xml")
    head, _, tail = xml.partition(b"?>")
    padded = _with_document(raw, head + b"?><!--" + b"a" * inflated + b"-->" + tail)
    return declare_size(padded, "word/document.xml", 5000)


def test_a_member_inflating_past_its_declared_size_is_corrupt(tmp_path: Path) -> None:
    bomb = _lying_member(_report(tmp_path), 8 * 2**20)
    assert _cause(bomb) == "corrupt DOCX: Bad CRC-32 for file 'word/document.xml'"


def test_a_lying_member_that_inflates_past_the_memory_limit_fails_the_file(
    tmp_path: Path,
) -> None:
    # zipfile inflates a member's data in one call before cutting it to the declared
    # size: the parsing process's memory limit bounds it.
    bomb, fine = tmp_path / "files" / "bomb.docx", tmp_path / "files" / "fine.docx"
    bomb.parent.mkdir()
    bomb.write_bytes(_lying_member(_report(tmp_path), 256 * 2**20))
    fine.write_bytes(_report(tmp_path))
    settings = IngestSettings(limits=ParseLimits(memory_mb=64, memory_per_mb=0))
    store = open_store(str(tmp_path / "idx"), create=True)
    try:
        results = list(ingest_files(store, [bomb, fine], settings))
    finally:
        store.close()
    size = f"{bomb.stat().st_size / 1000:.0f} KB"
    assert [(r.status, r.error) for r in results] == [
        ("failed", f"parsing needs more than 64 MB of memory (the limit for a file of {size})"),
        ("added", None),
    ]


def test_members_compressed_by_other_methods_are_refused_unread(tmp_path: Path) -> None:
    raw = _report(tmp_path)
    xml = zipfile.ZipFile(io.BytesIO(raw)).read("word/document.xml")
    assert _cause(_with_document(raw, xml, zipfile.ZIP_BZIP2)) == (
        "DOCX rejected: word/document.xml uses compression method 12 "
        "(only stored and deflate are read)"
    )
    assert parse_docx(_with_document(raw, xml, zipfile.ZIP_STORED), "x.docx").text == (
        parse_docx(raw, "x.docx").text
    )
