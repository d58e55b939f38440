"""Tabular ingest: CSV, TSV and JSON files as tables.

The canonical text of a table file is the file itself (`decode_plain_text`): a quote
from a table is the file's own characters. The same readers (`read_csv`,
`read_json`) serve ingest and the query engine (`quoteproof.tables`), so a stored
table always reads back with the rows and columns it was ingested with.

Table shape:
- CSV/TSV: `.tsv` files are tab-delimited; other files comma-delimited, or
  semicolon-delimited when their first line has semicolons and no comma
  (`csv_delimiter`). The first non-blank record is the header (cells stripped of spaces and a
  byte-order mark; an empty header cell is named `column N`, 1-based). Records
  whose cells are all blank are skipped. A short row is padded with None; a row
  with more cells than the header is an error. Quoted cells may span lines.
- JSON: a top-level array of objects, or an object with exactly one key whose value
  is such an array. Columns are the union of the objects' keys in first-seen order;
  a key an object lacks gives None. Strings are kept as they are; numbers keep
  their JSON text (`1.50` stays `1.50`); `true`, `false` as their text; `null` is
  None; nested objects and arrays are compact JSON text.

Blocks are `table` blocks (never cut by the chunker), with section `(title,)`: CSV
blocks hold `ROWS_PER_BLOCK` records each (the first also the header); JSON blocks
hold whole array items, up to about `JSON_BLOCK_LINES` lines or
`JSON_BLOCK_CHARS` characters (an item longer than that is a block of its own).
Blocks are trimmed, in order and do not overlap; together they cover the text.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from quoteproof.codec.strict_json import json_kind
from quoteproof.errors import IngestError
from quoteproof.ingest.plain.text import decode_plain_text
from quoteproof.model import Block, Cell, ParsedDocument
from quoteproof.text.spans import trim_span

ROWS_PER_BLOCK = 20
JSON_BLOCK_LINES = 40
JSON_BLOCK_CHARS = 4000

_JSON_WS = re.compile(r"[ \t\n\r]*")


class TableFormatError(ValueError):
    """The text is not a table of its format; the message says why (no file name)."""


@dataclass(frozen=True)
class TableData:
    """A table read from canonical text: columns, rows, and where each row lies.

    `row_starts[i]` is the offset in the text where row `i` begins (its first line
    for CSV, its opening brace for JSON); rows are in text order.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    row_starts: tuple[int, ...]


