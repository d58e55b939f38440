"""Fuzzing every ingest parser with hostile input (hypothesis, bounded).

The contract, for any bytes under any supported name: the pipeline's per-file parse
(`parsing.parse_and_chunk`, what `quoteproof ingest` and the server run) either
gives a valid document (canonical text a storable str; every block, chunk and page
start inside it) or a one-line cause, and the format parser either returns a valid
document or raises `IngestError` whose message names the file. Never another
exception type, never a hang: inputs are small and each test's examples are counted.
Run as ingest runs it, in a child process under (small) limits, the contract holds
too, and files that blow up (inflate, amplify, nest, run quadratic) fail with a
cause that names the limit they met.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from docx import Document
from docx.enum.text import WD_BREAK
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from helpers.fuzz import declare_size, mutated, rezip, zip_member
from helpers.pdfs import flate_bomb_pdf, fuzz_seed_pdf, strokes_pdf
from quoteproof.errors import IngestError
from quoteproof.ingest.formats import SUPPORTED_SUFFIXES, ParseOptions, format_for
from quoteproof.ingest.html.parse import parse_html
from quoteproof.ingest.html.spl import parse_spl
from quoteproof.ingest.office.archive import DOCUMENT_PART
from quoteproof.ingest.office.docx import MALFORMED_PART, parse_docx
from quoteproof.ingest.parse_limits import ParseLimits
from quoteproof.ingest.parse_worker import ParseWorker
from quoteproof.ingest.parsing import IngestSettings, Parsed, parse_and_chunk
from quoteproof.ingest.plain.markdown import parse_markdown
from quoteproof.ingest.plain.tables import parse_json
from quoteproof.ingest.plain.text import parse_text
from quoteproof.model import ParsedDocument

FOLDER = Path("/fuzz/in")
SETTINGS = IngestSettings()


def fuzz(examples: int) -> settings:
    """Hypothesis settings for one fuzz test: `examples` inputs, a per-input deadline
    that only a runaway parse would miss (10 s for inputs of a few KB that parse in
    milliseconds, first imports and a busy machine included), and no health check
    that small slow parsers trip."""
    return settings(
        max_examples=examples,
        deadline=10_000,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- the contract ---------------------------------------------------------------------


def check_document(document: ParsedDocument) -> None:
    """A parsed document is valid: storable text, spans in order inside it."""
    text = document.text
    assert isinstance(text, str) and isinstance(document.title, str)
    text.encode("utf-8")  # no lone surrogate: the store must be able to hold it
    document.title.encode("utf-8")
    end = 0
    for block in document.blocks:
        assert end <= block.start <= block.end <= len(text), block
        end = block.end
    table_blocks = [(b.start, b.end) for b in document.blocks if b.kind == "table"]
    end = 0
    for table in document.tables:  # cells in order, inside one table block
        assert table.rows and all(row.cells for row in table.rows), table
        assert any(
            lo <= table.rows[0].start and table.rows[-1].end <= hi for lo, hi in table_blocks
        )
        for row in table.rows:
            for start, stop in row.cells:
                assert end <= start <= stop <= len(text), table
                end = stop
    if document.layout is not None:
        starts = document.layout.page_starts
        assert list(starts) == sorted(starts) and all(0 <= s <= len(text) for s in starts)
        for run in document.layout.char_runs:
            assert run.start >= 0 and run.start + run.length <= len(text), run


def check_pipeline(raw: bytes, name: str) -> Parsed | None:
    """Run the pipeline's per-file parse on `raw` named `name`; check the contract.

    Returns the parse, or None when the file was refused (with a one-line cause that
    is not the catch-all for an unexpected exception).
    """
    outcome = parse_and_chunk(raw, FOLDER / name, SETTINGS)
    if isinstance(outcome, str):
        assert len(outcome.splitlines()) == 1, outcome
        assert not outcome.startswith("cannot parse:"), outcome
        return None
    check_document(outcome.document)
    text = outcome.document.text
    assert "\x00" not in text and outcome.spans
    for span in outcome.spans:
        assert 0 <= span.start < span.end <= len(text), span
        assert text[span.start : span.end].strip(), span
    return outcome


def check_parser(parse: Callable[[bytes, str], ParsedDocument], raw: bytes, name: str) -> None:
    """Call a format parser directly: a valid document, or an `IngestError` naming
    the file (never another exception)."""
    path = str(FOLDER / name)
    try:
        document = parse(raw, path)
    except IngestError as exc:
        assert exc.path == path and str(exc).startswith(f"{path}: ")
        assert len(exc.cause.splitlines()) == 1, exc.cause
        return
    check_document(document)


def check_both(parse: Callable[[bytes, str], ParsedDocument], raw: bytes, name: str) -> None:
    check_parser(parse, raw, name)
    check_pipeline(raw, name)


# --- seeds: one small valid file per format -------------------------------------------

TEXT_SEED = b"Hand hygiene\r\n\r\nWash hands often. Use soap.\n\n\n  Dry them well.\n"
MARKDOWN_SEED = (
    b"---\ntitle: x\n---\n# Shingles\n\nA rash *hurts*.\n\n## Signs\n\n- pain\n  - itch\n"
    b"1. fever\n\n> quoted\n> > deeper\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n\n"
    b"    indented\n\n<div>raw html</div>\n\n<!-- comment -->\n"
)
HTML_SEED = (
    b"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Flu</title></head>"
    b"<body><nav>menu</nav><main><h1>Flu</h1><p>Flu is an <b>infection</b>.</p>"
    b"<ul><li>fever</li><li>cough<ul><li>dry</li></ul></li></ul><pre>a\n  b</pre>"
    b"<table><caption>Doses</caption><tr><th>Drug</th><td>5 mg</td></tr></table>"
    b"<div><a href='#a'>Top</a><a href='#b'>x</a><a href='#c'>y</a></div>"
    b"<h2>More</h2><blockquote>Rest.<br>Drink.</blockquote></main></body></html>"
)
CSV_SEED = b'\xef\xbb\xbfname,dose,"note"\nAlpha,5,"two\nlines"\n\n,,\nBeta,10\n'
TSV_SEED = b"name\tdose\nAlpha\t5\nBeta\t10\n"
JSON_SEED = b'{"rows": [{"name": "Alpha", "dose": 1.50, "ok": true, "tags": [1, {"a": null}]},\n'
JSON_SEED += b' {"name": "Beta", "extra": -0}]}\n'
SPL_SEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="urn:hl7-org:v3"><title>Zorvex <br/>label</title>
<languageCode code="en-US"/>
<component><structuredBody>
<component><section><subject><manufacturedProduct><manufacturedProduct><name>Zorvex</name>
</manufacturedProduct></manufacturedProduct></subject></section></component>
<component><section><title>2 DOSAGE</title><text>
<paragraph>Give ZORVEX<sup>R</sup> once<br/>daily.</paragraph>
<list><item>Adults<list><item>200 mg</item></list></item></list>
<table><caption>Doses</caption><thead><tr><th>A</th><th>B</th></tr></thead>
<tbody><tr><td>1<footnote ID="f1">Once.</footnote></td><td><footnoteRef IDREF="f1"/></td></tr>
</tbody></table><renderMultiMedia><caption>Figure</caption></renderMultiMedia>
</text><component><section><title>2.1 Renal</title><text>Loose text.</text></section>
</component></section></component>
</structuredBody></component></document>
"""


