"""A stored table document read back as columns and rows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from quoteproof.errors import TableError
from quoteproof.ingest.plain.tables import (
    TableData,
    TableFormatError,
    csv_delimiter,
    read_csv,
    read_json,
)
from quoteproof.model import Cell, Document

Row = tuple[Cell, ...]

TABLE_FORMATS = frozenset({"csv", "json"})
"""The stored document formats that are tables."""


@dataclass(frozen=True)
class Table:
    """One version of a stored table file: its columns and data rows (header not
    included), each row with one cell per column.

    `name` is the file name (`events.csv`); `doc_id`, `doc_version`, `doc_sha256`
    and `source_path` identify the stored document the rows were read from.
    """

    name: str
    doc_id: str
    doc_version: int
    doc_sha256: str
    source_path: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def column_index(self, column: str) -> int:
        """Return the position of `column` (exact name).

        Raises `TableError` naming the column and listing the table's columns.
        """
        try:
            return self.columns.index(column)
        except ValueError:
            shown = ", ".join(self.columns)
            raise TableError(
                f"unknown column '{column}' in {self.name}; its columns are: {shown}"
            ) from None


def load_table(document: Document) -> Table:
    """Read a stored table document (format "csv" or "json") back into a `Table`.

    The canonical text is read with the same readers ingest used
    (`quoteproof.ingest.plain.tables`), so the rows are those that were ingested; a
    `.tsv` source is read with tab delimiters. Raises `TableError` for another
    format or text that no longer reads as a table.
    """
    if document.format not in TABLE_FORMATS:
        raise TableError(f"{document.source_path} is a {document.format} document, not a table")
    try:
        data: TableData
        if document.format == "json":
            data = read_json(document.text)
        else:
            data = read_csv(document.text, csv_delimiter(document.source_path, document.text))
    except TableFormatError as exc:
        raise TableError(f"stored table {document.source_path} does not read: {exc}") from None
    return Table(
        name=PurePath(document.source_path).name,
        doc_id=document.doc_id,
        doc_version=document.version,
        doc_sha256=document.sha256,
        source_path=document.source_path,
        columns=data.columns,
        rows=data.rows,
    )
