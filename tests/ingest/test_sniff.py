"""Content sniffing: what the bytes are, whatever the file is called."""

from __future__ import annotations

import pytest

from quoteproof.ingest.sniff import mislabel_cause, sniff


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"%PDF-1.7\n...", "pdf"),
        (b"\n\n  %PDF-1.4 junk before the header", "pdf"),
        (b"PK\x03\x04rest", "zip"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1rest", "ole"),
        (b"<!DOCTYPE html><html>", "html"),
        (b"\xef\xbb\xbf  <!-- c --><html lang=en>", "html"),
        (b"<?xml version='1.0'?><document/>", "xml"),
        (b"Plain words.\n", "text"),
        ("caf\u00e9".encode(), "text"),
        (b"\xff\xfeH\x00i\x00", "text"),
        (b"\x00\x01\x02binary", "binary"),
        (b"\x80\x81\x82\x83 not utf-8 at all", "binary"),
    ],
)
def test_sniff(raw: bytes, kind: str) -> None:
    assert sniff(raw) == kind


def test_mislabel_cause() -> None:
    html = b"<!doctype html><html><body>x</body></html>"
    assert mislabel_cause(html, ".pdf") == (
        "named .pdf but the content is HTML: rename it to .html if that is what it is"
    )
    assert mislabel_cause(b"%PDF-1.4", ".docx") == (
        "named .docx but the content is a PDF: rename it to .pdf if that is what it is"
    )
    assert mislabel_cause(b"%PDF-1.4", ".txt") == (
        "named .txt but the content is a PDF: rename it to .pdf if that is what it is"
    )
    assert mislabel_cause(b"PK\x03\x04", ".pdf") == (
        "named .pdf but the content is a ZIP archive (e.g. DOCX)"  # no one sure suffix
    )
    assert mislabel_cause(b"PK\x03\x04", ".html") is not None
    assert mislabel_cause(b"%PDF-1.4", ".pdf") is None
    assert mislabel_cause(html, ".md") is None
    assert mislabel_cause(b"\x80bad utf-8", ".txt") is None  # the text parser explains
    assert mislabel_cause(b"anything", ".unknown") is None
