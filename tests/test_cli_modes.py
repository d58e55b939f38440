"""`quoteproof ask --mode cite|rationale|agent` as a user runs it: real processes
against scripted model servers on 127.0.0.1, real exit codes, real output; and the
transient draft `ask --stream` draws (`render.live.Draft`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from conftest import write_corpus
from helpers.answers import make_data_result, make_quote
from helpers.llm_servers import (
    RawReply,
    ScriptedAnthropicServer,
    ScriptedOpenAIServer,
    ToolReply,
)
from quoteproof import Index
from quoteproof.model import Rejected
from quoteproof.render.live import Draft
from quoteproof.streaming import (
    DataComputed,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
)

QUESTION = (
    "How is shingles treated, what are its symptoms, what is the remdesivir dose "
    "and what is normal blood pressure?"
)
TREATMENT = "acyclovir, valacyclovir and famciclovir"
SIGN = "The first sign of shingles is often burning or tingling pain"
DOSE = "The recommended dose is 200 mg on day 1"

# Variables that would change what the command does or how it prints: keys and
# servers of either provider, quoteproof's own defaults, forced terminals and colour.
_FOREIGN = ("ANTHROPIC_", "OPENAI_", "QUOTEPROOF_")
_TERMINAL = {"FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES"}


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without provider, quoteproof or terminal settings; 100 columns."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(_FOREIGN) and name not in _TERMINAL
    }
    return {**env, "COLUMNS": "100", **extra}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quoteproof", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env() if env is None else env,
    )


def ask_openai(
    index: Path, server: ScriptedOpenAIServer, question: str, *options: str
) -> subprocess.CompletedProcess[str]:
    return run(
        "ask", question, "--index", str(index), "--llm", "openai",
        "--base-url", server.base_url, "--model", "scripted", *options,
    )  # fmt: skip


def ref_with(index: Path, words: str, query: str = QUESTION) -> str:
    """The ref of the chunk retrieved for `query` that contains `words`."""
    with Index.open(index) as opened:
        for hit in opened.search(query, top_k=5):
            if words in hit.chunk.text:
                return hit.chunk.ref
    raise AssertionError(f"no retrieved chunk contains {words!r}")


def chunk_text(index: Path, ref: str) -> str:
    with Index.open(index) as opened:
        chunk = opened.chunk(ref)
    assert chunk is not None
    return chunk.text


def errors(stderr: str) -> list[str]:
    """The lines of `stderr` other than `note:` lines."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("note: ")]


def panels(stdout: str) -> list[str]:
    """The bodies of the verbatim panels in plain text output, each joined to one line."""
    found: list[str] = []
    body: list[str] | None = None
    for line in stdout.splitlines():
        if line.startswith("╭"):
            body = []
        elif line.startswith("╰"):
            assert body is not None
            found.append(" ".join(" ".join(body).split()))
            body = None
        elif body is not None:
            assert line.startswith("│") and line.rstrip().endswith("│"), line
            body.append(line.rstrip()[1:-1].strip())
    assert body is None, "a panel was not closed"
    return found


# --- cite ----------------------------------------------------------------------------


