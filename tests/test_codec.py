"""Tests for quoteproof.codec: the public `quoteproof.answer/1` format."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.answers import AGGREGATE_OPS, FILTER_OPS, LABELS, ROLES, as_recorded, make_data_result
from helpers.answers import make_quote as build_quote
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.model import (
    ANSWER_SCHEMA,
    Answer,
    Box,
    ClaimedQuote,
    ClaimVerdict,
    DataResult,
    DataSegment,
    Fact,
    Faithfulness,
    Filter,
    LLMInfo,
    Message,
    ModelCall,
    ProseSegment,
    Quote,
    QuotedRow,
    QuotedTable,
    QuoteSegment,
    Rejected,
    RetrievalInfo,
    Segment,
    SourceInfo,
    Statement,
    TableCell,
    ToolCall,
    Usage,
    sha256_text,
)
from quoteproof.receipts import answer_as_recorded
from quoteproof.render.json import render_json

SOURCE = "Alice was beginning to get very tired of sitting by her sister on the bank."

make_quote = partial(
    build_quote,
    ref="alice-1",
    label="Alice › Chapter I › ¶1",
    doc_id="alice",
    source_path="corpus/alice.txt",
    section=("Chapter I",),
)


def sample_answer() -> Answer:
    q1 = make_quote(SOURCE, 0, 38)
    q2 = make_quote(
        SOURCE,
        39,
        len(SOURCE),
        "q2",
        claimed_text="of sitting by her brother",
        match="fuzzy",
        score=91.5,
        pages=(1, 2),
        differs="sister → brother",
        boxes=(Box(1, 72.0, 700.5, 540.0, 712.0), Box(2, 72.0, 80.0, 200.25, 91.5)),
        ocr=True,
    )
    return Answer(
        question="Was Alice tired?",
        status="answered",
        segments=(
            ProseSegment("Yes — très fatiguée.", ("alice-1",)),
            QuoteSegment("q1"),
            QuoteSegment("q2"),
            DataSegment("r1"),
        ),
        quotes=(q1, q2),
        rejected=(Rejected('<quote ref="nope">x</quote>', "unknown ref 'nope'"),),
        llm=LLMInfo("openai", "gpt-test", "raw output", server="http://127.0.0.1:8080/v1"),
        sources=(
            SourceInfo("alice-1", "Alice › Chapter I › ¶1", "alice", 1, "corpus/alice.txt", 0.8, 1),
        ),
        mode="agent",
        partial=True,
        cited=(make_quote(SOURCE, 0, len(SOURCE), "c1"),),
        statements=(
            Statement(
                "s1", "Alice was tired.", ("alice-1",), "CORRECT-EXPLICIT", "Said so.", "Tired?"
            ),
            Statement("s2", "She slept.", (), None, None),
        ),
        data=(
            make_data_result(
                filters=(Filter("country", "=", "US"), Filter("age", ">=", 18)),
                source="r0",
                period="2024",
            ),
        ),
        escalation="A person should check the dose.",
        calls=(
            ModelCall(
                "agent",
                (
                    Message("system", "Answer from the sources."),
                    Message("assistant", "", (ToolCall("t1", "query", '{"table": "x"}'),)),
                    Message("tool", '{"rows": 3}', tool_call_id="t1"),
                ),
                "done",
                (ToolCall("t2", "answer", "{}"),),
                ("no citation",),
                Usage(100, 20),
            ),
        ),
        usage=Usage(100, 20),
        facts=(
            Fact(
                "TID-1", "Alice", "sits_by", "her sister", "imported", "t1", "g.csv", 2, None, "q1"
            ),
            Fact("TID-2", "Alice", "is", "tired", "generated", ref="alice-1", provenance_note="n"),
        ),
        context="both",
        faithfulness=Faithfulness(
            "model",
            0.5,
            (ClaimVerdict(0, ("alice-1",), False, "it says more", "model"),),
            removed=1,
        ),
    )


def test_shape_is_the_public_contract() -> None:
    data = json.loads(render_json(sample_answer()))
    assert list(data) == [
        "schema",
        "question",
        "status",
        "refusal_reason",
        "segments",
        "quotes",
        "rejected",
        "llm",
        "sources",
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
    ]
    assert data["faithfulness"] == {
        "method": "model",
        "score": 0.5,
        "claims": [
            {
                "segment": 0,
                "refs": ["alice-1"],
                "supported": False,
                "reason": "it says more",
                "checked_by": "model",
            }
        ],
        "removed": 1,
    }
    assert data["notices"] == [] and data["removed_sentences"] == []
    assert data["schema"] == ANSWER_SCHEMA == "quoteproof.answer/1"
    assert data["refusal_reason"] is None
    assert data["segments"] == [
        {"type": "prose", "text": "Yes — très fatiguée.", "citations": ["alice-1"]},
        {"type": "quote", "quote_id": "q1"},
        {"type": "quote", "quote_id": "q2"},
        {"type": "data", "data_id": "r1"},
    ]
    q1, q2 = data["quotes"]
    assert list(q1) == [
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
        "tables",
        "list_goes_on",
    ]
    assert q1["tables"] == [] and q1["list_goes_on"] is False
    assert q1["text"] == SOURCE[0:38] and q1["start"] == 0 and q1["end"] == 38
    assert q1["pages"] is None and q1["section"] == ["Chapter I"]
    assert q1["text_sha256"] == sha256_text(SOURCE[0:38])
    assert q2["pages"] == [1, 2] and q2["differs"] == "sister → brother"
    assert q1["boxes"] == [] and q1["ocr"] is False
    assert q2["boxes"][1] == {"page": 2, "x0": 72.0, "y0": 80.0, "x1": 200.25, "y1": 91.5}
    assert q2["ocr"] is True
    assert q2["claimed_text"] == "of sitting by her brother" and q2["match"] == "fuzzy"
    assert data["rejected"] == [
        {"raw": '<quote ref="nope">x</quote>', "reason": "unknown ref 'nope'"}
    ]
    assert data["llm"] == {
        "backend": "openai",
        "model": "gpt-test",
        "server": "http://127.0.0.1:8080/v1",
        "language_model": True,
        "raw_output": "raw output",
    }
    assert data["sources"] == [
        {
            "ref": "alice-1",
            "label": "Alice › Chapter I › ¶1",
            "doc_id": "alice",
            "doc_version": 1,
            "source_path": "corpus/alice.txt",
            "score": 0.8,
            "rank": 1,
        }
    ]


def test_shape_of_the_new_parts() -> None:
    data = json.loads(render_json(sample_answer()))
    assert data["mode"] == "agent" and data["partial"] is True
    assert [list(q) for q in data["cited"]] == [list(data["quotes"][0])]
    assert data["cited"][0]["id"] == "c1" and data["cited"][0]["text"] == SOURCE
    assert data["statements"] == [
        {
            "id": "s1",
            "text": "Alice was tired.",
            "refs": ["alice-1"],
            "label": "CORRECT-EXPLICIT",
            "justification": "Said so.",
            "original": "Tired?",
        },
        {
            "id": "s2",
            "text": "She slept.",
            "refs": [],
            "label": None,
            "justification": None,
            "original": None,
        },
    ]
    assert data["data"] == [
        {
            "id": "r1",
            "table": "people.csv",
            "doc_id": "people",
            "doc_version": 2,
            "doc_sha256": sha256_text("people"),
            "source_path": "data/people.csv",
            "filters": [
                {"column": "country", "op": "=", "value": "US"},
                {"column": "age", "op": ">=", "value": 18},
            ],
            "columns": ["name", "age"],
            "row_count": 3,
            "rows": [["Ann", "40"], ["Bob", None]],
            "operation": "mean",
            "column": "age",
            "value": 41.5,
            "source": "r0",
            "period": "2024",
        }
    ]
    assert data["escalation"] == "A person should check the dose."
    assert data["calls"] == [
        {
            "stage": "agent",
            "messages": [
                {
                    "role": "system",
                    "content": "Answer from the sources.",
                    "tool_calls": [],
                    "tool_call_id": None,
                },
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "t1", "name": "query", "arguments": '{"table": "x"}'}],
                    "tool_call_id": None,
                },
                {"role": "tool", "content": '{"rows": 3}', "tool_calls": [], "tool_call_id": "t1"},
            ],
            "output": "done",
            "tool_calls": [{"id": "t2", "name": "answer", "arguments": "{}"}],
            "problems": ["no citation"],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20},
        }
    ]
    assert data["usage"] == {"prompt_tokens": 100, "completion_tokens": 20}


def test_defaults_are_written_too() -> None:
    answer = Answer("q?", "answered", (), (), (), LLMInfo("x", None, ""))
    data = answer_to_dict(answer)
    assert "retrieval" not in data
    assert {key: data[key] for key in list(data)[-13:]} == {
        "mode": "quote",
        "partial": False,
        "cited": [],
        "statements": [],
        "data": [],
        "escalation": None,
        "calls": [],
        "usage": None,
        "notices": [],
        "removed_sentences": [],
        "facts": [],
        "context": "paragraphs",
        "faithfulness": None,
    }


def test_answers_saved_before_the_new_parts_still_load() -> None:
    data = answer_to_dict(sample_answer())
    for key in ("mode", "partial", "cited", "statements", "escalation", "calls", "usage"):
        del data[key]
    del data["notices"], data["removed_sentences"], data["facts"], data["context"]
    del data["faithfulness"]
    del data["data"], data["segments"][3]
    del data["llm"]["server"], data["llm"]["language_model"]
    record = answer_from_dict(data)
    loaded = record.without_quotes
    assert (loaded.mode, loaded.partial, loaded.escalation, loaded.usage) == (
        "quote",
        False,
        None,
        None,
    )
    assert (record.cited, loaded.statements, loaded.data, loaded.calls) == ((), (), (), ())
    assert loaded.notices == () and loaded.removed_sentences == ()
    assert (loaded.facts, loaded.context, loaded.faithfulness) == ((), "paragraphs", None)
    assert loaded.llm == LLMInfo("openai", "gpt-test", "raw output", server=None)
    assert record.quotes == as_recorded(sample_answer()).quotes


def test_render_json_is_indented_and_keeps_non_ascii() -> None:
    text = render_json(sample_answer())
    assert text.startswith('{\n  "schema": "quoteproof.answer/1",\n  "question": ')
    assert "très fatiguée" in text and "\\u00e8" not in text


def test_round_trip_of_sample() -> None:
    answer = sample_answer()
    assert answer_from_dict(answer_to_dict(answer)) == as_recorded(answer)
    assert answer_from_dict(json.loads(render_json(answer))) == as_recorded(answer)
    removed = (Rejected("It costs $9 [a.1].", '"$9" is not in [a.1]'),)
    answer = replace(answer, removed_sentences=removed)
    assert answer_from_dict(answer_to_dict(answer)) == as_recorded(answer)


def test_decoding_yields_claims_never_quotes() -> None:
    record = answer_from_dict(answer_to_dict(sample_answer()))
    claims = (*record.quotes, *record.cited)
    assert len(claims) == 3
    assert all(type(claim) is ClaimedQuote and not isinstance(claim, Quote) for claim in claims)
    assert record.without_quotes.quotes == () and record.without_quotes.cited == ()


def test_refused_answer_round_trips() -> None:
    answer = Answer(
        question="What is the airspeed of a swallow?",
        status="refused",
        segments=(ProseSegment("The sources contain no answer to this question."),),
        quotes=(),
        rejected=(),
        llm=LLMInfo("extractive", None, "<no-answer/>"),
        refusal_reason="no source passed the relevance threshold",
    )
    data = answer_to_dict(answer)
    assert data["status"] == "refused" and data["llm"]["model"] is None
    assert data["llm"]["server"] is None and data["llm"]["language_model"] is False
    assert answer_from_dict(json.loads(render_json(answer))).without_quotes == answer


def _nested_keys(data: Any, parent: str) -> Iterator[tuple[str, str]]:
    """Every key nested in `data`, with the key of the object that holds it."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield key, parent
            yield from _nested_keys(value, key)
    elif isinstance(data, list):
        for item in data:
            yield from _nested_keys(item, parent)


