"""Deeply nested HTML is refused before it is parsed (the parser's time grows with
the square of the depth), and the pre-parse scan never finds less depth than the
HTML5 parser builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser, LexborNode

from quoteproof.errors import IngestError
from quoteproof.ingest import html as html_ingest
from quoteproof.ingest.files import parse_bytes
from quoteproof.ingest.html import MAX_DEPTH, MAX_WORK_PER_TAG, parse_html
from quoteproof.ingest.html_depth import scan_nesting


def nested(tag: str, levels: int, text: str = "deep text") -> bytes:
    return f"<html><body>{f'<{tag}>' * levels}{text}{f'</{tag}>' * levels}</body></html>".encode()


@pytest.fixture
def parser_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every page the HTML5 parser is given while the test runs."""
    calls: list[str] = []

    def counting_parser(html: str, *args: Any, **kwargs: Any) -> LexborHTMLParser:
        calls.append(html)
        return LexborHTMLParser(html, *args, **kwargs)

    monkeypatch.setattr(html_ingest, "LexborHTMLParser", counting_parser)
    return calls


def test_deep_nesting_is_refused_before_parsing(parser_calls: list[str]) -> None:
    raw = nested("div", 50_000)
    with pytest.raises(IngestError) as raised:
        parse_bytes(raw, Path("/uploads/deep.html"))
    assert str(raised.value) == (
        f"/uploads/deep.html: HTML nested more than {MAX_DEPTH} elements deep (the limit)"
    )
    assert parser_calls == []
    # The scan stops at the limit: it reads <html>, <body> and 513 of the 50,000 <div>s.
    found = scan_nesting(raw.decode(), MAX_DEPTH, MAX_WORK_PER_TAG)
    assert found.start_tags == MAX_DEPTH + 3


def test_nesting_up_to_the_limit_is_parsed(parser_calls: list[str]) -> None:
    document = parse_html(nested("div", MAX_DEPTH - 1), "ok.html")
    assert document.text == "deep text"
    assert len(parser_calls) == 1
    with pytest.raises(IngestError, match="nested more than 512 elements deep"):
        parse_html(nested("div", MAX_DEPTH + 1), "over.html")
    assert len(parser_calls) == 1


def test_reopening_many_formatting_elements_is_refused_before_parsing(
    parser_calls: list[str],
) -> None:
    # 300 unclosed <b>s, then paragraphs: the parser re-opens all 300 in each one
    # (900,000 elements from 30 KB), though nothing is nested more than 301 deep.
    unclosed = "".join(f"<b id={n}>" for n in range(300))
    raw = f"<p>{unclosed}</p>{'<p>x</p>' * 3000}".encode()
    with pytest.raises(IngestError) as raised:
        parse_html(raw, "reopen.html")
    assert "do more than 64 steps per tag (the limit)" in str(raised.value)
    assert parser_calls == []


def test_ordinary_pages_with_unclosed_tags_pass() -> None:
    page = (
        "<html><body><ul>" + "<li><p>item <b>bold" * 400 + "</ul>"
        "<table>" + "<tr><td><font size=2>cell" * 400 + "</table>"
        "<p>para" * 400 + "</body></html>"
    )
    found = scan_nesting(page, MAX_DEPTH, MAX_WORK_PER_TAG)
    assert found.depth < 20
    assert found.work <= 4 * found.start_tags


def tree_depth(node: LexborNode) -> int:
    """How deep the elements under `node` nest (`node` itself not counted)."""
    deepest, stack = 0, [(node, 0)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        child = current.child
        while child is not None:
            if child.is_element_node:
                stack.append((child, depth + 1))
            child = child.next
    return deepest


SHAPES = [
    "<div>",
    "<ul><li>",
    "<li><section>",
    "<table><tr><td>",
    "<table><div><td>",
    "<p><b id={n}></p>",
    "<b><div></b></div>" + "<span>" * 20 + "</b>",
    "<form><div></form>" + "<span>" * 10 + "</form>",
    "<a><div><a>" + "<span>" * 10 + "</a>",
    "<b><i><div></b></i>" + "<span>" * 10 + "</i>",
    "<b id=7></span><span id=3>",
    "<select><div><select>" + "<span>" * 5 + "</select>",
    "<math><mi><div>",
    "<svg><g><p></p><section/>",
    "<td><b id={n}></td>",
    "<template><b><object></template><i>",
    "</template></table><span></caption></template><table><template><caption>",
    "<em></table>x<table><caption><tbody>",
    "<script><!--<script></script><div></script><div>",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_scan_never_finds_less_depth_than_the_parser_builds(shape: str) -> None:
    page = "".join(shape.replace("{n}", str(n)) for n in range(200))
    root = LexborHTMLParser(page).root
    assert root is not None
    built = tree_depth(root) - 1  # not counting <head> or <body>, as the scan does not
    assert built >= 200 or shape in ("<p><b id={n}></p>", "<b id=7></span><span id=3>")
    assert scan_nesting(page, 10**9, 10**9).depth >= built
