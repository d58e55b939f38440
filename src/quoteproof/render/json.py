"""Answer <-> JSON: the versioned public format `quoteproof.answer/1`.

Shape (a public contract; keys appear in this order)::

    {"schema": "quoteproof.answer/1", "question": str,
     "status": "answered" | "refused", "refusal_reason": str | null,
     "segments": [{"type": "prose", "text": str, "citations": [str, ...]}
                  | {"type": "quote", "quote_id": str}],
     "quotes": [{"id", "ref", "label", "doc_id", "doc_version", "source_path",
                 "start", "end", "text", "claimed_text", "match", "score",
                 "doc_sha256", "text_sha256", "section": [str, ...],
                 "pages": null | [int, ...], "differs": str | null,
                 "boxes": [{"page": int, "x0", "y0", "x1", "y1": float}, ...],
                 "ocr": bool}],
     "rejected": [{"raw", "reason"}],
     "llm": {"backend", "model", "raw_output"},
     "sources": [{"ref", "label", "doc_id", "doc_version", "source_path",
                  "score", "rank"}],
     "retrieval": {"retriever": str, "evidence": float | null,
                   "evidence_kind": str | null, "threshold": float | null}}

Contract: for every `Answer` whose floats are finite and whose quote segments name
quotes it holds, `answer_from_dict(answer_to_dict(answer)) == answer`, and the same
through `json.loads(render_json(answer))`. `answer_from_dict` is strict: a wrong
type, a missing or unknown key, an unknown enum value, a bad span or a dangling
quote id raises `ValueError` whose message starts with the path of the bad field
(`quotes[2].start: expected an integer, got str`). A quote's `boxes` and `ocr`, and the
answer's `retrieval`, may be absent (answers saved before they existed) and then read
as `[]`, `false` and null; `retrieval` is written only when known.
Boxes are in PDF points, origin at the page's bottom left. It checks shape only; whether the
quotes match the index is `quoteproof verify`'s job. All functions are O(size).
"""

from __future__ import annotations

import json
import math
from typing import Any, get_args

from quoteproof.model import (
    ANSWER_SCHEMA,
    Answer,
    AnswerStatus,
    Box,
    LLMInfo,
    MatchKind,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    RetrievalInfo,
    Segment,
    SourceInfo,
)

__all__ = ["answer_from_dict", "answer_to_dict", "render_json"]

_STATUSES: tuple[str, ...] = get_args(AnswerStatus)
_MATCHES: tuple[str, ...] = get_args(MatchKind)

_ANSWER_KEYS = (
    "schema",
    "question",
    "status",
    "refusal_reason",
    "segments",
    "quotes",
    "rejected",
    "llm",
    "sources",
    "retrieval",
)
_ANSWER_OPTIONAL_KEYS = ("retrieval",)
_RETRIEVAL_KEYS = ("retriever", "evidence", "evidence_kind", "threshold")
_PROSE_KEYS = ("type", "text", "citations")
_QUOTE_SEGMENT_KEYS = ("type", "quote_id")
_QUOTE_KEYS = (
    "id",
    "ref",
    "label",
    "doc_id",
    "doc_version",
    "source_path",
    "start",
    "end",
    "text",
    "claimed_text",
    "match",
    "score",
    "doc_sha256",
    "text_sha256",
    "section",
    "pages",
    "differs",
    "boxes",
    "ocr",
)
_QUOTE_OPTIONAL_KEYS = ("boxes", "ocr")
_BOX_KEYS = ("page", "x0", "y0", "x1", "y1")
_REJECTED_KEYS = ("raw", "reason")
_LLM_KEYS = ("backend", "model", "raw_output")
_SOURCE_KEYS = ("ref", "label", "doc_id", "doc_version", "source_path", "score", "rank")


