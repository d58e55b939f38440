"""Tests of the table engine and `TableSession`, against real indexes of real files."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quoteproof.errors import TableError
from quoteproof.index import Index
from quoteproof.model import Filter, FilterOp
from quoteproof.tables.args import parse_aggregate_op, parse_columns, parse_filters, parse_name
from quoteproof.tables.period import describe_period
from quoteproof.tables.query import aggregate_rows, project, select_rows
from quoteproof.tables.session import NO_TABLES, TableInfo, TableSession, session_names
from quoteproof.tables.table import Table, load_table
from quoteproof.tables.values import as_number

SALES = """date,region,amount,units,note
2024-01-05,North,10,1,first sale
2024-01-20,South,2.5,2,
2024-02-03,north,7,3,"multi
line"
2024-02-28,East,,4,missing amount
2024-03-15,South,100,5,big one
2024-04-01,West,9,6,after q1
"""

STAFF = """{"staff": [
  {"name": "Ann", "age": 31, "active": true, "tags": ["a", "b"]},
  {"name": "Bob", "age": null, "active": false},
  {"name": "Cy", "age": 9, "team": {"id": 2}}
]}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ingest(index: Index, *paths: Path) -> None:
    results = index.ingest(list(paths), embed=False)
    assert all(r.status in ("added", "updated") for r in results), results


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    data = tmp_path / "data"
    write(data, "sales.csv", SALES)
    write(data, "staff.json", STAFF)
    write(data, "notes.txt", "Not a table.\n")
    with Index.open(tmp_path / "idx", create=True) as opened:
        ingest(opened, data)
        yield opened


@pytest.fixture
def session(index: Index) -> TableSession:
    return TableSession(index.store)


def table_of(index: Index, name: str) -> Table:
    (summary,) = [d for d in index.store.list_documents() if d.source_path.endswith(name)]
    document = index.store.get_document(summary.doc_id, summary.version)
    assert document is not None
    return load_table(document)


# --- reading tables back ------------------------------------------------------------


