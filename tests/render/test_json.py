"""Tests for quoteproof.render.json: the public `quoteproof.answer/1` format."""

from __future__ import annotations

import copy
import json
import math
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.answers import make_quote as build_quote
from quoteproof.model import (
    ANSWER_SCHEMA,
    Answer,
    Box,
    LLMInfo,
    ProseSegment,
    Quote,
    QuoteSegment,
    Rejected,
    Segment,
    SourceInfo,
    sha256_text,
)
from quoteproof.render.json import answer_from_dict, answer_to_dict, render_json

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
        ),
        quotes=(q1, q2),
        rejected=(Rejected('<quote ref="nope">x</quote>', "unknown ref 'nope'"),),
        llm=LLMInfo("openai", "gpt-test", "raw output"),
        sources=(
            SourceInfo("alice-1", "Alice › Chapter I › ¶1", "alice", 1, "corpus/alice.txt", 0.8, 1),
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
    ]
    assert data["schema"] == ANSWER_SCHEMA == "quoteproof.answer/1"
    assert data["refusal_reason"] is None
    assert data["segments"] == [
        {"type": "prose", "text": "Yes — très fatiguée.", "citations": ["alice-1"]},
        {"type": "quote", "quote_id": "q1"},
        {"type": "quote", "quote_id": "q2"},
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
    ]
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
    assert data["llm"] == {"backend": "openai", "model": "gpt-test", "raw_output": "raw output"}
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


def test_render_json_is_indented_and_keeps_non_ascii() -> None:
    text = render_json(sample_answer())
    assert text.startswith('{\n  "schema": "quoteproof.answer/1",\n  "question": ')
    assert "très fatiguée" in text and "\\u00e8" not in text


def test_round_trip_of_sample() -> None:
    answer = sample_answer()
    assert answer_from_dict(answer_to_dict(answer)) == answer
    assert answer_from_dict(json.loads(render_json(answer))) == answer


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
    assert answer_from_dict(json.loads(render_json(answer))) == answer


def test_to_dict_shares_no_state() -> None:
    answer = sample_answer()
    data = answer_to_dict(answer)
    data["quotes"][0]["section"].append("mutated")
    assert answer.quotes[0].section == ("Chapter I",)


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
    (_set(("segments", 0, "type"), "image"), "segments[0].type: expected 'prose' or 'quote'"),
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
    (_set(("sources", 0, "rank"), 1.5), "sources[0].rank: expected an integer, got float"),
    (_set(("sources",), _DELETE), "answer: missing field 'sources'"),
]


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
    return make_quote(
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
    )


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    ids = draw(st.lists(texts, max_size=4, unique=True))
    quote_list = tuple(draw(quotes(quote_id)) for quote_id in ids)
    prose = st.builds(ProseSegment, texts, st.lists(texts, max_size=3).map(tuple))
    segment: st.SearchStrategy[Segment] = (
        prose | st.sampled_from(ids).map(QuoteSegment) if ids else prose
    )
    return Answer(
        question=draw(texts),
        status=draw(st.sampled_from(["answered", "refused"])),
        segments=tuple(draw(st.lists(segment, max_size=6))),
        quotes=quote_list,
        rejected=tuple(draw(st.lists(st.builds(Rejected, texts, texts), max_size=3))),
        llm=draw(st.builds(LLMInfo, texts, st.none() | texts, texts)),
        sources=tuple(
            draw(st.lists(st.builds(SourceInfo, texts, texts, texts, ints, texts, finite, ints)))
        ),
        refusal_reason=draw(st.none() | texts),
    )


@settings(max_examples=150, deadline=None)
@given(answers())
def test_round_trip_property(answer: Answer) -> None:
    assert answer_from_dict(answer_to_dict(answer)) == answer
    assert answer_from_dict(json.loads(render_json(answer))) == answer


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
        answer = answer_from_dict(corrupted)
    except ValueError as error:
        assert str(error)
    else:
        assert answer_to_dict(answer) == corrupted


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