@cache
def docx_seed() -> bytes:
    """A small DOCX: title, headings, list items, a table, a page break."""
    document = Document()
    document.add_paragraph("Dosing", style="Title")
    document.add_heading("Adults", level=1)
    paragraph = document.add_paragraph("Give 200 mg. ")
    paragraph.add_run().add_break(WD_BREAK.PAGE)
    paragraph.add_run("Then 100 mg.")
    document.add_paragraph("Check the label.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(1, 1).text = "Day", "5 mg"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@cache
def pdf_seed() -> bytes:
    return fuzz_seed_pdf()


SEEDS: dict[str, Callable[[], bytes]] = {
    ".txt": lambda: TEXT_SEED,
    ".md": lambda: MARKDOWN_SEED,
    ".html": lambda: HTML_SEED,
    ".csv": lambda: CSV_SEED,
    ".tsv": lambda: TSV_SEED,
    ".json": lambda: JSON_SEED,
    ".xml": lambda: SPL_SEED,
    ".docx": docx_seed,
    ".pdf": pdf_seed,
}
"""A valid seed file per suffix; every suffix the ingest accepts has one."""


def _direct(suffix: str) -> Callable[[bytes, str], ParsedDocument]:
    found = format_for(suffix)
    assert found is not None
    return lambda raw, path: found.parse(raw, path, ParseOptions())


def test_every_suffix_has_a_valid_seed() -> None:
    assert set(SEEDS) >= set(SUPPORTED_SUFFIXES) - {".htm", ".markdown"}
    for suffix, seed in SEEDS.items():
        assert check_pipeline(seed(), f"seed{suffix}") is not None, suffix


# --- random bytes and mutated seeds, every format ---------------------------------------


@fuzz(60)
@given(st.sampled_from(SUPPORTED_SUFFIXES), st.binary(max_size=300))
def test_random_bytes(suffix: str, raw: bytes) -> None:
    check_pipeline(raw, f"random{suffix}")


@pytest.mark.parametrize("suffix", sorted(SEEDS))
@fuzz(40)
@given(data=st.data())
def test_mutated_seed(suffix: str, data: st.DataObject) -> None:
    raw = data.draw(mutated(SEEDS[suffix]()))
    check_both(_direct(suffix), raw, f"mutated{suffix}")


# --- structurally generated documents ---------------------------------------------------

# Text with the characters parsers treat specially: markup, separators, odd spaces,
# BOMs, control and combining characters, astral characters, a lone surrogate (which
# the generators encode with "surrogatepass": bytes that are not UTF-8).
ODD_TEXT = st.lists(
    st.sampled_from(
        [
            *"ab Z1.;:,|\"'<>&#*-_`[]()!\\/\t\n\r",
            *("\x00", "\x0b", "\x1f", "\u00a0", "\u00ad", "\u2028", "\u200b", "\ufeff"),
            *("\ufffe", "\u0301", "é", "𝔸", "中", "\ud800", "&amp;", "&#0;", "&#xd800;"),
            *("&bogus;", "]]>", "-->", "<!--", "http://x"),
        ]
    ),
    max_size=24,
).map("".join)


HTML_TAGS = (
    "main", "article", "div", "section", "p", "span", "b", "h1", "h2", "h6", "ul", "ol",
    "li", "dl", "dt", "dd", "table", "tr", "td", "th", "caption", "thead", "pre", "br",
    "blockquote", "a", "script", "style", "template", "nav", "form", "header", "svg",
    "figure", "figcaption", "hr", "details", "summary", "noscript", "iframe", "title",
)  # fmt: skip
HTML_ATTRIBUTES = (
    "", " href='#top'", " href='x'", " hidden", " aria-hidden='true'", " role='main'",
    " role='navigation'", " class='sr-only'", " class='breadcrumb'", " lang='fr'",
)  # fmt: skip


def _html_element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda tag, attributes, inner, closed: (
            f"<{tag}{attributes}>{''.join(inner)}" + (f"</{tag}>" if closed else "")
        ),
        st.sampled_from(HTML_TAGS),
        st.sampled_from(HTML_ATTRIBUTES),
        st.lists(children, max_size=4),
        st.booleans(),
    )