def test_load_csv_table(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert table.name == "sales.csv" and table.doc_version == 1
    assert table.columns == ("date", "region", "amount", "units", "note")
    assert len(table.rows) == 6
    assert table.rows[2] == ("2024-02-03", "north", "7", "3", "multi\nline")
    assert table.rows[3][2] == ""


def test_load_json_table_values(index: Index) -> None:
    table = table_of(index, "staff.json")
    assert table.columns == ("name", "age", "active", "tags", "team")
    assert table.rows == (
        ("Ann", "31", "true", '["a","b"]', None),
        ("Bob", None, "false", None, None),
        ("Cy", "9", None, None, '{"id":2}'),
    )


def test_load_table_refuses_other_formats(index: Index) -> None:
    (summary,) = [d for d in index.store.list_documents() if d.format == "text"]
    document = index.store.get_document(summary.doc_id)
    assert document is not None
    with pytest.raises(TableError, match="is a text document, not a table"):
        load_table(document)


def test_tsv_reads_back_with_tabs(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", "name\tplace\nAnn\tParis, France\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        ingest(index, path)
        assert table_of(index, "t.tsv").rows == (("Ann", "Paris, France"),)


# --- filters ------------------------------------------------------------------------


def select(table: Table, *filters: tuple[str, FilterOp, Any], column: str = "date") -> list[Any]:
    rows = select_rows(table, [Filter(c, op, v) for c, op, v in filters])
    return [row[table.columns.index(column)] for row in rows]


def test_equality_is_numeric_when_both_sides_are_numbers(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert select(table, ("amount", "=", 10)) == ["2024-01-05"]
    assert select(table, ("amount", "=", "10.0")) == ["2024-01-05"]
    assert select(table, ("amount", "=", 2.5)) == ["2024-01-20"]
    assert select(table, ("region", "=", "north")) == ["2024-02-03"]  # exact, case-sensitive
    assert select(table, ("region", "!=", "South")) == [
        "2024-01-05",
        "2024-02-03",
        "2024-02-28",
        "2024-04-01",
    ]


def test_ordering_numeric_or_string(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert select(table, ("amount", ">", 9)) == ["2024-01-05", "2024-03-15"]  # 100 > 9
    assert select(table, ("amount", "<=", "7")) == ["2024-01-20", "2024-02-03"]
    assert select(table, ("date", ">=", "2024-02"), ("date", "<", "2024-03")) == [
        "2024-02-03",
        "2024-02-28",
    ]
    assert select(table, ("region", "<", "O")) == ["2024-01-05", "2024-02-28"]


def test_contains_is_case_insensitive(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert select(table, ("region", "contains", "NORTH")) == ["2024-01-05", "2024-02-03"]
    assert select(table, ("note", "contains", "LINE")) == ["2024-02-03"]


def test_empty_cells_match_only_not_equal(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert "2024-02-28" not in select(table, ("amount", "<", 1000))
    assert "2024-02-28" not in select(table, ("amount", "contains", ""))
    assert "2024-02-28" in select(table, ("amount", "!=", 5))
    assert select(table, ("amount", "=", None)) == ["2024-02-28"]
    assert len(select(table, ("amount", "!=", None))) == 5
    staff = table_of(index, "staff.json")
    assert select(staff, ("age", ">", 0), column="name") == ["Ann", "Cy"]
    assert select(staff, ("active", "=", True), column="name") == ["Ann"]


def test_unknown_column_lists_the_columns(index: Index) -> None:
    table = table_of(index, "sales.csv")
    with pytest.raises(TableError) as info:
        select(table, ("price", "=", 1))
    assert str(info.value) == (
        "unknown column 'price' in sales.csv; its columns are: date, region, amount, units, note"
    )
    with pytest.raises(TableError, match="null can only be compared with = or !="):
        select(table, ("amount", "<", None))
    with pytest.raises(TableError, match="unknown column 'Region'"):
        project(table, table.rows, ["Region"])


def test_projection(index: Index) -> None:
    table = table_of(index, "sales.csv")
    assert project(table, table.rows[:2], ["amount", "date"]) == [
        ("10", "2024-01-05"),
        ("2.5", "2024-01-20"),
    ]
    assert project(table, table.rows[:1], []) == [table.rows[0]]


# --- aggregates ---------------------------------------------------------------------


def test_aggregates(index: Index) -> None:
    table = table_of(index, "sales.csv")
    rows = list(table.rows)
    assert aggregate_rows(table, rows, "count") == 6
    assert aggregate_rows(table, rows, "count", "amount") == 5
    assert aggregate_rows(table, rows, "count", "note") == 5
    assert aggregate_rows(table, rows, "sum", "units") == 21
    assert isinstance(aggregate_rows(table, rows, "sum", "units"), int)
    assert aggregate_rows(table, rows, "sum", "amount") == 128.5
    assert aggregate_rows(table, rows, "mean", "units") == 3.5
    assert aggregate_rows(table, rows[:1], "mean", "units") == 1.0
    assert isinstance(aggregate_rows(table, rows[:1], "mean", "units"), float)
    assert aggregate_rows(table, rows, "min", "amount") == 2.5
    assert aggregate_rows(table, rows, "max", "amount") == 100  # numeric, not "9"
    assert isinstance(aggregate_rows(table, rows, "max", "units"), int)
    assert aggregate_rows(table, rows, "min", "region") == "East"
    assert aggregate_rows(table, rows, "max", "region") == "north"
    assert aggregate_rows(table, rows, "distinct", "region") == 5
    assert aggregate_rows(table, [], "sum", "units") == 0
    assert aggregate_rows(table, [], "mean", "units") is None
    assert aggregate_rows(table, [], "max", "units") is None


def test_sum_of_text_names_the_value_and_row(index: Index) -> None:
    table = table_of(index, "sales.csv")
    with pytest.raises(TableError) as info:
        aggregate_rows(table, list(table.rows), "sum", "region")
    assert str(info.value) == (
        "cannot sum column 'region' of sales.csv: row 1 holds 'North', which is not a number"
    )
    with pytest.raises(TableError, match="mean needs a column"):
        aggregate_rows(table, list(table.rows), "mean")


def test_as_number() -> None:
    assert as_number(" 007 ") == 7 and isinstance(as_number("7"), int)
    assert as_number("-1.5e2") == -150.0 and as_number(".5") == 0.5 and as_number("+3") == 3
    for text in ("NaN", "inf", "1,000", "1_000", "0x10", "", "12a", "1e999"):
        assert as_number(text) is None, text
    assert as_number(True) is None and as_number(None) is None and as_number(2.5) == 2.5


# --- periods ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "period"),
    [
        (
            [("date", ">=", "2024-01-01"), ("date", "<=", "2024-03-31")],
            "date from 2024-01-01 to 2024-03-31",
        ),
        ([("date", ">=", "2024-01-01")], "date from 2024-01-01"),
        ([("date", "<=", "2024-03-31")], "date until 2024-03-31"),
        ([("date", "=", "2024-02")], "date = 2024-02"),
        ([("day", ">", "2024"), ("day", "<", "2025-01")], "day after 2024, before 2025-01"),
        ([("date", ">=", "2024-01-01"), ("region", "=", "North")], "date from 2024-01-01"),
        ([("region", "=", "North")], None),
        ([("date", ">=", "2024-01-01"), ("other", "<=", "2024-03-31")], None),
        ([("date", ">=", "2024-01-01"), ("date", ">=", "2024-02-01")], None),
        ([("date", ">=", "2024-13-01")], None),
        ([("date", ">=", 2024)], None),
        ([("date", "contains", "2024-02")], None),
    ],
)  # fmt: skip
def test_describe_period(filters: list[tuple[str, FilterOp, Any]], period: str | None) -> None:
    assert describe_period([Filter(*f) for f in filters]) == period


# --- the session --------------------------------------------------------------------


def test_tables_lists_current_tables_only(session: TableSession) -> None:
    assert session.tables() == [
        TableInfo("sales.csv", "sales", ("date", "region", "amount", "units", "note"), 6),
        TableInfo("staff.json", "staff", ("name", "age", "active", "tags", "team"), 3),
    ]


def test_no_tables(tmp_path: Path) -> None:
    path = write(tmp_path, "a.txt", "Only text.\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        ingest(index, path)
        session = TableSession(index.store)
        assert session.tables() == []
        with pytest.raises(TableError) as info:
            session.query("sales", [], [])
        assert str(info.value) == NO_TABLES == "no tables are ingested; ingest CSV or JSON files"


def test_query_result_records_everything(session: TableSession, index: Index) -> None:
    filters = (Filter("date", ">=", "2024-01-01"), Filter("date", "<=", "2024-03-31"))
    result = session.query("sales", filters, ["date", "amount"])
    table = table_of(index, "sales.csv")
    assert result.id == "r1" and result.table == "sales.csv"
    assert (result.doc_id, result.doc_version, result.doc_sha256, result.source_path) == (
        table.doc_id,
        1,
        table.doc_sha256,
        table.source_path,
    )
    assert result.filters == filters and result.columns == ("date", "amount")
    assert result.row_count == 5
    assert result.rows[0] == ("2024-01-05", "10") and len(result.rows) == 5
    assert result.period == "date from 2024-01-01 to 2024-03-31"
    assert result.operation is None and result.source is None
    everything = session.query("sales.csv")
    assert everything.id == "r2" and everything.columns == table.columns
    assert everything.period is None and everything.row_count == 6


def test_aggregate_uses_all_rows_not_the_preview(tmp_path: Path) -> None:
    rows = "\n".join(f"2024-01-{i:02d},{i}" for i in range(1, 26))
    path = write(tmp_path, "daily.csv", f"day,value\n{rows}\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        ingest(index, path)
        session = TableSession(index.store)
        query = session.query("daily", [Filter("day", ">=", "2024-01-01")], ["day"])
        assert query.row_count == 25 and len(query.rows) == 10
        total = session.aggregate("r1", "sum", "value")
        assert total.value == sum(range(1, 26)) and total.id == "r2"
        assert (total.source, total.operation, total.column) == ("r1", "sum", "value")
        assert (total.table, total.filters, total.columns) == (
            query.table,
            query.filters,
            query.columns,
        )
        assert total.row_count == 25 and total.rows == ()
        assert total.period == "day from 2024-01-01"
        assert session.aggregate(" R1 ", "count").value == 25
        assert [r.id for r in session.results] == ["r1", "r2", "r3"]
        assert session.result("r2") == total


def test_pointer_errors(session: TableSession) -> None:
    with pytest.raises(TableError) as info:
        session.aggregate("r1", "count")
    assert str(info.value) == "unknown pointer 'r1'; no results yet"
    session.query("sales")
    with pytest.raises(TableError, match="unknown column 'price'"):
        session.query("sales", [Filter("price", ">", 1)])
    with pytest.raises(TableError, match="unknown column 'nope'"):
        session.query("sales", [], ["nope"])
    session.aggregate("r1", "sum", "units")  # failed calls take no pointer: this is r2
    with pytest.raises(TableError) as info:
        session.aggregate("r9", "count")
    assert str(info.value) == "unknown pointer 'r9'; results so far: r1, r2"
    with pytest.raises(TableError) as info:
        session.aggregate("r2", "count")
    assert str(info.value) == (
        "r2 is an aggregate (sum of units = 21), not a set of rows; "
        "aggregate a query result such as r1"
    )
    with pytest.raises(TableError, match="row 1 holds 'North', which is not a number"):
        session.aggregate("r1", "mean", "region")


def test_error_rows_are_table_rows_not_result_rows(session: TableSession) -> None:
    session.query("sales", [Filter("region", "=", "East")])
    with pytest.raises(TableError, match="row 4 holds 'missing amount'"):
        session.aggregate("r1", "sum", "note")


def test_name_resolution(tmp_path: Path) -> None:
    write(tmp_path / "data" / "2023", "sales.csv", "a\n1\n")
    write(tmp_path / "data" / "2024", "sales.csv", "a\n2\n")
    write(tmp_path / "data", "sales.json", '[{"a": 3}]')
    write(tmp_path / "data", "Staff List.csv", "a\n4\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        ingest(index, tmp_path / "data")
        session = TableSession(index.store)
        assert [t.name for t in session.tables()] == [
            "2023/sales.csv",
            "2024/sales.csv",
            "Staff List.csv",
            "sales.json",
        ]

        def first_cell(name: str) -> str | None:
            return session.query(name).rows[0][0]

        assert first_cell("2023/sales.csv") == "1"
        assert first_cell("data/2024/SALES.CSV") == "2"
        assert first_cell(str(tmp_path / "data" / "2024" / "sales.csv")) == "2"
        assert first_cell("sales.json") == "3"
        assert first_cell("staff list") == "4"  # stem / title, any case
        assert first_cell(" Staff List.csv ") == "4"
        with pytest.raises(TableError) as info:
            session.query("sales.csv")
        assert str(info.value) == (
            "table 'sales.csv' is ambiguous: 2023/sales.csv, 2024/sales.csv; use one of these names"
        )
        with pytest.raises(
            TableError, match=r"ambiguous: 2023/sales\.csv, 2024/sales\.csv, sales\.json;"
        ):
            session.query("SALES")
        with pytest.raises(TableError) as info:
            session.query("orders")
        assert str(info.value) == (
            "unknown table 'orders'; the tables are: "
            "2023/sales.csv, 2024/sales.csv, Staff List.csv, sales.json"
        )


def test_session_names() -> None:
    assert session_names(["/a/x.csv", "/b/y.csv"]) == ["x.csv", "y.csv"]
    assert session_names(["/a/x.csv", "/b/x.csv", "/b/a/x.csv"]) == [
        "/a/x.csv",
        "b/x.csv",
        "b/a/x.csv",
    ]


def test_only_current_versions(tmp_path: Path) -> None:
    path = write(tmp_path, "stock.csv", "item,qty\nbolt,5\n")
    with Index.open(tmp_path / "idx", create=True) as index:
        ingest(index, path)
        write(tmp_path, "stock.csv", "item,qty\nbolt,5\nnut,7\n")
        ingest(index, path)
        session = TableSession(index.store)
        (info,) = session.tables()
        assert info.row_count == 2
        result = session.query("stock")
        assert result.doc_version == 2 and result.row_count == 2


# --- arguments from the model -------------------------------------------------------


def test_parse_filters() -> None:
    assert parse_filters(None) == () and parse_filters([]) == ()
    assert parse_filters(
        [
            {"column": "date", "op": ">=", "value": "2024-01-01"},
            {"column": "n", "op": "==", "value": 3},
        ]
    ) == (Filter("date", ">=", "2024-01-01"), Filter("n", "=", 3))
    assert parse_filters({"column": " x ", "op": "CONTAINS", "value": "y"}) == (
        Filter("x", "contains", "y"),
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([{"column": "a", "op": "=", "value": 1}, {"column": "a", "op": "like", "value": "x"}],
         "filters[1].op: expected one of =, !=, <, <=, >, >=, contains, got 'like'"),
        ("date > 2024",
         "filters: expected a list of {column, op, value} objects, got 'date > 2024'"),
        ([["a", "=", 1]], "filters[0]: expected an object with column, op and value, got a list"),
        ([{"column": "a", "op": "="}], "filters[0].value: missing"),
        ([{"column": "a", "op": "=", "value": 1, "x": 2}],
         "filters[0]: unknown key 'x' (expected column, op, value)"),
        ([{"column": "", "op": "=", "value": 1}],
         "filters[0].column: expected a non-empty string, got ''"),
        ([{"column": "a", "op": "=", "value": [1]}],
         "filters[0].value: expected a string, number, boolean or null, got a list"),
        ([{"column": "a", "op": "=", "value": float("nan")}],
         "filters[0].value: expected a string, number, boolean or null, got nan"),
        ([{"column": "a", "op": ">", "value": None}],
         "filters[0].value: null can only be compared with = or !="),
        ([{"column": "a", "op": 3, "value": 1}],
         "filters[0].op: expected one of =, !=, <, <=, >, >=, contains, got 3"),
    ],
)  # fmt: skip
def test_parse_filters_errors(value: object, message: str) -> None:
    with pytest.raises(TableError) as info:
        parse_filters(value)
    assert str(info.value) == message


def test_other_argument_parsers() -> None:
    assert parse_columns(None) == () and parse_columns("a") == ("a",)
    assert parse_columns(["a", " b "]) == ("a", "b")
    with pytest.raises(TableError, match=r"columns\[1\]: expected a non-empty string, got 2"):
        parse_columns(["a", 2])
    assert parse_aggregate_op(" Avg ") == "mean" and parse_aggregate_op("sum") == "sum"
    with pytest.raises(TableError) as info:
        parse_aggregate_op("median")
    assert str(info.value) == (
        "op: expected one of count, sum, mean, min, max, distinct, got 'median'"
    )
    assert parse_name(" r1 ", "pointer") == "r1"
    with pytest.raises(TableError, match="pointer: expected a non-empty string, got null"):
        parse_name(None, "pointer")


# --- a property: the engine against an obvious oracle -------------------------------

KEYS = ["", " ", "a", "A", "b", "ab", 'a,"b', "a\nb"]
OPS: list[FilterOp] = ["=", "!=", "<", "<=", ">", ">=", "contains"]
row_strategy = st.tuples(
    st.sampled_from(KEYS),
    st.one_of(st.none(), st.integers(-6, 6)),
    st.sampled_from(["plain", "plus", "zero", "spaced"]),
)
filter_strategy = st.one_of(
    st.tuples(st.just("k"), st.sampled_from(OPS), st.sampled_from(["a", "A", "b", "ab", ""])),
    st.tuples(
        st.just("n"),
        st.sampled_from(OPS[:-1]),
        st.one_of(st.integers(-6, 6), st.integers(-6, 6).map(str)),
    ),
)


def oracle_match(key: str, number: int | None, column: str, op: FilterOp, value: Any) -> bool:
    """The filter rules, written out for this table: `k` holds words, `n` integers."""
    if column == "k":
        if not key.strip():
            return op == "!="
        compare = {"=": key == value, "!=": key != value, "<": key < value, "<=": key <= value,
                   ">": key > value, ">=": key >= value}  # fmt: skip
        return value.casefold() in key.casefold() if op == "contains" else compare[op]
    if number is None:
        return op == "!="
    wanted = int(value)
    return {"=": number == wanted, "!=": number != wanted, "<": number < wanted,
            "<=": number <= wanted, ">": number > wanted, ">=": number >= wanted}[op]  # fmt: skip


_counter = itertools.count()


def number_text(value: int, style: str) -> str:
    """`value` as a CSV might write it: `3`, `+3`, `03`, ` 3 `."""
    sign = "-" if value < 0 else "+" if style == "plus" else ""
    digits = f"0{abs(value)}" if style == "zero" else str(abs(value))
    return f" {sign}{digits} " if style == "spaced" else sign + digits


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(row_strategy, min_size=0, max_size=8),
    filters=st.lists(filter_strategy, max_size=3),
)
def test_select_count_and_sum_match_an_oracle(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, int | None, str]],
    filters: list[tuple[str, FilterOp, Any]],
) -> None:
    folder = tmp_path_factory.mktemp(f"prop{next(_counter)}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "k", "n"])
    for number, (key, value, style) in enumerate(rows):
        writer.writerow([number, key, "" if value is None else number_text(value, style)])
    path = write(folder, "t.csv", out.getvalue())
    with Index.open(folder / "idx", create=True) as index:
        ingest(index, path)
        session = TableSession(index.store)
        result = session.query("t", [Filter(*f) for f in filters], ["id"])
        count = session.aggregate(result.id, "count").value
        total = session.aggregate(result.id, "sum", "n").value
    expected = [
        (number, value)
        for number, (key, value, _) in enumerate(rows)
        if all(oracle_match(key, value, *f) for f in filters)
    ]
    assert result.row_count == count == len(expected)
    assert [row[0] for row in result.rows] == [str(n) for n, _ in expected[:10]]
    assert total == sum(value for _, value in expected if value is not None)
    assert isinstance(total, int)
