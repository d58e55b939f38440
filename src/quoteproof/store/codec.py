"""Compact, portable encodings of layout data for storage (shared by all stores)."""

from __future__ import annotations

import json
import sys
from array import array

from quoteproof.model import CharRun, Layout, SourceTable, TableRow

_RUN_FIELDS = 4


def encode_runs(runs: tuple[CharRun, ...]) -> bytes:
    """Pack char runs as little-endian int64 quadruples (start, page, char, length)."""
    packed = array("q", (v for run in runs for v in (run.start, run.page, run.char, run.length)))
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def decode_runs(data: bytes) -> tuple[CharRun, ...]:
    """Inverse of `encode_runs`; raises ValueError on data of the wrong length."""
    packed = array("q")
    packed.frombytes(data)
    if sys.byteorder != "little":
        packed.byteswap()
    if len(packed) % _RUN_FIELDS:
        raise ValueError("char runs: length is not a multiple of 4 integers")
    values = iter(packed)
    return tuple(
        CharRun(start, page, char, length)
        for start, page, char, length in zip(values, values, values, values, strict=True)
    )


def encode_pages(layout: Layout) -> str:
    """The page starts and OCR pages of `layout` as one JSON text."""
    return json.dumps(
        {"page_starts": list(layout.page_starts), "ocr_pages": list(layout.ocr_pages)}
    )


def decode_layout(pages_json: str, runs: bytes | None) -> Layout:
    """Rebuild a `Layout` from `encode_pages` JSON and `encode_runs` bytes (or None)."""
    pages = json.loads(pages_json)
    return Layout(
        page_starts=tuple(pages["page_starts"]),
        char_runs=decode_runs(runs) if runs else (),
        ocr_pages=tuple(pages["ocr_pages"]),
    )


def encode_tables(tables: tuple[SourceTable, ...]) -> str:
    """Tables as one JSON text: per table a list of rows, each `[header, start,
    end, start, end, ...]` (header 1 or 0, then its cells' spans)."""
    return json.dumps(
        [
            [[int(row.header), *(v for cell in row.cells for v in cell)] for row in table.rows]
            for table in tables
        ],
        separators=(",", ":"),
    )


def decode_tables(data: str) -> tuple[SourceTable, ...]:
    """Inverse of `encode_tables`."""
    tables = []
    for rows in json.loads(data):
        decoded = []
        for header, *spans in rows:
            cells = tuple(zip(spans[::2], spans[1::2], strict=True))
            decoded.append(TableRow(cells, bool(header)))
        tables.append(SourceTable(tuple(decoded)))
    return tuple(tables)
