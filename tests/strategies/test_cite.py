"""`ask --mode cite` end to end through scripted OpenAI-compatible and Anthropic servers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from helpers.llm_servers import ScriptedOpenAIServer
from helpers.retrieval import ref_of
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.extractive import OFFERED
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import Answer, ProseSegment, QuoteSegment
from quoteproof.quoting.grammar import CITE_REPLY_TOKENS
from quoteproof.quoting.prompt import OFFERED_NOTE
from quoteproof.strategies.cite import CITE_NO_MODEL_FALLBACK, CUT_AT_BUDGET

QUESTION = (
    "How is shingles treated, what are its symptoms, what is the remdesivir dose "
    "and what is normal blood pressure?"
)


def best_ref(index: Index) -> str:
    """The top-ranked source's ref (always among the retry's three sources)."""
    return index.search(QUESTION, top_k=1)[0].chunk.ref


def ask(index: Index, llm: ScriptedModel, **options: Any) -> Answer:
    """The cite answer, without the judging call of the faithfulness check (the
    mode's own calls are counted here; tests/test_faithfulness.py tests the check)."""
    choices: dict[str, Any] = {"faithfulness": "deterministic"} | options
    return index.ask(QUESTION, backend=llm.backend(), mode="cite", **choices)


def prose(answer: Answer) -> list[ProseSegment]:
    return [s for s in answer.segments if isinstance(s, ProseSegment)]


def test_every_sentence_cited_is_accepted_at_once(index: Index, llm: ScriptedModel) -> None:
    treat, signs = ref_of(index, QUESTION, "acyclovir"), ref_of(index, QUESTION, "tingling")
    llm.script = [
        f"Antivirals such as acyclovir help if started early [{treat}]. "
        f"It starts with burning pain. [{signs}]"
    ]
    answer = ask(index, llm)
    assert answer.status == "answered" and answer.mode == "cite" and not answer.partial
    assert len(llm.requests) == 1
    assert [(s.text, s.citations) for s in prose(answer)] == [
        ("Antivirals such as acyclovir help if started early.", (treat,)),
        ("It starts with burning pain.", (signs,)),
    ]
    # each cited sentence's passages, verbatim, on demand
    cited = answer.cited_passages((treat,))
    assert len(cited) == 1 and cited[0].match == "ref"
    chunk = index.chunk(treat)
    assert chunk is not None and cited[0].text == chunk.text
    assert all(check.valid for check in index.verify(answer))
    assert [c.stage for c in answer.calls] == ["answer"] and answer.calls[0].problems == ()
    assert answer.usage is not None and answer.usage.completion_tokens == 5


def test_an_uncited_sentence_is_retried_with_top_three_and_a_stricter_prompt(
    index: Index, llm: ScriptedModel
) -> None:
    treat, top = ref_of(index, QUESTION, "acyclovir"), best_ref(index)
    llm.script = [
        f"Acyclovir treats shingles [{treat}]. Everyone recovers within a day.",
        f"The sources answer this [{top}].",
    ]
    answer = ask(index, llm)
    assert answer.status == "answered"
    assert len(llm.requests) == 2
    assert "previous reply was rejected" in llm.system(1)
    assert "Everyone recovers within a day" in llm.system(1)
    first_sources = llm.first_user(0).count("<source ref=")
    assert first_sources > 3 and llm.first_user(1).count("<source ref=") == 3
    assert [c.stage for c in answer.calls] == ["answer", "retry"]
    assert answer.calls[0].problems and "cites no source" in answer.calls[0].problems[0]
    assert answer.calls[1].problems == ()
    assert "Everyone recovers" not in " ".join(s.text for s in prose(answer))
    assert answer.llm.raw_output == answer.calls[1].output


def test_two_failures_are_a_validation_refusal_with_both_attempts_kept(
    index: Index, llm: ScriptedModel
) -> None:
    llm.script = ["Shingles is caused by stress.", "It is always mild."]
    answer = ask(index, llm)
    assert answer.status == "refused" and answer.refusal_reason == "validation_failed"
    assert len(llm.requests) == 2
    assert [c.output for c in answer.calls] == [
        "Shingles is caused by stress.",
        "It is always mild.",
    ]
    assert all(c.problems for c in answer.calls)
    assert answer.quotes == () and answer.cited == ()
    assert any("stress" in r.raw for r in answer.rejected)


def test_a_citation_of_an_unknown_ref_fails_in_strict_mode(
    index: Index, llm: ScriptedModel
) -> None:
    top = best_ref(index)
    llm.script = [
        f"Remdesivir helps [{top}][zzzzzz.9].",
        f"Remdesivir helps [{top}].",
    ]
    answer = ask(index, llm)
    assert len(llm.requests) == 2
    assert "'zzzzzz.9', which is not a retrieved source" in answer.calls[0].problems[0]
    assert answer.status == "answered" and prose(answer)[0].citations == (top,)


def test_lenient_mode_drops_uncited_sentences_and_marks_the_answer_partial(
    index: Index, llm: ScriptedModel
) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [f"Acyclovir helps [{treat}]. It is a miracle cure [nope.1]. Trust me."]
    answer = ask(index, llm, strictness="lenient")
    assert len(llm.requests) == 1
    assert answer.status == "answered" and answer.partial
    assert [s.text for s in prose(answer)] == ["Acyclovir helps."]
    dropped = {r.raw for r in answer.rejected}
    assert {"It is a miracle cure.", "Trust me."} <= dropped


def test_no_answer_is_a_refusal_without_retry(index: Index, llm: ScriptedModel) -> None:
    llm.script = ["<no-answer/>"]
    answer = ask(index, llm)
    assert answer.refusal_reason == "model_no_answer" and len(llm.requests) == 1


def test_quotes_in_a_cited_answer_resolve_to_source_text(index: Index, llm: ScriptedModel) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [
        f"Treatment is antiviral [{treat}].\n"
        f'<quote ref="{treat}">antiviral medicines such as acyclovir, valacyclovir</quote>\n'
        f'<quote ref="{treat}">shingles vaccine cures the rash instantly</quote>'
    ]
    answer = ask(index, llm)
    assert answer.status == "answered"
    assert [type(s) for s in answer.segments] == [ProseSegment, QuoteSegment]
    document = index.store.get_document(answer.quotes[0].doc_id, answer.quotes[0].doc_version)
    assert document is not None
    quote = answer.quotes[0]
    assert quote.text == document.text[quote.start : quote.end]
    assert quote.text.startswith("Antiviral medicines")
    assert any("vaccine" in r.raw for r in answer.rejected)


def test_modes_other_than_quote_need_a_model(index: Index) -> None:
    from quoteproof.errors import BackendConfigError

    with pytest.raises(BackendConfigError, match="needs a language model"):
        index.ask(QUESTION, mode="cite")


def test_the_first_prompt_and_the_retry_show_the_best_units(
    index: Index, llm: ScriptedModel
) -> None:
    """As in quote mode, the model first sees only the units the no-model answer
    ranked best (a short prompt); the retry shows the same units of at most three of
    those sources (a prompt of whole sources took a local model seconds to read)."""
    llm.script = ["Shingles is treated [nowhere].", "<no-answer/>"]
    ask(index, llm)
    first, retry = llm.first_user(0), llm.first_user(1)
    shown = re.findall(r"^\{(\d+)\} (.*)$", first, re.MULTILINE)
    assert OFFERED_NOTE in first and 1 <= len(shown) <= OFFERED
    first_refs = re.findall(r'<source ref="([^"]+)">', first)
    retry_refs = re.findall(r'<source ref="([^"]+)">', retry)
    assert OFFERED_NOTE in retry and retry_refs == first_refs[:3]
    again = re.findall(r"^\{(\d+)\} (.*)$", retry, re.MULTILINE)
    assert again and set(again) <= set(shown)  # whole sources would number every unit


def test_a_constrained_reply_cut_by_its_token_budget_loses_only_its_last_sentence(
    index: Index, openai_server: ScriptedOpenAIServer
) -> None:
    """Under the cite grammar every sentence ends with a citation, so text after the
    last one is a sentence the reply's token budget cut: it is dropped and listed,
    and the finished sentences are the answer at once (strict mode, no retry)."""
    treat = ref_of(index, QUESTION, "acyclovir")
    openai_server.script = [
        f"Antivirals such as acyclovir help if started early [{treat}]. It starts with bur"
    ]
    backend = OpenAIBackend(model="m", base_url=openai_server.base_url, max_retries=0, grammar=True)
    answer = index.ask(QUESTION, backend=backend, mode="cite", faithfulness="deterministic")
    assert answer.status == "answered" and len(openai_server.requests) == 1
    assert openai_server.requests[0]["max_tokens"] == CITE_REPLY_TOKENS
    assert [s.text for s in prose(answer)] == [
        "Antivirals such as acyclovir help if started early."
    ]
    assert [(r.raw, r.reason) for r in answer.rejected] == [("It starts with bur", CUT_AT_BUDGET)]
    # without a grammar nothing marks a cut: the uncited sentence fails the check
    openai_server.requests.clear()
    first = f"Acyclovir helps [{treat}]. It starts"
    openai_server.script = [first, "<no-answer/>"]
    plain = OpenAIBackend(model="m", base_url=openai_server.base_url, max_retries=0)
    refused = index.ask(QUESTION, backend=plain, mode="cite", faithfulness="deterministic")
    assert len(openai_server.requests) == 2 and refused.status == "refused"
    assert openai_server.requests[0]["max_tokens"] == CompletionRequest.max_tokens
    assert refused.calls[0].output == first


def test_a_constrained_reply_that_fails_the_check_gives_the_no_model_answer_at_once(
    index: Index, openai_server: ScriptedOpenAIServer
) -> None:
    """Under the cite grammar a reply cannot fail on its form, only on what it says:
    it is not retried (one call); the no-model answer stands, with a notice, and the
    failed sentence is listed, never shown."""
    treat = ref_of(index, QUESTION, "acyclovir")
    invented = f"Acyclovir cures shingles in 97.3 percent of patients [{treat}]."
    openai_server.script = [invented]
    backend = OpenAIBackend(model="m", base_url=openai_server.base_url, max_retries=0, grammar=True)
    answer = index.ask(QUESTION, backend=backend, mode="cite", faithfulness="deterministic")
    assert len(openai_server.requests) == 1
    assert answer.status == "answered" and CITE_NO_MODEL_FALLBACK in answer.notices
    assert answer.quotes and all(check.valid for check in index.verify(answer))
    assert prose(answer) == [] and "97.3" not in " ".join(q.text for q in answer.quotes)
    assert any("97.3" in r.raw for r in answer.rejected)
    no_model = index.ask(QUESTION, faithfulness="deterministic")
    assert [q.text for q in answer.quotes] == [q.text for q in no_model.quotes]
