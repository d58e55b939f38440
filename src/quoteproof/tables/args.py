"""Turning a model's JSON tool arguments into typed values for `TableSession`.

Every function takes a decoded JSON value (`json.loads` output) and the argument's
name, and raises `TableError` with a message a model can act on: the path of the
bad part, what was expected and what came, e.g.
`filters[1].op: expected one of =, !=, <, <=, >, >=, contains, got 'like'`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

from quoteproof.errors import TableError
from quoteproof.model import AggregateOp, Filter, FilterOp, Scalar
from quoteproof.tables.query import AGGREGATE_OPS, FILTER_OPS

_OP_ALIASES: dict[str, str] = {"==": "=", "<>": "!="}
_AGGREGATE_ALIASES: dict[str, str] = {"avg": "mean", "average": "mean"}
_FILTER_KEYS = ("column", "op", "value")


def describe_json(value: object) -> str:
    """A short description of a JSON value for messages: `'like'`, `3`, `null`,
    `a list`, `an object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
    if isinstance(value, int | float):
        return repr(value)
    return "a list" if isinstance(value, list) else "an object"


def parse_name(value: object, field: str) -> str:
    """A non-empty string (stripped), e.g. a table, column or pointer name."""
    if not isinstance(value, str) or not value.strip():
        raise TableError(f"{field}: expected a non-empty string, got {describe_json(value)}")
    return value.strip()


def parse_optional_name(value: object, field: str) -> str | None:
    """`parse_name`, or None for a missing value (None or an empty string)."""
    if value is None or value == "":
        return None
    return parse_name(value, field)


def parse_columns(value: object, field: str = "columns") -> tuple[str, ...]:
    """A list of column names; None or [] for all columns; a lone string for one."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (parse_name(value, field),)
    if not isinstance(value, list):
        raise TableError(f"{field}: expected a list of column names, got {describe_json(value)}")
    return tuple(parse_name(item, f"{field}[{i}]") for i, item in enumerate(value))


def _one_of(value: object, field: str, choices: tuple[str, ...], aliases: Mapping[str, str]) -> str:
    """`value` as one of `choices`, read case-blind and through `aliases`; TableError
    naming `field` and the choices otherwise."""
    text = value.strip().lower() if isinstance(value, str) else None
    text = aliases.get(text, text) if text is not None else None
    if text not in choices:
        raise TableError(
            f"{field}: expected one of {', '.join(choices)}, got {describe_json(value)}"
        )
    return text


def parse_filter_op(value: object, field: str = "op") -> FilterOp:
    """One of `FILTER_OPS` (`==` is read as `=`, `<>` as `!=`, case is ignored)."""
    return cast(FilterOp, _one_of(value, field, FILTER_OPS, _OP_ALIASES))


def parse_aggregate_op(value: object, field: str = "op") -> AggregateOp:
    """One of `AGGREGATE_OPS` (`avg` and `average` are read as `mean`, case ignored)."""
    return cast(AggregateOp, _one_of(value, field, AGGREGATE_OPS, _AGGREGATE_ALIASES))


def parse_scalar(value: object, field: str) -> Scalar:
    """A string, finite number, boolean or null."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise TableError(
        f"{field}: expected a string, number, boolean or null, got {describe_json(value)}"
    )


def parse_filter(value: object, field: str) -> Filter:
    """An object `{"column": ..., "op": ..., "value": ...}` (no other keys)."""
    if not isinstance(value, dict):
        raise TableError(
            f"{field}: expected an object with column, op and value, got {describe_json(value)}"
        )
    for key in value:
        if key not in _FILTER_KEYS:
            raise TableError(f"{field}: unknown key {key!r} (expected column, op, value)")
    for key in _FILTER_KEYS:
        if key not in value:
            raise TableError(f"{field}.{key}: missing")
    op = parse_filter_op(value["op"], f"{field}.op")
    scalar = parse_scalar(value["value"], f"{field}.value")
    if scalar is None and op not in ("=", "!="):
        raise TableError(f"{field}.value: null can only be compared with = or !=")
    return Filter(parse_name(value["column"], f"{field}.column"), op, scalar)


def parse_filters(value: object, field: str = "filters") -> tuple[Filter, ...]:
    """A list of filter objects (`parse_filter`); None or [] for no filters; a lone
    filter object is read as a list of one."""
    if value is None:
        return ()
    if isinstance(value, dict):
        return (parse_filter(value, field),)
    if not isinstance(value, list):
        raise TableError(
            f"{field}: expected a list of {{column, op, value}} objects, got {describe_json(value)}"
        )
    return tuple(parse_filter(item, f"{field}[{i}]") for i, item in enumerate(value))
