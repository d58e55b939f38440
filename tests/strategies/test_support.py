"""Generated sentences that say what their citation does not say, or cite nothing,
are removed in every mode and listed with the reason, end to end through scripted
OpenAI-compatible and Anthropic servers on 127.0.0.1 and a real index."""

from __future__ import annotations

import html
import json
import re

from markdown_it import MarkdownIt

from helpers.llm_servers import ToolReply
from helpers.retrieval import ref_of
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.llm.local import BUNDLED_MODEL_NOTICE, BUNDLED_NAME
from quoteproof.model import Answer, ProseSegment, QuoteSegment, Rejected
from quoteproof.render.html import render_answer_html
from quoteproof.render.json import render_json
from quoteproof.render.markdown import render_markdown
from quoteproof.render.terminal import render_text
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.quote import NO_MODEL_FALLBACK
from quoteproof.strategies.rationale import answer_rationale
from quoteproof.strategies.session import NOTHING_VERIFIABLE, AnswerSession

QUESTION = "What is the remdesivir dose, and what is the price of one vial of remdesivir?"
DOSE = "The recommended dose is 200 mg on day 1"
INVENTED = "One vial of remdesivir costs $25.25 at Amazon"
TRUE = "The dose is 200 mg on day 1, then 100 mg once daily"
UNCITED = "Most patients recover fully."


def dose_ref(index: Index) -> str:
    return ref_of(index, QUESTION, DOSE)


def prose(answer: Answer) -> list[str]:
    return [s.text for s in answer.segments if isinstance(s, ProseSegment)]


def assert_removed_in_every_format(answer: Answer, sentence: str, reason: str) -> None:
    """The removed sentence is no prose of the answer, and every format names it and
    why in the notice."""
    assert sentence not in " ".join(prose(answer))
    assert Rejected(sentence, reason) in answer.removed_sentences
    data = json.loads(render_json(answer))
    assert {"raw": sentence, "reason": reason} in data["removed_sentences"]
    markdown_html = MarkdownIt("commonmark").render(render_markdown(answer))
    for output in (render_text(answer, width=400), markdown_html, render_answer_html(answer)):
        flat = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", output)).split())
        assert "generated sentence" in flat and "removed:" in flat
        assert f'"{sentence}" ({reason})' in flat


def test_cite_removes_an_invented_price_with_a_real_ref(index: Index, llm: ScriptedModel) -> None:
    dose = dose_ref(index)
    llm.script = [f"{INVENTED} [{dose}]. {TRUE} [{dose}]."]
    answer = index.ask(QUESTION, backend=llm.backend(), mode="cite", faithfulness="deterministic")
    assert answer.status == "answered" and len(llm.requests) == 1
    assert prose(answer) == [f"{TRUE}."]
    reason = f'"$25.25", "Amazon" are not in [{dose}]'
    assert answer.removed_sentences == (Rejected(f"{INVENTED}.", reason),)
    assert_removed_in_every_format(answer, f"{INVENTED}.", reason)


def test_cite_retries_when_every_sentence_is_removed(index: Index, llm: ScriptedModel) -> None:
    dose = dose_ref(index)
    llm.script = [f"{INVENTED} [{dose}].", f"{INVENTED} [{dose}]."]
    answer = index.ask(QUESTION, backend=llm.backend(), mode="cite")
    assert len(llm.requests) == 2
    assert '"$25.25", "Amazon" are not in' in llm.system(1)
    assert answer.status == "refused" and answer.refusal_reason == "validation_failed"
    assert prose(answer) == [answer.segments[0].text]  # the refusal sentence only
    assert INVENTED not in render_text(answer, width=400).split("Removed")[0]


def test_quote_mode_removes_invented_and_uncited_prose(index: Index, llm: ScriptedModel) -> None:
    dose = dose_ref(index)
    llm.script = [f'<quote ref="{dose}"/>\n{INVENTED} [{dose}]. {UNCITED}']
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.status == "answered"
    assert all(isinstance(s, QuoteSegment) for s in answer.segments)
    assert [r.raw for r in answer.removed_sentences] == [f"{INVENTED}.", UNCITED]
    assert_removed_in_every_format(answer, UNCITED, "sentence cites no retrieved source")


def test_quote_mode_falls_back_to_the_no_model_answer_when_only_unsupported_prose_is_left(
    index: Index, llm: ScriptedModel
) -> None:
    llm.script = [f"{INVENTED} [{dose_ref(index)}]."]
    answer = index.ask(QUESTION, backend=llm.backend())
    assert answer.status == "answered" and NO_MODEL_FALLBACK in answer.notices
    assert answer.quotes and all(isinstance(s, QuoteSegment) for s in answer.segments)
    assert [r.raw for r in answer.removed_sentences] == [f"{INVENTED}."]
    assert_removed_in_every_format(answer, f"{INVENTED}.", answer.removed_sentences[0].reason)