HTML_FRAGMENTS = st.recursive(ODD_TEXT, _html_element, max_leaves=25)


@st.composite
def html_pages(draw: st.DrawFn) -> bytes:
    head = draw(st.sampled_from(["", "<!doctype html>", "<html lang='en'><head><title>T</title>"]))
    charset = draw(st.sampled_from(["", "<meta charset='utf-8'>", "<meta charset='latin1'>"]))
    body = "".join(draw(st.lists(HTML_FRAGMENTS, max_size=4)))
    page = head + charset + "<body>" + body
    return page.encode("utf-8", "surrogatepass")


@fuzz(60)
@given(html_pages())
def test_generated_html(raw: bytes) -> None:
    check_both(parse_html, raw, "page.html")


MARKDOWN_PREFIXES = (
    "", "# ", "###### ", "#", "> ", "> > ", ">>>> ", "- ", "* ", "1. ", "2) ", "    ", "\t",
    "  - ", "| ", "|---|---|", "```", "~~~", "---", "...", "<div>", "<!-- ", "-->", "===",
    "[x]: /u", "- [ ] ", "<pre>",
)  # fmt: skip


@st.composite
def markdown_files(draw: st.DrawFn) -> bytes:
    lines = draw(
        st.lists(
            st.builds(
                lambda prefix, text: prefix + text, st.sampled_from(MARKDOWN_PREFIXES), ODD_TEXT
            ),
            max_size=20,
        )
    )
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return newline.join(lines).encode("utf-8", "surrogatepass")


