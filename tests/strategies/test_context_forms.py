"""`ask --context triplets|both|whole` end to end through scripted OpenAI-compatible
and Anthropic servers: TID context lines, TID citations resolved or rejected, facts
shown as generated or imported with their provenance quoted by lookup (never a
verbatim box themselves), triplets extracted from paragraphs, scope by collection,
and the whole corpus in the prompt once and in order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.answers import assert_text_formats_box
from helpers.dom import parse
from helpers.retrieval import ref_of
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.codec import answer_from_dict
from quoteproof.errors import UsageError
from quoteproof.model import Answer, ProseSegment, QuoteSegment
from quoteproof.receipts import verify_recorded
from quoteproof.render.html import render_answer_html
from quoteproof.render.json import render_json
from quoteproof.render.terminal import render_text
from quoteproof.streaming import (
    AnswerEvent,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
)

DOSE = "What is the remdesivir dose?"
DOSE_WORDS = "The recommended dose is 200 mg on day 1"
GRAPH = (
    "subject,relation,object,document,quote\n"
    f"remdesivir,has_dose,200 mg on day 1,dosing.txt,{DOSE_WORDS}\n"
    "remdesivir,contraindicated_in,known hypersensitivity,,\n"
    "shingles,treated_with,acyclovir,,\n"
)


NOTHING_EXTRACTED = "No fact in these sources helps."
"""An extraction reply without a triplet line."""


def import_graph(
    index: Index, tmp_path: Path, text: str = GRAPH, collection: str = "default"
) -> None:
    path = tmp_path / f"graph-{collection}.csv"
    path.write_text(text, "utf-8")
    index.import_graph(path, collection=collection)


def user_prompt(llm: ScriptedModel, number: int) -> str:
    return llm.first_user(number)


def tid_lines(prompt: str) -> list[str]:
    return re.findall(r"^TID-\d+: .*$", prompt, re.M)


def assert_sound(answer: Answer, index: Index) -> None:
    """Every quote is the stored slice and verifies; the JSON record reads back to the
    same answer; each fact's text is in no verbatim box, in any format."""
    for quote in (*answer.quotes, *answer.cited):
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        assert document is not None and quote.text == document.text[quote.start : quote.end]
    assert all(check.valid for check in index.verify(answer))
    assert verify_recorded(answer_from_dict(json.loads(render_json(answer))), index.store) == answer
    shown = [s for s in answer.segments if isinstance(s, QuoteSegment)]
    sources = [f for f in answer.facts if f.quote_id is not None]
    boxes = (len(shown) + len(sources)) if answer.status == "answered" else len(sources)
    assert_text_formats_box(answer, boxes, show_cited=False)
    figures = parse(render_answer_html(answer)).find_all("figure")
    assert len(figures) == boxes
    for fact in answer.facts:
        triplet = f"{fact.subject} | {fact.relation} | {fact.object}"
        assert all(triplet not in figure.text() for figure in figures)


def test_a_cited_imported_triplet_is_shown_with_its_quote_found_by_lookup(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    llm.script = [NOTHING_EXTRACTED, "The dose of remdesivir is 200 mg on day 1 [TID-1]."]
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="cite", context="both", faithfulness="deterministic"
    )
    assert [c.stage for c in answer.calls] == ["extract", "answer"]
    prompt = user_prompt(llm, 1)
    assert tid_lines(prompt)[0] == "TID-1: remdesivir | has_dose | 200 mg on day 1"
    assert prompt.index("<source ref=") < prompt.index("<facts>") < prompt.index("Question:")
    assert "[TID-N]" in llm.system(1)
    assert answer.status == "answered" and answer.context == "both"
    prose = [s for s in answer.segments if isinstance(s, ProseSegment)]
    assert [s.citations for s in prose] == [("TID-1",)]
    (fact,) = answer.facts
    assert (fact.id, fact.origin, fact.graph_file, fact.row) == (
        "TID-1",
        "imported",
        "graph-default.csv",
        2,
    )
    quote = answer.quote(fact.quote_id or "")
    assert quote.text == DOSE_WORDS and quote.source_path.endswith("dosing.txt")
    text = render_text(answer, width=120)
    assert "TID-1 · Imported fact — not a quote" in text and "graph-default.csv, line 2" in text
    assert_sound(answer, index)


