"""The `rationale` strategy end to end (generate → verify → refine → answer) through
real scripted OpenAI-compatible and Anthropic servers on 127.0.0.1 and a real index,
plus the tolerant line parsers."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.llm_servers import content_text
from helpers.scripted_model import ScriptedModel
from quoteproof import Index
from quoteproof.model import Answer, Chunk, Hit, Statement
from quoteproof.store_lookup import StoreLookup
from quoteproof.strategies.rationale import (
    StatementLine,
    Verdict,
    answer_rationale,
    apply_rewrites,
    parse_statement_lines,
    parse_verdicts,
    statements_from_reply,
)
from quoteproof.strategies.session import MODEL_NO_ANSWER, NOTHING_VERIFIABLE, AnswerSession
from quoteproof.streaming import AnswerEvent, StageStarted

QUESTION = "What is the first sign of shingles, and how is shingles treated?"
SIGN = "The first sign of shingles is often burning or tingling pain"
DRUGS = "acyclovir, valacyclovir and famciclovir"
WRONG = "Antiviral medicines only help when started within 7 days of the rash."
RIGHT = "Antiviral medicines help when started within 72 hours of the rash."


@pytest.fixture
def hits(index: Index) -> list[Hit]:
    found = index.search(QUESTION, top_k=5)
    assert any(SIGN in h.chunk.text for h in found)
    assert any(DRUGS in h.chunk.text for h in found)
    return found


def chunk_with(hits: list[Hit], words: str) -> Chunk:
    return next(h.chunk for h in hits if words in h.chunk.text)


def other_chunk(hits: list[Hit], *words: str) -> Chunk:
    """A retrieved chunk that contains none of `words` (a source that is not relevant)."""
    return next(h.chunk for h in hits if not any(w in h.chunk.text for w in words))


def run(
    index: Index, hits: list[Hit], server: ScriptedModel, script: list[str], **session_args: Any
) -> Answer:
    server.script = list(script)
    backend = server.backend()
    with StoreLookup(index.store) as lookup:
        session = AnswerSession(QUESTION, hits, backend, lookup, mode="rationale", **session_args)
        return answer_rationale(session)


def user_prompt(server: ScriptedModel, i: int) -> str:
    return content_text(server.requests[i]["messages"][-1]["content"])


def assert_verbatim(answer: Answer, index: Index) -> None:
    for quote in (*answer.quotes, *answer.cited):
        document = index.store.get_document(quote.doc_id, quote.doc_version)
        assert document is not None
        assert quote.text == document.text[quote.start : quote.end]
    assert all(check.valid for check in index.verify(answer))
    shown = {q.text for q in (*answer.quotes, *answer.cited)}
    for statement in answer.statements:
        assert statement.text not in shown
        assert statement.original is None or statement.original not in shown


def test_all_correct_skips_refine(index: Index, hits: list[Hit], llm: ScriptedModel) -> None:
    sign, drugs = chunk_with(hits, SIGN), chunk_with(hits, DRUGS)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Burning or tingling pain comes first [{sign.ref}]\n"
            f"S2: Antivirals such as acyclovir shorten the attack [{drugs.ref}]",
            "S1: CORRECT-EXPLICIT — the source says so.\nS2: CORRECT-IMPLICIT — it follows.",
            f"Pain comes first [{sign.ref}]. It is treated with antivirals [{drugs.ref}]. "
            f'<quote ref="{drugs.ref}">{DRUGS}</quote>',
        ],
    )
    assert len(llm.requests) == 3
    assert [c.stage for c in answer.calls] == ["generate", "verify", "answer"]
    assert answer.status == "answered" and answer.mode == "rationale"
    assert answer.statements == (
        Statement(
            "S1",
            "Burning or tingling pain comes first",
            (sign.ref,),
            "CORRECT-EXPLICIT",
            "the source says so.",
        ),
        Statement(
            "S2",
            "Antivirals such as acyclovir shorten the attack",
            (drugs.ref,),
            "CORRECT-IMPLICIT",
            "it follows.",
        ),
    )
    assert [q.text for q in answer.quotes] == [DRUGS]
    assert {sign.ref, drugs.ref} <= {q.ref for q in answer.cited}
    assert_verbatim(answer, index)
    stage4 = user_prompt(llm, 2)
    assert "Burning or tingling pain comes first" in stage4 and f"[{drugs.ref}]" in stage4


def test_incorrect_statement_is_refined(index: Index, hits: list[Hit], llm: ScriptedModel) -> None:
    sign, drugs = chunk_with(hits, SIGN), chunk_with(hits, DRUGS)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Burning or tingling pain comes first [{sign.ref}]\nS2: {WRONG} [{drugs.ref}]",
            "S1: CORRECT-EXPLICIT — stated.\n"
            "S2: INCORRECT-FALSE_INFO — the source says 72 hours, not 7 days.",
            f"S2: {RIGHT} [{drugs.ref}]",
            f"Start antivirals within 72 hours of the rash [{drugs.ref}].",
        ],
    )
    assert len(llm.requests) == 4
    assert [c.stage for c in answer.calls] == ["generate", "verify", "refine", "answer"]
    refined = answer.statements[1]
    assert refined == Statement(
        "S2",
        RIGHT,
        (drugs.ref,),
        "INCORRECT-FALSE_INFO",
        "the source says 72 hours, not 7 days.",
        original=WRONG,
    )
    refine_prompt = user_prompt(llm, 2)
    assert WRONG in refine_prompt and "INCORRECT-FALSE_INFO" in refine_prompt
    assert "72 hours, not 7 days" in refine_prompt
    assert "Burning or tingling" not in refine_prompt.split("Question:")[1]
    stage4 = user_prompt(llm, 3)
    assert RIGHT in stage4 and WRONG not in stage4
    assert answer.status == "answered"
    assert_verbatim(answer, index)


def test_unlabelled_statement_is_not_used(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    sign, drugs = chunk_with(hits, SIGN), chunk_with(hits, DRUGS)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Burning or tingling pain comes first [{sign.ref}]\n"
            f"S2: Antivirals shorten the attack [{drugs.ref}]",
            "S1: CORRECT-EXPLICIT — stated.\nS2: probably fine",
            f"Pain comes first [{sign.ref}].",
        ],
    )
    assert len(llm.requests) == 3
    assert answer.statements[1].label is None and answer.statements[1].justification is None
    stage4 = user_prompt(llm, 2)
    assert "Burning or tingling pain comes first" in stage4
    assert "Antivirals shorten the attack" not in stage4
    assert answer.status == "answered"


def test_unknown_refs_are_dropped_and_reported(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    sign = chunk_with(hits, SIGN)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Pain comes first [{sign.ref}][zz9.9]\n"
            "S2: Shingles is caused by bees [nope1]\n"
            f"S3: Most people get it once [{sign.ref}]",
            "S1: CORRECT-EXPLICIT — stated.\nS2: CORRECT-EXPLICIT — stated.",
            f"Pain comes first [{sign.ref}].",
        ],
    )
    assert [(s.id, s.text, s.refs) for s in answer.statements] == [
        ("S1", "Pain comes first", (sign.ref,)),
        ("S2", "Most people get it once", (sign.ref,)),
    ]
    reasons = [r.reason for r in answer.rejected]
    assert any("'zz9.9'" in reason for reason in reasons)
    assert any("'nope1'" in reason for reason in reasons)
    assert any(
        r.reason == "statement cites no retrieved source" and "bees" in r.raw
        for r in answer.rejected
    )
    verify_prompt = user_prompt(llm, 1)
    assert "bees" not in verify_prompt and "zz9.9" not in verify_prompt
    assert answer.status == "answered"


def test_no_answer_at_generate_refuses_after_one_request(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    answer = run(index, hits, llm, ["<no-answer/>"])
    assert len(llm.requests) == 1
    assert answer.status == "refused" and answer.refusal_reason == MODEL_NO_ANSWER
    assert [c.stage for c in answer.calls] == ["generate"]
    assert answer.quotes == () and answer.statements == ()


def test_no_valid_statement_refuses_after_one_request(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    answer = run(index, hits, llm, ["Some thoughts.\nS1: Bees cause it [nope1]"])
    assert len(llm.requests) == 1
    assert answer.refusal_reason == NOTHING_VERIFIABLE
    assert any("bees" in r.raw.lower() for r in answer.rejected)


def test_nothing_usable_refuses_without_answer_stage(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    sign, drugs = chunk_with(hits, SIGN), chunk_with(hits, DRUGS)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Shingles starts with a fever [{sign.ref}]\nS2: {WRONG} [{drugs.ref}]",
            "S1: INCORRECT-FALSE_INFO — pain comes first.\nS2: INCORRECT-FALSE_INFO — 72 hours.",
            f"S2: {RIGHT} [nope1]\nS1: Pain comes first",
        ],
    )
    assert len(llm.requests) == 3
    assert [c.stage for c in answer.calls] == ["generate", "verify", "refine"]
    assert answer.status == "refused" and answer.refusal_reason == NOTHING_VERIFIABLE
    assert [s.label for s in answer.statements] == ["INCORRECT-FALSE_INFO"] * 2
    assert all(s.original is None for s in answer.statements)
    assert any("stays incorrect" in r.reason for r in answer.rejected)


def test_stage4_quotes_resolve_and_invented_quote_is_rejected(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    drugs = chunk_with(hits, DRUGS)
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Antivirals such as acyclovir shorten the attack [{drugs.ref}]",
            "S1: CORRECT-EXPLICIT",
            f"Antivirals are used [{drugs.ref}].\n"
            f'<quote ref="{drugs.ref}">acyclovir valacyclovir and famciclovir</quote>\n'
            f'<quote ref="{drugs.ref}">Aspirin cures shingles overnight in children</quote>',
        ],
    )
    assert answer.status == "answered"
    assert [q.text for q in answer.quotes] == [DRUGS]
    assert any("Aspirin" in r.raw for r in answer.rejected)
    assert answer.statements[0].justification is None
    assert_verbatim(answer, index)


def test_no_answer_at_answer_stage_keeps_statements(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    sign = chunk_with(hits, SIGN)
    answer = run(
        index,
        hits,
        llm,
        [f"S1: Pain comes first [{sign.ref}]", "S1: CORRECT-EXPLICIT — ok", "<no-answer/>"],
    )
    assert answer.refusal_reason == MODEL_NO_ANSWER
    assert [s.text for s in answer.statements] == ["Pain comes first"]
    assert [c.stage for c in answer.calls] == ["generate", "verify", "answer"]


def test_calls_record_the_messages_sent_and_only_the_answer_streams(
    index: Index, hits: list[Hit], llm: ScriptedModel
) -> None:
    sign, drugs = chunk_with(hits, SIGN), chunk_with(hits, DRUGS)
    events: list[AnswerEvent] = []
    answer = run(
        index,
        hits,
        llm,
        [
            f"S1: Pain comes first [{sign.ref}]\nS2: {WRONG} [{drugs.ref}]",
            "S1: CORRECT-EXPLICIT — ok\nS2: INCORRECT-FALSE_INFO — 72 hours",
            f"S2: {RIGHT} [{drugs.ref}]",
            f"Pain comes first [{sign.ref}].",
        ],
        events=events.append,
    )
    assert len(answer.calls) == len(llm.requests) == 4
    for number, call in enumerate(answer.calls):
        sent = llm.sent_messages(number)
        assert sent == [(m.role, m.content) for m in call.messages]
        assert f'<source ref="{sign.ref}">' in call.messages[-1].content
        assert QUESTION in call.messages[-1].content
    assert [bool(body.get("stream")) for body in llm.requests] == [
        False,
        False,
        False,
        True,
    ]
    assert [c.output for c in answer.calls][-1] == answer.llm.raw_output
    started = [e.stage for e in events if isinstance(e, StageStarted)]
    assert started == ["generate", "verify", "refine", "answer"]
    assert answer.usage is not None and answer.usage.prompt_tokens == 40


# --- the line parsers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("S1: Pain first [a1.2]", StatementLine("S1", "Pain first", ("a1.2",), "")),
        ("  - S1. Pain first [a1.2]  ", StatementLine("S1", "Pain first", ("a1.2",), "")),
        ("* **S2:** Pain first [a1.2][b3]", StatementLine("S2", "Pain first", ("a1.2", "b3"), "")),
        ("**S3** - Pain first. [a1.2]", StatementLine("S3", "Pain first.", ("a1.2",), "")),
        ("1. S4 — Pain first [a1.2, b3]", StatementLine("S4", "Pain first", ("a1.2", "b3"), "")),
        ("[S5] Pain first [a1.2][a1.2]", StatementLine("S5", "Pain first", ("a1.2",), "")),
        ("s06) pain first [sic] [a1.2]", StatementLine("S6", "pain first [sic]", ("a1.2",), "")),
        ("Statement 7: Pain first", StatementLine("S7", "Pain first", (), "")),
    ],
)
def test_statement_line_variants(line: str, expected: StatementLine) -> None:
    [parsed] = parse_statement_lines(line)
    assert parsed == StatementLine(expected.id, expected.text, expected.refs, line)


@pytest.mark.parametrize(
    "text",
    ["", "Here are the statements:", "Summary [a1.2]", "Sources: a1.2", "S1:", "Since 2020 x"],
)
def test_lines_that_are_not_statements_are_ignored(text: str) -> None:
    assert parse_statement_lines(text) == []


def test_statements_from_reply_renumbers_and_reports() -> None:
    text = "S3: kept [a1]\nS3: no valid ref [zz1]\nS9: [a1]\nS4: also kept [a1][zz2]\nnoise"
    statements, rejected = statements_from_reply(text, {"a1"})
    assert [(s.id, s.text, s.refs, s.label) for s in statements] == [
        ("S1", "kept", ("a1",), None),
        ("S2", "also kept", ("a1",), None),
    ]
    assert [r.reason for r in rejected] == [
        "statement S3 cites 'zz1', which is not a retrieved source",
        "statement cites no retrieved source",
        "statement has no text",
        "statement S4 cites 'zz2', which is not a retrieved source",
    ]


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        ("S1: CORRECT-EXPLICIT — stated.", Verdict("CORRECT-EXPLICIT", "stated.")),
        ("S1: correct-implicit - follows", Verdict("CORRECT-IMPLICIT", "follows")),
        ("S1 - CORRECT_ADDITIONAL_INFO: extra", Verdict("CORRECT-ADDITIONAL_INFO", "extra")),
        ("- **S1**: **INCORRECT-FALSE_INFO** — no", Verdict("INCORRECT-FALSE_INFO", "no")),
        ("S1: Incorrect - Deviating Information", Verdict("INCORRECT-DEVIATING_INFO", None)),
        (
            "S1: [INCORRECT-ILLOGICAL] does not follow",
            Verdict("INCORRECT-ILLOGICAL", "does not follow"),
        ),
        ("S1: `CORRECT-EXPLICIT`", Verdict("CORRECT-EXPLICIT", None)),
        (
            "S1: Label: incorrect_deviating_info. off topic",
            Verdict("INCORRECT-DEVIATING_INFO", "off topic"),
        ),
    ],
)
def test_verdict_variants(line: str, verdict: Verdict) -> None:
    assert parse_verdicts(line) == {"S1": verdict}


@pytest.mark.parametrize(
    "text",
    ["S1: CORRECT", "S1: CORRECT-FALSE_INFO — mixed", "S1: looks right", "CORRECT-EXPLICIT"],
)
def test_lines_without_a_known_label_are_ignored(text: str) -> None:
    assert parse_verdicts(text) == {}


def test_first_verdict_for_an_id_wins() -> None:
    verdicts = parse_verdicts(
        "S1: CORRECT-EXPLICIT\nS2: INCORRECT-ILLOGICAL\nS1: INCORRECT-ILLOGICAL"
    )
    assert verdicts == {
        "S1": Verdict("CORRECT-EXPLICIT", None),
        "S2": Verdict("INCORRECT-ILLOGICAL", None),
    }


def test_apply_rewrites_only_touches_incorrect_statements() -> None:
    statements = [
        Statement("S1", "right", ("a1",), "CORRECT-EXPLICIT", None),
        Statement("S2", "wrong", ("a1",), "INCORRECT-FALSE_INFO", "why"),
        Statement("S3", "off", ("a1",), "INCORRECT-DEVIATING_INFO", None),
    ]
    text = "S1: changed [a1]\nS2: fixed [b2][zz1]\nS2: again [a1]\nS3: no ref [zz9]"
    refined, rejected = apply_rewrites(statements, text, {"a1", "b2"})
    assert refined == [
        statements[0],
        Statement("S2", "fixed", ("b2",), "INCORRECT-FALSE_INFO", "why", original="wrong"),
        statements[2],
    ]
    assert [r.reason for r in rejected] == [
        "S1 was not to be rewritten",
        "rewrite of S2 cites 'zz1', which is not a retrieved source",
        "S2 was already rewritten",
        "rewrite of S3 cites 'zz9', which is not a retrieved source",
        "rewrite of S3 cites no retrieved source; it stays incorrect",
    ]
