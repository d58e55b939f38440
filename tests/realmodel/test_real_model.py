"""What must hold whatever a real model writes, in every answer mode.

SmolLM2-135M-Instruct is tiny and often wrong: it paraphrases inside quotes, cites
refs that do not exist, loops and drifts from the protocol. The answers it produces
here are not checked for being right; they are checked for being safe: every quote
is the stored text and verifies, no model-written words are drawn as a verbatim box
in any format, drafts show only resolved quotes, refusals and rejections say why,
and usage is recorded. Temperature 0 and a fixed seed keep the runs repeatable.
"""

from __future__ import annotations

import json

import pytest

from helpers.answers import assert_text_formats_box, shown_cited
from helpers.dom import parse
from quoteproof import Index
from quoteproof.codec import answer_from_dict
from quoteproof.llm.base import Backend
from quoteproof.llm.local import LocalBackend
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import Answer, AnswerMode, Quote, QuoteSegment
from quoteproof.quoting.grammar import finished_items
from quoteproof.quoting.parse import MalformedItem, ProseItem, QuoteItem, parse_output
from quoteproof.quoting.units import chunk_units
from quoteproof.receipts import verify_recorded
from quoteproof.render.html import render_answer_html
from quoteproof.render.json import render_json
from quoteproof.render.terminal import render_text
from quoteproof.store_lookup import StoreLookup
from quoteproof.streaming import AnswerEvent, QuoteResolved

HYPERSENSITIVITY = (
    "What should be done if signs of a hypersensitivity reaction to remdesivir occur?"
)
SHINGLES = "What are the early signs of shingles?"
TOP_K = 3
MAX_STEPS = 3


@pytest.fixture(scope="module")
def local() -> LocalBackend:
    return LocalBackend(threads=1)


def server_backend(base_url: str, *, grammar: bool) -> OpenAIBackend:
    return OpenAIBackend(model="smollm2", base_url=base_url, grammar=grammar, timeout=300)


def ask(index: Index, backend: Backend, question: str, mode: AnswerMode) -> Answer:
    return index.ask(question, backend=backend, mode=mode, top_k=TOP_K, max_steps=MAX_STEPS)


def assert_safe(answer: Answer, index: Index) -> None:
    """The guarantee, and honest reporting, for one real-model answer."""
    # Every quote and cited passage is the stored slice, and its receipt verifies.
    for quote in (*answer.quotes, *answer.cited):
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        assert document is not None and quote.text == document.text[quote.start : quote.end]
    assert all(check.valid for check in index.verify(answer))
    shown = [s for s in answer.segments if isinstance(s, QuoteSegment)]
    if answer.status == "refused":
        assert answer.refusal_reason and answer.quotes == () and answer.cited == ()
    assert all(item.reason.strip() for item in answer.rejected)
    # Verbatim boxes hold exactly the resolved quotes' text, in every format.
    for show_cited in (False, True):
        expected: list[Quote] = [answer.quote(s.quote_id) for s in shown]
        boxes = len(shown) + (len(shown_cited(answer)) if show_cited else 0)
        root = parse(render_answer_html(answer, show_cited=show_cited))
        figures = root.find_all("figure", "verbatim")
        assert len(figures) == boxes
        texts = [figure.find_all("blockquote")[0].text() for figure in figures]
        assert set(texts) <= {q.text for q in (*answer.quotes, *answer.cited)}
        if not show_cited:
            assert texts == [q.text for q in expected]
        assert_text_formats_box(answer, boxes, show_cited=show_cited)
    # JSON round-trips and keeps every raw reply; every call's usage is recorded.
    data = json.loads(render_json(answer))
    assert verify_recorded(answer_from_dict(data), index.store) == answer
    assert [call["output"] for call in data["calls"]] == [c.output for c in answer.calls]
    assert answer.calls, "a real model was asked"
    assert all(call.usage is not None for call in answer.calls)
    assert answer.usage is not None and answer.usage.completion_tokens > 0


def assert_protocol(answer: Answer) -> None:
    """Under a grammar, the answer call's reply is the protocol: nothing malformed,
    quotes only of retrieved refs, every sentence of prose cited. (A cite reply cut
    at its token budget ends with an unfinished item, which cite mode drops: only its
    finished items are read, as the strategy reads them.)"""
    retrieved = {source.ref for source in answer.sources}
    reply = next(call.output for call in answer.calls if call.stage == "answer")
    if answer.mode == "cite":
        reply, _ = finished_items(reply)
    parsed = parse_output(reply)
    assert parsed.no_answer or parsed.items
    for item in parsed.items:
        assert not isinstance(item, MalformedItem), item
        if isinstance(item, QuoteItem):
            assert item.ref in retrieved
        if isinstance(item, ProseItem):
            assert item.citations and set(item.citations) <= retrieved