@fuzz(80)
@given(markdown_files())
def test_generated_markdown(raw: bytes) -> None:
    check_both(parse_markdown, raw, "notes.md")


@fuzz(60)
@given(ODD_TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")))
def test_generated_text(raw: bytes) -> None:
    check_both(parse_text, raw, "notes.txt")


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | ODD_TEXT
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(ODD_TEXT, children, max_size=3)
    ),
    max_leaves=12,
)
JSON_OBJECTS = st.dictionaries(ODD_TEXT, JSON_VALUES, max_size=4)
# Fragments of JSON text that `json.dumps` never writes.
JSON_ODDITIES = ("NaN", "-Infinity", "1e999", "-0", "00", "1.", "[", "]", "{", ",", '"\\ud800"')


@st.composite
def json_files(draw: st.DrawFn) -> bytes:
    rows = draw(st.lists(JSON_OBJECTS, max_size=4))
    shape = draw(st.sampled_from(["array", "wrapped", "two keys", "any", "deep"]))
    data: object = rows
    if shape == "wrapped":
        data = {draw(ODD_TEXT): rows}
    elif shape == "two keys":
        data = {"a": rows, "b": rows}
    elif shape == "any":
        data = draw(JSON_VALUES)
    text = json.dumps(data, indent=draw(st.sampled_from([None, 0, 2])), ensure_ascii=False)
    if shape == "deep":  # a cell nested up to 1500 levels deep (json.dumps would refuse)
        depth = draw(st.integers(1, 1500))
        opening, closing = draw(st.sampled_from([("[", "]"), ('{"k":', "}"), ('[{"k":', "}]")]))
        text = '[{"deep": ' + opening * depth + "1" + closing * depth + "}]"
    if draw(st.booleans()):  # splice in something invalid
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(JSON_ODDITIES)) + text[at:]
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode("utf-8", "surrogatepass")


@fuzz(80)
@given(json_files())
@example(b'[{"a": ' + b"[" * 500 + b"]" * 500 + b"}]")  # was "cannot parse: RecursionError"
def test_generated_json(raw: bytes) -> None:
    check_both(parse_json, raw, "table.json")


CSV_CELLS = st.text(st.sampled_from(list('ab1 ,;\t"\n\r\ufeff\\é')), max_size=8)


@st.composite
def delimited_files(draw: st.DrawFn) -> tuple[bytes, str]:
    suffix = draw(st.sampled_from([".csv", ".tsv"]))
    rows = draw(st.lists(st.lists(CSV_CELLS, max_size=5), max_size=8))
    if draw(st.booleans()):  # quoted correctly by the csv module
        buffer = io.StringIO()
        delimiter = draw(st.sampled_from([",", ";", "\t"]))
        csv.writer(buffer, delimiter=delimiter).writerows(rows)
        text = buffer.getvalue()
    else:  # cells pasted together, quotes and separators as they fall
        delimiter = "\t" if suffix == ".tsv" else draw(st.sampled_from([",", ";"]))
        text = "\n".join(delimiter.join(row) for row in rows)
    return text.encode("utf-8"), suffix


