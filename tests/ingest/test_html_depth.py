"""A parsed HTML page nested too deep, or holding many more elements than tags, is
refused before it is read; what the HTML5 parser itself spends on hostile markup is
bounded by the parsing process's limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from quoteproof.errors import IngestError
from quoteproof.ingest.files import parse_bytes
from quoteproof.ingest.html.depth import MAX_DEPTH
from quoteproof.ingest.html.parse import parse_html
from quoteproof.ingest.pipeline import ingest_files
from quoteproof.store.open import open_store


def nested(tag: str, levels: int, text: str = "deep text") -> bytes:
    return f"<html><body>{f'<{tag}>' * levels}{text}{f'</{tag}>' * levels}</body></html>".encode()


def reopening(formatting: int, paragraphs: int) -> bytes:
    """A paragraph with `formatting` unclosed `<b>`s, then `paragraphs` paragraphs:
    the HTML5 tree builder re-opens all of them in each paragraph."""
    unclosed = "".join(f"<b id={n}>" for n in range(formatting))
    return f"<p>{unclosed}</p>{'<p>x</p>' * paragraphs}".encode()


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(IngestError) as raised:
        parse_bytes(nested("div", 2000), Path("/uploads/deep.html"))
    assert str(raised.value) == (
        f"/uploads/deep.html: HTML nested more than {MAX_DEPTH} elements deep (the limit)"
    )


def test_nesting_up_to_the_limit_is_parsed() -> None:
    assert parse_html(nested("div", MAX_DEPTH - 1), "ok.html").text == "deep text"
    with pytest.raises(IngestError, match="nested more than 512 elements deep"):
        parse_html(nested("div", MAX_DEPTH + 1), "over.html")


def test_nesting_through_tables_and_reopened_formatting_is_measured_on_the_tree() -> None:
    # A table in a table, a formatting element put before the table and re-opened:
    # each repetition nests one level deeper.
    page = "<table/><nobr></table> " * (MAX_DEPTH + 100)
    with pytest.raises(IngestError, match="nested more than 512 elements deep"):
        parse_html(page.encode(), "tables.html")


def test_many_more_elements_than_tags_are_refused() -> None:
    # 100 unclosed <b>s re-opened in each of 1,000 paragraphs: 100,000 elements
    # from 9 KB.
    with pytest.raises(IngestError) as raised:
        parse_html(reopening(100, 1000), "reopen.html")
    assert "build more than 4 elements per tag (the limit)" in str(raised.value)


def test_re_opened_formatting_past_the_memory_limit_fails_the_file(tmp_path: Path) -> None:
    # 300 unclosed <b>s, then 3,000 paragraphs: 900,000 elements, 340 MB, from 27 KB.
    page, fine = tmp_path / "reopen.html", tmp_path / "fine.html"
    page.write_bytes(reopening(300, 3000))
    fine.write_bytes(nested("div", 20))
    store = open_store(str(tmp_path / "idx"), create=True)
    try:
        results = list(ingest_files(store, [page, fine]))
    finally:
        store.close()
    assert [(r.status, r.error) for r in results] == [
        ("failed", "parsing needs more than 258 MB of memory (the limit for a file of 27 KB)"),
        ("added", None),
    ]


def test_ordinary_pages_with_unclosed_tags_pass() -> None:
    page = (
        "<html><body><ul>" + "<li><p>item <b>bold" * 400 + "</ul>"
        "<table>" + "<tr><td><font size=2>cell" * 400 + "</table>"
        "<p>para" * 400 + "</body></html>"
    )
    document = parse_html(page.encode(), "unclosed.html")
    assert document.text.count("item bold") == 400 and document.text.count("cell") == 400
