"""`TableSession`: the tables of an index and the result pointers of one answer.

The model never handles data: it names a table and gets back a pointer (`r1`) to
a result set, and aggregates a pointer into a new pointer. The session keeps every
result's full set of matching rows, so an aggregate is computed over all of them,
not over the preview the model was shown.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath

from quoteproof.errors import TableError
from quoteproof.model import AggregateOp, DataResult, Filter
from quoteproof.store.base import DocumentSummary, Store
from quoteproof.tables.period import describe_period
from quoteproof.tables.query import aggregate_rows, matching_indexes, project
from quoteproof.tables.table import TABLE_FORMATS, Table, load_table

PREVIEW_ROWS = 10
"""How many matching rows a query result carries (`DataResult.rows`)."""

NO_TABLES = "no tables are ingested; ingest CSV or JSON files"


@dataclass(frozen=True)
class TableInfo:
    """A table as listed for the model: the name to query it by, its title, its
    columns and how many data rows it has."""

    name: str
    title: str
    columns: tuple[str, ...]
    row_count: int


@dataclass(frozen=True)
class _Listed:
    """A table document of the index under its session name."""

    name: str
    summary: DocumentSummary

    def names(self) -> set[str]:
        """The case-folded names that select this table: session name, file name,
        stem, title and full source path."""
        path = PurePath(self.summary.source_path)
        names = (self.name, path.name, path.stem, self.summary.title, str(path))
        return {name.casefold() for name in names}


@dataclass(frozen=True)
class _Entry:
    """A result and, for a query result, its table and matching row positions."""

    result: DataResult
    table: Table | None
    positions: tuple[int, ...] = ()


def session_names(paths: Sequence[str]) -> list[str]:
    """For each source path, the fewest trailing path parts that no other path in
    `paths` ends with: the file name (`events.csv`) unless two tables share it
    (`2023/events.csv`, `2024/events.csv`). Paths must be distinct."""
    parts = [PurePath(path).parts for path in paths]
    names = []
    for mine, own in enumerate(parts):
        size = 1
        while size < len(own) and any(
            other[-size:] == own[-size:] for i, other in enumerate(parts) if i != mine
        ):
            size += 1
        names.append(str(PurePath(*own[-size:])))
    return names


class TableSession:
    """The tables of `store` (current versions of CSV and JSON documents) and the
    results computed from them for one answer, by pointer (`r1`, `r2`, ... in the
    order of the calls that succeeded).

    The table list is read once, at first use, so one answer sees one state of the
    index. A table's name in the session (`TableInfo.name`, `DataResult.table`,
    messages) is its file name, or a longer tail of its path when two tables share
    a file name (`session_names`). With `collections`, only tables of documents in
    those collections exist for the session. Every method raises `TableError` with
    a message a model can act on.
    """

    def __init__(
        self,
        store: Store,
        *,
        preview_rows: int = PREVIEW_ROWS,
        collections: Collection[str] | None = None,
    ) -> None:
        self._store = store
        self._preview_rows = preview_rows
        self._collections = collections
        self._listed: list[_Listed] | None = None
        self._tables: dict[str, Table] = {}
        self._entries: dict[str, _Entry] = {}

    def _catalogue(self) -> list[_Listed]:
        if self._listed is None:
            listed = self._store.list_documents(self._collections)
            summaries = [s for s in listed if s.format in TABLE_FORMATS]
            names = session_names([s.source_path for s in summaries])
            self._listed = [_Listed(n, s) for n, s in zip(names, summaries, strict=True)]
        return self._listed

    def _load(self, listed: _Listed) -> Table:
        if listed.name not in self._tables:
            summary = listed.summary
            document = self._store.get_document(summary.doc_id, summary.version)
            if document is None:
                raise TableError(f"table {listed.name} is no longer in the index")
            self._tables[listed.name] = replace(load_table(document), name=listed.name)
        return self._tables[listed.name]

    def _resolve(self, name: str) -> _Listed:
        """The table called `name`: its session name exactly, else (ignoring case)
        its file name, stem, title, full path or a trailing part of its path."""
        listed = self._catalogue()
        if not listed:
            raise TableError(NO_TABLES)
        wanted = name.strip()
        for table in listed:
            if table.name == wanted:
                return table
        key = wanted.casefold()
        found = [
            table
            for table in listed
            if key in table.names()
            or table.summary.source_path.casefold().endswith("/" + key.lstrip("/"))
        ]
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(table.name for table in found)
            raise TableError(f"table '{name}' is ambiguous: {names}; use one of these names")
        names = ", ".join(table.name for table in listed)
        raise TableError(f"unknown table '{name}'; the tables are: {names}")

    def tables(self) -> list[TableInfo]:
        """List every table (reading each one) in source path order, for the prompt."""
        infos = []
        for listed in self._catalogue():
            table = self._load(listed)
            infos.append(
                TableInfo(listed.name, listed.summary.title, table.columns, len(table.rows))
            )
        return infos

    def _add(self, entry: _Entry) -> DataResult:
        self._entries[entry.result.id] = entry
        return entry.result

    def _next_id(self) -> str:
        return f"r{len(self._entries) + 1}"

    def query(
        self, table: str, filters: Sequence[Filter] = (), columns: Sequence[str] = ()
    ) -> DataResult:
        """Select the rows of `table` that every filter holds for (see
        `tables.query`) and return a new result pointer.

        The result holds `row_count` (all matches), the first `preview_rows`
        matches cut to `columns` (all columns when empty; `columns` of the result
        names them), the filters and `period` (`describe_period`). The session
        keeps all matching rows for `aggregate`. Raises `TableError` for an
        unknown or ambiguous table, an unknown column or a bad filter.
        """
        listed = self._resolve(table)
        loaded = self._load(listed)
        shown = tuple(columns) or loaded.columns
        for column in shown:
            loaded.column_index(column)
        positions = tuple(matching_indexes(loaded, filters))
        preview = [loaded.rows[p] for p in positions[: self._preview_rows]]
        result = DataResult(
            id=self._next_id(),
            table=listed.name,
            doc_id=loaded.doc_id,
            doc_version=loaded.doc_version,
            doc_sha256=loaded.doc_sha256,
            source_path=loaded.source_path,
            filters=tuple(filters),
            columns=shown,
            row_count=len(positions),
            rows=tuple(project(loaded, preview, shown)),
            period=describe_period(filters),
        )
        return self._add(_Entry(result, loaded, positions))

    def _entry(self, pointer: str) -> _Entry:
        entry = self._entries.get(pointer.strip().lower())
        if entry is None:
            known = ", ".join(self._entries)
            so_far = f"results so far: {known}" if known else "no results yet"
            raise TableError(f"unknown pointer '{pointer}'; {so_far}")
        return entry

    def aggregate(self, pointer: str, op: AggregateOp, column: str | None = None) -> DataResult:
        """Aggregate `column` over ALL rows of the query result `pointer` (see
        `aggregate_rows`) and return a new result pointer.

        The result repeats the query's table, filters, columns, row count and
        period, with `source` = the query's pointer, `operation`, `column` and
        `value` set and no rows. Raises `TableError` for an unknown pointer (listing
        the results so far), a pointer to an aggregate, an unknown column or
        operation, or a value that is not a number where one is needed.
        """
        entry = self._entry(pointer)
        base = entry.result
        if entry.table is None:
            what = f"{base.operation} of {base.column}" if base.column else base.operation
            raise TableError(
                f"{base.id} is an aggregate ({what} = {base.value}), not a set of rows; "
                f"aggregate a query result such as {base.source}"
            )
        rows = [entry.table.rows[p] for p in entry.positions]
        value = aggregate_rows(
            entry.table, rows, op, column, row_numbers=[p + 1 for p in entry.positions]
        )
        result = replace(
            base,
            id=self._next_id(),
            rows=(),
            operation=op,
            column=column,
            value=value,
            source=base.id,
        )
        return self._add(_Entry(result, None))

    def result(self, pointer: str) -> DataResult:
        """Return the result `pointer` names; `TableError` when there is none."""
        return self._entry(pointer).result

    @property
    def results(self) -> tuple[DataResult, ...]:
        """Every result so far, in pointer order."""
        return tuple(entry.result for entry in self._entries.values())
