"""Tests of HTML ingest: clean blocks, sections, tables, decoding, a real CDC page."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.html.parse import decode_html, is_byline, parse_html
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
    assert info.value.cause.startswith("not valid UTF-8 (byte offset 6: 0xE9, line 1); ")
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


BLOG = """<!DOCTYPE html>
<html lang="en-GB"><head><meta charset="utf-8">
<title>Growing Tomatoes at Home | The Garden Blog</title>
<script>window.tracker = "SCRIPT-JUNK";</script></head>
<body>
<div id="top-bar"><a href="/">The Garden Blog</a> <a href="/about">About</a></div>
<div class="menu"><ul><li><a href="/veg">Vegetables MENU-JUNK</a></li>
  <li><a href="/fruit">Fruit</a></li>
  <li><a href="/herbs">Herbs</a></li><li><a href="/tools">Tools</a></li></ul></div>
<div id="wrapper">
 <div class="post">
  <h1>Growing Tomatoes at Home</h1>
  <p>Tomatoes are the most popular crop in home gardens, and for good reason: a single healthy
     plant can give several kilograms of fruit over a summer if it gets sun, water and support.</p>
  <h2>Choosing a variety</h2>
  <p>Determinate varieties stop growing at a fixed height and ripen their fruit within a few
     weeks, which suits canning; indeterminate varieties keep fruiting until the first frost.</p>
  <h3>Cherry tomatoes</h3>
  <p>Cherry tomatoes are the easiest to grow for beginners, because they tolerate heat and
     ripen quickly even in short summers with cool nights.</p>
  <h2>Watering and feeding</h2>
  <p>Water deeply twice a week rather than a little every day, so that the roots grow down
     into the soil where moisture lasts longer between waterings.</p>
  <table>
   <tr><th>Stage</th><th>Water per week</th></tr>
   <tr><td>Seedling</td><td>1 litre</td></tr>
   <tr><td>Fruiting</td><td>10 litres</td></tr>
  </table>
  <p>Feed with a balanced fertiliser when the first flowers appear, then switch to one richer
     in potassium once the fruit sets.</p>
 </div>
 <div class="sidebar"><h3>Popular posts</h3>
  <ul><li><a href="/p1">Ten herbs for a windowsill</a></li>
  <li><a href="/p2">Composting basics</a></li></ul>
  <p>Subscribe to our newsletter for weekly tips on growing vegetables! SIDEBAR-JUNK</p></div>
</div>
<div class="footer-area"><p>Copyright 2024 The Garden Blog. All rights reserved. FOOTER-JUNK</p>
 <a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></div>
</body></html>
"""


def test_generic_page_without_content_root_keeps_only_the_article() -> None:
    doc = _parse(BLOG)
    top = ("Growing Tomatoes at Home",)
    variety, watering = (*top, "Choosing a variety"), (*top, "Watering and feeding")
    headings = [(text, section) for kind, text, section in _view(doc) if kind == "heading"]
    assert headings == [
        ("Growing Tomatoes at Home", top),
        ("Choosing a variety", variety),
        ("Cherry tomatoes", (*variety, "Cherry tomatoes")),
        ("Watering and feeding", watering),
    ]
    tables = [(text, section) for kind, text, section in _view(doc) if kind == "table"]
    assert tables == [
        ("Stage | Water per week\nSeedling | 1 litre\nFruiting | 10 litres", watering)
    ]
    assert doc.text.startswith("Growing Tomatoes at Home\n\nTomatoes are the most popular crop")
    assert doc.text.endswith("then switch to one richer in potassium once the fruit sets.")
    for junk in ("JUNK", "The Garden Blog", "Popular posts", "Privacy", "Vegetables"):
        assert junk not in doc.text
    assert doc.title == "Growing Tomatoes at Home | The Garden Blog"
    assert doc.language == "en-GB"


def test_page_without_wrappers_is_read_whole() -> None:
    sections = "".join(
        f"<h2>Part {i}</h2><p>Paragraph {i} holds enough words about topic {i} to be taken "
        "for the content of this page by any reasonable extractor.</p>"
        for i in range(3)
    )
    doc = _parse(f"<html><body><h1>Doc</h1>{sections}</body></html>")
    assert [text for kind, text, _ in _view(doc) if kind == "heading"] == [
        "Doc",
        "Part 0",
        "Part 1",
        "Part 2",
    ]
    assert doc.blocks[-1].section == ("Doc", "Part 2")
    assert doc.language == "en"


HOSTILE = """<html><head><title>T</title><style>p {{ color: red }} /* STYLE-JUNK */</style>
<script>document.write("SCRIPT-JUNK")</script></head>
<body onload="alert('ONLOAD-JUNK')">{open}
<h1 onclick="alert('ONCLICK-JUNK')">Safe heading</h1>
<p onmouseover="steal('HANDLER-JUNK')">Safe paragraph one, long enough to count as the article text
of this page, with plenty of ordinary words in it for the extractor to weigh.<!-- COMMENT-JUNK -->
<script type="text/javascript">var x = "INLINE-SCRIPT-JUNK";</script></p>
<template><p>TEMPLATE-JUNK</p></template>
<p>Safe paragraph two<![CDATA[ CDATA-JUNK ]]> also carries words enough to be read as the
body of the article by trafilatura and by the fallback walk.</p>
<style>.x {{ content: "INLINE-STYLE-JUNK" }}</style><noscript>NOSCRIPT-JUNK</noscript>
<svg><script>SVG-SCRIPT-JUNK</script><text>SVG-TEXT-JUNK</text></svg>
<iframe srcdoc="<p>IFRAME-JUNK</p>"></iframe>
<a href="javascript:alert('HREF-JUNK')">a link</a>
{close}</body></html>"""


@pytest.mark.parametrize(
    ("open_tag", "close_tag"), [("<main>", "</main>"), ("<div>", "</div>"), ("", "")]
)
def test_scripts_styles_and_comments_never_reach_the_text(open_tag: str, close_tag: str) -> None:
    doc = _parse(HOSTILE.format(open=open_tag, close=close_tag))
    assert "JUNK" not in doc.text
    assert "Safe heading" in doc.text and "Safe paragraph two also carries" in doc.text


def test_site_chrome_lines_are_dropped() -> None:
    html = """<main><h1>T</h1><div class="h4">Related Pages</div><p>Body text.</p>
      <p><b>Error processing SSI file</b></p><p>Top of Page</p>
      <div class="last-reviewed">Last Reviewed: May 1, 2024 <div>Source: Some Center</div></div>
      <p>View Page In: PDF [593K] RIS [2K]</p><p><a href="/x.jpg">High-resolution JPG for print
      <span class="sr-only">image icon</span></a></p>
      <p>Last reviewed on the ward: every patient, twice a day, by the nurse.</p></main>"""
    assert [text for _, text, _ in _view(_parse(html))] == [
        "T",
        "Body text.",
        "Last reviewed on the ward: every patient, twice a day, by the nurse.",
    ]


CDC_CHROME = (
    "Error processing SSI file",
    "Related Pages",
    "Top of Page",
    "View Page In",
    "image icon",
    "pdf icon",
    "High-resolution JPG for print",
    "Source: National Center for Chronic Disease Prevention and Health Promotion",
)


def test_every_cdc_page_has_title_headings_and_no_chrome() -> None:
    pages = _cdc_pages()
    assert len(pages) >= 100
    for path in pages:
        doc = parse_html(path.read_bytes(), str(path))
        assert doc.title and doc.title != path.stem, path
        assert any(block.kind == "heading" for block in doc.blocks), path
        for junk in CDC_CHROME:
            assert junk not in doc.text, (path, junk)
        for block in doc.blocks:
            assert not doc.text[block.start : block.end].startswith("Last Reviewed:"), path


def test_cdc_program_evaluation_article_sections() -> None:
    path = CDC_HTML / "23_0115.htm"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    doc = parse_html(path.read_bytes(), str(path))
    title = doc.title
    assert title.startswith("The Effect of a Tobacco Use Reduction Program")
    headings = {doc.text[b.start : b.end]: b.section for b in doc.blocks if b.kind == "heading"}
    assert headings[title] == (title,)
    for name in ("Introduction", "Intervention Approach", "Results", "References"):
        assert headings[name] == (title, name)
    assert headings["Analysis"] == (title, "Evaluation Approach", "Analysis")
    assert sum(b.kind == "table" for b in doc.blocks) == 2


BYLINE_PAGE = """<html><head><title>Smoking Cessation in Michigan</title></head><body><main>
<h1>Smoking Cessation in Michigan</h1>
<h4>Farid Shamo, MBChB, MSc, MPH<sup>1</sup>; Kathryn E. Macomber, MPH<sup>1</sup>
 (<a href="#contribAff">View author affiliations</a>)</h4>
