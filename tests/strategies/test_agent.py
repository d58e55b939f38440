"""`ask --mode agent` end to end: the model calls tools through a scripted server of
each provider; the tools, not the model, compose the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_corpus
from helpers.llm_servers import ToolReply
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.model import Answer, DataSegment, ProseSegment, QuoteSegment

QUESTION = "How many remdesivir adverse events were reported in 2024?"
EVENTS_CSV = (
    "date,drug,event,serious,age\n"
    "2024-01-05,remdesivir,rash,no,40\n"
    "2024-02-11,remdesivir,elevated liver enzymes,yes,61\n"
    "2023-12-20,remdesivir,nausea,no,35\n"
    "2024-03-02,acyclovir,headache,no,52\n"
)
IN_2024 = [
    {"column": "drug", "op": "=", "value": "remdesivir"},
    {"column": "date", "op": ">=", "value": "2024-01-01"},
]


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent")
    corpus = write_corpus(root)
    (corpus / "events.csv").write_text(EVENTS_CSV, encoding="utf-8")
    with Index.open(root / "index", create=True) as index:
        results = index.ingest([corpus], embed=False)
    assert all(r.status == "added" for r in results)
    return root / "index"


@pytest.fixture
def index(index_path: Path) -> Iterator[Index]:
    with Index.open(index_path) as opened:
        yield opened


def ref_of(index: Index, words: str) -> str:
    hit = index.search(words, top_k=1)[0]
    assert words in hit.chunk.text
    return hit.chunk.ref


def ask(index: Index, llm: ScriptedModel, max_steps: int = 8) -> Answer:
    """The agent's answer, without the judging call of the faithfulness check (the
    mode's own calls are counted here; tests/test_faithfulness.py tests the check)."""
    return index.ask(
        QUESTION,
        backend=llm.backend(),
        mode="agent",
        max_steps=max_steps,
        faithfulness="deterministic",
    )


def test_query_aggregate_through_a_pointer_and_finish(index: Index, llm: ScriptedModel) -> None:
    dose = ref_of(index, "200 mg on day 1")
    llm.script = [
        ToolReply([("search", {"query": "remdesivir dose"})]),
        ToolReply([("quote", {"ref": dose, "hint": "recommended dose is 200 mg on day 1"})]),
        ToolReply([("table_query", {"table": "events", "filters": IN_2024})]),
        ToolReply([("aggregate", {"pointer": "r1", "op": "count"})]),
        ToolReply([("note", {"text": f"Two events were reported in 2024 [{dose}]."})]),
        ToolReply([("finish", {})]),
    ]
    answer = ask(index, llm)
    assert answer.status == "answered" and answer.mode == "agent" and not answer.partial
    assert len(llm.requests) == 6
    assert {"search", "quote", "table_query", "aggregate", "note", "escalate", "finish"} == set(
        llm.tool_names(0)
    )
    assert [type(s) for s in answer.segments] == [
        QuoteSegment,
        DataSegment,
        DataSegment,
        ProseSegment,
    ]
    quote = answer.quotes[0]
    document = index.store.get_document(quote.doc_id, quote.doc_version)
    assert document is not None and quote.text == document.text[quote.start : quote.end]
    assert "200 mg on day 1" in quote.text
    query, count = answer.data
    assert (query.id, query.table, query.row_count) == ("r1", "events.csv", 2)
    assert [f.column for f in query.filters] == ["drug", "date"]
    assert query.period is not None and "2024-01-01" in query.period
    assert (count.id, count.operation, count.value, count.source) == ("r2", "count", 2, "r1")
    assert count.filters == query.filters and count.table == "events.csv"
    # the model got pointers and counts back, never the rows themselves
    results = [json.loads(text) for text in llm.tool_results(3)]
    assert results[-1] == {"pointer": "r1", "row_count": 2, "columns": list(query.columns)}
    assert "liver" not in " ".join(llm.tool_results(5))
    assert json.loads(llm.tool_results(4)[-1])["value"] == 2
    assert [c.stage for c in answer.calls] == ["agent"] * 6
    assert answer.calls[0].tool_calls[0].name == "search"
    assert answer.usage is not None and answer.usage.prompt_tokens == 60
    assert all(check.valid for check in index.verify(answer))


def test_a_count_given_by_the_data_needs_no_number_in_the_quotes(
    index: Index, llm: ScriptedModel
) -> None:
    """The quote beside the count states no number; the count asked for is the data
    result, so the answer carries no notice that the number is not given."""
    warning = ref_of(index, "known hypersensitivity")
    llm.script = [
        ToolReply([("quote", {"ref": warning, "hint": "known hypersensitivity"})]),
        ToolReply([("table_query", {"table": "events", "filters": IN_2024})]),
        ToolReply([("aggregate", {"pointer": "r1", "op": "count"})]),
        ToolReply([("finish", {})]),
    ]
    answer = ask(index, llm)
    assert answer.status == "answered" and answer.data[-1].value == 2
    assert answer.quotes and not any(ch.isdigit() for ch in answer.quotes[0].text)
    assert not any(n.startswith("The question asks for") for n in answer.notices)


