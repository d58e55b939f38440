"""The text of an HTML file's bytes: the encoding a browser would read them in (a
byte-order mark, the `<meta>` charset, else UTF-8)."""

from __future__ import annotations

import codecs
import re

from quoteproof.errors import IngestError, undecodable_cause

_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_HEAD_END = re.compile(rb"</head\s*>", re.I)
_CHARSET_SCAN_BYTES = 8192
# Browsers decode these labels as windows-1252 (WHATWG Encoding Standard).
_WINDOWS_1252_LABELS = frozenset(
    {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii"}
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def declared_charset(raw: bytes) -> str | None:
    """Return the charset an HTML page declares in `<meta>` (lower-cased), or None.

    Looks at `<meta charset=...>` and `<meta http-equiv="Content-Type"
    content="...; charset=...">` in the head (at most the first 8 KiB).
    """
    head = raw[:_CHARSET_SCAN_BYTES]
    end = _HEAD_END.search(head)
    if end is not None:
        head = head[: end.start()]
    match = _META_CHARSET.search(head)
    return match.group(1).decode("ascii").lower() if match else None


def decode_html(raw: bytes, path: str) -> str:
    """Decode an HTML file's bytes.

    The encoding is, in order: a byte-order mark, the `<meta>` charset, UTF-8.
    Labels browsers read as windows-1252 (`iso-8859-1`, `ascii`, ...) are read so here
    too. Raises `IngestError` for an unknown charset or bytes it cannot decode.
    """
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            charset = encoding
            break
    else:
        charset = declared_charset(raw) or "utf-8"
        if charset.startswith("utf-16"):
            charset = "utf-8"  # a page that could declare it in ASCII is not UTF-16
    if charset in _WINDOWS_1252_LABELS:
        charset = "cp1252"
    try:
        text = raw.decode(charset)
    except LookupError:  # unknown name, or a codec that is not a text encoding
        raise IngestError(path, f"unknown charset {charset!r} declared in <meta>") from None
    except UnicodeDecodeError as exc:
        raise IngestError(path, undecodable_cause(charset, raw, exc)) from None
    return text.removeprefix("\ufeff")