def test_the_answer_json_table_names_every_wire_field() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "answer-json.md").read_text(encoding="utf-8")
    section = doc.split("# Answer JSON", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.MULTILINE))
    retrieval = RetrievalInfo("hybrid", 0.5, "cosine:m", 0.3, "automatic", ("X-1",))
    removed = (Rejected("It costs $9 [a.1].", '"$9" is not in [a.1]'),)
    answer = replace(sample_answer(), retrieval=retrieval, notices=("n",))
    data = answer_to_dict(replace(answer, removed_sentences=removed))
    assert list(rows) == list(data)
    for key, value in data.items():
        same = re.findall(r"same fields as `(\w+)`", rows[key])
        for name, parent in _nested_keys(value, key):
            text = " ".join(rows.get(row, "") for row in (key, parent, *same))
            assert f"`{name}`" in text or f'"{name}"' in text, (key, name)


def test_to_dict_shares_no_state() -> None:
    answer = sample_answer()
    data = answer_to_dict(answer)
    data["quotes"][0]["section"].append("mutated")
    assert answer.quotes[0].section == ("Chapter I",)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_data_value_is_refused_by_render_json(value: float) -> None:
    answer = Answer("q?", "answered", (), (), (), LLMInfo("x", None, ""))
    for result in (
        make_data_result(value=value),
        make_data_result(filters=(Filter("a", "<", value),)),
    ):
        with pytest.raises(ValueError):
            render_json(Answer("q?", "answered", (), (), (), answer.llm, data=(result,)))


