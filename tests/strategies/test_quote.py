"""`ask --mode quote` end to end through scripted OpenAI-compatible and Anthropic
servers: what makes a reply an answer, and what makes it a refusal."""

from __future__ import annotations

import json
import re

from helpers.llm_servers import ScriptedOpenAIServer
from helpers.retrieval import ref_of
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.codec import answer_to_dict
from quoteproof.llm.base import CompletionRequest
from quoteproof.llm.extractive import OFFERED
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import Answer, ProseSegment, Rejected
from quoteproof.quoting.grammar import QUOTE_REPLY_TOKENS
from quoteproof.quoting.prompt import OFFERED_NOTE
from quoteproof.quoting.units import chunk_units
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.quote import (
    NO_MODEL_FALLBACK,
    answer_from_resolution,
    answer_quote,
    no_model_added,
    resolve_reply,
)
from quoteproof.strategies.session import (
    MAX_REPLY_CHARS,
    MODEL_NO_ANSWER,
    NOTHING_VERIFIABLE,
    AnswerSession,
)

QUESTION = "How is shingles treated and what are its symptoms?"


def test_uncited_prose_without_a_quote_gives_the_no_model_answer_said_so(
    index: Index, llm: ScriptedModel
) -> None:
    llm.script = ["Shingles goes away by itself. Drink water and rest."]
    answer = index.ask(QUESTION, backend=llm.backend())
    no_model = index.ask(QUESTION)
    assert answer.status == "answered" and NO_MODEL_FALLBACK in answer.notices
    assert [q.text for q in answer.quotes] == [q.text for q in no_model.quotes] != []
    assert not any(isinstance(s, ProseSegment) for s in answer.segments)
    assert [r.raw for r in answer.rejected] == [
        "Shingles goes away by itself. Drink water and rest."
    ]
    assert "no citation" in answer.rejected[0].reason
    assert answer.calls[0].output == "Shingles goes away by itself. Drink water and rest."


def test_a_model_that_says_the_sources_do_not_answer_is_not_overruled(
    index: Index, llm: ScriptedModel
) -> None:
    llm.script = ["<no-answer/>"]
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.status == "refused" and answer.refusal_reason == MODEL_NO_ANSWER
    assert NO_MODEL_FALLBACK not in answer.notices


def test_without_the_fallback_nothing_verifiable_is_a_refusal(
    index: Index, llm: ScriptedModel
) -> None:

    llm.script = ['<quote ref="nope">Shingles is cured by water.</quote>']
    retrieval = index.retrieve(QUESTION, top_k=5)
    with StoreLookup(index.store) as lookup:
        session = AnswerSession(
            QUESTION, retrieval.hits, llm.backend(), lookup, "quote", 90.0, retrieval.info, None
        )
        answer = answer_quote(session)
    assert answer.status == "refused" and answer.refusal_reason == NOTHING_VERIFIABLE


def test_a_value_notice_belongs_to_the_answer_it_describes(
    index: Index, llm: ScriptedModel
) -> None:
    """One session makes two answers in quote mode when the no-model answer joins the
    model's: the notice that no quote gives the number asked is said once, and only
    of the answer whose quotes give none."""
    question = "How many days after the first sign does the shingles rash appear?"
    ref = ref_of(index, question, "fluid-filled blisters")
    vague = "Most people do not get shingles more than once."
    counted = "A rash of fluid-filled blisters appears one to five days later."
    retrieval = index.retrieve(question, top_k=5)
    with StoreLookup(index.store) as lookup:
        session = AnswerSession(
            question, retrieval.hits, llm.backend(), lookup, "quote", 90.0, retrieval.info, None
        )
        answers = [
            answer_from_resolution(
                session, resolve_reply(session, f'<quote ref="{ref}">{q}</quote>')
            )
            for q in (vague, vague, counted)
        ]
    notices = [[n for n in a.notices if n.startswith("The question asks for")] for a in answers]
    assert [a.quotes[0].text for a in answers] == [vague, vague, counted]
    assert notices[0] == notices[1] and len(notices[0]) == 1 and notices[2] == []


