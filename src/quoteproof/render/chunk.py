"""Rendering one stored chunk with its metadata (`quoteproof show REF`)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from quoteproof.model import Chunk, Document
from quoteproof.render.visible import visible, visible_line
from quoteproof.text.labels import LABEL_SEPARATOR


def chunk_to_dict(chunk: Chunk, document: Document | None) -> dict[str, Any]:
    """Return `chunk` and where it lies as JSON-ready data.

    Keys: ref, label, doc_id, doc_version, title, format, source_path, source_uri,
    start, end, section, parent_section, pages, language, ocr, current (whether the
    version is the newest stored), text. `title`, `format` and `current` are None
    when `document` (the newest version of the chunk's document) is None.
    """
    return {
        "ref": chunk.ref,
        "label": chunk.label,
        "doc_id": chunk.doc_id,
        "doc_version": chunk.doc_version,
        "title": document.title if document else None,
        "format": document.format if document else None,
        "source_path": chunk.source_path,
        "source_uri": chunk.source_uri,
        "start": chunk.start,
        "end": chunk.end,
        "section": list(chunk.section),
        "parent_section": list(chunk.parent_section),
        "pages": list(chunk.pages) if chunk.pages is not None else None,
        "language": chunk.language,
        "ocr": chunk.ocr,
        "current": document.version == chunk.doc_version if document else None,
        "text": chunk.text,
    }


def chunk_view(chunk: Chunk, document: Document | None) -> Group:
    """A terminal view: a metadata table (one line per value, `visible_line`), then
    the chunk text (`visible`); never parsed as markup."""
    data = chunk_to_dict(chunk, document)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    rows = {
        "ref": data["ref"],
        "label": data["label"],
        "document": f"{data['title']} ({data['format']}), {chunk.doc_id} v{chunk.doc_version}"
        + ("" if data["current"] in (True, None) else " (superseded)"),
        "source": data["source_uri"] or data["source_path"],
        "section": LABEL_SEPARATOR.join(chunk.section) or "—",
        "parent section": LABEL_SEPARATOR.join(chunk.parent_section) or "—",
        "pages": ", ".join(map(str, chunk.pages)) if chunk.pages else "—",
        "characters": f"{chunk.start}–{chunk.end} of the document text",
        "language": chunk.language,
    }
    if chunk.ocr:
        rows["OCR"] = "yes: text recognised from a page image"
    for key, value in rows.items():
        table.add_row(key, Text(visible_line(str(value))))
    return Group(table, Text(""), Text(visible(chunk.text)))