def test_non_finite_score_is_refused_by_render_json() -> None:
    answer = sample_answer()
    bad = Answer(
        question=answer.question,
        status=answer.status,
        segments=(),
        quotes=(make_quote(SOURCE, 0, 5, score=math.nan),),
        rejected=(),
        llm=answer.llm,
    )
    with pytest.raises(ValueError):
        render_json(bad)


# ----------------------------------------------------------------- malformed input


def _set(path: tuple[Any, ...], value: Any) -> Any:
    """Return a mutator setting data[path] = value (or deleting it for _DELETE)."""

    def mutate(data: Any) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return mutate


_DELETE = object()

MALFORMED = [
    (_set(("schema",), "quoteproof.answer/2"), "schema: unsupported schema"),
    (_set(("question",), None), "question: expected a string, got null"),
    (_set(("status",), "maybe"), "status: expected one of 'answered', 'refused'"),
    (_set(("refusal_reason",), 5), "refusal_reason: expected a string or null, got int"),
    (_set(("segments",), {}), "segments: expected a list, got object"),
    (
        _set(("segments", 0, "type"), "image"),
        "segments[0].type: expected 'prose', 'quote' or 'data'",
    ),
    (_set(("segments", 0, "citations", 0), 5), "segments[0].citations[0]: expected a string"),
    (_set(("segments", 2, "quote_id"), "q9"), "segments[2].quote_id: no quote with id 'q9'"),
    (_set(("segments", 1, "extra"), 1), "segments[1]: unknown field 'extra'"),
    (_set(("quotes", 1, "start"), "39"), "quotes[1].start: expected an integer, got str"),
    (_set(("quotes", 1, "start"), True), "quotes[1].start: expected an integer, got boolean"),
    (_set(("quotes", 1, "start"), -1), "quotes[1].start: expected an integer >= 0"),
    (_set(("quotes", 1, "end"), 10), "quotes[1].end: expected end >= start (39), got 10"),
    (_set(("quotes", 0, "doc_version"), 1.0), "quotes[0].doc_version: expected an integer"),
    (_set(("quotes", 0, "match"), "regex"), "quotes[0].match: expected one of 'ref', 'exact'"),
    (_set(("quotes", 0, "score"), "high"), "quotes[0].score: expected a number, got str"),
    (_set(("quotes", 0, "score"), math.inf), "quotes[0].score: expected a finite number"),
    (_set(("quotes", 0, "section"), "Chapter I"), "quotes[0].section: expected a list"),
    (_set(("quotes", 1, "pages", 1), "2"), "quotes[1].pages[1]: expected an integer"),
    (_set(("quotes", 1, "pages"), 2), "quotes[1].pages: expected null or a list"),
    (_set(("quotes", 0, "text"), _DELETE), "quotes[0]: missing field 'text'"),
    (_set(("quotes", 0, "txt"), "x"), "quotes[0]: unknown field 'txt'"),
    (_set(("quotes", 1, "id"), "q1"), "quotes[1].id: duplicate quote id 'q1'"),
    (_set(("quotes", 0), []), "quotes[0]: expected an object, got list"),
    (_set(("rejected", 0), "x"), "rejected[0]: expected an object, got str"),
    (_set(("llm", "model"), 3), "llm.model: expected a string or null, got int"),
    (_set(("llm",), None), "llm: expected an object, got null"),
    (_set(("llm", "server"), 8080), "llm.server: expected a string or null, got int"),
    (_set(("llm", "language_model"), "no"), "llm.language_model: expected true or false"),
    (_set(("llm", "language_model"), False), "llm.language_model: false contradicts backend"),
    (_set(("llm", "url"), "x"), "llm: unknown field 'url'"),
    (_set(("sources", 0, "rank"), 1.5), "sources[0].rank: expected an integer, got float"),
    (_set(("sources",), _DELETE), "answer: missing field 'sources'"),
    # the parts added for the modes
    (_set(("mode",), "essay"), "mode: expected one of 'quote', 'cite', 'rationale', 'agent'"),
    (_set(("mode",), None), "mode: expected a string, got null"),
    (_set(("partial",), "yes"), "partial: expected true or false, got str"),
    (_set(("cited",), None), "cited: expected a list, got null"),
    (_set(("cited", 0, "start"), "0"), "cited[0].start: expected an integer, got str"),
    (_set(("cited", 0, "match"), "guess"), "cited[0].match: expected one of 'ref'"),
    (_set(("statements", 0, "label"), "TRUE"), "statements[0].label: expected one of"),
    (_set(("statements", 0, "label"), 1), "statements[0].label: expected a string, got int"),
    (_set(("statements", 0, "refs", 0), None), "statements[0].refs[0]: expected a string"),
    (_set(("statements", 1, "original"), 2), "statements[1].original: expected a string or"),
    (_set(("statements", 0, "id"), _DELETE), "statements[0]: missing field 'id'"),
    (_set(("statements", 0, "verdict"), "x"), "statements[0]: unknown field 'verdict'"),
    (_set(("segments", 3, "data_id"), "r9"), "segments[3].data_id: no data result with id 'r9'"),
    (_set(("segments", 3, "quote_id"), "q1"), "segments[3]: unknown field 'quote_id'"),
    (_set(("data", 0, "doc_version"), "2"), "data[0].doc_version: expected an integer, got str"),
    (_set(("data", 0, "row_count"), -1), "data[0].row_count: expected an integer >= 0"),
    (_set(("data", 0, "filters", 1, "op"), "=="), "data[0].filters[1].op: expected one of '='"),
    (
        _set(("data", 0, "filters", 0, "value"), [1]),
        "data[0].filters[0].value: expected a string, number, boolean or null, got list",
    ),
    (
        _set(("data", 0, "filters", 0, "value"), math.nan),
        "data[0].filters[0].value: expected a finite number",
    ),
    (_set(("data", 0, "filters", 0, "colum"), "x"), "data[0].filters[0]: unknown field 'colum'"),
    (_set(("data", 0, "columns", 1), 3), "data[0].columns[1]: expected a string, got int"),
    (_set(("data", 0, "rows", 1, 0), 5), "data[0].rows[1][0]: expected a string or null, got int"),
    (_set(("data", 0, "rows", 0), "Ann,40"), "data[0].rows[0]: expected a list, got str"),
    (_set(("data", 0, "operation"), "median"), "data[0].operation: expected one of 'count'"),
    (_set(("data", 0, "value"), {}), "data[0].value: expected a string, number, boolean or null"),
    (_set(("data", 0, "value"), math.inf), "data[0].value: expected a finite number"),
    (_set(("data", 0, "period"), 2024), "data[0].period: expected a string or null, got int"),
    (_set(("escalation",), ["x"]), "escalation: expected a string or null, got list"),
    (_set(("calls", 0, "stage"), None), "calls[0].stage: expected a string, got null"),
    (_set(("calls", 0, "messages", 0, "role"), "robot"), "calls[0].messages[0].role: expected"),
    (
        _set(("calls", 0, "messages", 1, "tool_calls", 0, "arguments"), {}),
        "calls[0].messages[1].tool_calls[0].arguments: expected a string, got object",
    ),
    (
        _set(("calls", 0, "messages", 2, "tool_call_id"), 1),
        "calls[0].messages[2].tool_call_id: expected a string or null, got int",
    ),
    (_set(("calls", 0, "messages", 0, "name"), "x"), "calls[0].messages[0]: unknown field 'name'"),
    (_set(("calls", 0, "tool_calls", 0, "id"), _DELETE), "calls[0].tool_calls[0]: missing field"),
    (_set(("calls", 0, "problems"), "x"), "calls[0].problems: expected a list, got str"),
    (
        _set(("calls", 0, "usage", "prompt_tokens"), -5),
        "calls[0].usage.prompt_tokens: expected an integer >= 0",
    ),
    (_set(("calls", 0, "output"), _DELETE), "calls[0]: missing field 'output'"),
    (_set(("usage",), 10), "usage: expected an object, got int"),
    (_set(("usage", "completion_tokens"), 1.5), "usage.completion_tokens: expected an integer"),
    (_set(("usage", "total_tokens"), 3), "usage: unknown field 'total_tokens'"),
]