def test_an_unknown_tid_is_rejected_with_its_reason(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    llm.script = [
        NOTHING_EXTRACTED,
        "Remdesivir is dosed at 200 mg on day 1 [TID-9].",
        "Remdesivir is dosed at 200 mg on day 1 [TID-1].",
    ]
    answer = index.ask(DOSE, backend=llm.backend(), mode="cite", context="both")
    assert answer.calls[1].problems == (
        "sentence 1 cites 'TID-9', which is not a retrieved source",
    )
    assert [f.id for f in answer.facts] == ["TID-1"]
    assert_sound(answer, index)


def test_rationale_statements_may_cite_a_tid(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    ref = ref_of(index, DOSE, "200 mg")
    llm.script = [
        NOTHING_EXTRACTED,
        f"S1: The dose of remdesivir is 200 mg on day 1 [TID-1][{ref}]\nS2: Made up [TID-7]",
        "S1: CORRECT-EXPLICIT — the fact and the label say so",
        "Remdesivir is given at 200 mg on day 1 [TID-1].",
    ]
    answer = index.ask(DOSE, backend=llm.backend(), mode="rationale", context="both")
    assert [s.refs for s in answer.statements] == [("TID-1", ref)]
    assert any(
        "cites 'TID-7', which is not a retrieved source" in r.reason for r in answer.rejected
    )
    assert [f.id for f in answer.facts] == ["TID-1"]
    assert tid_lines(user_prompt(llm, 1)) == tid_lines(user_prompt(llm, 3))
    assert_sound(answer, index)


def test_triplets_alone_give_the_model_no_paragraph(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    llm.script = [
        NOTHING_EXTRACTED,
        "Remdesivir must not be used with known hypersensitivity [TID-2].",
    ]
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="cite", context="triplets", faithfulness="deterministic"
    )
    assert [c.stage for c in answer.calls] == ["extract", "answer"]
    prompt = user_prompt(llm, 1)
    assert "<source" not in prompt and len(tid_lines(prompt)) == 2
    (fact,) = answer.facts
    assert fact.id == "TID-2" and fact.quote_id is None  # its row gives no quote
    assert "remdesivir | contraindicated_in | known hypersensitivity" in render_text(answer, 120)
    assert_sound(answer, index)


def test_without_a_model_the_best_imported_triplets_are_shown(index: Index, tmp_path: Path) -> None:
    import_graph(index, tmp_path)
    answer = index.ask(DOSE, context="triplets")
    assert answer.status == "answered" and answer.segments == ()
    assert [f.subject for f in answer.facts] == ["remdesivir", "remdesivir"]
    assert answer.quote(answer.facts[0].quote_id or "").text == DOSE_WORDS
    assert_sound(answer, index)


def test_triplets_are_extracted_from_paragraphs_with_their_sentence(
    index: Index, llm: ScriptedModel
) -> None:
    ref = ref_of(index, DOSE, "200 mg")
    llm.script = [
        f"{ref} #2: remdesivir | contraindicated_in | known hypersensitivity\n"
        f"{ref} #40: remdesivir | cures | everything\n"
        "zzzzzz.1 #1: a | b | c",
        "Do not give remdesivir with known hypersensitivity [TID-1].",
    ]
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="cite", context="both", faithfulness="deterministic"
    )
    assert [c.stage for c in answer.calls] == ["extract", "answer"]
    assert "REF #N: subject | relation | object" in llm.system(0)
    assert tid_lines(user_prompt(llm, 1)) == [
        "TID-1: remdesivir | contraindicated_in | known hypersensitivity"
    ]
    (fact,) = answer.facts
    assert (fact.origin, fact.ref) == ("generated", ref)
    source = answer.quote(fact.quote_id or "")
    assert source.text == "Do not use remdesivir in patients with known hypersensitivity."
    assert any("2 extracted triplet(s) were dropped" in n for n in answer.notices)
    assert "Generated fact — extracted by the model" in render_text(answer, 120)
    assert_sound(answer, index)


def test_imported_and_extracted_triplets_are_combined_the_imported_kept_of_equal_ones(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    ref = ref_of(index, DOSE, "200 mg")
    llm.script = [
        f"{ref} #2: Remdesivir | contraindicated in | known hypersensitivity\n"
        f"{ref} #1: remdesivir | has_maintenance_dose | 100 mg once daily",
        "Remdesivir is not for known hypersensitivity [TID-2]. Then 100 mg once daily [TID-3].",
    ]
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="cite", context="both", faithfulness="deterministic"
    )
    assert [c.stage for c in answer.calls] == ["extract", "answer"]
    assert tid_lines(user_prompt(llm, 1)) == [
        "TID-1: remdesivir | has_dose | 200 mg on day 1",
        "TID-2: remdesivir | contraindicated_in | known hypersensitivity",
        "TID-3: remdesivir | has_maintenance_dose | 100 mg once daily",
    ]
    assert [(f.id, f.origin, f.row, f.ref) for f in answer.facts] == [
        ("TID-2", "imported", 3, None),
        ("TID-3", "generated", None, ref),
    ]
    extracted = answer.quote(answer.facts[1].quote_id or "")
    assert extracted.text.startswith("The recommended dose is 200 mg on day 1, followed by 100 mg")
    assert_sound(answer, index)


def test_a_key_never_sees_another_collections_triplets(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path, "subject,relation,object\nremdesivir,secret_of,Acme\n", "legal")
    llm.script = ["nothing to extract", "Remdesivir is secret [TID-1]."]
    answer = index.ask(
        DOSE, backend=llm.backend(), mode="cite", context="both", collections=["default"]
    )
    assert all("Acme" not in user_prompt(llm, n) for n in range(len(llm.requests)))
    assert answer.facts == ()
    assert all(fact.subject != "Acme" for fact in answer.facts)


def test_whole_corpus_gives_every_chunk_once_and_in_order(index: Index, llm: ScriptedModel) -> None:
    documents = index.store.list_documents()
    chunks = [c for d in documents for c in index.store.chunks_of(d.doc_id, d.version)]
    llm.script = [f"The dose is 200 mg on day 1 [{ref_of(index, DOSE, '200 mg')}]."]
    answer = index.ask(DOSE, backend=llm.backend(), mode="cite", context="whole")
    refs = re.findall(r'<source ref="([^"]+)">', user_prompt(llm, 0))
    assert refs == [c.ref for c in chunks]
    assert [s.ref for s in answer.sources] == refs and answer.context == "whole"
    assert answer.status == "answered"
    assert_sound(answer, index)


def test_whole_corpus_of_one_document_without_a_model(index: Index) -> None:
    dosing = next(d for d in index.store.list_documents() if d.source_path.endswith("dosing.txt"))
    answer = index.ask(DOSE, context="whole", document=dosing.source_path)
    assert [s.doc_id for s in answer.sources] == [dosing.doc_id] * len(answer.sources)
    assert any("200 mg on day 1" in q.text for q in answer.quotes)
    with pytest.raises(UsageError, match="no current document 'nope'"):
        index.ask(DOSE, context="whole", document="nope")
    with pytest.raises(UsageError, match="only as the whole-corpus context"):
        index.ask(DOSE, document=dosing.doc_id)


def test_context_forms_a_mode_cannot_use_are_refused(index: Index) -> None:
    with pytest.raises(UsageError, match="agent mode searches for itself"):
        index.ask(DOSE, mode="agent", context="both")
    with pytest.raises(UsageError, match="give it the context 'both'"):
        index.ask(DOSE, mode="rationale", context="triplets")


def test_a_corpus_over_the_cap_falls_back_to_retrieval_with_a_notice(
    index: Index, llm: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quoteproof.strategies import context

    monkeypatch.setattr(context, "MAX_WHOLE_CHARS", 100)
    ref = ref_of(index, DOSE, "200 mg")
    llm.script = [f"The dose is 200 mg on day 1 [{ref}]."]
    answer = index.ask(DOSE, backend=llm.backend(), mode="cite", context="whole", top_k=2)
    assert len(answer.sources) <= 2
    (notice,) = [n for n in answer.notices if "do not fit" in n]
    assert "over the 100 measured" in notice and notice.endswith("fell back to retrieval).")
    assert "do not fit the model's context window" in render_text(answer, width=300)


def test_an_answer_from_triplets_alone_streams_its_prose_and_no_quote(
    index: Index, llm: ScriptedModel, tmp_path: Path
) -> None:
    import_graph(index, tmp_path)
    reply = "Remdesivir is given at 200 mg on day 1 [TID-1]."
    llm.script = [NOTHING_EXTRACTED, reply]
    events: list[AnswerEvent] = []
    answer = index.ask(
        DOSE,
        backend=llm.backend(),
        mode="cite",
        context="triplets",
        events=events.append,
        faithfulness="deterministic",
    )
    assert [e.stage for e in events if isinstance(e, StageStarted)] == ["extract", "answer"]
    assert "".join(e.text for e in events if isinstance(e, ProseDelta)) == reply
    assert not [e for e in events if isinstance(e, QuoteResolved | QuoteDropped)]
    assert [body.get("stream") for body in llm.requests][-1] is True
    assert answer.status == "answered" and [f.id for f in answer.facts] == ["TID-1"]
    assert_sound(answer, index)
