"""Tests of HTML ingest: clean blocks, sections, tables, decoding, a real CDC page."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.html import decode_html, parse_html
from quoteproof.model import ParsedDocument

CDC_HTML = Path(__file__).resolve().parents[3] / "shared" / "data" / "cdc-pcd-2024-html" / "html"

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>  Page
  Title </title>
<style>body { color: red; }</style>
<script>var secret = "SCRIPT-TEXT";</script></head>
<body>
<header><a href="/">Site HEADER-JUNK</a></header>
<nav><ul><li><a href="/a">NAV-JUNK</a></li></ul></nav>
<main>
  <nav class="breadcrumb"><a href="/">Home</a> NAV-IN-MAIN</nav>
  <div role="navigation">ROLE-NAV-JUNK</div>
  <h1>Guide   to <em>Dosing</em></h1>
  <p>First   paragraph,
     with <b>bold</b> and a <a href="https://x.org">link</a>.</p>
  <div>Loose text in a div.<span> Still loose.</span></div>
  <h2>Tables</h2>
  <table>
    <caption>Table 1. Doses</caption>
    <tr><th>Drug</th><th>Dose</th></tr>
    <tr><td>A</td><td>5 <b>mg</b></td></tr>
    <tr><td> </td><td> </td></tr>
    <tr><td>B</td><td>10 mg</td></tr>
  </table>
  <h3>Sub</h3>
  <ul><li>Item one<ul><li>Nested item</li></ul></li><li>Item two</li></ul>
  <pre>  line 1
    line 2</pre>
  <blockquote>Quoted words.</blockquote>
  <dl><dt>Term</dt><dd>Meaning.</dd></dl>
  <figure><img src="x.png" alt="ALT-TEXT"><figcaption>Figure 1. A chart.</figcaption></figure>
  <h2>Other</h2>
  <p hidden>HIDDEN-JUNK</p>
  <aside>ASIDE-JUNK</aside>
  <form><input name="q"><button>BUTTON-JUNK</button></form>
  <noscript>NOSCRIPT-JUNK</noscript>
  <p>Last.<script>document.write("INLINE-SCRIPT")</script></p>
  <p class="float-right"><a href="#">Top</a></p>
</main>
<footer>FOOTER-JUNK</footer>
</body></html>
"""


def _parse(html: str, path: str = "site/page.html") -> ParsedDocument:
    return parse_html(html.encode("utf-8"), path)


def _view(doc: ParsedDocument) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(b.kind, doc.text[b.start : b.end], b.section) for b in doc.blocks]


def test_blocks_sections_and_canonical_text() -> None:
    doc = _parse(PAGE)
    top, tables = ("Guide to Dosing",), ("Guide to Dosing", "Tables")
    sub = ("Guide to Dosing", "Tables", "Sub")
    other = ("Guide to Dosing", "Other")
    expected = [
        ("heading", "Guide to Dosing", top),
        ("paragraph", "First paragraph, with bold and a link.", top),
        ("paragraph", "Loose text in a div. Still loose.", top),
        ("heading", "Tables", tables),
        ("paragraph", "Table 1. Doses", tables),
        ("table", "Drug | Dose\nA | 5 mg\nB | 10 mg", tables),
        ("heading", "Sub", sub),
        ("list", "Item one", sub),
        ("list", "Nested item", sub),
        ("list", "Item two", sub),
        ("code", "line 1\n    line 2", sub),
        ("paragraph", "Quoted words.", sub),
        ("list", "Term", sub),
        ("list", "Meaning.", sub),
        ("paragraph", "Figure 1. A chart.", sub),
        ("heading", "Other", other),
        ("paragraph", "Last.", other),
    ]
    assert _view(doc) == expected
    assert doc.text == "\n\n".join(text for _, text, _ in expected)
    assert doc.format == "html"
    assert doc.title == "Page Title"


def test_chrome_scripts_and_hidden_content_never_reach_text() -> None:
    text = _parse(PAGE).text
    for junk in ("SCRIPT", "color: red", "HEADER-JUNK", "NAV-", "HIDDEN-JUNK", "ASIDE-JUNK"):
        assert junk not in text
    for junk in ("BUTTON-JUNK", "NOSCRIPT-JUNK", "FOOTER-JUNK", "ALT-TEXT", "Top", "ROLE-NAV"):
        assert junk not in text


def test_content_root_order() -> None:
    html = "<body><p>outside</p><article><p>in article</p></article></body>"
    assert _parse(html).text == "in article"
    html = '<body><p>outside</p><div role="main"><p>in role main</p></div><article>a</article>'
    assert _parse(html).text == "in role main"
    assert _parse("<p>just body</p>").text == "just body"