def csv_delimiter(path: str, text: str) -> str:
    """The delimiter of a delimited file: tab for `.tsv`; for other files a comma,
    or a semicolon when the first non-blank line has semicolons and no comma."""
    if PurePath(path).suffix.lower() == ".tsv":
        return "\t"
    first = next((line for line in text.split("\n") if line.strip()), "")
    return ";" if ";" in first and "," not in first else ","


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its `\\n` (the last one without, when unended)."""
    lines = text.split("\n")
    fed = [line + "\n" for line in lines[:-1]]
    return [*fed, lines[-1]] if lines[-1] else fed


def _header(cells: Sequence[str], line: int) -> tuple[str, ...]:
    names = []
    for number, cell in enumerate(cells, start=1):
        name = cell.strip().lstrip("\ufeff").strip()
        names.append(name or f"column {number}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise TableFormatError(f"duplicate column name '{name}' in the header (line {line})")
        seen.add(name)
    return tuple(names)


def _skip_blank(lines: Sequence[str], first: int, last: int) -> int:
    """The first line from `first` (up to `last`) that is not blank."""
    while first < last and not lines[first].strip():
        first += 1
    return first


def read_csv(text: str, delimiter: str = ",") -> TableData:
    """Read delimited `text` (see the module docstring for the table shape).

    Raises `TableFormatError` when there is no header, a row has more cells than the
    header (naming its line), a header name repeats, or quoting is malformed (a
    quoted cell never closed). O(len(text)).
    """
    lines = _lines(text)
    line_starts = [0]
    for text_line in lines:
        line_starts.append(line_starts[-1] + len(text_line))
    reader = csv.reader(iter(lines), delimiter=delimiter, strict=True)
    columns: tuple[str, ...] | None = None
    rows: list[tuple[Cell, ...]] = []
    starts: list[int] = []
    first_line = 0  # 0-based index of the line the next record starts on
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            line = _skip_blank(lines, first_line, len(lines) - 1)
            cause = f"CSV syntax error in the row at line {line + 1}: {exc}"
            raise TableFormatError(cause) from None
        first_line = _skip_blank(lines, first_line, reader.line_num - 1)
        line, first_line = first_line, reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        if columns is None:
            columns = _header(record, line + 1)
            continue
        if len(record) > len(columns):
            raise TableFormatError(
                f"line {line + 1} has {len(record)} cells, more than the header's {len(columns)}"
            )
        rows.append((*record, *([None] * (len(columns) - len(record)))))
        starts.append(line_starts[line])
    if columns is None:
        raise TableFormatError("no header row: the file holds no CSV records")
    return TableData(columns, tuple(rows), tuple(starts))


class _JsonNumber(str):
    """A JSON number kept as its source text."""


def _reject_constant(name: str) -> object:
    raise TableFormatError(f"invalid JSON: {name} is not a JSON value")


def _compact(value: object) -> str:
    """Compact JSON text of a nested value, numbers as written in the source."""
    if isinstance(value, _JsonNumber):
        return str(value)
    if isinstance(value, dict):
        items = (f"{json.dumps(k, ensure_ascii=False)}:{_compact(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def json_cell(value: object) -> Cell:
    """The cell text of a decoded JSON value (see the module docstring)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    return _compact(value)


def _kind(value: object) -> str:
    """`json_kind`, numbers kept as their text (`_JsonNumber`) named as numbers."""
    return "a number" if isinstance(value, _JsonNumber) else json_kind(value)


def _items(data: object) -> list[dict[str, object]]:
    """The array of objects that is the table, or TableFormatError saying why not."""
    expected = "expected an array of objects (or an object with one key holding one)"
    array = data
    if isinstance(data, dict):
        if len(data) != 1:
            keys = ", ".join(f"'{key}'" for key in list(data)[:5]) or "none"
            raise TableFormatError(f"{expected}; got an object with keys {keys}")
        ((key, array),) = data.items()
        if not isinstance(array, list):
            raise TableFormatError(f"{expected}; got an object whose '{key}' is {_kind(array)}")
    if not isinstance(array, list):
        raise TableFormatError(f"{expected}; got {_kind(array)}")
    if not array:
        raise TableFormatError("the array is empty: a table needs at least one object")
    for number, item in enumerate(array, start=1):
        if not isinstance(item, dict):
            raise TableFormatError(f"{expected}; item {number} of the array is {_kind(item)}")
    return array


def _skip_ws(text: str, at: int) -> int:
    match = _JSON_WS.match(text, at)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _item_starts(text: str) -> list[int]:
    """Offsets of the items of the table array in valid JSON `text` (see `_items`).

    Raises `TableFormatError` when the top-level object repeats its one key
    (`json.loads` keeps the last value; the text holds more than one table).
    """
    decoder = json.JSONDecoder()
    at = _skip_ws(text, 0)
    wrapped = text[at] == "{"
    if wrapped:
        _, at = decoder.raw_decode(text, _skip_ws(text, at + 1))  # the one key
        at = _skip_ws(text, _skip_ws(text, at) + 1)  # past the colon
    at = _skip_ws(text, at + 1)  # past the opening bracket
    starts = []
    while text[at] != "]":
        starts.append(at)
        _, end = decoder.raw_decode(text, at)
        at = _skip_ws(text, end)
        if text[at] == ",":
            at = _skip_ws(text, at + 1)
    if wrapped and text[_skip_ws(text, at + 1)] != "}":
        raise TableFormatError("the top-level object repeats its key: it holds more than one table")
    return starts