def _duplicate(key: str) -> Any:
    def mutate(data: Any) -> None:
        data[key].append(copy.deepcopy(data[key][0]))

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_duplicate("cited"), "cited[1].id: duplicate quote id 'c1'"),
        (_duplicate("data"), "data[1].id: duplicate data result id 'r1'"),
    ],
)
def test_duplicate_ids_are_rejected(mutate: Any, message: str) -> None:
    data = answer_to_dict(sample_answer())
    mutate(data)
    with pytest.raises(ValueError) as info:
        answer_from_dict(data)
    assert str(info.value).startswith(message)


def test_cited_ids_may_repeat_quote_ids() -> None:
    answer = sample_answer()
    data = answer_to_dict(answer)
    data["cited"][0]["id"] = "q1"
    assert answer_from_dict(data).cited[0].id == "q1"


@pytest.mark.parametrize("value", ["x", "", 0, -3, 2**70, 1.5, -0.25, True, False, None])
def test_scalar_values_round_trip(value: Any) -> None:
    result = make_data_result(value=value, filters=(Filter("c", "!=", value),))
    answer = Answer(
        "q?", "answered", (DataSegment("r1"),), (), (), LLMInfo("x", None, ""), data=(result,)
    )
    loaded = answer_from_dict(json.loads(render_json(answer))).without_quotes
    assert loaded == answer
    assert type(loaded.data[0].value) is type(value)
    assert type(loaded.data[0].filters[0].value) is type(value)


