"""Reading JSON data into the dataclasses of `quoteproof.model`, strictly, by their
type hints and the exceptions in `codec.schema`.

Every error is a `ValueError` whose message starts with the path of the bad value
(`quotes[2].start: expected an integer, got str`). Beyond JSON's own types, strings
must be valid Unicode (no lone surrogate, which no store or terminal can take) and
integers must fit in 64 bits (as a store's integer columns do).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from collections.abc import Callable
from functools import cache, partial
from typing import Any, Literal, Union, get_args, get_origin

from quoteproof.codec.schema import (
    ADDED_LATER,
    DECODED_AS,
    DERIVED,
    FIELD_CHECKS,
    TAG,
    wire_fields,
    wire_hints,
)
from quoteproof.model import Scalar

__all__ = ["read_fields"]


def read_fields(cls: type, data: object, path: str, prefix: str) -> dict[str, Any]:
    """Check that `data` is an object with exactly `cls`'s keys (those added later may
    be absent) and return the values of those present, read by their types.

    `path` names `data` in errors about it as a whole, `prefix` starts the path of
    each of its keys (`quotes[2].`, or "" at the top).
    """
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object, got {_kind(data)}")
    keys = wire_fields(cls)
    optional = ADDED_LATER.get(cls, frozenset())
    for key in keys:
        if key not in data and key not in optional:
            raise ValueError(f"{path}: missing field {key!r}")
    for key in data:
        if key not in keys:
            raise ValueError(f"{path}: unknown field {key!r}")
    hints = wire_hints(cls)
    values: dict[str, Any] = {}
    for key in keys:
        if key in data:
            value = _reader(hints[key])(data[key], prefix + key)
            for check in FIELD_CHECKS.get((cls, key), ()):
                problem = check(value, values)
                if problem is not None:
                    raise ValueError(f"{prefix}{key}: {problem}")
            values[key] = value
    return values


Reader = Callable[[object, str], Any]
"""Reads a JSON value (its path for errors) as one type."""


@cache
def _reader(hint: Any) -> Reader:
    """The reader of type `hint`, made once per type: a str, int, float or bool, a
    Literal, a `tuple[X, ...]` (from a list), a union (optional, `Scalar`, or
    dataclasses told apart by their `type` field) or a dataclass (from an object)."""
    origin = get_origin(hint)
    if hint in _PRIMITIVES:
        return _PRIMITIVES[hint]
    if origin is Literal:
        return partial(_literal, choices=get_args(hint))
    if origin is tuple:
        return partial(_tuple, item=_reader(get_args(hint)[0]))
    if hint == Scalar:
        return _scalar
    if origin in (Union, types.UnionType):
        return _union_reader(get_args(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return partial(_object, hint)
    raise TypeError(f"no JSON reading for type {hint!r}")


def _union_reader(members: tuple[Any, ...]) -> Reader:
    """Dataclasses told apart by their tag, or an optional value."""
    if all(isinstance(member, type) and dataclasses.is_dataclass(member) for member in members):
        by_tag = {get_args(wire_hints(member)[TAG])[0]: member for member in members}
        return partial(_tagged, by_tag=by_tag)
    (inner,) = (member for member in members if member is not type(None))
    read: Reader
    if inner is str:
        read = partial(_string, expected="a string or null")
    elif get_origin(inner) is tuple:
        read = partial(_tuple, item=_reader(get_args(inner)[0]), expected="null or a list")
    else:
        read = _reader(inner)
    return lambda value, path: None if value is None else read(value, path)


def _tuple(value: object, path: str, item: Reader, expected: str = "a list") -> tuple[Any, ...]:
    elements = _checked(value, path, list, expected)
    return tuple(item(element, f"{path}[{j}]") for j, element in enumerate(elements))


def _object(cls: type, data: object, path: str) -> Any:
    """Read an instance of `cls` (of `DECODED_AS[cls]` when listed there); a derived
    key must agree with the field it follows from."""
    values = read_fields(cls, data, path, f"{path}.")
    claimed = {name: values.pop(name) for name in DERIVED.get(cls, {}) if name in values}
    built = DECODED_AS.get(cls, cls)(**values)
    for name, value in claimed.items():
        if getattr(built, name) != value:
            basis = DERIVED[cls][name]
            raise ValueError(
                f"{path}.{name}: {json.dumps(value)} contradicts {basis} {getattr(built, basis)!r}"
            )
    return built


def _tagged(value: object, path: str, by_tag: dict[str, type]) -> Any:
    """Read the dataclass of `by_tag` named by the value's `type` key."""
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected an object, got {_kind(value)}")
    tag = value.get(TAG)
    if not isinstance(tag, str) or tag not in by_tag:
        names = [repr(name) for name in by_tag]
        expected = ", ".join(names[:-1]) + " or " + names[-1]
        raise ValueError(f"{path}.{TAG}: expected {expected}, got {tag!r}")
    return _object(by_tag[tag], value, path)


def _kind(value: object) -> str:
    """Name a JSON value's type for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _checked(value: object, path: str, kind: type, expected: str) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"{path}: expected {expected}, got {_kind(value)}")
    return value


def _string(value: object, path: str, expected: str = "a string") -> str:
    text: str = _checked(value, path, str, expected)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{path}: expected valid Unicode, got a lone surrogate at character {exc.start}"
        ) from None
    return text


_INT64 = range(-(2**63), 2**63)


def _int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}: expected an integer, got {_kind(value)}")
    if value not in _INT64:
        raise ValueError(
            f"{path}: expected an integer of at most 64 bits, got one of {value.bit_length()} bits"
        )
    return value


def _float(value: object, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{path}: expected a number, got {_kind(value)}")
    return _finite(value, path)


def _finite(value: int | float, path: str) -> float:
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{path}: expected a finite number, got {value!r}")
    return number


def _scalar(value: object, path: str) -> Scalar:
    """A table value: a string, a finite number, a boolean or null (an int stays an int)."""
    if isinstance(value, str):
        return _string(value, path)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return _finite(value, path)
    raise ValueError(f"{path}: expected a string, number, boolean or null, got {_kind(value)}")


def _literal(value: object, path: str, choices: tuple[str, ...]) -> str:
    name: str = _checked(value, path, kind=str, expected="a string")
    if name not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{path}: expected one of {allowed}, got {name!r}")
    return name


_PRIMITIVES: dict[Any, Reader] = {
    str: _string,
    bool: partial(_checked, kind=bool, expected="true or false"),
    int: _int,
    float: _float,
}