def read_json(text: str) -> TableData:
    """Read JSON `text` as a table (see the module docstring for the shape).

    Raises `TableFormatError` for a syntax error (with its line and column), for
    NaN or Infinity, for values nested too deeply to read (hundreds of levels),
    and for JSON that is not an array of objects. O(len(text)).
    """
    source = " " + text[1:] if text.startswith("\ufeff") else text  # same offsets
    try:
        data = json.loads(
            source,
            parse_int=_JsonNumber,
            parse_float=_JsonNumber,
            parse_constant=_reject_constant,
        )
        items = _items(data)
        columns: dict[str, None] = {}
        for item in items:
            columns.update(dict.fromkeys(item))
        rows = tuple(tuple(json_cell(item.get(column)) for column in columns) for item in items)
    except json.JSONDecodeError as exc:
        raise TableFormatError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:  # from json.loads or `_compact`, both recursive
        raise TableFormatError("invalid JSON: values nested too deeply to read") from None
    if not columns:
        raise TableFormatError("the objects have no keys: the table has no columns")
    return TableData(tuple(columns), rows, tuple(_item_starts(source)))


def _blocks(text: str, cuts: Sequence[int], title: str) -> tuple[Block, ...]:
    """Trimmed `table` blocks between 0, the offsets `cuts` (ascending) and the end."""
    bounds = [0, *cuts, len(text)]
    blocks = []
    for start, end in itertools.pairwise(bounds):
        first, last = trim_span(text, start, end)
        if first < last:
            blocks.append(Block("table", first, last, (title,)))
    return tuple(blocks)


def _csv_cuts(data: TableData) -> list[int]:
    """Where blocks after the first begin: every `ROWS_PER_BLOCK`-th row."""
    return list(data.row_starts[ROWS_PER_BLOCK::ROWS_PER_BLOCK])


def _json_cuts(text: str, data: TableData) -> list[int]:
    """Where blocks after the first begin: at the item that would take its group of
    items over `JSON_BLOCK_LINES` lines or `JSON_BLOCK_CHARS` characters."""
    cuts: list[int] = []
    ends = [*data.row_starts[1:], len(text)]
    group_start = 0
    for number, (start, end) in enumerate(zip(data.row_starts, ends, strict=True)):
        too_big = (
            end - group_start > JSON_BLOCK_CHARS
            or text.count("\n", group_start, end) >= JSON_BLOCK_LINES
        )
        if number > 0 and too_big:
            cuts.append(start)
            group_start = start
    return cuts


def _table_document(text: str, path: str, fmt: str, cuts: Sequence[int]) -> ParsedDocument:
    title = PurePath(path).stem
    return ParsedDocument(text=text, title=title, format=fmt, blocks=_blocks(text, cuts, title))


def parse_csv(raw: bytes, path: str, delimiter: str | None = None) -> ParsedDocument:
    """Parse a CSV (or, with `delimiter` tab, TSV) file into a table document.

    Format "csv", title the file stem, canonical text the decoded file. `delimiter`
    defaults to `csv_delimiter(path, text)`. Raises `IngestError(path, cause)` for
    invalid UTF-8 and every `read_csv` error.
    """
    text = decode_plain_text(raw, path)
    try:
        data = read_csv(text, delimiter or csv_delimiter(path, text))
    except TableFormatError as exc:
        raise IngestError(path, str(exc)) from None
    return _table_document(text, path, "csv", _csv_cuts(data))


def parse_json(raw: bytes, path: str) -> ParsedDocument:
    """Parse a JSON file holding an array of objects into a table document.

    Format "json", title the file stem, canonical text the decoded file. Raises
    `IngestError(path, cause)` for invalid UTF-8 and every `read_json` error.
    """
    text = decode_plain_text(raw, path)
    try:
        data = read_json(text)
    except TableFormatError as exc:
        raise IngestError(path, str(exc)) from None
    return _table_document(text, path, "json", _json_cuts(text, data))