@fuzz(80)
@given(delimited_files())
def test_generated_csv(file: tuple[bytes, str]) -> None:
    raw, suffix = file
    check_both(_direct(suffix), raw, f"table{suffix}")


SPL_TAGS = (
    "section", "component", "title", "text", "paragraph", "list", "item", "table", "tr",
    "td", "th", "thead", "tbody", "tfoot", "caption", "br", "sup", "content", "footnote",
    "footnoteRef", "renderMultiMedia", "excerpt", "structuredBody",
)  # fmt: skip
SPL_ATTRIBUTES = ("", ' ID="f1"', ' IDREF="f1"', ' IDREF="nope"', ' ID=""', ' code=" "')


def _spl_element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda tag, attributes, inner: f"<{tag}{attributes}>{''.join(inner)}</{tag}>",
        st.sampled_from(SPL_TAGS),
        st.sampled_from(SPL_ATTRIBUTES),
        st.lists(children, max_size=4),
    )


SPL_CONTENT = st.recursive(ODD_TEXT.map(escape), _spl_element, max_leaves=25)


@st.composite
def spl_files(draw: st.DrawFn) -> bytes:
    title = draw(st.sampled_from(["", f"<title>{escape(draw(ODD_TEXT))}</title>"]))
    language = draw(st.sampled_from(["", "<languageCode code=' '/>", "<languageCode/>"]))
    body = "".join(draw(st.lists(SPL_CONTENT, max_size=4)))
    wrapped = draw(st.booleans())
    content = f"<component><structuredBody>{body}</structuredBody></component>" if wrapped else body
    xml = f'<document xmlns="urn:hl7-org:v3">{title}{language}{content}</document>'
    return xml.encode("utf-8", "surrogatepass")


@fuzz(80)
@given(spl_files())
def test_generated_spl(raw: bytes) -> None:
    check_both(parse_spl, raw, "label.xml")


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
DOCX_TAGS = (
    "w:p", "w:r", "w:t", "w:tbl", "w:tr", "w:tc", "w:sdt", "w:sdtContent", "w:hyperlink",
    "w:ins", "w:del", "w:instrText", "w:tab", "w:lastRenderedPageBreak", "w:cr",
    "w:noBreakHyphen", "w:pPr", "w:rPr", "w:vanish", "w:tcPr",
)  # fmt: skip
DOCX_EMPTY = (
    '<w:br w:type="page"/>', "<w:br/>", '<w:pStyle w:val="Heading1"/>',
    '<w:pStyle w:val="Title"/>', '<w:pStyle w:val="nope"/>', '<w:outlineLvl w:val="2"/>',
    '<w:outlineLvl w:val="-1"/>', '<w:outlineLvl w:val="99999999999999999999"/>',
    '<w:numPr><w:numId w:val="1"/></w:numPr>', '<w:pageBreakBefore w:val="off"/>',
    "<w:pageBreakBefore/>", '<w:sectPr><w:type w:val="continuous"/></w:sectPr>', "<w:sectPr/>",
    '<w:vMerge/>', '<w:vMerge w:val="restart"/>',
)  # fmt: skip


def _docx_element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda tag, inner: f"<{tag}>{''.join(inner)}</{tag}>",
        st.sampled_from(DOCX_TAGS),
        st.lists(children, max_size=4),
    )


DOCX_CONTENT = st.recursive(
    ODD_TEXT.map(escape) | st.sampled_from(DOCX_EMPTY), _docx_element, max_leaves=25
)


@st.composite
def docx_documents(draw: st.DrawFn) -> str:
    """The XML of a `word/document.xml` (to put in the seed DOCX with `rezip`)."""
    body = "".join(draw(st.lists(DOCX_CONTENT, max_size=5)))
    return f"<w:document {W}><w:body>{body}</w:body></w:document>"


