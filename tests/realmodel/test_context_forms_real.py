"""The context forms with the bundled SmolLM2 run in-process: it extracts triplets
under the triplet grammar, and answers with a whole document in its context; a
corpus that does not fit its window falls back to retrieval with a notice. The
answers are checked for being safe, not right (see test_real_model)."""

from __future__ import annotations

import re

import pytest

from quoteproof import Index
from quoteproof.llm.local import LocalBackend
from quoteproof.model import Answer
from quoteproof.render.terminal import render_text

HYPERSENSITIVITY = (
    "What should be done if signs of a hypersensitivity reaction to remdesivir occur?"
)
TRIPLET_LINE = re.compile(r"\A\S+ #\d+: [^|\n]+ \| [^|\n]+ \| [^|\n]+\Z")


@pytest.fixture(scope="module")
def local() -> LocalBackend:
    return LocalBackend(threads=1)


def assert_quotes_verify(answer: Answer, index: Index) -> None:
    for quote in (*answer.quotes, *answer.cited):
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        assert document is not None and quote.text == document.text[quote.start : quote.end]
    assert all(check.valid for check in index.verify(answer))


def test_smollm2_extracts_triplets_under_the_grammar(index: Index, local: LocalBackend) -> None:
    answer = index.ask(HYPERSENSITIVITY, backend=local, mode="cite", context="both", top_k=2)
    extract = answer.calls[0]
    assert extract.stage == "extract"
    lines = [line for line in extract.output.splitlines() if line.strip()]
    assert lines and all(TRIPLET_LINE.match(line) for line in lines), extract.output
    answer_prompt = answer.calls[1].messages[-1].content
    assert re.search(r"^TID-1: .+ \| .+ \| .+$", answer_prompt, re.M)
    for fact in answer.facts:
        assert fact.origin == "generated" and fact.ref in {s.ref for s in answer.sources}
    assert_quotes_verify(answer, index)


def test_smollm2_answers_with_a_whole_document_in_context(
    index: Index, local: LocalBackend
) -> None:
    small = min(
        index.store.list_documents(), key=lambda d: len(index.store.chunks_of(d.doc_id, d.version))
    )
    chunks = index.store.chunks_of(small.doc_id, small.version)
    answer = index.ask(
        f"What does {small.title} say?",
        backend=local,
        mode="cite",
        context="whole",
        document=small.doc_id,
    )
    assert [s.ref for s in answer.sources] == [c.ref for c in chunks]
    assert not any("do not fit" in notice for notice in answer.notices)
    prompt = answer.calls[0].messages[-1].content if answer.calls else ""
    assert re.findall(r'<source ref="([^"]+)">', prompt) == [c.ref for c in chunks]
    assert_quotes_verify(answer, index)


def test_a_corpus_over_the_window_falls_back_to_retrieval(index: Index) -> None:
    small = LocalBackend(threads=1, context=1536)
    answer = index.ask(HYPERSENSITIVITY, backend=small, mode="cite", context="whole", top_k=2)
    assert len(answer.sources) <= 2
    assert any("fell back to retrieval" in notice for notice in answer.notices)
    assert "do not fit the model's context window" in render_text(answer, width=200)
    assert_quotes_verify(answer, index)
