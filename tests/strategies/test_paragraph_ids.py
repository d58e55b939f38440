"""Paragraph ids `PID-n` through scripted OpenAI-compatible and Anthropic servers:
a reply that names the n-th source of the context `PID-n` (in a citation, a quote
tag, a rationale statement) resolves to that source's chunk as its ref would, in
the draft stream too; an unknown PID or TID is rejected with its reason; the call
keeps the reply as the model wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.llm_servers import content_text
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.model import ProseSegment, QuoteSegment
from quoteproof.streaming import AnswerEvent, QuoteResolved

DOSE = "What is the remdesivir dose?"
GRAPH = "subject,relation,object\nremdesivir,has_dose,200 mg on day 1\n"


def pid_of(words: str, reply: str) -> Callable[[dict[str, Any]], str]:
    """A reply in which `{pid}` is the PID of the prompt's source holding `words`
    (the sources in the prompt's order, which is the context's)."""

    def build(body: dict[str, Any]) -> str:
        users = [m for m in body["messages"] if m["role"] == "user"]
        prompt = "\n".join(content_text(m.get("content")) for m in users)
        sources = re.findall(r'<source ref="[^"]+">(.*?)</source>', prompt, re.S)
        number = next(n for n, text in enumerate(sources, start=1) if words in text)
        return reply.format(pid=f"PID-{number}")

    return build


def with_graph(index: Index, tmp_path: Path) -> None:
    graph = tmp_path / "graph.csv"
    graph.write_text(GRAPH, "utf-8")
    index.import_graph(graph)


def test_a_pid_citation_resolves_to_the_source_it_numbers(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    with_graph(index, tmp_path)
    llm.script = ["No fact here.", pid_of("200 mg", "The dose is 200 mg on day 1 [{pid}][TID-1].")]
    answer = index.ask(DOSE, backend=llm.backend(), mode="cite", context="both")
    assert answer.status == "answered", answer.rejected
    pid = re.search(r"PID-\d+", answer.calls[1].output)
    assert pid is not None  # the call keeps the reply as written
    source = index.chunk(answer.sources[int(pid.group().removeprefix("PID-")) - 1].ref)
    assert source is not None and "200 mg" in source.text
    (prose,) = [s for s in answer.segments if isinstance(s, ProseSegment)]
    assert prose.citations == (source.ref, "TID-1")
    assert [q.ref for q in answer.cited] == [source.ref]
    assert [f.id for f in answer.facts] == ["TID-1"]


def test_a_pid_quote_tag_quotes_that_source_in_the_draft_and_the_answer(
    index: Index, llm: ScriptedModel
) -> None:
    llm.script = [pid_of("200 mg", 'The dose: <quote ref="{pid}"/>')]
    events: list[AnswerEvent] = []
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="quote", context="whole", events=events.append
    )
    (quote,) = answer.quotes
    chunk = index.chunk(quote.ref)
    assert chunk is not None and quote.text == chunk.text and "200 mg" in chunk.text
    assert [s.quote_id for s in answer.segments if isinstance(s, QuoteSegment)] == [quote.id]
    drafted = [e.quote for e in events if isinstance(e, QuoteResolved)]
    assert [(q.ref, q.text) for q in drafted] == [(quote.ref, quote.text)]


def test_an_unknown_pid_or_tid_is_rejected_with_its_reason(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    with_graph(index, tmp_path)
    llm.script = [
        "No fact here.",
        "The dose is 200 mg on day 1 [PID-99]. It is a dose [TID-7].",
        pid_of("200 mg", 'The dose is 200 mg on day 1 [{pid}]. <quote ref="PID-99"/>'),
    ]
    answer = index.ask(DOSE, backend=llm.backend(), mode="cite", context="both")
    assert answer.calls[1].problems == (
        "sentence 1 cites 'PID-99', which is not a retrieved source",
        "sentence 2 cites 'TID-7', which is not a retrieved source",
    )
    assert answer.status == "answered"
    assert [(r.raw, r.reason) for r in answer.rejected] == [
        ('<quote ref="PID-99"/>', "unknown reference 'PID-99': not a retrieved source")
    ]


def test_rationale_statements_may_cite_a_pid(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    with_graph(index, tmp_path)
    llm.script = [
        "No fact here.",
        pid_of("200 mg", "S1: The dose of remdesivir is 200 mg on day 1 [{pid}][TID-1]"),
        "S1: CORRECT-EXPLICIT — the label says so",
        pid_of("200 mg", "Remdesivir is given at 200 mg on day 1 [{pid}]."),
    ]
    answer = index.ask(DOSE, backend=llm.backend(), mode="rationale", context="both")
    (statement,) = answer.statements
    (ref, tid) = statement.refs
    chunk = index.chunk(ref)
    assert tid == "TID-1" and chunk is not None and "200 mg" in chunk.text
    assert answer.status == "answered" and [q.ref for q in answer.cited] == [ref]