def test_rationale_never_labels_an_unsupported_statement_correct(
    index: Index, llm: ScriptedModel
) -> None:
    dose = dose_ref(index)
    llm.script = [
        f"S1: {INVENTED} [{dose}]\nS2: {TRUE} [{dose}]",
        "S1: CORRECT-EXPLICIT — the label says so.\nS2: CORRECT-EXPLICIT — stated.",
        f"{TRUE} [{dose}]. {INVENTED} [{dose}].",
    ]
    hits = index.search(QUESTION, top_k=5)
    with StoreLookup(index.store) as lookup:
        session = AnswerSession(QUESTION, hits, llm.backend(), lookup, mode="rationale")
        answer = answer_rationale(session)
    assert [(s.id, s.label) for s in answer.statements] == [("S2", "CORRECT-EXPLICIT")]
    assert INVENTED not in llm.first_user(2).split("Checked statements:")[1]
    assert answer.removed_sentences == (
        Rejected(INVENTED, f'statement S1: "$25.25", "Amazon" are not in [{dose}]'),
        Rejected(f"{INVENTED}.", f'"$25.25", "Amazon" are not in [{dose}]'),
    )
    assert prose(answer) == [f"{TRUE}."]
    shown = " ".join(render_text(answer, width=400).split())
    assert "S2 · CORRECT-EXPLICIT" in shown and "S1 ·" not in shown
    assert "2 generated sentences were removed" in shown


def test_agent_shows_no_uncited_note_and_repeats_once(index: Index, llm: ScriptedModel) -> None:
    """Issue 24: eight identical uncited notes were shown while the partial notice said
    uncited sentences had been removed."""
    dose = dose_ref(index)
    llm.script = [
        ToolReply([("quote", {"ref": dose})]),
        *[ToolReply([("note", {"text": UNCITED})])] * 8,
        *[ToolReply([("note", {"text": f"{TRUE} [{dose}]."})])] * 2,
    ]
    answer = index.ask(QUESTION, backend=llm.backend(), mode="agent", max_steps=11)
    assert answer.status == "answered" and answer.partial
    assert prose(answer) == [f"{TRUE}."]
    assert answer.removed_sentences == (Rejected(UNCITED, "sentence cites no retrieved source"),)
    text = render_text(answer, width=400)
    assert text.count(UNCITED) == 1 and "1 generated sentence was removed" in text


def test_agent_removes_an_invented_price_in_a_note(index: Index, llm: ScriptedModel) -> None:
    dose = dose_ref(index)
    llm.script = [
        ToolReply([("note", {"text": f"{INVENTED} [{dose}]. {TRUE} [{dose}]."})]),
        ToolReply([("finish", {})]),
    ]
    answer = index.ask(QUESTION, backend=llm.backend(), mode="agent")
    assert answer.status == "answered" and prose(answer) == [f"{TRUE}."]
    reason = f'"$25.25", "Amazon" are not in [{dose}]'
    assert_removed_in_every_format(answer, f"{INVENTED}.", reason)


def test_agent_with_only_uncited_notes_is_a_refusal(index: Index, llm: ScriptedModel) -> None:
    llm.script = [ToolReply([("note", {"text": UNCITED})]), ToolReply([("finish", {})])]
    answer = index.ask(QUESTION, backend=llm.backend(), mode="agent")
    assert answer.status == "refused" and answer.refusal_reason == NOTHING_VERIFIABLE
    assert [r.raw for r in answer.removed_sentences] == [UNCITED]


def test_an_answer_of_the_bundled_model_says_so_in_every_format(
    index: Index, llm: ScriptedModel
) -> None:
    """The scripted server's backend, named as the in-process bundled model is."""
    dose = dose_ref(index)
    llm.script = [f"{TRUE} [{dose}].", f"{TRUE} [{dose}]."]
    other = index.ask(QUESTION, backend=llm.backend(), mode="cite")
    assert BUNDLED_MODEL_NOTICE not in other.notices
    bundled = llm.backend()
    bundled.name, bundled.model = "local", BUNDLED_NAME
    answer = index.ask(QUESTION, backend=bundled, mode="cite")
    assert BUNDLED_MODEL_NOTICE in answer.notices
    assert BUNDLED_MODEL_NOTICE in json.loads(render_json(answer))["notices"]
    markdown_html = MarkdownIt("commonmark").render(render_markdown(answer))
    for output in (render_text(answer, width=400), markdown_html, render_answer_html(answer)):
        flat = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", output)).split())
        assert BUNDLED_MODEL_NOTICE in flat


def test_a_name_in_the_cited_passage_label_is_supported(index: Index, llm: ScriptedModel) -> None:
    """The label (document title, section) comes with every citation, so a name
    it holds ("Shingles") is no invention, though the passage's text lacks it."""
    question = "How is shingles treated?"
    treat = ref_of(index, question, "acyclovir")
    chunk = index.chunk(treat)
    assert chunk is not None and "Shingles" in chunk.label and "hingles" not in chunk.text
    sentence = "Acyclovir shortens an attack of Shingles if started within 72 hours."
    llm.script = [f"{sentence[:-1]} [{treat}]. It works within 48 hours [{treat}]."]
    answer = index.ask(question, backend=llm.backend(), mode="cite")
    assert prose(answer) == [sentence]
    assert [r.reason for r in answer.removed_sentences] == [f'"48 hours" is not in [{treat}]']
