"""Reading a knowledge-graph file (`quoteproof kg import`): CSV or JSON Lines of
triplets, each `subject`, `relation`, `object` and optionally the `document`, `page`
and `quote` that support it.

The whole file is read and checked before anything is stored, so a bad file
stores nothing: a file over the size limit (checked before it is read), bytes that
are not UTF-8, a CSV that does not parse (an unclosed quote, a row with more
fields than the header), a missing column, an empty subject, relation or object,
a page that is not a positive whole number, or a JSON line that is not an object
of texts raises `IngestError` naming the file, the line and the cause.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, replace
from pathlib import Path

from quoteproof.errors import IngestError
from quoteproof.model import NewTriplet
from quoteproof.store.base import Store, check_collection_name
from quoteproof.store.kg import ImportOutcome

__all__ = [
    "GRAPH_SUFFIXES",
    "MAX_FIELD_CHARS",
    "REQUIRED_COLUMNS",
    "GraphFile",
    "GraphImport",
    "GraphRow",
    "import_graph_file",
    "read_graph_file",
]

REQUIRED_COLUMNS = ("subject", "relation", "object")
OPTIONAL_COLUMNS = ("document", "page", "quote")
GRAPH_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
"""The file kinds a graph is read from, by suffix."""

MAX_FIELD_CHARS = 2_000
"""Most characters of one field (a subject, relation or object is a name, a quote a
sentence or two): a longer one is an error, not a triplet."""


@dataclass(frozen=True)
class GraphRow:
    """One triplet as its file gives it: `triplet` with its `row` the line it starts
    on, its page and quote, and no `doc_id` yet: the `document` the file names (an
    id or a file name) is resolved against the index later."""

    triplet: NewTriplet
    document: str | None = None


@dataclass(frozen=True)
class GraphFile:
    """A graph file read whole: its name, its rows in order, and the columns it has
    that are not read (named in a note)."""

    name: str
    rows: tuple[GraphRow, ...]
    ignored_columns: tuple[str, ...] = ()


def read_graph_file(path: Path, max_mb: float) -> GraphFile:
    """Read and check the graph file at `path` (see the module docstring), at most
    `max_mb` megabytes. Raises `IngestError` naming the file and the cause."""
    shown = str(path)
    kind = GRAPH_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        kinds = ", ".join(sorted(GRAPH_SUFFIXES))
        raise IngestError(shown, f"a graph file must be one of {kinds}, not {path.suffix!r}")
    try:
        size = path.stat().st_size
        if size > max_mb * 1_000_000:
            raise IngestError(
                shown,
                f"the file is {size / 1_000_000:,.1f} MB, over the limit of {max_mb:g} MB "
                "(--max-file-mb); nothing was imported",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(shown, f"cannot read the file: {exc.strerror or exc}") from exc
    text = _decoded(shown, data)
    if kind == "jsonl":
        rows, ignored = _jsonl_rows(shown, text)
    else:
        rows, ignored = _csv_rows(shown, text, "\t" if kind == "tsv" else ",")
    if not rows:
        raise IngestError(shown, "the file holds no triplet")
    return GraphFile(path.name, tuple(rows), ignored)


def _decoded(shown: str, data: bytes) -> str:
    """`data` as UTF-8 text (a BOM dropped), line ends as `\\n`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IngestError(
            shown,
            f"line {line} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _field(shown: str, line: int, name: str, value: object, required: bool) -> str | None:
    """A field's text, stripped; None when optional and empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise IngestError(shown, f"line {line}: '{name}' is empty")
        return None
    if not isinstance(value, str):
        if name == "page" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        else:
            raise IngestError(shown, f"line {line}: '{name}' must be a text")
    value = value.strip()
    if len(value) > MAX_FIELD_CHARS:
        raise IngestError(
            shown, f"line {line}: '{name}' is {len(value):,} characters, over {MAX_FIELD_CHARS:,}"
        )
    return value


def _row(shown: str, line: int, fields: dict[str, object]) -> GraphRow:
    subject, relation, obj = (
        _field(shown, line, name, fields.get(name), True) for name in REQUIRED_COLUMNS
    )
    document, page_text, quote = (
        _field(shown, line, name, fields.get(name), False) for name in OPTIONAL_COLUMNS
    )
    page = None
    if page_text is not None:
        if not page_text.isdigit() or int(page_text) < 1:
            raise IngestError(
                shown, f"line {line}: 'page' must be a whole number from 1, not {page_text!r}"
            )
        page = int(page_text)
    assert subject is not None and relation is not None and obj is not None
    return GraphRow(NewTriplet(subject, relation, obj, line, page=page, quote=quote), document)


def _columns(
    shown: str, names: list[str], where: str = "the header"
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Map each known column (lower case) to its name in the file; the other names.
    `where` names what holds `names` in the error for a missing column."""
    by_key = {name.strip().lower(): name for name in names}
    missing = [column for column in REQUIRED_COLUMNS if column not in by_key]
    if missing:
        found = ", ".join(repr(n) for n in names) or "none"
        raise IngestError(
            shown,
            f"missing column(s) {', '.join(missing)} ({where} has {found}; "
            f"needed: {', '.join(REQUIRED_COLUMNS)}; optional: {', '.join(OPTIONAL_COLUMNS)})",
        )
    known = {k: v for k, v in by_key.items() if k in REQUIRED_COLUMNS + OPTIONAL_COLUMNS}
    return known, tuple(n for k, n in by_key.items() if k not in known)


def _csv_rows(shown: str, text: str, delimiter: str) -> tuple[list[GraphRow], tuple[str, ...]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise IngestError(shown, "the file is empty")
        known, ignored = _columns(shown, header)
        rows = []
        start = reader.line_num + 1
        for record in reader:
            if not any(cell.strip() for cell in record):
                start = reader.line_num + 1
                continue
            if len(record) > len(header):
                raise IngestError(
                    shown,
                    f"line {start}: {len(record)} fields, but the header has {len(header)} "
                    "(a comma inside a field needs the field in double quotes)",
                )
            cells = dict(zip(header, record, strict=False))
            rows.append(_row(shown, start, {key: cells.get(name) for key, name in known.items()}))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise IngestError(shown, f"line {reader.line_num}: not valid CSV ({exc})") from None
    return rows, ignored


def _jsonl_rows(shown: str, text: str) -> tuple[list[GraphRow], tuple[str, ...]]:
    rows = []
    ignored: dict[str, None] = {}
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise IngestError(shown, f"line {line}: not valid JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            kind = type(value).__name__
            raise IngestError(shown, f"line {line}: expected a JSON object, got {kind}")
        known, extra = _columns(shown, list(value), f"the object on line {line}")
        ignored.update(dict.fromkeys(extra))
        rows.append(_row(shown, line, {key: value[name] for key, name in known.items()}))
    return rows, tuple(ignored)


@dataclass(frozen=True)
class GraphImport:
    """What `import_graph_file` did: the graph file's name, the collection, how many
    triplets it holds, what the store did (`ImportOutcome`), and the columns it has
    that were not read."""

    graph_file: str
    collection: str
    triplets: int
    outcome: ImportOutcome
    ignored_columns: tuple[str, ...] = ()


def _document_ids(store: Store, collection: str) -> dict[str, set[str]]:
    """The ids of the current documents of `collection` by each name a graph file may
    give them: the id, the source path, its file name and the title."""
    names: dict[str, set[str]] = {}
    for d in store.list_documents([collection]):
        for name in (d.doc_id, d.source_path, Path(d.source_path).name, d.title):
            names.setdefault(name, set()).add(d.doc_id)
    return names


def import_graph_file(store: Store, path: Path, collection: str, max_mb: float) -> GraphImport:
    """Read the graph file at `path` (`read_graph_file`), resolve the document each
    row names (an id, a source path, a file name or a title of a current document of
    `collection`) and make its triplets the current triplets of that file name in
    `collection` (`Store.import_triplets`: rows of its earlier import that are gone
    are retired), all or nothing. Raises `IngestError` for a bad file or a row that
    names no document of the collection, or more than one; `UsageError` for an
    invalid collection name."""
    check_collection_name(collection)
    graph = read_graph_file(path, max_mb)
    names = _document_ids(store, collection)
    triplets = []
    for row in graph.rows:
        line, doc_id = row.triplet.row, None
        if row.document is not None:
            found = names.get(row.document, set())
            if len(found) != 1:
                why = "no current document" if not found else f"{len(found)} documents"
                raise IngestError(
                    str(path),
                    f"line {line}: 'document' {row.document!r} names {why} of collection "
                    f"'{collection}' (give a document id from `quoteproof documents list`); "
                    "nothing was imported",
                )
            (doc_id,) = found
        triplets.append(replace(row.triplet, doc_id=doc_id))
    outcome = store.import_triplets(collection, graph.name, triplets)
    return GraphImport(graph.name, collection, len(triplets), outcome, graph.ignored_columns)
