"""Queries with undecodable bytes or lone surrogates are searched and answered (the
broken parts as U+FFFD), by every face: `search`, `search --queries`, `ask` and the
Python API, with hybrid retrieval (whose tokenizer refuses lone surrogates)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from quoteproof import Index
from quoteproof.cli import app
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.terms import well_formed

LONE = "\ud83d"
"""Half of a surrogate pair, as a JSON string `"\\ud83d"` decodes."""
UNDECODABLE = os.fsdecode(b"\xff\xfe")
"""What Python makes of the bytes 0xff 0xfe in a command-line argument."""


def test_well_formed_replaces_only_lone_surrogates() -> None:
    assert well_formed(f"{UNDECODABLE} a{LONE}b 😀 é") == "\ufffd\ufffd a\ufffdb 😀 é"
    assert well_formed("plain text, déjà vu") == "plain text, déjà vu"


def test_cli_search_with_undecodable_bytes(embedded_index_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["search", f"{UNDECODABLE} shingles", "--index", str(embedded_index_dir)]
    )
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "Search: \ufffd\ufffd shingles" in result.stdout and "Shingles" in result.stdout


def test_batch_search_goes_through_every_query(embedded_index_dir: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": 1, "text": "shingles rash"}\n'
        '{"id": 2, "text": "\\ud83d remdesivir dose"}\n'
        '{"id": "\\udcff", "text": "\\udcff\\udcfe"}\n'
        '{"id": 4, "text": "blood pressure"}\n'
    )
    result = CliRunner().invoke(
        app, ["search", "--queries", str(queries), "--index", str(embedded_index_dir)]
    )
    assert result.exit_code == 0, (result.stderr, result.exception)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == [1, 2, "\udcff", 4]
    assert lines[1]["hits"][0]["source_path"].endswith("dosing.txt")
    assert lines[3]["hits"][0]["source_path"].endswith("pressure.html")


def test_cli_ask_with_a_lone_surrogate(embedded_copy: Path) -> None:
    question = f"{LONE} What is the first sign of shingles?"
    result = CliRunner().invoke(app, ["ask", question, "--index", str(embedded_copy)])
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "\ufffd What is the first sign of shingles?" in result.stdout
    shown = CliRunner().invoke(
        app, ["ask", question, "--index", str(embedded_copy), "--format", "json"]
    )
    assert shown.exit_code == 0, (shown.stderr, shown.exception)
    assert json.loads(shown.stdout)["question"] == "\ufffd What is the first sign of shingles?"


def test_python_api_search_and_ask_with_a_lone_surrogate(embedded_copy: Path) -> None:
    with Index.open(embedded_copy, retrieval=RetrievalSettings(retriever="hybrid")) as index:
        hits = index.search(f"{LONE} remdesivir dose", top_k=3)
        assert hits and hits[0].chunk.source_path.endswith("dosing.txt")
        answer = index.ask(f"What is the first sign of shingles?{LONE}")
    assert answer.question == "What is the first sign of shingles?\ufffd"