def test_title_fallbacks() -> None:
    assert _parse("<main><h2>x</h2><h1>The  H1</h1></main>").title == "The H1"
    assert _parse("<p>no headings</p>", "dir/some-page.htm").title == "some-page"


def test_deterministic() -> None:
    raw = PAGE.encode("utf-8")
    assert parse_html(raw, "a.html") == parse_html(raw, "a.html")


def test_contents_box_of_in_page_links_is_dropped() -> None:
    html = """<main><h1>T</h1>
      <div class="toc"><div>On This Page</div><ul>
        <li><a href="#a">Abstract</a></li><li><a href="#b">Background</a></li>
        <li><a href="#c">Conclusions</a></li></ul></div>
      <p>See refs <a href="#r1">1</a>, <a href="#r2">2</a>, <a href="#r3">3</a>.</p>
      <p>Body <a href="#fig1">Figure 1</a> text.</p></main>"""
    assert _view(_parse(html))[1:] == [
        ("paragraph", "See refs 1, 2, 3.", ("T",)),
        ("paragraph", "Body Figure 1 text.", ("T",)),
    ]


def test_nested_table_rows_stay_in_their_cell() -> None:
    html = "<table><tr><td>a</td><td><table><tr><td>x</td><td>y</td></tr></table></td></tr></table>"
    assert _view(_parse(html)) == [("table", "a | x y", ())]


def test_whole_page_form_is_kept() -> None:
    html = '<body><form id="aspnetForm"><h1>Title</h1><p>Body.</p></form></body>'
    assert [text for _, text, _ in _view(_parse(html))] == ["Title", "Body."]


def test_meta_charset_is_used() -> None:
    raw = b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    raw += b"</head><body><p>caf\xe9 \x93ok\x94</p></body></html>"
    assert parse_html(raw, "a.html").text == "caf\u00e9 \u201cok\u201d"
    assert decode_html(b"<meta charset='windows-1251'><p>\xcf", "a.html").endswith("\u041f")


def test_utf16_with_bom() -> None:
    raw = "\ufeff<p>h\u00e9</p>".encode("utf-16-le")
    assert parse_html(b"\xff\xfe" + raw[2:], "a.html").text == "h\u00e9"


def test_undecodable_bytes_name_the_cause() -> None:
    with pytest.raises(IngestError) as info:
        parse_html(b"<p>caf\xe9</p>", "x/page.html")
    assert info.value.path == "x/page.html"
    assert info.value.cause == "not valid UTF-8 (byte offset 6)"
    with pytest.raises(IngestError, match="unknown charset 'klingon'"):
        parse_html(b'<meta charset="klingon"><p>x</p>', "p.html")


def _cdc_pages() -> list[Path]:
    if not CDC_HTML.is_dir():
        pytest.skip(f"{CDC_HTML} is absent")
    return sorted(CDC_HTML.glob("*.htm"))


def test_real_cdc_article_is_clean() -> None:
    pages = _cdc_pages()
    path = CDC_HTML / "24_0082.htm"
    if path not in pages:
        pytest.skip(f"{path} is absent")
    raw = path.read_bytes()
    doc = parse_html(raw, str(path))
    title = (
        "Trajectory of Multiple Chronic Conditions and Associated Factors Among "
        "Noninstitutionalized Adults Aged 60 Years or Older in Southern Brazil"
    )
    assert doc.title == title
    headings = [doc.text[b.start : b.end] for b in doc.blocks if b.kind == "heading"]
    for name in ("Abstract", "Introduction", "Methods", "Results", "Discussion", "References"):
        assert name in headings
    methods = [b for b in doc.blocks if b.section[1:2] == ("Methods",)]
    assert ("Methods", "Statistical analysis") in {b.section[1:] for b in methods}
    assert sum(b.kind == "table" for b in doc.blocks) == 3
    table = next(doc.text[b.start : b.end] for b in doc.blocks if b.kind == "table")
    assert "Female | 914 (63.0) [60.5–65.4] | 703 (64.0) [61.1–66.8]" in table.split("\n")
    for junk in ("window.", "On This Page", "Skip directly", "Español", "About CDC", "Submit"):
        assert junk.encode() in raw  # chrome of the page: scripts, nav, ToC box, footer
        assert junk not in doc.text
    assert "Top" not in doc.text.split("\n\n")


def test_all_cdc_pages_parse_cleanly() -> None:
    pages = _cdc_pages()
    for path in pages[:40]:
        doc = parse_html(path.read_bytes(), str(path))
        assert doc.blocks, path
        assert "<script" not in doc.text and "</" not in doc.text, path
        for block in doc.blocks:
            piece = doc.text[block.start : block.end]
            assert piece and piece == piece.strip() and piece != "Top", path