def test_cite_json_retries_an_uncited_reply_and_verify_marks_cited_passages(
    index_dir: Path, openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    treat, dose = ref_with(index_dir, TREATMENT), ref_with(index_dir, DOSE)
    openai_server.script = [
        f"Acyclovir treats shingles [{treat}]. Everyone recovers within a day.",
        f'The first dose is 200 mg [{dose}]. <quote ref="{dose}">{DOSE}</quote>',
        "C1: SUPPORTED — the passage gives the dose.",
    ]
    result = ask_openai(index_dir, openai_server, QUESTION, "--mode", "cite", "--format", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["mode"] == "cite" and answer["status"] == "answered"
    # by default the model judges the claims too, in one more call
    assert [call["stage"] for call in answer["calls"]] == ["answer", "retry", "faithfulness"]
    assert "cites no source" in answer["calls"][0]["problems"][0]
    assert answer["usage"] == {"prompt_tokens": 30, "completion_tokens": 15}
    assert len(openai_server.requests) == 3
    faithfulness = answer["faithfulness"]
    assert (faithfulness["method"], faithfulness["score"]) == ("model", 1.0)
    assert [claim["checked_by"] for claim in faithfulness["claims"]] == ["model"]
    assert [c["ref"] for c in answer["cited"]] == [dose]
    for cited in answer["cited"]:
        assert cited["match"] == "ref" and cited["text"] == chunk_text(index_dir, cited["ref"])
    assert "Everyone recovers" not in result.stdout.split('"calls"')[0]

    saved = tmp_path / "answer.json"
    saved.write_text(result.stdout, encoding="utf-8")
    verified = run("verify", str(saved), "--index", str(index_dir))
    assert verified.returncode == 0, verified.stderr
    lines = verified.stdout.splitlines()
    assert f"ok      q1 [{dose}]" in lines
    assert f"ok      c1 [{dose}] (cited passage)" in lines
    assert "ok      answer: sealed, unchanged since it was made" in lines
    assert lines[-1] == "2 of 2 quotes verified; the answer is sealed and unchanged"


def test_cite_failing_twice_prints_the_validation_refusal(
    index_dir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script = ["Shingles is caused by stress.", "It is always mild."]
    result = ask_openai(index_dir, openai_server, QUESTION, "--mode", "cite")
    assert result.returncode == 0, result.stderr
    assert len(openai_server.requests) == 2
    assert "no answer to this question" in result.stdout
    assert "(validation_failed)" in result.stdout
    assert "Mode: cite" in result.stdout
    # the rejected replies are listed as removed, never as an answer or a quote
    rejected = [line for line in result.stdout.splitlines() if "stress" in line or "mild" in line]
    assert len(rejected) == 2 and all(line.startswith("  ✗ ") for line in rejected)
    assert not any(line.startswith("╭") for line in result.stdout.splitlines())


def test_show_cited_adds_a_verbatim_panel_per_cited_passage(
    index_dir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    treat, sign = ref_with(index_dir, TREATMENT), ref_with(index_dir, SIGN)
    openai_server.script = [
        f'Antivirals treat shingles [{treat}]. <quote ref="{sign}">burning or tingling pain</quote>'
    ]
    plain = ask_openai(index_dir, openai_server, QUESTION, "--mode", "cite")
    shown = ask_openai(index_dir, openai_server, QUESTION, "--mode", "cite", "--show-cited")
    assert plain.returncode == 0 and shown.returncode == 0, shown.stderr
    corners = [sum(line.startswith("╭") for line in r.stdout.splitlines()) for r in (plain, shown)]
    assert corners == [1, 2]
    assert panels(plain.stdout) == ["burning or tingling pain"]
    # the cited passage follows its prose, before the quote
    assert panels(shown.stdout) == [chunk_text(index_dir, treat), "burning or tingling pain"]


def test_forced_stream_on_a_pipe_prints_the_final_answer_once(
    index_dir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    sign, dose = ref_with(index_dir, SIGN), ref_with(index_dir, DOSE)
    openai_server.script = [
        f'Everyone recovers within a day. <quote ref="{sign}">burning or tingling pain</quote>',
        f'The first dose is 200 mg [{dose}].\n<quote ref="{dose}">{DOSE}</quote>',
    ]
    result = ask_openai(
        index_dir, openai_server, QUESTION, "--mode", "cite", "--stream",
        "--faithfulness", "deterministic",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [body.get("stream") for body in openai_server.requests] == [True, True]
    out = result.stdout
    assert "draft" not in out and "retrying" not in out
    # the first, rejected attempt was drafted only: none of it is printed
    assert "Everyone recovers" not in out and "tingling" not in out
    assert out.count("The first dose is 200 mg.") == 1
    assert panels(out) == [DOSE]
    assert out.count("Generated — not a quote") == 1


# --- model servers that misbehave ----------------------------------------------------

SSE = "text/event-stream"
NOT_JSON_EVENTS = {
    "openai": RawReply(
        [
            b'data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "The"}}]}\n\n',
            b"data: {not json\n\n",
        ],
        SSE,
    ),
    "anthropic": RawReply([b"event: message_start\ndata: {not json\n\n"], SSE),
}


def ask_scripted(
    index: Path,
    provider: str,
    server: ScriptedOpenAIServer | ScriptedAnthropicServer,
    *options: str,
) -> subprocess.CompletedProcess[str]:
    return run(
        "ask", QUESTION, "--index", str(index), "--llm", provider,
        "--base-url", server.base_url, "--model", "scripted", *options,
        env=clean_env(ANTHROPIC_API_KEY="k"),
    )  # fmt: skip


def test_an_event_that_is_not_json_ends_a_streamed_ask_with_one_line(
    index_dir: Path, openai_server: ScriptedOpenAIServer, anthropic_server: ScriptedAnthropicServer
) -> None:
    for provider, server in (("openai", openai_server), ("anthropic", anthropic_server)):
        server.script = [NOT_JSON_EVENTS[provider]]
        result = ask_scripted(index_dir, provider, server, "--stream")
        assert result.returncode == 2, (provider, result.stderr)
        assert errors(result.stderr) == [
            f"error: the model server at {server.base_url} sent a reply that is not valid "
            "JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        ]
        assert server.requests[-1]["stream"] is True


def test_the_timeout_bounds_a_whole_model_request(
    index_dir: Path, openai_server: ScriptedOpenAIServer
) -> None:
    """A reply sent a byte every 0.2 s (40 s in all) never lets a 1 s time-out of one
    read expire; `--timeout 1` still ends the ask, with the time-out error."""
    openai_server.script = [RawReply([b" "] * 200 + [b"{}"], pause=0.2)]
    result = ask_scripted(index_dir, "openai", openai_server, "--timeout", "1")
    assert result.returncode == 2, result.stderr
    assert errors(result.stderr) == [
        f"error: the model server at {openai_server.base_url} sent no complete reply within "
        "1 s (a slow model may need a longer --timeout SECONDS)"
    ]
    assert len(openai_server.requests) == 1


# --- rationale -----------------------------------------------------------------------

RATIONALE_QUESTION = "What is the first sign of shingles, and how is shingles treated?"
WRONG = "Antiviral medicines only help when started within 7 days of the rash."
RIGHT = "Antiviral medicines help when started within 72 hours of the rash."


def test_rationale_through_anthropic_with_the_key_from_the_environment(
    index_dir: Path, anthropic_server: ScriptedAnthropicServer
) -> None:
    sign = ref_with(index_dir, SIGN, RATIONALE_QUESTION)
    drugs = ref_with(index_dir, TREATMENT, RATIONALE_QUESTION)
    anthropic_server.script = [
        f"S1: Burning or tingling pain comes first [{sign}]\nS2: {WRONG} [{drugs}]",
        "S1: CORRECT-EXPLICIT — stated.\n"
        "S2: INCORRECT-FALSE_INFO — the source says 72 hours, not 7 days.",
        f"S2: {RIGHT} [{drugs}]",
        f"Start antivirals within 72 hours of the rash [{drugs}].\n"
        f'<quote ref="{drugs}">{TREATMENT}</quote>',
    ]
    result = run(
        "ask", RATIONALE_QUESTION, "--index", str(index_dir), "--mode", "rationale",
        "--llm", "anthropic", "--base-url", anthropic_server.base_url, "--model", "m",
        "--faithfulness", "deterministic",
        env=clean_env(ANTHROPIC_API_KEY="sk-from-the-environment"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(anthropic_server.requests) == 4
    assert {h.get("authorization") for h in anthropic_server.headers} == {
        "Bearer sk-from-the-environment"
    }
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert "┆ Rationale statements (generated, checked by the model):" in lines
    heads = [line for line in lines if line.startswith(("┆ S1 · ", "┆ S2 · "))]
    assert len(heads) == 2
    assert heads[0].startswith("┆ S1 · CORRECT-EXPLICIT")
    assert heads[1].startswith("┆ S2 · INCORRECT-FALSE_INFO")
    assert f"┆ {RIGHT} [{drugs}]" in lines
    assert f"┆ Refined from: {WRONG}" in lines
    assert f"┆ Start antivirals within 72 hours of the rash. [{drugs}]" in lines
    assert panels(result.stdout) == [TREATMENT]
    assert "Mode: rationale" in lines


def test_anthropic_without_a_key_is_a_one_line_usage_error(index_dir: Path) -> None:
    env = clean_env()
    assert "ANTHROPIC_API_KEY" not in env
    result = run(
        "ask", "shingles", "--index", str(index_dir), "--llm", "anthropic", "--model", "m",
        "--cloud", env=env,
    )  # fmt: skip
    assert result.returncode == 2
    (line,) = errors(result.stderr)
    assert line.startswith("error: ") and "ANTHROPIC_API_KEY" in line
    assert result.stdout == ""


def test_rationale_without_a_model_is_a_usage_error(index_dir: Path) -> None:
    result = run(
        "ask", "shingles", "--index", str(index_dir), "--mode", "rationale", "--llm", "extractive"
    )
    assert result.returncode == 2
    (line,) = errors(result.stderr)
    assert "--mode rationale needs a language model" in line


# --- agent ---------------------------------------------------------------------------

AGENT_QUESTION = "How many remdesivir adverse events were reported in 2024?"
EVENTS_CSV = (
    "date,drug,event,serious\n"
    "2024-01-05,remdesivir,rash,no\n"
    "2024-02-11,remdesivir,elevated liver enzymes,yes\n"
    "2023-12-20,remdesivir,nausea,no\n"
    "2024-03-02,acyclovir,headache,no\n"
)
IN_2024 = [
    {"column": "drug", "op": "=", "value": "remdesivir"},
    {"column": "date", "op": ">=", "value": "2024-01-01"},
]


def test_agent_composes_table_results_and_a_note(
    tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    corpus = write_corpus(tmp_path)
    (corpus / "events.csv").write_text(EVENTS_CSV, encoding="utf-8")
    index = tmp_path / "index"
    ingested = run("ingest", "--no-embed", str(corpus), "--index", str(index))
    assert ingested.returncode == 0, ingested.stderr
    dose = ref_with(index, "200 mg on day 1", "remdesivir dose 200 mg on day 1")
    note = f"Two remdesivir adverse events were reported in 2024 [{dose}]."
    script = [
        ToolReply([("table_query", {"table": "events", "filters": IN_2024})]),
        ToolReply([("aggregate", {"pointer": "r1", "op": "count"})]),
        ToolReply([("note", {"text": note})]),
        ToolReply([("finish", {})]),
    ]
    openai_server.script = list(script)
    text = ask_openai(
        index, openai_server, AGENT_QUESTION, "--mode", "agent", "--max-steps", "6",
        "--faithfulness", "deterministic",
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert len(openai_server.requests) == 4
    lines = [line.rstrip() for line in text.stdout.splitlines()]
    blocks = [line for line in lines if line.startswith("▦ Computed from table events.csv")]
    assert len(blocks) == 2
    assert lines.count("▦ Query: where drug = remdesivir and date >= 2024-01-01") == 2
    assert "▦ Value: count(*) = 2" in lines and "▦ From query: r1" in lines
    assert f"┆ Two remdesivir adverse events were reported in 2024. [{dose}]" in lines
    assert "Mode: agent" in lines
    assert not any(line.startswith("╭") for line in lines)

    openai_server.script = list(script)
    markdown = ask_openai(
        index, openai_server, AGENT_QUESTION, "--mode", "agent", "--format", "markdown"
    )
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.count("**Computed from table** events.csv") == 2
    assert "Value: count(\\*) \\= 2" in markdown.stdout
    assert "Two remdesivir adverse events were reported in 2024." in markdown.stdout


# --- the streaming draft -------------------------------------------------------------


def draw(draft: Draft) -> list[str]:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=80,
        color_system=None,
        no_color=True,
        force_terminal=False,
        force_interactive=False,
        highlight=False,
        markup=False,
        emoji=False,
        _environ={},
    )
    console.print(draft)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def test_draft_shows_prose_as_generated_and_quotes_as_panels_and_a_retry_clears_it() -> None:
    source = "Intro. The first sign is burning pain. End."
    start = source.index("The first")
    quote = make_quote(source, start, start + len("The first sign is burning pain."))
    draft = Draft()
    draft(StageStarted("answer"))
    draft(ProseDelta("It starts with pain [doc-1]. "))
    draft(ProseDelta("Look:\n╭─ fake ─╮\n│ x │\n╰─ verbatim from source ─╯"))
    draft(QuoteResolved(quote))
    draft(ProseDelta("More prose."))
    draft(QuoteDropped(Rejected("<quote>made up</quote>", "not found in any source")))
    draft(DataComputed(make_data_result()))
    lines = draw(draft)
    assert lines[0] == "draft: writing the answer…"
    assert lines[1:4] == [
        "┆ Generated — not a quote",
        "┆ It starts with pain [doc-1]. Look:",
        "┆ ╭─ fake ─╮",
    ]
    assert "┆ │ x │" in lines and "┆ ╰─ verbatim from source ─╯" in lines
    corners = [line for line in lines if line.startswith("╭")]
    assert len(corners) == 1 and quote.label in corners[0]
    assert panels("\n".join(lines)) == ["The first sign is burning pain."]
    assert all(line.startswith(("┆ ", "╭", "│", "╰", "✗ ", "▦ ", "draft: ")) for line in lines)
    assert lines.count("┆ Generated — not a quote") == 2 and "┆ More prose." in lines
    assert "✗ quote removed: not found in any source" in lines
    assert any(line.startswith("▦ Computed from table people.csv") for line in lines)

    draft(StageStarted("retry"))
    assert draw(draft) == [
        "draft: the reply failed the citation check; retrying with a stricter prompt…"
    ]
    draft(ProseDelta("Second try [doc-1]."))
    assert draw(draft)[1:] == ["┆ Generated — not a quote", "┆ Second try [doc-1]."]


def test_a_streamed_answer_from_triplets_alone_prints_its_facts_once(
    index_dir: Path, openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    graph = tmp_path / "graph.csv"
    graph.write_text(
        f"subject,relation,object,document,quote\nremdesivir,has_dose,200 mg on day 1,dosing.txt,"
        f"{DOSE}\n",
        "utf-8",
    )
    with Index.open(index_dir) as index:
        index.import_graph(graph)
    openai_server.script = ["No fact here.", "Remdesivir is given at 200 mg on day 1 [TID-1]."]
    result = ask_openai(
        index_dir, openai_server, "What is the remdesivir dose?",
        "--mode", "cite", "--context", "triplets", "--stream", "--faithfulness", "deterministic",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [body.get("stream") for body in openai_server.requests] == [None, True]
    out = result.stdout
    assert "draft" not in out and out.count("Remdesivir is given at 200 mg on day 1.") == 1
    assert out.count("TID-1 · Imported fact — not a quote") == 1
    assert out.count("remdesivir | has_dose | 200 mg on day 1") == 1
    assert panels(out) == [DOSE]  # the fact's supporting words, found in the document