def test_an_unknown_tool_gets_a_clear_error_and_the_run_goes_on(
    index: Index, llm: ScriptedModel
) -> None:
    dose = ref_of(index, "200 mg on day 1")
    llm.script = [
        ToolReply([("delete_everything", {"confirm": True})]),
        ToolReply([("quote", {"ref": dose})]),
        ToolReply([("finish", {})]),
    ]
    answer = ask(index, llm)
    error = json.loads(llm.tool_results(1)[0])["error"]
    assert error.startswith("unknown tool 'delete_everything'; the tools are: search, quote")
    assert answer.status == "answered" and len(answer.quotes) == 1
    assert any(r.reason == error for r in answer.rejected)


@pytest.mark.parametrize("op", ["avg", "Average", "mean"])
def test_aggregate_reads_avg_and_average_as_mean(index: Index, llm: ScriptedModel, op: str) -> None:
    llm.script = [
        ToolReply([("table_query", {"table": "events", "filters": IN_2024})]),
        ToolReply([("aggregate", {"pointer": "r1", "op": op, "column": "age"})]),
        ToolReply([("finish", {})]),
    ]
    answer = ask(index, llm)
    mean = answer.data[-1]
    assert (mean.operation, mean.column, mean.value) == ("mean", "age", 50.5)
    assert json.loads(llm.tool_results(2)[-1])["value"] == 50.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            (
                "table_query",
                {"table": "events", "filters": [{"column": "drug", "op": "like", "value": "x"}]},
            ),
            "op",
        ),
        (("table_query", {"table": "nope"}), "nope"),
        (("table_query", {"table": "events", "columns": ["dose"]}), "dose"),
        (("aggregate", {"pointer": "r7", "op": "sum", "column": "x"}), "unknown pointer 'r7'"),
        (("aggregate", {"pointer": "r1", "op": "median"}), "median"),
        (("quote", {"ref": "zzzzzz.1"}), "unknown ref 'zzzzzz.1'"),
        (("quote", {}), "'ref' is required"),
        (("note", {"text": 5}), "'text' must be a string"),
        (("quote", '{"ref": '), "not valid JSON"),
    ],
)
def test_bad_arguments_are_reported_to_the_model(
    index: Index, llm: ScriptedModel, call: tuple[str, object], message: str
) -> None:
    if isinstance(call[1], str) and llm.provider == "anthropic":
        pytest.skip("Anthropic tool input is always a JSON object")
    llm.script = [ToolReply([call]), ToolReply([("finish", {})])]  # type: ignore[list-item]
    answer = ask(index, llm)
    error = json.loads(llm.tool_results(1)[0])["error"]
    assert message in error
    assert answer.status == "refused" and answer.refusal_reason == "nothing_verifiable"
    assert answer.rejected and message in answer.rejected[0].reason


def test_a_model_that_loops_stops_at_the_step_limit(index: Index, llm: ScriptedModel) -> None:
    llm.script = [ToolReply([("search", {"query": "remdesivir"})])]
    answer = ask(index, llm, max_steps=3)
    assert len(llm.requests) == 3
    assert answer.status == "refused" and answer.refusal_reason == "step_limit"
    assert "did not finish within 3 steps" in answer.rejected[-1].reason


def test_the_step_limit_keeps_what_was_composed_as_a_partial_answer(
    index: Index, llm: ScriptedModel
) -> None:
    dose = ref_of(index, "200 mg on day 1")
    llm.script = [ToolReply([("quote", {"ref": dose})]), ToolReply([("search", {"query": "x"})])]
    answer = ask(index, llm, max_steps=2)
    assert answer.status == "answered" and answer.partial and len(answer.quotes) == 1


def test_escalation_hands_the_question_to_a_person(index: Index, llm: ScriptedModel) -> None:
    llm.script = [ToolReply([("escalate", {"reason": "Dosing for a child needs a pharmacist."})])]
    answer = ask(index, llm)
    assert answer.status == "refused" and answer.refusal_reason == "escalated"
    assert answer.escalation == "Dosing for a child needs a pharmacist."
    assert len(llm.requests) == 1


def test_text_outside_tools_never_becomes_the_answer(index: Index, llm: ScriptedModel) -> None:
    llm.script = ["Remdesivir is completely safe. <quote>trust me</quote>"]
    answer = ask(index, llm)
    assert answer.status == "refused" and answer.quotes == ()
    assert "outside tool calls" in answer.rejected[0].reason