# --------------------------------------------------------------------------- writing


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    """Return `answer` as plain JSON-ready data (dicts, lists, str, int, float, None).

    Tuples become lists; nothing is dropped, so `answer_from_dict` rebuilds an equal
    `Answer`. The result shares no mutable state with `answer`.
    """
    data: dict[str, Any] = {
        "schema": answer.schema,
        "question": answer.question,
        "status": answer.status,
        "refusal_reason": answer.refusal_reason,
        "segments": [_segment_to_dict(segment) for segment in answer.segments],
        "quotes": [_quote_to_dict(quote) for quote in answer.quotes],
        "rejected": [{"raw": item.raw, "reason": item.reason} for item in answer.rejected],
        "llm": {
            "backend": answer.llm.backend,
            "model": answer.llm.model,
            "raw_output": answer.llm.raw_output,
        },
        "sources": [
            {
                "ref": source.ref,
                "label": source.label,
                "doc_id": source.doc_id,
                "doc_version": source.doc_version,
                "source_path": source.source_path,
                "score": source.score,
                "rank": source.rank,
            }
            for source in answer.sources
        ],
    }
    if answer.retrieval is not None:
        data["retrieval"] = {
            "retriever": answer.retrieval.retriever,
            "evidence": answer.retrieval.evidence,
            "evidence_kind": answer.retrieval.evidence_kind,
            "threshold": answer.retrieval.threshold,
        }
    return data


def render_json(answer: Answer) -> str:
    """Return `answer` as JSON text: indent 2, non-ASCII kept as is (`ensure_ascii=False`).

    Raises `ValueError` if a score is NaN or infinite (not representable in JSON).
    """
    return json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False, allow_nan=False)


def _segment_to_dict(segment: Segment) -> dict[str, Any]:
    if isinstance(segment, ProseSegment):
        return {"type": "prose", "text": segment.text, "citations": list(segment.citations)}
    return {"type": "quote", "quote_id": segment.quote_id}


def _quote_to_dict(quote: Quote) -> dict[str, Any]:
    return {
        "id": quote.id,
        "ref": quote.ref,
        "label": quote.label,
        "doc_id": quote.doc_id,
        "doc_version": quote.doc_version,
        "source_path": quote.source_path,
        "start": quote.start,
        "end": quote.end,
        "text": quote.text,
        "claimed_text": quote.claimed_text,
        "match": quote.match,
        "score": quote.score,
        "doc_sha256": quote.doc_sha256,
        "text_sha256": quote.text_sha256,
        "section": list(quote.section),
        "pages": None if quote.pages is None else list(quote.pages),
        "differs": quote.differs,
        "boxes": [
            {"page": b.page, "x0": b.x0, "y0": b.y0, "x1": b.x1, "y1": b.y1} for b in quote.boxes
        ],
        "ocr": quote.ocr,
    }


# --------------------------------------------------------------------------- reading


def answer_from_dict(data: object) -> Answer:
    """Rebuild an `Answer` from data shaped like `answer_to_dict`'s output.

    Raises `ValueError` naming the first bad field (see the module docstring).
    """
    obj = _object(data, "answer", _ANSWER_KEYS, optional=_ANSWER_OPTIONAL_KEYS)
    schema = _str(obj, "schema", "")
    if schema != ANSWER_SCHEMA:
        raise ValueError(f"schema: unsupported schema {schema!r}, expected {ANSWER_SCHEMA!r}")
    status = _choice(obj, "status", "", _STATUSES)
    quotes = tuple(
        _quote_from(item, f"quotes[{i}]") for i, item in enumerate(_list(obj, "quotes", ""))
    )
    seen: set[str] = set()
    for i, quote in enumerate(quotes):
        if quote.id in seen:
            raise ValueError(f"quotes[{i}].id: duplicate quote id {quote.id!r}")
        seen.add(quote.id)
    segments = tuple(
        _segment_from(item, f"segments[{i}]", seen)
        for i, item in enumerate(_list(obj, "segments", ""))
    )
    rejected = tuple(
        _rejected_from(item, f"rejected[{i}]") for i, item in enumerate(_list(obj, "rejected", ""))
    )
    sources = tuple(
        _source_from(item, f"sources[{i}]") for i, item in enumerate(_list(obj, "sources", ""))
    )
    llm = _object(obj["llm"], "llm", _LLM_KEYS)
    return Answer(
        question=_str(obj, "question", ""),
        status="answered" if status == "answered" else "refused",
        segments=segments,
        quotes=quotes,
        rejected=rejected,
        llm=LLMInfo(
            backend=_str(llm, "backend", "llm."),
            model=_opt_str(llm, "model", "llm."),
            raw_output=_str(llm, "raw_output", "llm."),
        ),
        sources=sources,
        refusal_reason=_opt_str(obj, "refusal_reason", ""),
        retrieval=_retrieval_from(obj["retrieval"]) if obj.get("retrieval") is not None else None,
        schema=schema,
    )


