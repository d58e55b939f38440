"""Where the answer format differs from "one JSON object per dataclass of
`quoteproof.model`, one key per field, in field order".

The dataclasses are the schema; these tables hold the few exceptions, each keyed by
the class (and field) it concerns. Nothing else in the codec names a field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, get_type_hints

from quoteproof.model import (
    ANSWER_SCHEMA,
    Answer,
    Box,
    ClaimedQuote,
    DataResult,
    DataSegment,
    Faithfulness,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    RetrievalInfo,
    Usage,
)

Check = Callable[[Any, Mapping[str, Any]], str | None]
"""A check of one field's value read (given the fields read before it): None when
the value is fine, else what is wrong ("expected an integer >= 0, got -1")."""

TAG = "type"
"""The field that tells the members of a union of dataclasses apart (`Segment`)."""

LEADING: Mapping[type, tuple[str, ...]] = {
    Answer: ("schema", "question", "status", "refusal_reason"),
    LLMInfo: ("backend", "model", "server", "language_model"),
    ProseSegment: (TAG,),
    QuoteSegment: (TAG,),
    DataSegment: (TAG,),
}
"""Keys written before the class's other fields (which follow in field order)."""

ADDED_LATER: Mapping[type, frozenset[str]] = {
    Answer: frozenset(
        {
            "retrieval",
            "mode",
            "partial",
            "cited",
            "statements",
            "data",
            "escalation",
            "calls",
            "usage",
            "notices",
            "removed_sentences",
            "facts",
            "context",
            "faithfulness",
        }
    ),
    Quote: frozenset({"boxes", "ocr", "tables", "list_goes_on"}),
    LLMInfo: frozenset({"server", "language_model"}),
    RetrievalInfo: frozenset({"threshold_source", "missing_terms"}),
}
"""Fields added after the first release: records saved before them lack them, and
then read as the dataclass default. Every other key is required."""

OMITTED_WHEN_NULL: Mapping[type, frozenset[str]] = {Answer: frozenset({"retrieval"})}
"""Fields written only when not None."""

DERIVED: Mapping[type, Mapping[str, str]] = {LLMInfo: {"language_model": "backend"}}
"""Keys written from a property rather than a field, each with the field it follows
from: read back, the value must agree with it."""

DECODED_AS: Mapping[type, type] = {Quote: ClaimedQuote}
"""Classes read back as another: a recorded quote is only a claim until
`receipts.verify_recorded` re-reads it from the store."""


def _at_least(minimum: int) -> Check:
    def check(value: int, _read: Mapping[str, Any]) -> str | None:
        return None if value >= minimum else f"expected an integer >= {minimum}, got {value}"

    return check


def _known_schema(value: str, _read: Mapping[str, Any]) -> str | None:
    if value == ANSWER_SCHEMA:
        return None
    return f"unsupported schema {value!r}, expected {ANSWER_SCHEMA!r}"


def _after_start(value: int, read: Mapping[str, Any]) -> str | None:
    start = read["start"]
    return None if value >= start else f"expected end >= start ({start}), got {value}"


def _share(value: float | None, _read: Mapping[str, Any]) -> str | None:
    if value is None or 0 <= value <= 1:
        return None
    return f"expected a share from 0 to 1, got {value}"


FIELD_CHECKS: Mapping[tuple[type, str], tuple[Check, ...]] = {
    (Answer, "schema"): (_known_schema,),
    (Quote, "start"): (_at_least(0),),
    (Quote, "end"): (_at_least(0), _after_start),
    (Box, "page"): (_at_least(1),),
    (DataResult, "row_count"): (_at_least(0),),
    (Usage, "prompt_tokens"): (_at_least(0),),
    (Usage, "completion_tokens"): (_at_least(0),),
    (Faithfulness, "removed"): (_at_least(0),),
    (Faithfulness, "score"): (_share,),
}
"""Checks beyond the type hint, run in order once the field is read."""


@cache
def wire_fields(cls: type) -> tuple[str, ...]:
    """The keys of `cls`'s JSON object, in the order they are written."""
    leading = LEADING.get(cls, ())
    return leading + tuple(f.name for f in dataclasses.fields(cls) if f.name not in leading)


@cache
def wire_hints(cls: type) -> Mapping[str, Any]:
    """The type of each key of `cls`'s JSON object: its field's type hint, or for a
    derived key the return type of its property."""
    hints = dict(get_type_hints(cls))
    for name in DERIVED.get(cls, {}):
        hints[name] = get_type_hints(getattr(cls, name).fget)["return"]
    return {key: hints[key] for key in wire_fields(cls)}
