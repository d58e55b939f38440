"""Retrieval options, batch search and calibration through the `quoteproof` command."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.retrieval import LABELLED, PARAPHRASE
from test_cli import run


def test_batch_search_works_with_every_retriever(embedded_index_dir: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    lines = [{"id": "p", "text": PARAPHRASE}, {"id": 2, "text": "remdesivir dose"}]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = {}
    for retriever in ("bm25", "dense", "hybrid"):
        result = run(
            "search", "--queries", str(queries), "--retriever", retriever, "--top-k", "2",
            "--index", str(embedded_index_dir),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        found[retriever] = [json.loads(line) for line in result.stdout.splitlines()]
        assert [item["id"] for item in found[retriever]] == ["p", 2]
        assert found[retriever][1]["hits"][0]["source_path"].endswith("dosing.txt")
    assert found["bm25"][0]["hits"] == []
    assert len(found["dense"][0]["hits"]) == 2 and len(found["hybrid"][0]["hits"]) == 2
    assert found["dense"][0]["hits"][0]["ref"] == found["hybrid"][0]["hits"][0]["ref"]


def test_calibrate_then_ask_refuses_unsupported_questions(
    embedded_copy: Path, tmp_path: Path
) -> None:
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        "".join(json.dumps({"question": q, "answerable": a}) + "\n" for q, a in LABELLED)
    )
    result = run("calibrate", str(labelled), "--index", str(embedded_copy))
    assert result.returncode == 0, result.stderr
    assert "Refusal threshold" in result.stdout and "100.0%" in result.stdout
    asked = run("ask", "Which mountain is the tallest?", "--index", str(embedded_copy),
                "--format", "json")  # fmt: skip
    answer = json.loads(asked.stdout)
    assert answer["status"] == "refused" and answer["refusal_reason"] == "no_relevant_sources"
    assert answer["retrieval"]["retriever"] == "hybrid"
    assert answer["retrieval"]["evidence"] < answer["retrieval"]["threshold"]
    labelled.write_text('{"question": "x"}\n')
    bad = run("calibrate", str(labelled), "--index", str(embedded_copy))
    assert bad.returncode == 2 and "labelled.jsonl:1" in bad.stderr and "answerable" in bad.stderr


def test_dense_on_an_index_without_vectors_exits_2(index_dir: Path) -> None:
    result = run("search", "rash", "--retriever", "dense", "--index", str(index_dir))
    assert result.returncode == 2 and "no vectors" in result.stderr