@fuzz(50)
@given(docx_documents())
def test_generated_docx_body(xml: str) -> None:
    raw = rezip(docx_seed(), DOCUMENT_PART, xml.encode("utf-8", "surrogatepass"))
    check_both(parse_docx, raw, "report.docx")


DOCX_PARTS = (
    DOCUMENT_PART,
    "[Content_Types].xml",
    "_rels/.rels",
    "word/_rels/document.xml.rels",
    "docProps/core.xml",
    "word/numbering.xml",
)
"""The members of the seed DOCX whose bytes `test_docx_with_mutated_members` edits."""


@fuzz(40)
@given(st.sampled_from(DOCX_PARTS), st.data())
def test_docx_with_mutated_members(member: str, data: st.DataObject) -> None:
    """Byte edits of one member's XML inside an intact archive (the ZIP layer holds)."""
    seed = docx_seed()
    raw = rezip(seed, member, data.draw(mutated(zip_member(seed, member))))
    check_both(parse_docx, raw, "report.docx")


# --- the limits: hostile files that grow without bound, parsed as ingest parses ----------

LIMITED = IngestSettings(
    limits=ParseLimits(memory_mb=64, seconds=4, memory_per_mb=0, seconds_per_mb=0)
)
"""Small limits, so that generated amplifiers meet them within a second or two."""

LIMIT_CAUSE = re.compile(
    r"parsing needs more than 64 MB of memory \(the limit for a file of .+\)"
    r"|parsing takes more than 4 s of CPU time \(the limit for a file of .+\)"
    r"|parsing took longer than \d+ s \(the limit\)"
    r"|the parser crashed \(SIG\w+\), most likely out of memory: it may use 64 MB .+"
)


def check_limited(raw: bytes, name: str) -> Parsed | str:
    """Parse `raw` named `name` as ingest does (`ParseWorker`: a child process under
    `LIMITED`): a valid document, or a one-line cause that is not the catch-all."""
    worker = ParseWorker()
    worker.start(raw, FOLDER / name, LIMITED)
    outcome = worker.result()
    if isinstance(outcome, str):
        assert len(outcome.splitlines()) == 1, outcome
        assert not outcome.startswith("cannot parse:"), outcome
    else:
        check_document(outcome.document)
        assert outcome.spans
    return outcome


def _lying_docx(inflated: int) -> bytes:
    """The seed DOCX with `word/document.xml` padded to `inflated` more bytes but
    declaring its old size."""
    seed = docx_seed()
    xml = zip_member(seed, DOCUMENT_PART)
    head, _, tail = xml.partition(b"?>")
    raw = rezip(seed, DOCUMENT_PART, head + b"?><!--" + b"a" * inflated + b"-->" + tail)
    return declare_size(raw, DOCUMENT_PART, len(xml))


AMPLIFIERS: dict[str, Callable[[int], tuple[bytes, str]]] = {
    # each: (how much of it, 1 to 100) -> a file that costs more the more there is
    "html re-opened": lambda n: (b"<b>x<p>y</b>z</p>" * (n * 2_000), "tags.html"),
    "html formatting": lambda n: (
        ("<p>" + "".join(f"<b id={i}>" for i in range(n * 3)) + "</p>").encode()
        + b"<p>x</p>" * (n * 100),
        "formatting.html",
    ),
    "html nesting": lambda n: (b"<div>" * (n * 500) + b"deep" + b"</div>" * (n * 500), "deep.htm"),
    "quote runs": lambda n: (b"'a''" * (n * 2_500), "quotes.txt"),
    "guillemets": lambda n: ("«a ".encode() * (n * 2_500), "quotes.md"),
    "pdf flate": lambda n: (flate_bomb_pdf(n * 2**20), "bomb.pdf"),
    "pdf strokes": lambda n: (strokes_pdf(n * 500), "strokes.pdf"),
    "docx lying member": lambda n: (_lying_docx(n * 2**20), "lying.docx"),
}
"""Files of each kind of blow-up the parsers met, scaled: the larger ones meet the
limits (memory or CPU time), the smaller ones parse."""