def test_cited_prose_without_a_quote_is_an_answer(index: Index, llm: ScriptedModel) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [f"Antivirals help when started early [{treat}]."]
    answer = index.ask(QUESTION, backend=llm.backend())
    no_model = index.ask(QUESTION)
    assert answer.status == "answered" and [c.ref for c in answer.cited] == [treat]
    assert [q.text for q in answer.quotes] == [q.text for q in no_model.quotes]  # added


def test_uncited_prose_beside_a_quote_is_removed_and_listed(
    index: Index, llm: ScriptedModel
) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [f'<quote ref="{treat}"/>\nSee a doctor soon.']
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.status == "answered"
    assert not any(isinstance(s, ProseSegment) for s in answer.segments)
    assert answer.removed_sentences == (
        Rejected("See a doctor soon.", "sentence cites no retrieved source"),
    )


def test_a_repeated_quote_is_shown_once(index: Index, llm: ScriptedModel) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [f'<quote ref="{treat}"/>\n<quote ref="{treat}"/>']
    answer = index.ask(QUESTION, backend=llm.backend())
    assert [q.ref for q in answer.quotes].count(treat) == 1
    assert [r.reason for r in answer.rejected] == ["repeats quote q1"]


def test_a_runaway_reply_is_cut_and_said_so(index: Index, llm: ScriptedModel) -> None:
    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = [
        f'<quote ref="{treat}"/>\n' + "See a doctor soon. " * 20_000
    ]  # 380,000 characters
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.status == "answered" and answer.quotes[0].ref == treat
    assert len(answer.calls[0].output) == len(answer.llm.raw_output) == MAX_REPLY_CHARS
    prose = [s.text for s in answer.segments if isinstance(s, ProseSegment)]
    assert sum(map(len, prose)) < MAX_REPLY_CHARS
    (notice,) = [n for n in answer.notices if "reply was cut" in n]
    assert f"only the first {MAX_REPLY_CHARS:,} were read" in notice
    assert len(json.dumps(answer_to_dict(answer))) < 4 * MAX_REPLY_CHARS


def test_a_pointer_quotes_the_unit_the_prompt_numbered(index: Index, llm: ScriptedModel) -> None:
    """Without a no-model answer to offer from, the model is shown each source's
    units as `{N} words` lines; pointing at N quotes exactly those words, read from
    the store."""

    def ask() -> Answer:
        retrieval = index.retrieve(QUESTION, top_k=5)
        with StoreLookup(index.store) as lookup:
            return answer_quote(
                AnswerSession(
                    QUESTION, retrieval.hits, llm.backend(), lookup, "quote", 90.0, retrieval.info
                )
            )

    treat = ref_of(index, QUESTION, "acyclovir")
    llm.script = ["<no-answer/>"]
    ask()
    prompt = llm.first_user(0)
    assert '<quote ref="REF" unit="N"/>' in llm.system(0) and OFFERED_NOTE not in prompt
    source = prompt.split(f'<source ref="{treat}">\n', 1)[1].split("\n</source>", 1)[0]
    shown = re.findall(r"^\{(\d+)\} (.*)$", source, re.MULTILINE)
    whole = [(n, words) for n, words in shown if not words.startswith(("… ", "= {"))]
    assert whole
    number, words = whole[-1]
    llm.script = [f'<quote ref="{treat}" unit="{number}"/> <quote ref="{treat}" unit="999"/>']
    answer = ask()
    assert answer.status == "answered"
    (quote,) = answer.quotes
    assert quote.ref == treat and quote.text.startswith(words) and quote.claimed_text is None
    document = index.store.get_document(quote.doc_id, quote.doc_version)
    assert document is not None and quote.text == document.text[quote.start : quote.end]
    assert [r.reason for r in answer.rejected] == [
        f"source '{treat}' has no unit 999 (its units are 1-{len(shown)})"
    ]