@pytest.mark.parametrize(("mutate", "message"), MALFORMED)
def test_malformed_input_names_the_field(mutate: Any, message: str) -> None:
    data = answer_to_dict(sample_answer())
    mutate(data)
    with pytest.raises(ValueError) as info:
        answer_from_dict(data)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("data", [None, [], "answer", 3, {}])
def test_non_objects_are_rejected(data: object) -> None:
    with pytest.raises(ValueError, match=r"^answer: "):
        answer_from_dict(data)


# ----------------------------------------------------------------- properties

texts = st.text(max_size=30)
finite = st.floats(allow_nan=False, allow_infinity=False)
ints = st.integers(min_value=0, max_value=10**12)


@st.composite
def quotes(draw: st.DrawFn, quote_id: str) -> Quote:
    source = draw(st.text(max_size=60))
    start = draw(st.integers(0, len(source)))
    end = draw(st.integers(start, len(source)))
    quote: Quote = make_quote(
        source,
        start,
        end,
        quote_id,
        ref=draw(texts),
        label=draw(texts),
        doc_id=draw(texts),
        doc_version=draw(ints),
        source_path=draw(texts),
        claimed_text=draw(st.none() | texts),
        match=draw(st.sampled_from(["ref", "exact", "normalized", "fuzzy"])),
        score=draw(finite),
        section=tuple(draw(st.lists(texts, max_size=3))),
        pages=draw(st.none() | st.lists(ints, max_size=3).map(tuple)),
        differs=draw(st.none() | texts),
        boxes=tuple(
            draw(
                st.lists(
                    st.builds(Box, st.integers(1, 999), finite, finite, finite, finite),
                    max_size=3,
                )
            )
        ),
        ocr=draw(st.booleans()),
        tables=tuple(draw(st.lists(quoted_tables(source), max_size=2))),
    )
    return quote


