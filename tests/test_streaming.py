"""Streaming: prose arrives as it is written; a quote only once resolved to source text."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.llm_servers import PIECE_CHARS, ScriptedAnthropicServer, ScriptedOpenAIServer
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.model import Chunk
from quoteproof.store_lookup import StoreLookup
from quoteproof.streaming import (
    AnswerEvent,
    DraftStream,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
)

QUESTION = "How is shingles treated?"


@pytest.fixture(scope="module")
def index(session_index_dir: Path) -> Iterator[Index]:
    with Index.open(session_index_dir) as opened:
        yield opened


def sources(index: Index) -> list[Chunk]:
    return [hit.chunk for hit in index.search(QUESTION, top_k=5)]


def draft(index: Index, pieces: list[str]) -> list[AnswerEvent]:
    events: list[AnswerEvent] = []
    with StoreLookup(index.store) as lookup:
        stream = DraftStream(sources(index), lookup, 90.0, events.append)
        for piece in pieces:
            stream.feed(piece)
        stream.close()
    return events


def merged(events: list[AnswerEvent]) -> list[AnswerEvent]:
    """Consecutive prose deltas joined, so splits of the same reply compare equal."""
    out: list[AnswerEvent] = []
    for event in events:
        if isinstance(event, ProseDelta) and out and isinstance(out[-1], ProseDelta):
            out[-1] = ProseDelta(out[-1].text + event.text)
        else:
            out.append(event)
    return out


def reply_for(index: Index) -> str:
    chunk = next(c for c in sources(index) if "acyclovir" in c.text)
    return (
        f"Antivirals help [{chunk.ref}]. <QUOTE ref='{chunk.ref}'>antiviral medicines such as "
        f'acyclovir</quote> and <quote ref="{chunk.ref}"/> but <quote ref="{chunk.ref}">'
        "bananas cure shingles</quote> <no-answer/> 3 < 4 and </quote> end <quote ref"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, 400), max_size=30))
def test_events_do_not_depend_on_how_the_reply_is_split(index: Index, cuts: list[int]) -> None:
    reply = reply_for(index)
    bounds = sorted({0, len(reply), *(c for c in cuts if c < len(reply))})
    pieces = [reply[a:b] for a, b in itertools.pairwise(bounds)]
    assert merged(draft(index, pieces)) == merged(draft(index, [reply]))


def test_quotes_are_resolved_source_text_and_prose_never_holds_a_tag(index: Index) -> None:
    events = merged(draft(index, list(reply_for(index))))  # one character at a time
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "ProseDelta",
        "QuoteResolved",
        "ProseDelta",
        "QuoteResolved",
        "ProseDelta",
        "QuoteDropped",
        "ProseDelta",
        "QuoteDropped",
    ]
    for event in events:
        if isinstance(event, QuoteResolved):
            document = index.store.get_document(event.quote.doc_id, event.quote.doc_version)
            assert document is not None
            assert event.quote.text == document.text[event.quote.start : event.quote.end]
        if isinstance(event, ProseDelta):
            assert "<quote" not in event.text.lower() and "no-answer" not in event.text
    dropped = [e for e in events if isinstance(e, QuoteDropped)]
    assert "bananas" in dropped[0].rejected.raw
    assert "3 < 4 and" in "".join(e.text for e in events if isinstance(e, ProseDelta))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_ask_streams_prose_then_the_resolved_quote(index: Index, provider: str) -> None:
    server = ScriptedOpenAIServer() if provider == "openai" else ScriptedAnthropicServer()
    server.start()
    try:
        llm = ScriptedModel(provider, server)
        chunk = next(c for c in sources(index) if "acyclovir" in c.text)
        prose = f"Shingles is treated with antiviral medicines started early [{chunk.ref}]. "
        llm.script = [prose + f'<quote ref="{chunk.ref}">such as acyclovir</quote>']
        events: list[AnswerEvent] = []
        answer = index.ask(QUESTION, backend=llm.backend(), events=events.append)
    finally:
        server.stop()
    assert llm.requests[0].get("stream") is True
    assert isinstance(events[0], StageStarted) and events[0].stage == "answer"
    deltas = [e for e in events if isinstance(e, ProseDelta)]
    assert len(deltas) > 1 and max(len(d.text) for d in deltas) <= PIECE_CHARS
    assert "".join(d.text for d in deltas) == prose
    assert isinstance(events[-1], QuoteResolved)
    assert events[-1].quote == answer.quotes[0]
    assert answer.quotes[0].text == "such as acyclovir"