def test_the_model_is_offered_the_best_units_of_the_no_model_answer_first(
    index: Index, llm: ScriptedModel
) -> None:
    """Quote mode shows the model the units the no-model answer ranked best, the
    best first, not every unit of every source; pointing at the first one quotes what
    the no-model answer quotes first."""
    llm.script = ["<no-answer/>"]
    index.ask(QUESTION, backend=llm.backend())
    prompt = llm.first_user(0)
    shown = re.findall(r"^\{(\d+)\} (.*)$", prompt, re.MULTILINE)
    assert OFFERED_NOTE in prompt and 1 <= len(shown) <= OFFERED
    no_model = index.ask(QUESTION)
    first_ref = re.findall(r'<source ref="([^"]+)">', prompt)[0]
    assert no_model.quotes[0].ref == first_ref
    assert no_model.quotes[0].text.startswith(shown[0][1].split("\n")[0])
    llm.script = [f'<quote ref="{first_ref}" unit="{shown[0][0]}"/>']
    answer = index.ask(QUESTION, backend=llm.backend())
    assert no_model.quotes[0].text.startswith(answer.quotes[0].text)  # adjacent units join
    retrieved = index.retrieve(QUESTION, top_k=5).hits
    every_unit = sum(len(chunk_units(hit.chunk, StoreLookup(index.store))) for hit in retrieved)
    assert len(shown) < every_unit


def test_the_answer_holds_the_no_model_answer_after_the_models_own_choice(
    index: Index, llm: ScriptedModel
) -> None:
    """A model that picks an offered unit the no-model answer did not quote gets it
    shown first; the no-model answer's quotes follow, named in a notice, so a weak
    model's choice never shows less than the no-model answer. A model that picks what
    the no-model answer quotes gets no addition."""
    no_model = index.ask(QUESTION)
    llm.script = ["<no-answer/>"]
    index.ask(QUESTION, backend=llm.backend())
    prompt = llm.first_user(0)
    pointers = [
        (ref, number, words)
        for ref, block in re.findall(r'<source ref="([^"]+)">\n(.*?)\n</source>', prompt, re.DOTALL)
        for number, words in re.findall(r"^\{(\d+)\} (.*)$", block, re.MULTILINE)
    ]
    with StoreLookup(index.store) as lookup:  # any unit of a source resolves
        ref, number, words = next(
            (hit.chunk.ref, n, hit.chunk.text[unit.start : unit.end])
            for hit in index.retrieve(QUESTION, top_k=5).hits
            for n, unit in enumerate(chunk_units(hit.chunk, lookup), start=1)
            if not any(hit.chunk.text[unit.start : unit.end] in q.text for q in no_model.quotes)
        )
    llm.script = [f'<quote ref="{ref}" unit="{number}"/>']
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.quotes[0].text.startswith(words)
    assert [q.text for q in answer.quotes[1:]] == [q.text for q in no_model.quotes]
    assert [q.id for q in answer.quotes] == [f"q{n}" for n in range(1, len(answer.quotes) + 1)]
    last = f"q{len(answer.quotes)}"
    assert no_model_added("q2", last) in answer.notices
    first_ref, first_number, _ = pointers[0]
    llm.script = [f'<quote ref="{first_ref}" unit="{first_number}"/>']
    same = index.ask(QUESTION, backend=llm.backend())
    assert [q.text for q in same.quotes] == [q.text for q in no_model.quotes]
    assert not any("chosen without the model" in n for n in same.notices)


def test_a_constrained_quote_reply_has_a_small_token_budget(
    index: Index, openai_server: ScriptedOpenAIServer
) -> None:
    """Under the quote grammar a reply is a few pointers and one short sentence, so
    the request asks for at most `QUOTE_REPLY_TOKENS` (a tiny model once looped on
    digits for 871 tokens); a model without a grammar keeps the default budget, as
    it may spell its quotes out."""
    for grammar, budget in [(True, QUOTE_REPLY_TOKENS), (False, CompletionRequest.max_tokens)]:
        openai_server.requests.clear()
        openai_server.script = ["<no-answer/>"]
        backend = OpenAIBackend(
            model="m", base_url=openai_server.base_url, max_retries=0, grammar=grammar
        )
        index.ask(QUESTION, backend=backend)
        (request,) = openai_server.requests
        assert request["max_tokens"] == budget
        assert ("grammar" in request) is grammar
