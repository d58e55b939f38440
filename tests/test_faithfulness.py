"""Faithfulness of every answer (`quoteproof.faithfulness`), end to end through a
scripted OpenAI-compatible model server on 127.0.0.1: claims all supported, none,
half; by the deterministic checks and by the model as a judge; and the figure
shown beside the prose in every format, never as a quote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.llm_servers import ScriptedOpenAIServer
from helpers.retrieval import ref_of
from quoteproof import Index
from quoteproof.codec import answer_from_dict, answer_to_dict
from quoteproof.faithfulness import (
    FAITHFULNESS_SYSTEM_PROMPT,
    NO_CITATION,
    STAGE,
    deterministic_verdicts,
    parse_judgements,
)
from quoteproof.llm.openai import OpenAIBackend
from quoteproof.model import Answer, LLMInfo, ProseSegment
from quoteproof.render.html import render_answer_html
from quoteproof.render.markdown import render_markdown
from quoteproof.render.terminal import render_text

QUESTION = "How is shingles treated and what are its first signs?"


@pytest.fixture
def index(index_dir: Path) -> Iterator[Index]:
    with Index.open(index_dir) as opened:
        yield opened


@pytest.fixture
def server(openai_server: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    """The scripted OpenAI-compatible server of `tests/conftest.py`."""
    return openai_server


def refs(index: Index) -> tuple[str, str]:
    return ref_of(index, QUESTION, "acyclovir"), ref_of(index, QUESTION, "tingling")


def ask(index: Index, server: ScriptedOpenAIServer, **options: Any) -> Answer:
    backend = OpenAIBackend(model="m", base_url=server.base_url, max_retries=0)
    choices: dict[str, Any] = {"mode": "cite", "strictness": "lenient"} | options
    return index.ask(QUESTION, backend=backend, **choices)


def two_sentences(treat: str, signs: str, *, invented: int = 0) -> str:
    """A cite reply of two sentences; the first `invented` of them name a figure
    their passage does not hold."""
    first = "Acyclovir costs $99 a day" if invented >= 1 else "Acyclovir can shorten the attack"
    second = "Pain comes 9 weeks later" if invented >= 2 else "The first sign is tingling pain"
    return f"{first} [{treat}]. {second} [{signs}]."


@pytest.mark.parametrize(("invented", "score"), [(0, 1.0), (1, 0.5), (2, 0.0)])
def test_deterministic_faithfulness_counts_the_claims_supported(
    index: Index, server: ScriptedOpenAIServer, invented: int, score: float
) -> None:
    treat, signs = refs(index)
    server.script = [f'{two_sentences(treat, signs, invented=invented)} <quote ref="{treat}"/>']
    answer = ask(index, server, mode="quote", faithfulness="deterministic")
    assert answer.status == "answered" and answer.quotes
    found = answer.faithfulness
    assert found is not None and found.method == "deterministic"
    assert found.score == score
    assert found.removed == invented == len(answer.removed_sentences)
    assert all(claim.supported and claim.checked_by == "deterministic" for claim in found.claims)
    assert len(found.claims) == 2 - invented
    assert len(server.requests) == 1  # no model call for the check


def verdicts(*labels: str) -> str:
    return "\n".join(f"C{n}: {label} — because." for n, label in enumerate(labels, start=1))


@pytest.mark.parametrize(
    ("labels", "score"),
    [
        (("SUPPORTED", "SUPPORTED"), 1.0),
        (("SUPPORTED", "UNSUPPORTED"), 0.5),
        (("UNSUPPORTED", "UNSUPPORTED"), 0.0),
    ],
)
def test_the_model_judges_each_claim_and_quotes_stay_as_they_are(
    index: Index, server: ScriptedOpenAIServer, labels: tuple[str, str], score: float
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs)]
    plain = ask(index, server, faithfulness="deterministic")
    server.script = [two_sentences(treat, signs), verdicts(*labels)]
    judged = ask(index, server, faithfulness="model")
    found = judged.faithfulness
    assert found is not None and found.method == "model" and found.score == score
    assert [claim.supported for claim in found.claims] == [label == "SUPPORTED" for label in labels]
    assert all(claim.checked_by == "model" for claim in found.claims)
    assert [c.reason for c in found.claims if not c.supported] == ["because."] * labels.count(
        "UNSUPPORTED"
    )
    # the judging call: recorded, its tokens counted, its prompt the cited passages
    assert [call.stage for call in judged.calls] == ["answer", STAGE]
    assert judged.usage is not None and plain.usage is not None
    assert judged.usage.prompt_tokens == 2 * plain.usage.prompt_tokens
    prompt = server.requests[-1]["messages"][1]["content"]
    chunk = index.chunk(treat)
    assert chunk is not None and chunk.text in prompt
    assert "C1: Acyclovir can shorten the attack." in prompt and f"[{treat}]" in prompt
    # nothing shown changes
    assert (judged.segments, judged.quotes, judged.cited) == (
        plain.segments,
        plain.quotes,
        plain.cited,
    )
    assert judged.llm.raw_output == plain.llm.raw_output


def test_by_default_the_configured_model_judges_the_claims(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs), verdicts("SUPPORTED", "UNSUPPORTED")]
    answer = ask(index, server)  # no faithfulness option: the default
    found = answer.faithfulness
    assert found is not None and (found.method, found.score) == ("model", 0.5)
    assert [claim.checked_by for claim in found.claims] == ["model", "model"]
    assert [call.stage for call in answer.calls] == ["answer", STAGE]
    assert len(server.requests) == 2
    assert server.requests[-1]["messages"][0]["content"] == FAITHFULNESS_SYSTEM_PROMPT


def test_by_default_an_answer_without_cited_prose_makes_no_judging_call(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, _ = refs(index)
    server.script = [f'<quote ref="{treat}"/>', verdicts("SUPPORTED")]
    answer = ask(index, server, mode="quote")
    assert answer.status == "answered" and answer.quotes
    assert answer.faithfulness is not None and answer.faithfulness.score is None
    assert answer.faithfulness.method == "deterministic"  # the model judged nothing
    assert [call.stage for call in answer.calls] == ["answer"]
    assert len(server.requests) == 1


def test_by_default_an_answer_without_a_model_is_checked_deterministically(index: Index) -> None:
    answer = index.ask(QUESTION)
    assert answer.status == "answered" and answer.faithfulness is not None
    assert answer.faithfulness.method == "deterministic"
    assert STAGE not in [call.stage for call in answer.calls]


def test_a_claim_the_model_leaves_without_verdict_keeps_its_deterministic_one(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs), "C2: UNSUPPORTED — no."]
    answer = ask(index, server, faithfulness="model")
    assert answer.faithfulness is not None
    first, second = answer.faithfulness.claims
    assert (first.supported, first.checked_by) == (True, "deterministic")
    assert (second.supported, second.checked_by, second.reason) == (False, "model", "no.")
    assert answer.calls[-1].problems == ("no verdict for 1 claim(s)",)


def test_a_failed_judging_call_keeps_the_deterministic_verdicts_with_a_notice(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs), (500, {"error": {"message": "down"}})]
    answer = ask(index, server, faithfulness="model")
    assert answer.status == "answered" and answer.faithfulness is not None
    assert answer.faithfulness.score == 1.0
    assert {c.checked_by for c in answer.faithfulness.claims} == {"deterministic"}
    assert answer.faithfulness.method == "deterministic"
    assert any("faithfulness check used the deterministic checks" in n for n in answer.notices)


def test_grammar_constrained_backends_get_a_verdict_grammar(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs), verdicts("SUPPORTED", "SUPPORTED")]
    backend = OpenAIBackend(model="m", base_url=server.base_url, max_retries=0, grammar=True)
    index.ask(QUESTION, backend=backend, mode="cite", faithfulness="model")
    grammar = server.requests[-1]["grammar"]
    assert '"C1: "' in grammar and '"C2: "' in grammar and '"UNSUPPORTED"' in grammar


def test_an_answer_without_a_model_has_no_claims_and_makes_no_call(index: Index) -> None:
    answer = index.ask(QUESTION, faithfulness="model")
    assert answer.faithfulness is not None
    assert (answer.faithfulness.method, answer.faithfulness.score) == ("deterministic", None)
    assert [call.stage for call in answer.calls] == ["answer"]  # the extractive choice


def test_a_refusal_before_the_model_has_no_score(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    backend = OpenAIBackend(model="m", base_url=server.base_url, max_retries=0)
    answer = index.ask("What is the capital of Zorblat?", backend=backend)
    assert answer.status == "refused" and answer.faithfulness is not None
    assert answer.faithfulness.score is None and server.requests == []


def test_uncited_prose_is_a_claim_not_supported() -> None:
    llm = LLMInfo("openai", "m", "")
    answer = Answer("q", "answered", (ProseSegment("It is so."),), (), (), llm)
    (claim,) = deterministic_verdicts(answer)
    assert (claim.supported, claim.reason, claim.refs) == (False, NO_CITATION, ())


def test_judgements_are_read_tolerantly_and_never_guessed() -> None:
    text = (
        "C1: SUPPORTED — said so.\n- **C2**: not supported: adds a date\n"
        "[C3] Unsupported\nC4 maybe\nC1: UNSUPPORTED — second verdict ignored"
    )
    assert parse_judgements(text) == {
        1: (True, "said so."),
        2: (False, "adds a date"),
        3: (False, None),
    }


def test_the_figure_is_shown_beside_the_prose_in_every_format_never_as_a_quote(
    index: Index, server: ScriptedOpenAIServer
) -> None:
    treat, signs = refs(index)
    server.script = [two_sentences(treat, signs), verdicts("SUPPORTED", "UNSUPPORTED")]
    answer = ask(index, server, faithfulness="model")
    figure = "Faithfulness: 1 of 2 claims supported (50%)"
    text = render_text(answer, width=200)
    assert figure in text and "judged by the model" in text
    assert "✗ The first sign is tingling pain. — because." in text
    markdown = render_markdown(answer)
    line = next(line for line in markdown.splitlines() if "claims supported" in line)
    assert line.startswith("**Faithfulness:** 1 of 2 claims supported") and ">" not in line[:2]
    html = render_answer_html(answer)
    section = html[html.index('<section class="faithfulness"') :]
    section = section[: section.index("</section>")]
    assert "1 of 2 claims supported (50%)" in section
    assert "<figure" not in section and "<blockquote" not in section
    # recorded and read back
    loaded = answer_from_dict(answer_to_dict(answer)).without_quotes
    assert loaded.faithfulness == answer.faithfulness
