"""Answer <-> JSON: the versioned public format `quoteproof.answer/1`.

Shape (a public contract; keys appear in this order)::

    {"schema": "quoteproof.answer/1", "question": str,
     "status": "answered" | "refused", "refusal_reason": str | null,
     "segments": [{"type": "prose", "text": str, "citations": [str, ...]}
                  | {"type": "quote", "quote_id": str}
                  | {"type": "data", "data_id": str}],
     "quotes": [QUOTE, ...],
     "rejected": [{"raw", "reason"}],
     "llm": {"backend": str, "model": str | null, "server": str | null,
             "language_model": bool, "raw_output": str},
     "sources": [{"ref", "label", "doc_id", "doc_version", "source_path",
                  "score", "rank"}],
     "retrieval": {"retriever": str, "evidence": float | null,
                   "evidence_kind": str | null, "threshold": float | null,
                   "threshold_source": "calibrated" | "automatic" | null,
                   "missing_terms": [str, ...]},
     "mode": "quote" | "cite" | "rationale" | "agent",
     "partial": bool,
     "cited": [QUOTE, ...],
     "statements": [{"id": str, "text": str, "refs": [str, ...],
                     "label": LABEL | null, "justification": str | null,
                     "original": str | null}],
     "data": [{"id", "table", "doc_id": str, "doc_version": int, "doc_sha256",
               "source_path": str,
               "filters": [{"column": str, "op": OP, "value": SCALAR}],
               "columns": [str, ...], "row_count": int,
               "rows": [[str | null, ...], ...],
               "operation": AGGREGATE | null, "column": str | null,
               "value": SCALAR, "source": str | null, "period": str | null}],
     "escalation": str | null,
     "calls": [{"stage": str,
                "messages": [{"role": "system" | "user" | "assistant" | "tool",
                              "content": str, "tool_calls": [TOOL_CALL, ...],
                              "tool_call_id": str | null}],
                "output": str, "tool_calls": [TOOL_CALL, ...],
                "problems": [str, ...], "usage": USAGE | null}],
     "usage": USAGE | null,
     "notices": [str, ...]}

    QUOTE     = {"id", "ref", "label", "doc_id", "doc_version", "source_path",
                 "start", "end", "text", "claimed_text", "match", "score",
                 "doc_sha256", "text_sha256", "section": [str, ...],
                 "pages": null | [int, ...], "differs": str | null,
                 "boxes": [{"page": int, "x0", "y0", "x1", "y1": float}, ...],
                 "ocr": bool}
    TOOL_CALL = {"id": str, "name": str, "arguments": str}
    USAGE     = {"prompt_tokens": int, "completion_tokens": int}
    SCALAR    = str | int | float | bool | null        (numbers finite)
    LABEL     = "CORRECT-EXPLICIT" | "CORRECT-IMPLICIT" | "CORRECT-ADDITIONAL_INFO"
                | "INCORRECT-FALSE_INFO" | "INCORRECT-DEVIATING_INFO"
                | "INCORRECT-ILLOGICAL"
    OP        = "=" | "!=" | "<" | "<=" | ">" | ">=" | "contains"
    AGGREGATE = "count" | "sum" | "mean" | "min" | "max" | "distinct"

Contract: for every `Answer` whose floats are finite, whose quote and data segments
name quotes and data results it holds, and whose quote ids (in `quotes`, and in
`cited`) and data result ids are unique,
`answer_from_dict(answer_to_dict(answer)) == answer`, and the same through
`json.loads(render_json(answer))`. `answer_from_dict` is strict: a wrong type, a
missing or unknown key, an unknown enum value, a bad span, a duplicate id or a
dangling quote or data id raises `ValueError` whose message starts with the path
of the bad field (`quotes[2].start: expected an integer, got str`,
`calls[1].messages[0].role: ...`). Fields added after the first release may be
absent (answers saved before they existed) and then read as their defaults: a
quote's `boxes` and `ocr` as `[]` and `false`; the answer's `retrieval` as null,
`mode` as "quote", `partial` as false, `cited`, `statements`, `data` and `calls`
as `[]`, `escalation` and `usage` as null, `notices` as `[]`; `llm.server` as
null and `llm.language_model` as derived below; the retrieval's `threshold_source`
as null and `missing_terms` as `[]`. `retrieval` is written only when
known; every other key is always written.
`llm.server` is the URL of the model server that answered (no credentials); null
when none was involved (`extractive`, or `local` run in-process). `llm.language_model`
is false exactly when `llm.backend` is "extractive": no language model was used,
the quotes were chosen by retrieval alone; a value that contradicts the backend is
refused.
Boxes are in PDF points, origin at the page's bottom left. It checks shape only; whether the
quotes match the index is `quoteproof verify`'s job. All functions are O(size).
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar, cast, get_args

from quoteproof.model import (
    ANSWER_SCHEMA,
    AggregateOp,
    Answer,
    AnswerMode,
    AnswerStatus,
    Box,
    Cell,
    DataResult,
    DataSegment,
    Filter,
    FilterOp,
    LLMInfo,
    MatchKind,
    Message,
    ModelCall,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    RetrievalInfo,
    Role,
    Scalar,
    Segment,
    SourceInfo,
    Statement,
    StatementLabel,
    ThresholdSource,
    ToolCall,
    Usage,
)

__all__ = ["answer_from_dict", "answer_to_dict", "render_json"]

_T = TypeVar("_T")

_STATUSES: tuple[str, ...] = get_args(AnswerStatus)
_MATCHES: tuple[str, ...] = get_args(MatchKind)
# Enum values by name: reading a checked string back as its Literal type.
_MODES: dict[str, AnswerMode] = {n: cast(AnswerMode, n) for n in get_args(AnswerMode)}
_LABELS: dict[str, StatementLabel] = {n: cast(StatementLabel, n) for n in get_args(StatementLabel)}
_ROLES: dict[str, Role] = {n: cast(Role, n) for n in get_args(Role)}
_FILTER_OPS: dict[str, FilterOp] = {n: cast(FilterOp, n) for n in get_args(FilterOp)}
_AGGREGATE_OPS: dict[str, AggregateOp] = {n: cast(AggregateOp, n) for n in get_args(AggregateOp)}

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
    "mode",
    "partial",
    "cited",
    "statements",
    "data",
    "escalation",
    "calls",
    "usage",
    "notices",
)
_ANSWER_OPTIONAL_KEYS = (
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
)
_RETRIEVAL_KEYS = (
    "retriever",
    "evidence",
    "evidence_kind",
    "threshold",
    "threshold_source",
    "missing_terms",
)
_RETRIEVAL_OPTIONAL_KEYS = ("threshold_source", "missing_terms")
_THRESHOLD_SOURCES: dict[str, ThresholdSource] = {
    n: cast(ThresholdSource, n) for n in get_args(ThresholdSource)
}
_PROSE_KEYS = ("type", "text", "citations")
_QUOTE_SEGMENT_KEYS = ("type", "quote_id")
_DATA_SEGMENT_KEYS = ("type", "data_id")
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
_LLM_KEYS = ("backend", "model", "server", "language_model", "raw_output")
_LLM_OPTIONAL_KEYS = ("server", "language_model")
_SOURCE_KEYS = ("ref", "label", "doc_id", "doc_version", "source_path", "score", "rank")
_STATEMENT_KEYS = ("id", "text", "refs", "label", "justification", "original")
_DATA_KEYS = (
    "id",
    "table",
    "doc_id",
    "doc_version",
    "doc_sha256",
    "source_path",
    "filters",
    "columns",
    "row_count",
    "rows",
    "operation",
    "column",
    "value",
    "source",
    "period",
)
_FILTER_KEYS = ("column", "op", "value")
_CALL_KEYS = ("stage", "messages", "output", "tool_calls", "problems", "usage")
_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id")
_TOOL_CALL_KEYS = ("id", "name", "arguments")
_USAGE_KEYS = ("prompt_tokens", "completion_tokens")


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
            "server": answer.llm.server,
            "language_model": answer.llm.language_model,
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
            "threshold_source": answer.retrieval.threshold_source,
            "missing_terms": list(answer.retrieval.missing_terms),
        }
    data["mode"] = answer.mode
    data["partial"] = answer.partial
    data["cited"] = [_quote_to_dict(quote) for quote in answer.cited]
    data["statements"] = [
        {
            "id": statement.id,
            "text": statement.text,
            "refs": list(statement.refs),
            "label": statement.label,
            "justification": statement.justification,
            "original": statement.original,
        }
        for statement in answer.statements
    ]
    data["data"] = [_data_to_dict(result) for result in answer.data]
    data["escalation"] = answer.escalation
    data["calls"] = [_call_to_dict(call) for call in answer.calls]
    data["usage"] = _usage_to_dict(answer.usage)
    data["notices"] = list(answer.notices)
    return data


def render_json(answer: Answer) -> str:
    """Return `answer` as JSON text: indent 2, non-ASCII kept as is (`ensure_ascii=False`).

    Raises `ValueError` if a float (a score, a box coordinate, a data value) is NaN
    or infinite (not representable in JSON).
    """
    return json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False, allow_nan=False)


def _segment_to_dict(segment: Segment) -> dict[str, Any]:
    if isinstance(segment, ProseSegment):
        return {"type": "prose", "text": segment.text, "citations": list(segment.citations)}
    if isinstance(segment, DataSegment):
        return {"type": "data", "data_id": segment.data_id}
    return {"type": "quote", "quote_id": segment.quote_id}


def _data_to_dict(result: DataResult) -> dict[str, Any]:
    return {
        "id": result.id,
        "table": result.table,
        "doc_id": result.doc_id,
        "doc_version": result.doc_version,
        "doc_sha256": result.doc_sha256,
        "source_path": result.source_path,
        "filters": [{"column": f.column, "op": f.op, "value": f.value} for f in result.filters],
        "columns": list(result.columns),
        "row_count": result.row_count,
        "rows": [list(row) for row in result.rows],
        "operation": result.operation,
        "column": result.column,
        "value": result.value,
        "source": result.source,
        "period": result.period,
    }


def _tool_calls_to_list(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


def _call_to_dict(call: ModelCall) -> dict[str, Any]:
    return {
        "stage": call.stage,
        "messages": [
            {
                "role": message.role,
                "content": message.content,
                "tool_calls": _tool_calls_to_list(message.tool_calls),
                "tool_call_id": message.tool_call_id,
            }
            for message in call.messages
        ],
        "output": call.output,
        "tool_calls": _tool_calls_to_list(call.tool_calls),
        "problems": list(call.problems),
        "usage": _usage_to_dict(call.usage),
    }


def _usage_to_dict(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


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
    quotes = _quotes_from(obj, "quotes", default=None)
    data = tuple(
        _data_from(item, f"data[{i}]") for i, item in enumerate(_list(obj, "data", "", default=[]))
    )
    data_ids = _unique_ids([result.id for result in data], "data", "data result")
    quote_ids = {quote.id for quote in quotes}
    segments = tuple(
        _segment_from(item, f"segments[{i}]", quote_ids, data_ids)
        for i, item in enumerate(_list(obj, "segments", ""))
    )
    rejected = tuple(
        _rejected_from(item, f"rejected[{i}]") for i, item in enumerate(_list(obj, "rejected", ""))
    )
    sources = tuple(
        _source_from(item, f"sources[{i}]") for i, item in enumerate(_list(obj, "sources", ""))
    )
    llm = _llm_from(obj["llm"])
    return Answer(
        question=_str(obj, "question", ""),
        status="answered" if status == "answered" else "refused",
        segments=segments,
        quotes=quotes,
        rejected=rejected,
        llm=llm,
        sources=sources,
        refusal_reason=_opt_str(obj, "refusal_reason", ""),
        retrieval=_retrieval_from(obj["retrieval"]) if obj.get("retrieval") is not None else None,
        mode=_enum(obj.get("mode", "quote"), "mode", _MODES),
        partial=_bool(obj.get("partial", False), "partial"),
        cited=_quotes_from(obj, "cited", default=[]),
        statements=tuple(
            _statement_from(item, f"statements[{i}]")
            for i, item in enumerate(_list(obj, "statements", "", default=[]))
        ),
        data=data,
        escalation=_opt_str(obj, "escalation", "") if "escalation" in obj else None,
        calls=tuple(
            _call_from(item, f"calls[{i}]")
            for i, item in enumerate(_list(obj, "calls", "", default=[]))
        ),
        usage=_usage_from(obj.get("usage"), "usage"),
        notices=_str_tuple(obj, "notices", "") if "notices" in obj else (),
        schema=schema,
    )


def _llm_from(data: object) -> LLMInfo:
    """Read the `llm` object; `language_model`, when present, must agree with the backend."""
    obj = _object(data, "llm", _LLM_KEYS, optional=_LLM_OPTIONAL_KEYS)
    llm = LLMInfo(
        backend=_str(obj, "backend", "llm."),
        model=_opt_str(obj, "model", "llm."),
        raw_output=_str(obj, "raw_output", "llm."),
        server=_opt_str(obj, "server", "llm.") if "server" in obj else None,
    )
    if "language_model" in obj:
        claimed = _bool(obj["language_model"], "llm.language_model")
        if claimed != llm.language_model:
            raise ValueError(
                f"llm.language_model: {str(claimed).lower()} contradicts backend {llm.backend!r}"
            )
    return llm


def _quotes_from(
    obj: dict[str, object], key: str, default: list[object] | None
) -> tuple[Quote, ...]:
    """Read the list of quotes under `key`; their ids must be unique within it."""
    quotes = tuple(
        _quote_from(item, f"{key}[{i}]")
        for i, item in enumerate(_list(obj, key, "", default=default))
    )
    _unique_ids([quote.id for quote in quotes], key, "quote")
    return quotes


def _unique_ids(ids: list[str], key: str, what: str) -> set[str]:
    seen: set[str] = set()
    for i, item_id in enumerate(ids):
        if item_id in seen:
            raise ValueError(f"{key}[{i}].id: duplicate {what} id {item_id!r}")
        seen.add(item_id)
    return seen


def _retrieval_from(data: object) -> RetrievalInfo:
    obj = _object(data, "retrieval", _RETRIEVAL_KEYS, optional=_RETRIEVAL_OPTIONAL_KEYS)
    p = "retrieval."
    source = obj.get("threshold_source")
    if source is not None and source not in _THRESHOLD_SOURCES:
        raise ValueError(f"{p}threshold_source: unknown value {source!r}")
    return RetrievalInfo(
        retriever=_str(obj, "retriever", p),
        evidence=None if obj["evidence"] is None else _float(obj, "evidence", p),
        evidence_kind=_opt_str(obj, "evidence_kind", p),
        threshold=None if obj["threshold"] is None else _float(obj, "threshold", p),
        threshold_source=_THRESHOLD_SOURCES[source] if isinstance(source, str) else None,
        missing_terms=_str_tuple(obj, "missing_terms", p) if "missing_terms" in obj else (),
    )


def _segment_from(data: object, path: str, quote_ids: set[str], data_ids: set[str]) -> Segment:
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
    if kind == "data":
        obj = _object(data, path, _DATA_SEGMENT_KEYS)
        data_id = _str(obj, "data_id", f"{path}.")
        if data_id not in data_ids:
            raise ValueError(f"{path}.data_id: no data result with id {data_id!r} in data")
        return DataSegment(data_id=data_id)
    raise ValueError(f"{path}.type: expected 'prose', 'quote' or 'data', got {kind!r}")


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


def _statement_from(data: object, path: str) -> Statement:
    obj = _object(data, path, _STATEMENT_KEYS)
    p = f"{path}."
    return Statement(
        id=_str(obj, "id", p),
        text=_str(obj, "text", p),
        refs=_str_tuple(obj, "refs", p),
        label=_opt_enum(obj["label"], f"{p}label", _LABELS),
        justification=_opt_str(obj, "justification", p),
        original=_opt_str(obj, "original", p),
    )


def _data_from(data: object, path: str) -> DataResult:
    obj = _object(data, path, _DATA_KEYS)
    p = f"{path}."
    return DataResult(
        id=_str(obj, "id", p),
        table=_str(obj, "table", p),
        doc_id=_str(obj, "doc_id", p),
        doc_version=_int(obj, "doc_version", p),
        doc_sha256=_str(obj, "doc_sha256", p),
        source_path=_str(obj, "source_path", p),
        filters=tuple(
            _filter_from(item, f"{p}filters[{j}]")
            for j, item in enumerate(_list(obj, "filters", p))
        ),
        columns=_str_tuple(obj, "columns", p),
        row_count=_int(obj, "row_count", p, minimum=0),
        rows=tuple(_row_from(row, f"{p}rows[{j}]") for j, row in enumerate(_list(obj, "rows", p))),
        operation=_opt_enum(obj["operation"], f"{p}operation", _AGGREGATE_OPS),
        column=_opt_str(obj, "column", p),
        value=_scalar(obj["value"], f"{p}value"),
        source=_opt_str(obj, "source", p),
        period=_opt_str(obj, "period", p),
    )


def _filter_from(data: object, path: str) -> Filter:
    obj = _object(data, path, _FILTER_KEYS)
    p = f"{path}."
    return Filter(
        column=_str(obj, "column", p),
        op=_enum(obj["op"], f"{p}op", _FILTER_OPS),
        value=_scalar(obj["value"], f"{p}value"),
    )


def _row_from(data: object, path: str) -> tuple[Cell, ...]:
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list, got {_kind(data)}")
    cells: list[Cell] = []
    for j, cell in enumerate(data):
        if cell is not None and not isinstance(cell, str):
            raise ValueError(f"{path}[{j}]: expected a string or null, got {_kind(cell)}")
        cells.append(cell)
    return tuple(cells)


def _call_from(data: object, path: str) -> ModelCall:
    obj = _object(data, path, _CALL_KEYS)
    p = f"{path}."
    return ModelCall(
        stage=_str(obj, "stage", p),
        messages=tuple(
            _message_from(item, f"{p}messages[{j}]")
            for j, item in enumerate(_list(obj, "messages", p))
        ),
        output=_str(obj, "output", p),
        tool_calls=_tool_calls_from(obj, p),
        problems=_str_tuple(obj, "problems", p),
        usage=_usage_from(obj["usage"], f"{p}usage"),
    )


def _message_from(data: object, path: str) -> Message:
    obj = _object(data, path, _MESSAGE_KEYS)
    p = f"{path}."
    return Message(
        role=_enum(obj["role"], f"{p}role", _ROLES),
        content=_str(obj, "content", p),
        tool_calls=_tool_calls_from(obj, p),
        tool_call_id=_opt_str(obj, "tool_call_id", p),
    )


def _tool_calls_from(obj: dict[str, object], prefix: str) -> tuple[ToolCall, ...]:
    calls = []
    for j, item in enumerate(_list(obj, "tool_calls", prefix)):
        call = _object(item, f"{prefix}tool_calls[{j}]", _TOOL_CALL_KEYS)
        p = f"{prefix}tool_calls[{j}]."
        calls.append(
            ToolCall(
                id=_str(call, "id", p),
                name=_str(call, "name", p),
                arguments=_str(call, "arguments", p),
            )
        )
    return tuple(calls)


def _usage_from(data: object, path: str) -> Usage | None:
    if data is None:
        return None
    obj = _object(data, path, _USAGE_KEYS)
    p = f"{path}."
    return Usage(
        prompt_tokens=_int(obj, "prompt_tokens", p, minimum=0),
        completion_tokens=_int(obj, "completion_tokens", p, minimum=0),
    )


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


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{path}: expected true or false, got {_kind(value)}")
    return value


def _str_tuple(obj: dict[str, object], key: str, prefix: str) -> tuple[str, ...]:
    return tuple(_item_str(s, f"{prefix}{key}[{j}]") for j, s in enumerate(_list(obj, key, prefix)))


def _scalar(value: object, path: str) -> Scalar:
    """A table value: a string, a finite number, a boolean or null."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path}: expected a finite number, got {value!r}")
        return value
    raise ValueError(f"{path}: expected a string, number, boolean or null, got {_kind(value)}")


def _enum(value: object, path: str, table: dict[str, _T]) -> _T:
    """Return the enum value named `value`: a string among `table`'s keys."""
    name = _item_str(value, path)
    if name not in table:
        allowed = ", ".join(repr(c) for c in table)
        raise ValueError(f"{path}: expected one of {allowed}, got {name!r}")
    return table[name]


def _opt_enum(value: object, path: str, table: dict[str, _T]) -> _T | None:
    """Like `_enum`, or None for null."""
    return None if value is None else _enum(value, path, table)


def _choice(obj: dict[str, object], key: str, prefix: str, choices: tuple[str, ...]) -> str:
    value = _str(obj, key, prefix)
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{prefix}{key}: expected one of {allowed}, got {value!r}")
    return value
