"""Writing the dataclasses of `quoteproof.model` as plain JSON data, by their fields
and the exceptions in `codec.schema`."""

from __future__ import annotations

from typing import Any

from quoteproof.codec.schema import OMITTED_WHEN_NULL, wire_fields

__all__ = ["to_data"]


def to_data(value: object) -> Any:
    """Return `value` as JSON-ready data: a dataclass as an object of its wire keys
    (in order), a tuple as a list, anything else as is. The result shares no
    mutable state with `value`. O(size)."""
    if isinstance(value, tuple):
        return [to_data(item) for item in value]
    if not hasattr(value, "__dataclass_fields__"):
        return value
    cls: type = type(value)
    data = {key: to_data(getattr(value, key)) for key in wire_fields(cls)}
    for key in OMITTED_WHEN_NULL.get(cls, ()):
        if data[key] is None:
            del data[key]
    return data
