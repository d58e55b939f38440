"""The answer's storage and wire codec: `Answer` <-> `quoteproof.answer/1` JSON data.

The format is the dataclasses of `quoteproof.model` written out: one object per
dataclass, one key per field in field order, tuples as lists; `codec.schema` lists
the few exceptions (keys written first, fields added after the first release,
`retrieval` written only when known, `llm.language_model` derived from the backend).
The table of docs/answer-json.md describes every key.

Contract: for every `Answer` whose floats are finite, whose quote and data segments
name quotes and data results it holds, and whose quote ids (in `quotes`, and in
`cited`) and data result ids are unique, `answer_from_dict(answer_to_dict(answer))`
is the record of `answer`: its claims hold the quotes' fields unchanged, and
`receipts.verify_recorded` gives `answer` back when they still match the store.
`answer_from_dict` is strict: a wrong type, a missing or unknown key, an unknown
enum value, a bad span, a duplicate id, a dangling quote or data id (of a segment
or a fact) or a claim naming no prose segment raises
`ValueError` whose message starts with the path of the bad field
(`quotes[2].start: expected an integer, got str`). Absent fields added later read
as their defaults. Boxes are in PDF points, origin at the page's bottom left.
Decoding checks shape only and never yields a displayable `Quote`. O(size).
The `seal` key of an answer handed out sealed is not part of this format: it is
split off (and checked) by `seal.split_seal` and `receipts.verify_saved` first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quoteproof.codec.decode import read_fields
from quoteproof.codec.encode import to_data
from quoteproof.codec.strict_json import loads_strict
from quoteproof.model import (
    Answer,
    DataSegment,
    Faithfulness,
    ProseSegment,
    QuoteSegment,
    RecordedAnswer,
    Segment,
)

__all__ = ["answer_from_dict", "answer_from_json", "answer_to_dict"]


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    """Return `answer` as plain JSON-ready data (dicts, lists, str, int, float, bool,
    None) in the `quoteproof.answer/1` shape. Nothing is dropped; the result shares
    no mutable state with `answer`."""
    data: dict[str, Any] = to_data(answer)
    return data


def answer_from_dict(data: object) -> RecordedAnswer:
    """Read data shaped like `answer_to_dict`'s output as a `RecordedAnswer`, whose
    quotes are claims until `receipts.verify_recorded` re-reads them from a store.

    Raises `ValueError` naming the first bad field (see the module docstring).
    """
    values = read_fields(Answer, data, "answer", "")
    quotes = values.pop("quotes")
    cited = values.pop("cited", ())
    quote_ids = _unique_ids([quote.id for quote in quotes], "quotes", "quote")
    _unique_ids([quote.id for quote in cited], "cited", "quote")
    data_ids = _unique_ids([result.id for result in values.get("data", ())], "data", "data result")
    _check_segments(values["segments"], quote_ids, data_ids)
    _check_claims(values.get("faithfulness"), values["segments"])
    for i, fact in enumerate(values.get("facts", ())):
        if fact.quote_id is not None and fact.quote_id not in quote_ids:
            raise ValueError(f"facts[{i}].quote_id: no quote with id {fact.quote_id!r} in quotes")
    return RecordedAnswer(Answer(**values, quotes=(), cited=()), quotes, cited)


def answer_from_json(text: str) -> RecordedAnswer:
    """Read an answer's JSON text (`render_json`'s output) with `answer_from_dict`.

    Raises `ValueError` for text that is not JSON (naming the line and column), JSON
    that holds what JSON cannot carry or is nested too deeply (`loads_strict`), and
    every error of `answer_from_dict`.
    """
    return answer_from_dict(loads_strict(text))


def _unique_ids(ids: Sequence[str], key: str, what: str) -> set[str]:
    seen: set[str] = set()
    for i, item_id in enumerate(ids):
        if item_id in seen:
            raise ValueError(f"{key}[{i}].id: duplicate {what} id {item_id!r}")
        seen.add(item_id)
    return seen


def _check_segments(segments: Sequence[Segment], quote_ids: set[str], data_ids: set[str]) -> None:
    """Every quote and data segment must name a quote or data result of the answer."""
    for i, segment in enumerate(segments):
        if isinstance(segment, QuoteSegment):
            if segment.quote_id not in quote_ids:
                raise ValueError(
                    f"segments[{i}].quote_id: no quote with id {segment.quote_id!r} in quotes"
                )
        elif isinstance(segment, DataSegment) and segment.data_id not in data_ids:
            raise ValueError(
                f"segments[{i}].data_id: no data result with id {segment.data_id!r} in data"
            )


def _check_claims(faithfulness: Faithfulness | None, segments: Sequence[Segment]) -> None:
    """Every claim of `faithfulness` must name a prose segment of the answer."""
    for i, claim in enumerate(faithfulness.claims if faithfulness else ()):
        if not (0 <= claim.segment < len(segments)) or not isinstance(
            segments[claim.segment], ProseSegment
        ):
            raise ValueError(
                f"faithfulness.claims[{i}].segment: no prose segment at {claim.segment}"
            )