def quoted_tables(source: str) -> st.SearchStrategy[QuotedTable]:
    """Tables whose cells are spans of `source`."""
    spans = st.tuples(st.integers(0, len(source)), st.integers(0, len(source))).map(sorted)
    cell = spans.map(lambda span: TableCell(span[0], span[1], source[span[0] : span[1]]))
    row = st.builds(QuotedRow, st.lists(cell, min_size=1, max_size=3).map(tuple), st.booleans())
    rows = st.lists(row, min_size=1, max_size=3).map(tuple)
    return st.builds(QuotedTable, ints, ints, rows)


scalars = st.none() | st.booleans() | st.integers() | finite | texts
tool_calls = st.lists(st.builds(ToolCall, texts, texts, texts), max_size=2).map(tuple)
usages = st.none() | st.builds(Usage, ints, ints)
calls = st.builds(
    ModelCall,
    texts,
    st.lists(
        st.builds(Message, st.sampled_from(ROLES), texts, tool_calls, st.none() | texts),
        max_size=3,
    ).map(tuple),
    texts,
    tool_calls,
    st.lists(texts, max_size=2).map(tuple),
    usages,
)
statements = st.builds(
    Statement,
    texts,
    texts,
    st.lists(texts, max_size=3).map(tuple),
    st.none() | st.sampled_from(LABELS),
    st.none() | texts,
    st.none() | texts,
)


