"""Tables: CSV and JSON documents of the index queried deterministically.

The layer under the agent's `table_query` and `aggregate` tools; no language model
here. `table` reads a stored document back into rows, `query` filters, projects
and aggregates them, `period` describes a date range, `session` keeps the result
pointers of one answer, `args` checks a model's JSON arguments.
"""

from __future__ import annotations

from quoteproof.tables.args import (
    parse_aggregate_op,
    parse_columns,
    parse_filter,
    parse_filter_op,
    parse_filters,
    parse_name,
    parse_optional_name,
    parse_scalar,
)
from quoteproof.tables.period import describe_period, is_iso_date
from quoteproof.tables.query import (
    AGGREGATE_OPS,
    FILTER_OPS,
    aggregate_rows,
    cell_matches,
    matching_indexes,
    project,
    select_rows,
)
from quoteproof.tables.session import NO_TABLES, PREVIEW_ROWS, TableInfo, TableSession
from quoteproof.tables.table import TABLE_FORMATS, Row, Table, load_table
from quoteproof.tables.values import as_number, is_empty, scalar_text

__all__ = [
    "AGGREGATE_OPS",
    "FILTER_OPS",
    "NO_TABLES",
    "PREVIEW_ROWS",
    "TABLE_FORMATS",
    "Row",
    "Table",
    "TableInfo",
    "TableSession",
    "aggregate_rows",
    "as_number",
    "cell_matches",
    "describe_period",
    "is_empty",
    "is_iso_date",
    "load_table",
    "matching_indexes",
    "parse_aggregate_op",
    "parse_columns",
    "parse_filter",
    "parse_filter_op",
    "parse_filters",
    "parse_name",
    "parse_optional_name",
    "parse_scalar",
    "project",
    "scalar_text",
    "select_rows",
]
