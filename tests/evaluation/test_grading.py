"""Grading answers with a model (`quoteproof eval --grader`): the grader is a real HTTP
server on 127.0.0.1 speaking the OpenAI wire protocol with scripted replies; grades
are parsed, and a grade out of range or malformed is reported, never guessed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO_ROOT
from evaluation.test_cli_eval import invoke, write_set
from helpers.llm_servers import ScriptedOpenAIServer, content_text
from quoteproof.evaluation.compare import compare_reports
from quoteproof.evaluation.grading import (
    GRADE_MAX_TOKENS,
    GRADER_SYSTEM,
    SCALE,
    SPACE_CLASS,
    grade_grammar,
    grammar_max_tokens,
    parse_grade,
)

GOOD = "JUSTIFICATION: It names the same dose as the reference.\nGRADE: 4\nVERDICT: CORRECT"

ITEMS: list[dict[str, Any]] = [
    {
        "id": "dose",
        "question": "What is the recommended dose of remdesivir?",
        "answerable": True,
        "gold_answer": "200 mg on day 1, then 100 mg once daily",
    },
    {
        "id": "shingles-sign",
        "question": "What is the first sign of shingles?",
        "answerable": True,
        "gold_answer": "Burning or tingling pain.",
    },
    {
        "id": "pressure",
        "question": "What is normal blood pressure?",
        "answerable": True,
        "gold_answer": "Below 120/80 mmHg.",
    },
    {"id": "mars", "question": "How far away is Mars from Jupiter?", "answerable": False},
]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("JUSTIFICATION: fine\nGRADE: 7\nVERDICT: CORRECT", "grade 7 is outside 1 to 5"),
        ("JUSTIFICATION: fine\nGRADE: 0\nVERDICT: INCORRECT", "grade 0 is outside 1 to 5"),
        ("JUSTIFICATION: fine\nGRADE: 4.5\nVERDICT: CORRECT", "'4.5' is not a whole number"),
        ("JUSTIFICATION: fine\nGRADE: four\nVERDICT: CORRECT", "'four' is not a whole number"),
        ("JUSTIFICATION: fine\nGRADE: 3", "no VERDICT line"),
        ("GRADE: 3\nVERDICT: CORRECT", "no JUSTIFICATION line"),
        # a justification of spaces is an empty line: the next line is not taken for it
        ("JUSTIFICATION:  \nGRADE: 3\nVERDICT: CORRECT", "the JUSTIFICATION line is empty"),
        ("JUSTIFICATION: fine\nGRADE:\n4\nVERDICT: CORRECT", "the GRADE line is empty"),
        ("JUSTIFICATION: fine\nGRADE: 3\nVERDICT: PARTLY", "neither CORRECT nor INCORRECT"),
        ("The answer is good, 5/5.", "no GRADE line"),
    ],
)
def test_a_malformed_grade_is_reported_not_guessed(reply: str, problem: str) -> None:
    grade = parse_grade(reply, "g")
    assert grade.status == "malformed" and problem in (grade.problem or "")
    assert grade.grade is None and grade.verdict is None and grade.correct is None
    assert grade.raw == reply


def test_a_grade_is_read_in_any_order_and_case() -> None:
    grade = parse_grade("**Verdict**: incorrect.\ngrade: 2\nJustification: wrong dose", "g")
    assert (grade.status, grade.grade, grade.verdict) == ("graded", 2, "INCORRECT")
    assert grade.justification == "wrong dose" and grade.correct is False
    assert parse_grade(GOOD).grade == 4


def test_the_prompt_states_the_scale_and_the_reply_format() -> None:
    for number, text in SCALE:
        assert f"{number}: {text}" in GRADER_SYSTEM
    assert "GRADE: a whole number from 1 to 5" in GRADER_SYSTEM
    assert re.search(r'"GRADE: " \[1-5\]', grade_grammar())


def test_the_grammars_first_character_is_anything_but_white_space() -> None:
    ranges = re.findall(r"\\[xu]([0-9a-f]+)(?:-\\[xu]([0-9a-f]+))?", SPACE_CLASS)
    listed = {
        chr(code) for low, high in ranges for code in range(int(low, 16), int(high or low, 16) + 1)
    }
    assert listed == {chr(code) for code in range(0x110000) if chr(code).isspace()}
    assert f"why ::= [^{SPACE_CLASS}] [^\\n]{{0,399}}" in grade_grammar()
    # the longest reply the grammar allows, 4 bytes a character, fits the budget
    longest = "JUSTIFICATION: " + "\U0001f600" * 400 + "\nGRADE: 5\nVERDICT: INCORRECT"
    assert len(longest.encode("utf-8")) == grammar_max_tokens() > GRADE_MAX_TOKENS


def grader_args(server: ScriptedOpenAIServer, *more: str) -> tuple[str, ...]:
    return ("--grader-llm", "openai", "--grader-model", "judge",
            "--grader-base-url", server.base_url, *more)  # fmt: skip


def test_eval_grades_answers_and_reports_malformed_grades(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    evalset = write_set(tmp_path / "graded.jsonl", ITEMS)
    openai_server.script = [
        GOOD,
        "JUSTIFICATION: close enough\nGRADE: 9\nVERDICT: CORRECT",
        "I would say it is mostly right.",
    ]
    out = tmp_path / "run.json"
    result = invoke(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(out),
        *grader_args(openai_server),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # one grading request per question with a gold answer, none for "mars"
    assert len(openai_server.requests) == 3
    first = openai_server.requests[0]
    assert first["model"] == "judge" and "grammar" not in first
    system, user = (content_text(m["content"]) for m in first["messages"])
    assert system == GRADER_SYSTEM
    assert "Reference answer: 200 mg on day 1, then 100 mg once daily" in user
    assert "What is the recommended dose of remdesivir?" in user

    report = json.loads(out.read_text("utf-8"))
    assert report["config"]["grader"] == {"backend": "openai", "model": "judge"}
    grades = {item["id"]: item["grade"] for item in report["items"]}
    assert grades["mars"] is None
    assert grades["dose"]["status"] == "graded" and grades["dose"]["grade"] == 4
    assert grades["dose"]["verdict"] == "CORRECT"
    assert grades["shingles-sign"]["status"] == "malformed"
    assert grades["shingles-sign"]["grade"] is None
    assert grades["shingles-sign"]["problem"] == "grade 9 is outside 1 to 5"
    assert grades["pressure"]["problem"] == "no GRADE line"
    assert report["metrics"]["grading"] == {
        "gradable": 3,
        "graded": 1,
        "malformed": 2,
        "errors": 0,
        "correct": 1,
        "accuracy": 1.0,
        "mean_grade": 4.0,
        "distribution": {"1": 0, "2": 0, "3": 0, "4": 1, "5": 0},
    }
    assert "accuracy (grader)" in result.output and "4.00/5" in result.output
    assert "malformed grade: shingles-sign: grade 9 is outside 1 to 5" in result.output
    assert "worst: dose grade 4 CORRECT: It names the same dose" in result.output
    html = out.with_suffix(".html").read_text("utf-8")
    assert '<section id="grading">' in html and "grade 9 is outside 1 to 5" in html
    assert "It names the same dose as the reference." in html
    # the grader's words are escaped text beside the answer, never a verbatim box
    assert '<span class="grader-reply">I would say it is mostly right.</span>' in html
    assert "<blockquote" not in html.split('id="answers"')[0]


def test_a_grammar_is_sent_when_asked_and_a_dead_grader_is_reported(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer, dead_server_url: str
) -> None:
    evalset = write_set(tmp_path / "one.jsonl", ITEMS[:1])
    openai_server.script = [GOOD]
    out = tmp_path / "run.json"
    result = invoke(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(out),
        *grader_args(openai_server, "--grader-grammar"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert openai_server.requests[0]["grammar"] == grade_grammar()

    dead = ("--grader-llm", "openai", "--grader-model", "judge",
            "--grader-base-url", dead_server_url, "--grader-timeout", "2")  # fmt: skip
    result = invoke("eval", str(evalset), "--index", str(index_dir), "-o", str(out), *dead)
    grade = json.loads(out.read_text("utf-8"))["items"][0]["grade"]
    assert grade["status"] == "error" and grade["grade"] is None and grade["problem"]
    assert "error grade: dose:" in result.output


def test_a_blank_justification_is_malformed_and_the_grammar_reply_is_never_cut(
    index_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    # what the earlier grammar let a grader write: a justification of one space
    evalset = write_set(tmp_path / "two.jsonl", ITEMS[:2])
    openai_server.script = ["JUSTIFICATION:  \nGRADE: 4\nVERDICT: CORRECT", GOOD]
    out = tmp_path / "run.json"
    result = invoke(
        "eval", str(evalset), "--index", str(index_dir), "-o", str(out),
        *grader_args(openai_server, "--grader-grammar"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = openai_server.requests
    assert [r["grammar"] for r in sent] == [grade_grammar()] * 2
    assert [r["max_tokens"] for r in sent] == [grammar_max_tokens()] * 2
    grades = [item["grade"] for item in json.loads(out.read_text("utf-8"))["items"]]
    assert grades[0]["status"] == "malformed" and grades[0]["grade"] is None
    assert grades[0]["problem"] == "the JUSTIFICATION line is empty"
    assert grades[0]["raw"] == "JUSTIFICATION:  \nGRADE: 4\nVERDICT: CORRECT"
    assert (grades[1]["status"], grades[1]["grade"]) == ("graded", 4)
    assert "malformed grade: dose: the JUSTIFICATION line is empty" in result.output
    # without a grammar the budget is the plain one
    openai_server.requests.clear()
    openai_server.script = [GOOD]
    invoke("eval", str(evalset), "--index", str(index_dir), "-o", str(out),
           *grader_args(openai_server))  # fmt: skip
    assert {r["max_tokens"] for r in openai_server.requests} == {GRADE_MAX_TOKENS}


def test_the_extractive_backend_cannot_grade(index_dir: Path, tmp_path: Path) -> None:
    evalset = write_set(tmp_path / "one.jsonl", ITEMS[:1])
    result = invoke("eval", str(evalset), "--index", str(index_dir), "--grader")
    assert result.exit_code == 2
    assert "the grader needs a model" in result.output


def test_the_documented_prompt_scale_and_grammar_are_the_ones_used() -> None:
    text = (REPO_ROOT / "docs" / "grading.md").read_text("utf-8")
    assert f"```text\n{GRADER_SYSTEM}\n```" in text
    assert f"```text\n{grade_grammar().rstrip()}\n```" in text
    for number, meaning in SCALE:
        assert f"| {number} | {meaning} |" in text


def test_compare_shows_the_change_in_accuracy_grade_and_verdicts() -> None:
    def run(accuracy: float, grade: float, verdict: str) -> dict[str, Any]:
        grading = {"accuracy": accuracy, "mean_grade": grade, "malformed": 0}
        item = {"id": "q1", "status": "answered", "grade": {"verdict": verdict}}
        return {"metrics": {"grading": grading}, "items": [item]}

    drift = compare_reports(run(0.5, 3.0, "CORRECT"), run(0.75, 3.5, "INCORRECT"))
    by = {change.key: change for change in drift.metrics}
    assert (by["accuracy"].delta_text, by["accuracy"].verdict) == ("+25.0 pp", "better")
    assert (by["mean_grade"].new_text, by["mean_grade"].delta_text) == ("3.50/5", "+0.50")
    assert [(i.id, i.change) for i in drift.items] == [("q1", "graded CORRECT → INCORRECT")]
    plain = compare_reports({"metrics": {}}, {"metrics": {}})
    assert "accuracy" not in {change.key for change in plain.metrics}