@settings(
    max_examples=24,
    deadline=None,  # the limits bound each example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(sorted(AMPLIFIERS)), st.integers(1, 100))
@example("pdf flate", 100)
@example("html re-opened", 100)
@example("quote runs", 100)
@example("docx lying member", 100)
@example("html formatting", 100)
def test_files_that_blow_up_fail_at_a_named_limit(kind: str, scale: int) -> None:
    raw, name = AMPLIFIERS[kind](scale)
    outcome = check_limited(raw, name)
    if isinstance(outcome, str) and outcome.startswith(("parsing", "the parser")):
        assert LIMIT_CAUSE.fullmatch(outcome), outcome
    if kind in ("quote runs", "guillemets"):  # linear: within the limits at any scale
        assert not isinstance(outcome, str), outcome
    if scale == 100 and kind in ("pdf flate", "html re-opened", "docx lying member"):
        assert isinstance(outcome, str) and LIMIT_CAUSE.fullmatch(outcome), outcome


@fuzz(30)
@given(st.sampled_from(sorted(SEEDS)), st.data())
def test_mutated_seeds_parse_under_the_limits(suffix: str, data: st.DataObject) -> None:
    """The contract holds in the limited child process too."""
    check_limited(data.draw(mutated(SEEDS[suffix]())), f"mutated{suffix}")


# --- regressions: what the fuzzing found ------------------------------------------------


def test_libxml2_messages_become_one_line() -> None:
    """libxml2 ends its message with a line break before lxml adds the position, so
    a malformed SPL label (or DOCX part) gave a cause spanning two lines."""
    raw = b'<\x00?xml version="1.0"?><document/>'
    with pytest.raises(IngestError) as info:
        parse_spl(raw, "in/label.xml")
    assert info.value.cause == (
        "malformed XML: Invalid character: Char 0x0 out of allowed range, line 1, column 2"
    )
    xml = zip_member(docx_seed(), DOCUMENT_PART).replace(b"<w:body>", b"<w:body>\x00", 1)
    cause = _docx_cause(rezip(docx_seed(), DOCUMENT_PART, xml))
    assert cause.startswith("corrupt DOCX: ") and len(cause.splitlines()) == 1


def test_ingest_error_causes_are_one_line() -> None:
    error = IngestError("a.csv", "duplicate column name 'a\nb'\r\n(line 1)\u2028x, y")
    assert error.cause == "duplicate column name 'a b' (line 1) x, y"
    assert str(error) == f"a.csv: {error.cause}"


def _docx_cause(raw: bytes) -> str:
    with pytest.raises(IngestError) as info:
        parse_docx(raw, "in/report.docx")
    return info.value.cause


@pytest.mark.parametrize(
    ("member", "old", "new"),
    [
        ("[Content_Types].xml", b"/package/2006/content-types", b"/other"),
        (
            "_rels/.rels",
            b'xmlns="http://schemas.openxmlformats.org/package/2006/relation',
            b'xmlns="urn:x',
        ),
        ("docProps/core.xml", b"/package/2006/metadata/core-properties", b"/other"),
        ("word/styles.xml", b"/wordprocessingml/2006/main", b"/other"),
        ("word/_rels/document.xml.rels", b' Target="numbering.xml"', b""),
    ],
    ids=["content types", "relationships", "core properties", "styles", "target"],
)
def test_docx_part_that_python_docx_cannot_read_is_corrupt(
    member: str, old: bytes, new: bytes
) -> None:
    """A part whose root element has another name or namespace, or a relationship
    without its target, made python-docx raise AttributeError or TypeError, which
    ingest reported as "cannot parse: AttributeError: ... no attribute 'overrides'"."""
    xml = zip_member(docx_seed(), member)
    assert old in xml
    cause = _docx_cause(rezip(docx_seed(), member, xml.replace(old, new, 1)))
    assert cause == f"corrupt DOCX: {MALFORMED_PART}"