<p>Summary of the program.</p>
<h4>Jane Roe, PhD<sup>2</sup> (<a href="#aff">View author affiliations</a>)</h4>
<h2>MD and PhD Programs</h2>
<p>Both degrees are offered.</p>
</main></body></html>"""


def test_author_lists_in_headings_are_paragraphs_not_sections() -> None:
    doc = _parse(BYLINE_PAGE)
    title = "Smoking Cessation in Michigan"
    view = _view(doc)
    authors = [item for item in view if item[1].startswith(("Farid Shamo", "Jane Roe"))]
    assert [kind for kind, _, _ in authors] == ["paragraph", "paragraph"]
    assert all(section == (title,) for _, _, section in authors)
    assert ("paragraph", "Summary of the program.", (title,)) in view
    # degrees without names and commas are a heading's words, not a byline
    assert ("heading", "MD and PhD Programs", (title, "MD and PhD Programs")) in view


def test_no_cdc_article_uses_its_author_list_as_a_section() -> None:
    pages = _cdc_pages()
    bylines = 0
    for path in pages:
        doc = parse_html(path.read_bytes(), str(path))
        for block in doc.blocks:
            assert not any(is_byline(name) for name in block.section), path
            bylines += block.kind == "paragraph" and is_byline(doc.text[block.start : block.end])
    assert bylines >= 100


@pytest.mark.parametrize(
    ("text", "byline"),
    [
        ("Prescribers: MD, DO, PharmD", False),
        ("Nurse Practitioners (RN, MSN, DNP)", False),
        ("Nurse Practitioners, RN, MSN, DNP", False),
        ("Jane Doe, PhD1; John Roe, MPH2", True),
        ("Alexandra van den Berg, PhD, MPH1,2; Leonard Jack Jr, PhD3", True),
        ("Farid Shamo, MBChB, MSc, MPH1; Kathryn E. Macomber, MPH1", True),
    ],
)
def test_a_byline_names_people_with_degrees(text: str, byline: bool) -> None:
    assert is_byline(text) is byline


def test_headings_listing_degrees_stay_sections() -> None:
    doc = _parse(
        "<html><body><main><h1>Who May Prescribe</h1><h2>Prescribers: MD, DO, PharmD</h2>"
        "<p>Physicians and pharmacists.</p><h2>Nurse Practitioners (RN, MSN, DNP)</h2>"
        "<p>Advanced practice nurses.</p></main></body></html>"
    )
    view = _view(doc)
    for name in ("Prescribers: MD, DO, PharmD", "Nurse Practitioners (RN, MSN, DNP)"):
        assert ("heading", name, ("Who May Prescribe", name)) in view
