"""Telling what a file's bytes really are, so a mislabelled file gets a clear error
(what each format's files may be is its `Format.content`, `ingest.formats`)."""

from __future__ import annotations

import re

from quoteproof.ingest.formats import ContentKind, format_for

_HEAD_BYTES = 1024
_HTML_START = re.compile(
    rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|meta|title)\b", re.I | re.S
)
_XML_START = re.compile(rb"^\s*<\?xml\b")

_DESCRIPTIONS: dict[ContentKind, str] = {
    "pdf": "a PDF",
    "zip": "a ZIP archive (e.g. DOCX)",
    "ole": "an OLE container (legacy or encrypted Office file)",
    "html": "HTML",
    "xml": "XML",
    "text": "plain text",
    "binary": "binary data",
}

_SUFFIXES: dict[ContentKind, str] = {"pdf": ".pdf", "html": ".html", "text": ".txt"}
"""The suffix a mislabelled file of each kind may be renamed to (the kinds of one
sure format)."""


def sniff(raw: bytes) -> ContentKind:
    """Return the kind of content in `raw`, a `ContentKind`, from its first bytes.

    PDF is recognised by `%PDF-` within the first 1024 bytes (as PDF readers allow),
    ZIP and OLE by their signatures, HTML and XML by their opening markup (after an
    optional UTF-8 byte order mark); other bytes are `text` when the head decodes as
    UTF-8 (or UTF-16 with a BOM) without NUL bytes, else `binary`.
    """
    head = raw[:_HEAD_BYTES]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "text"
    body = head.removeprefix(b"\xef\xbb\xbf")
    if _HTML_START.match(body):
        return "html"
    if _XML_START.match(body):
        return "xml"
    if b"\x00" in body:
        return "binary"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(body) - 3:  # a character cut at the end of the head is fine
            return "binary"
    return "text"


def mislabel_cause(raw: bytes, suffix: str) -> str | None:
    """Say why `raw` cannot be a `suffix` file (`"named .pdf but the content is HTML:
    rename it to .html if that is what it is"`), or return None when its content kind
    fits the suffix (or the suffix is unknown)."""
    named = format_for(suffix)
    if named is None:
        return None
    kind = sniff(raw)
    if kind in named.content:
        return None
    cause = f"named {suffix} but the content is {_DESCRIPTIONS[kind]}"
    rename = _SUFFIXES.get(kind)
    return f"{cause}: rename it to {rename} if that is what it is" if rename else cause