@st.composite
def data_results(draw: st.DrawFn, data_id: str) -> DataResult:
    return DataResult(
        id=data_id,
        table=draw(texts),
        doc_id=draw(texts),
        doc_version=draw(ints),
        doc_sha256=draw(texts),
        source_path=draw(texts),
        filters=tuple(
            draw(
                st.lists(st.builds(Filter, texts, st.sampled_from(FILTER_OPS), scalars), max_size=3)
            )
        ),
        columns=tuple(draw(st.lists(texts, max_size=3))),
        row_count=draw(ints),
        rows=tuple(draw(st.lists(st.lists(st.none() | texts, max_size=3).map(tuple), max_size=3))),
        operation=draw(st.none() | st.sampled_from(AGGREGATE_OPS)),
        column=draw(st.none() | texts),
        value=draw(scalars),
        source=draw(st.none() | texts),
        period=draw(st.none() | texts),
    )


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    ids = draw(st.lists(texts, max_size=4, unique=True))
    quote_list = tuple(draw(quotes(quote_id)) for quote_id in ids)
    cited_ids = draw(st.lists(texts, max_size=3, unique=True))
    data_ids = draw(st.lists(texts, max_size=3, unique=True))
    prose = st.builds(ProseSegment, texts, st.lists(texts, max_size=3).map(tuple))
    segment: st.SearchStrategy[Segment] = prose
    if ids:
        segment |= st.sampled_from(ids).map(QuoteSegment)
    if data_ids:
        segment |= st.sampled_from(data_ids).map(DataSegment)
    return Answer(
        question=draw(texts),
        status=draw(st.sampled_from(["answered", "refused"])),
        segments=tuple(draw(st.lists(segment, max_size=6))),
        quotes=quote_list,
        rejected=tuple(draw(st.lists(st.builds(Rejected, texts, texts), max_size=3))),
        llm=draw(st.builds(LLMInfo, texts, st.none() | texts, texts, st.none() | texts)),
        sources=tuple(
            draw(st.lists(st.builds(SourceInfo, texts, texts, texts, ints, texts, finite, ints)))
        ),
        refusal_reason=draw(st.none() | texts),
        mode=draw(st.sampled_from(["quote", "cite", "rationale", "agent"])),
        partial=draw(st.booleans()),
        cited=tuple(draw(quotes(quote_id)) for quote_id in cited_ids),
        statements=tuple(draw(st.lists(statements, max_size=3))),
        data=tuple(draw(data_results(data_id)) for data_id in data_ids),
        escalation=draw(st.none() | texts),
        calls=tuple(draw(st.lists(calls, max_size=2))),
        usage=draw(usages),
    )


@settings(max_examples=150, deadline=None)
@given(answers())
def test_round_trip_property(answer: Answer) -> None:
    assert answer_from_dict(answer_to_dict(answer)) == as_recorded(answer)
    assert answer_from_dict(json.loads(render_json(answer))) == as_recorded(answer)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=5,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