def _retrieval_from(data: object) -> RetrievalInfo:
    obj = _object(data, "retrieval", _RETRIEVAL_KEYS)
    p = "retrieval."
    return RetrievalInfo(
        retriever=_str(obj, "retriever", p),
        evidence=None if obj["evidence"] is None else _float(obj, "evidence", p),
        evidence_kind=_opt_str(obj, "evidence_kind", p),
        threshold=None if obj["threshold"] is None else _float(obj, "threshold", p),
    )


def _segment_from(data: object, path: str, quote_ids: set[str]) -> Segment:
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object, got {_kind(data)}")
    kind = data.get("type")
    if kind == "prose":
        obj = _object(data, path, _PROSE_KEYS)
        citations = tuple(
            _item_str(c, f"{path}.citations[{j}]")
            for j, c in enumerate(_list(obj, "citations", f"{path}."))
        )
        return ProseSegment(text=_str(obj, "text", f"{path}."), citations=citations)
    if kind == "quote":
        obj = _object(data, path, _QUOTE_SEGMENT_KEYS)
        quote_id = _str(obj, "quote_id", f"{path}.")
        if quote_id not in quote_ids:
            raise ValueError(f"{path}.quote_id: no quote with id {quote_id!r} in quotes")
        return QuoteSegment(quote_id=quote_id)
    raise ValueError(f"{path}.type: expected 'prose' or 'quote', got {kind!r}")


def _box_from(data: object, path: str) -> Box:
    obj = _object(data, path, _BOX_KEYS)
    p = f"{path}."
    return Box(
        page=_int(obj, "page", p, minimum=1),
        x0=_float(obj, "x0", p),
        y0=_float(obj, "y0", p),
        x1=_float(obj, "x1", p),
        y1=_float(obj, "y1", p),
    )


def _quote_from(data: object, path: str) -> Quote:
    obj = _object(data, path, _QUOTE_KEYS, optional=_QUOTE_OPTIONAL_KEYS)
    p = f"{path}."
    ocr = obj.get("ocr", False)
    if not isinstance(ocr, bool):
        raise ValueError(f"{p}ocr: expected true or false, got {_kind(ocr)}")
    boxes = tuple(
        _box_from(b, f"{p}boxes[{j}]") for j, b in enumerate(_list(obj, "boxes", p, default=[]))
    )
    start = _int(obj, "start", p, minimum=0)
    end = _int(obj, "end", p, minimum=0)
    if end < start:
        raise ValueError(f"{p}end: expected end >= start ({start}), got {end}")
    match = _choice(obj, "match", p, _MATCHES)
    pages_raw = obj["pages"]
    pages: tuple[int, ...] | None
    if pages_raw is None:
        pages = None
    else:
        if not isinstance(pages_raw, list):
            raise ValueError(f"{p}pages: expected null or a list, got {_kind(pages_raw)}")
        pages = tuple(_item_int(x, f"{p}pages[{j}]") for j, x in enumerate(pages_raw))
    return Quote(
        id=_str(obj, "id", p),
        ref=_str(obj, "ref", p),
        label=_str(obj, "label", p),
        doc_id=_str(obj, "doc_id", p),
        doc_version=_int(obj, "doc_version", p),
        source_path=_str(obj, "source_path", p),
        start=start,
        end=end,
        text=_str(obj, "text", p),
        claimed_text=_opt_str(obj, "claimed_text", p),
        match=_MATCH_BY_NAME[match],
        score=_float(obj, "score", p),
        doc_sha256=_str(obj, "doc_sha256", p),
        text_sha256=_str(obj, "text_sha256", p),
        section=tuple(
            _item_str(s, f"{p}section[{j}]") for j, s in enumerate(_list(obj, "section", p))
        ),
        pages=pages,
        differs=_opt_str(obj, "differs", p),
        boxes=boxes,
        ocr=ocr,
    )