@pytest.mark.parametrize("mode", ["quote", "cite", "rationale", "agent"])
def test_local_backend_every_mode(index: Index, local: LocalBackend, mode: AnswerMode) -> None:
    answer = ask(index, local, HYPERSENSITIVITY, mode)
    assert answer.llm.backend == "local" and answer.mode == mode
    assert_safe(answer, index)
    if mode in ("quote", "cite"):
        assert_protocol(answer)
    if mode == "agent":
        # Tool calls made through the grammar name real tools with valid arguments.
        calls = [call for model_call in answer.calls for call in model_call.tool_calls]
        assert calls and all(not r.reason.startswith("unknown tool") for r in answer.rejected)


@pytest.mark.parametrize(
    ("mode", "grammar"),
    [("quote", False), ("quote", True), ("cite", False), ("cite", True), ("agent", True)],
)
def test_llama_cpp_server_through_the_openai_backend(
    index: Index, llama_server: str, mode: AnswerMode, grammar: bool
) -> None:
    backend = server_backend(llama_server, grammar=grammar)
    answer = ask(index, backend, SHINGLES, mode)
    assert answer.llm.backend == "openai"
    assert_safe(answer, index)
    if grammar and mode != "agent":
        assert_protocol(answer)


def test_rationale_through_the_server(index: Index, llama_server: str) -> None:
    answer = ask(index, server_backend(llama_server, grammar=False), SHINGLES, "rationale")
    assert_safe(answer, index)
    assert answer.calls[0].stage == "generate"


def test_streamed_drafts_show_only_resolved_quotes(index: Index, local: LocalBackend) -> None:
    events: list[AnswerEvent] = []
    answer = index.ask(
        HYPERSENSITIVITY, backend=local, mode="quote", top_k=TOP_K, events=events.append
    )
    assert_safe(answer, index)
    for event in events:
        if isinstance(event, QuoteResolved):
            document = index.store.get_document(event.quote.doc_id, event.quote.doc_version)
            assert document is not None
            assert event.quote.text == document.text[event.quote.start : event.quote.end]
    resolved = [e.quote.text for e in events if isinstance(e, QuoteResolved)]
    # what the draft showed stays in the answer (the no-model answer's quotes may join)
    assert all(any(text in q.text for q in answer.quotes) for text in resolved)


def test_sources_that_do_not_fit_the_context_are_cut_with_a_notice(index: Index) -> None:
    small = LocalBackend(threads=1, context=1536)
    answer = index.ask(HYPERSENSITIVITY, backend=small, top_k=5, mode="cite")
    assert_safe(answer, index)
    assert len(answer.sources) < 5
    assert any("did not fit the model's context window" in n for n in answer.notices)
    assert "did not fit" in render_text(answer, width=200)


def test_quote_mode_replies_are_pointers_that_resolve(index: Index, local: LocalBackend) -> None:
    """Under the pointing grammar the bundled model's quotes are `unit` pointers, and
    each one is shown as exactly its unit of the stored chunk (or inside a no-model
    quote that holds it), beside the no-model answer's quotes. The model may say
    `<no-answer/>` to a question (a refusal, never overruled); it quotes for at least
    one of these."""
    quoted = 0
    for question in (HYPERSENSITIVITY, SHINGLES):
        answer = ask(index, local, question, "quote")
        assert_safe(answer, index)
        reply = next(call.output for call in answer.calls if call.stage == "answer")
        if parse_output(reply).no_answer:
            assert answer.status == "refused" and answer.refusal_reason == "model_no_answer"
            continue
        pointers = [i for i in parse_output(reply).items if isinstance(i, QuoteItem)]
        assert pointers and all(p.unit is not None for p in pointers), reply
        assert answer.status == "answered" and answer.quotes
        assert all(r.reason.startswith("repeats quote") for r in answer.rejected), answer.rejected
        pointed = set()
        with StoreLookup(index.store) as lookup:
            for pointer in pointers:
                chunk = index.store.get_chunk(pointer.ref or "")
                assert chunk is not None and pointer.unit is not None
                unit = chunk_units(chunk, lookup)[pointer.unit - 1]
                pointed.add((chunk.ref, chunk.start + unit.start, chunk.start + unit.end))
        shown = {(q.ref, q.start, q.end) for q in answer.quotes}
        inside = [any(r == p[0] and s <= p[1] and p[2] <= e for r, s, e in shown) for p in pointed]
        assert all(inside)
        no_model = index.ask(question, top_k=TOP_K)
        assert {(q.ref, q.start, q.end) for q in no_model.quotes} <= shown | pointed
        quoted += 1
    assert quoted >= 1