@settings(max_examples=150, deadline=None)
@given(st.data(), json_values)
def test_any_corruption_is_a_value_error_or_a_valid_answer(data: st.DataObject, value: Any) -> None:
    """Replacing any node by any JSON value never raises anything but ValueError."""
    original = answer_to_dict(sample_answer())
    corrupted = copy.deepcopy(original)
    path = data.draw(st.sampled_from(_paths(corrupted)))
    _set(path, value)(corrupted)
    try:
        record = answer_from_dict(corrupted)
    except ValueError as error:
        assert str(error)
    else:
        assert answer_to_dict(answer_as_recorded(record)) == corrupted


def test_a_table_quote_keeps_its_rows_and_cells_for_a_client() -> None:
    cells = (TableCell(0, 5, SOURCE[0:5]), TableCell(8, 11, SOURCE[8:11]))
    table = QuotedTable(0, 11, (QuotedRow(cells[:1], header=True, quoted=False), QuotedRow(cells)))
    q1, q2 = sample_answer().quotes
    answer = replace(sample_answer(), quotes=(replace(q1, tables=(table,)), q2))
    data = answer_to_dict(answer)
    assert data["quotes"][0]["tables"] == [
        {
            "start": 0,
            "end": 11,
            "rows": [
                {
                    "cells": [{"start": 0, "end": 5, "text": SOURCE[0:5]}],
                    "header": True,
                    "quoted": False,
                },
                {
                    "cells": [
                        {"start": 0, "end": 5, "text": SOURCE[0:5]},
                        {"start": 8, "end": 11, "text": SOURCE[8:11]},
                    ],
                    "header": False,
                    "quoted": True,
                },
            ],
        }
    ]
    assert answer_from_dict(data).quotes[0].tables == (table,)


def test_answers_saved_before_tables_existed_still_load() -> None:
    data = answer_to_dict(sample_answer())
    for quote in data["quotes"]:
        del quote["tables"]
    assert all(q.tables == () for q in answer_from_dict(data).quotes)


def test_answers_saved_before_boxes_existed_still_load() -> None:
    data = answer_to_dict(sample_answer())
    for quote in data["quotes"]:
        del quote["boxes"], quote["ocr"]
    loaded = answer_from_dict(data)
    assert all(q.boxes == () and q.ocr is False for q in loaded.quotes)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda q: q.update(ocr="yes"), r"quotes\[1\]\.ocr: expected true or false, got str"),
        (lambda q: q.update(boxes={}), r"quotes\[1\]\.boxes: expected a list, got object"),
        (
            lambda q: q["boxes"][0].update(page=0),
            r"quotes\[1\]\.boxes\[0\]\.page: expected an integer >= 1",
        ),
        (lambda q: q["boxes"][0].pop("y1"), r"quotes\[1\]\.boxes\[0\]: missing field 'y1'"),
        (lambda q: q["boxes"][0].update(x0="1"), r"quotes\[1\]\.boxes\[0\]\.x0: expected a number"),
    ],
)
def test_bad_boxes_and_ocr_are_rejected(mutate: Any, message: str) -> None:
    data = answer_to_dict(sample_answer())
    mutate(data["quotes"][1])
    with pytest.raises(ValueError, match=message):
        answer_from_dict(data)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda f: f["claims"][0].update(segment=1),
            r"faithfulness\.claims\[0\]\.segment: no prose segment at 1",
        ),
        (
            lambda f: f["claims"][0].update(segment=9),
            r"faithfulness\.claims\[0\]\.segment: no prose segment at 9",
        ),
        (lambda f: f.update(score=1.5), r"faithfulness\.score: expected a share from 0 to 1"),
        (lambda f: f.update(removed=-1), r"faithfulness\.removed: expected an integer >= 0"),
        (
            lambda f: f.update(method="guess"),
            r"faithfulness\.method: expected one of 'deterministic', 'model'",
        ),
    ],
)
def test_bad_faithfulness_is_rejected(mutate: Any, message: str) -> None:
    data = answer_to_dict(sample_answer())
    mutate(data["faithfulness"])
    with pytest.raises(ValueError, match=message):
        answer_from_dict(data)