_MATCH_BY_NAME: dict[str, MatchKind] = {
    "ref": "ref",
    "exact": "exact",
    "normalized": "normalized",
    "fuzzy": "fuzzy",
}


def _rejected_from(data: object, path: str) -> Rejected:
    obj = _object(data, path, _REJECTED_KEYS)
    return Rejected(raw=_str(obj, "raw", f"{path}."), reason=_str(obj, "reason", f"{path}."))


def _source_from(data: object, path: str) -> SourceInfo:
    obj = _object(data, path, _SOURCE_KEYS)
    p = f"{path}."
    return SourceInfo(
        ref=_str(obj, "ref", p),
        label=_str(obj, "label", p),
        doc_id=_str(obj, "doc_id", p),
        doc_version=_int(obj, "doc_version", p),
        source_path=_str(obj, "source_path", p),
        score=_float(obj, "score", p),
        rank=_int(obj, "rank", p),
    )


# --------------------------------------------------------------------------- field readers
# `prefix` is the path of the containing object plus a dot ("quotes[2].") or "" at the top.


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


def _object(
    data: object, path: str, keys: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, object]:
    """Check `data` is a dict with exactly `keys`, of which `optional` may be absent."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object, got {_kind(data)}")
    for key in keys:
        if key not in data and key not in optional:
            raise ValueError(f"{path}: missing field {key!r}")
    for key in data:
        if key not in keys:
            raise ValueError(f"{path}: unknown field {key!r}")
    return data


def _str(obj: dict[str, object], key: str, prefix: str) -> str:
    return _item_str(obj[key], prefix + key)


def _item_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{path}: expected a string, got {_kind(value)}")
    return value


def _opt_str(obj: dict[str, object], key: str, prefix: str) -> str | None:
    value = obj[key]
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{prefix}{key}: expected a string or null, got {_kind(value)}")
    return value


def _int(obj: dict[str, object], key: str, prefix: str, minimum: int | None = None) -> int:
    value = _item_int(obj[key], prefix + key)
    if minimum is not None and value < minimum:
        raise ValueError(f"{prefix}{key}: expected an integer >= {minimum}, got {value}")
    return value


def _item_int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}: expected an integer, got {_kind(value)}")
    return value


def _float(obj: dict[str, object], key: str, prefix: str) -> float:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{prefix}{key}: expected a number, got {_kind(value)}")
    if not math.isfinite(value):
        raise ValueError(f"{prefix}{key}: expected a finite number, got {value!r}")
    return float(value)


def _list(
    obj: dict[str, object], key: str, prefix: str, default: list[object] | None = None
) -> list[object]:
    value = obj[key] if default is None else obj.get(key, default)
    if not isinstance(value, list):
        raise ValueError(f"{prefix}{key}: expected a list, got {_kind(value)}")
    return value


def _choice(obj: dict[str, object], key: str, prefix: str, choices: tuple[str, ...]) -> str:
    value = _str(obj, key, prefix)
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{prefix}{key}: expected one of {allowed}, got {value!r}")
    return value
